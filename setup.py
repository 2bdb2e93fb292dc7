"""Build hook for the optional compiled DOM walk and smoothing DP
(templatemine/pagelevel/_walk.pyx, _isotonic.pyx) and the nesting check's
scan (templatemine/html/_scan.pyx).

Everything else about the package is in pyproject.toml. The extensions are
optional: without Cython or a C compiler, or if compiling fails, the install
goes on without them and templatemine uses the pure-Python walk and the numpy
DP (templatemine/pagelevel/features.py `COMPILED_WALK_ERROR` and isotonic.py
`COMPILED_DP_ERROR` say why).
TEMPLATEMINE_PURE_PYTHON=1 skips them on purpose.
"""

import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

PYX = [os.path.join("templatemine", "pagelevel", name) for name in ("_walk.pyx", "_isotonic.pyx")] + \
    [os.path.join("templatemine", "html", "_scan.pyx")]


class OptionalBuildExt(build_ext):
    """build_ext that warns instead of failing."""

    def run(self):
        try:
            super().run()
        except Exception as e:  # no compiler (distutils raises its own error types)
            self._skip(e)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as e:
            self._skip(e, ext.name)

    @staticmethod
    def _skip(error, name="the extensions"):
        print(f"WARNING: templatemine: not building {name} ({type(error).__name__}: {error}); "
              "the pure-Python DOM walk and numpy DP will be used", file=sys.stderr)


def extensions():
    if os.environ.get("TEMPLATEMINE_PURE_PYTHON"):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("WARNING: templatemine: Cython is not installed, not building the compiled DOM walk and DP",
              file=sys.stderr)
        return []
    built = []
    for pyx in PYX:  # one at a time: a file that fails to translate leaves the other
        try:
            built += cythonize([pyx], compiler_directives={"language_level": 3}, quiet=True)
        except Exception as e:
            OptionalBuildExt._skip(e, pyx)
    return built


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
