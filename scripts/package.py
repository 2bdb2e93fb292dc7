"""Package templatemine for a cluster: a wheel and a packed Python environment for
the executors, as Spark's "Python Package Management" page recommends (venv-pack,
`--archives env.tar.gz#environment`, `spark.pyspark.python=./environment/bin/python`).

    scripts/package [--profile standalone|yarn|kubernetes] [--master URL] [--offline]
                    [--with-pyspark] [--python-prefix DIR] [--json]

Builds, and rebuilds only what changed (stamps in .cache/pack/):
  dist/templatemine-<version>-cp311-cp311-linux_x86_64.whl (or -py3-none-any.whl)
      from a clean copy of pyproject.toml, README.md, setup.py and templatemine/'s
      sources (never a stale build/ folder or an in-place .so), in a fixed folder
      (.cache/pack/wheel-src) with SOURCE_DATE_EPOCH fixed: the same sources give the
      same bytes. setup.py compiles the optional DOM walk and smoothing DP into it
      (pagelevel/_walk.pyx, _isotonic.pyx), and the nesting check's scan
      (html/_scan.pyx), so the executors score with them too;
      where no C compiler is there the wheel is pure Python (-py3-none-any) and the
      executors use the Python walk and numpy DP, as a local install would.
  .cache/pack-venv/  a virtualenv with that wheel installed *non-editable* (venv-pack
      refuses editable installs) and its runtime dependencies at exactly the versions
      .venv has (so executors run what the tests ran).
  dist/templatemine-env.tar.gz   venv-pack's archive of .cache/pack-venv.

pyspark and py4j are left out of the archive: Spark puts $SPARK_HOME/python/lib/pyspark.zip
and py4j-*-src.zip first on every Python worker's PYTHONPATH (the pip-installed pyspark
ships both files too), so a copy in the archive would never be imported and would add
pyspark's 462 MB of jars (see --with-pyspark for the measured difference). The
JVM-side Python APIs (graphframes-py, delta-spark) are in, without their pyspark
dependency, so the same environment can run the driver in cluster deploy mode.

venv-pack does not pack the interpreter: bin/python links to the Python 3.11 this
venv was made from, which must exist at the same path on every node, or at
--python-prefix (e.g. /usr for a distribution's python3.11).

Then prints the spark-submit line for the profile (conf/<profile>.toml).
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from templatemine.spark import JVM_PACKAGES, local_jars  # noqa: E402

DIST = os.path.join(ROOT, "dist")
STAMPS = os.path.join(ROOT, ".cache", "pack")
NOT_SHIPPED = {"pyspark", "py4j"}  # the cluster's Spark provides them (python/lib/*.zip)
SOURCE_DATE_EPOCH = "315532800"  # 1980-01-01, the earliest date a zip can hold

# How each cluster manager runs a Python job. Standalone cannot run a Python driver
# in cluster deploy mode, so there the driver runs where spark-submit runs.
PROFILES = {
    "standalone": {"master": "spark://MASTER_HOST:7077", "deploy_mode": "client"},
    "yarn": {"master": "yarn", "deploy_mode": "cluster"},
    "kubernetes": {"master": "k8s://https://KUBERNETES_API_SERVER:6443", "deploy_mode": "cluster"},
}
# [spark] keys the driver cannot apply itself: they are read by spark-submit (or
# the cluster manager) before the driver starts, so they go on the command line too.
SUBMIT_TIME = ("spark.driver.memory", "spark.driver.cores", "spark.driver.memoryOverhead",
               "spark.yarn.", "spark.kubernetes.", "spark.jars.ivy")


def say(msg: str) -> None:
    print(f"package: {msg}", file=sys.stderr, flush=True)


def digest(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()[:20]


def file_digest(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()[:20]


def read_stamp(name: str) -> dict:
    try:
        with open(os.path.join(STAMPS, name)) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


def write_stamp(name: str, data: dict) -> None:
    os.makedirs(STAMPS, exist_ok=True)
    with open(os.path.join(STAMPS, name), "w") as fh:
        json.dump(data, fh, indent=1)


def project() -> dict:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        return tomllib.load(fh)["project"]


BUILT = (".pyc", ".pyo", ".so", ".c")  # compiled or generated in place by an editable install: not sources


def source_files() -> list[str]:
    """What the wheel is built from, relative to ROOT."""
    files = ["pyproject.toml", "README.md", "setup.py"]
    for folder, dirs, names in os.walk(os.path.join(ROOT, "templatemine")):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.endswith(".egg-info"))
        files += [os.path.relpath(os.path.join(folder, n), ROOT) for n in sorted(names) if not n.endswith(BUILT)]
    return files


def build_wheel() -> tuple[str, float]:
    """dist/templatemine-*.whl, rebuilt only when a source file changed."""
    meta = project()
    files = source_files()
    want = digest(*[f + "\0" + file_digest(os.path.join(ROOT, f)) for f in files])
    stamp = read_stamp("wheel.json")
    wheel = os.path.join(DIST, stamp.get("name", "-"))
    if os.path.exists(wheel) and stamp.get("sources") == want and stamp.get("wheel") == file_digest(wheel):
        say(f"wheel up to date: {os.path.relpath(wheel, ROOT)}")
        return wheel, 0.0
    started = time.perf_counter()
    # a fixed folder, not a fresh temporary one: the compiled extensions record the
    # paths they were built at, and the same sources should give the same bytes
    src = os.path.join(STAMPS, "wheel-src")
    with tempfile.TemporaryDirectory(prefix="templatemine-wheel-") as tmp:
        shutil.rmtree(src, ignore_errors=True)
        for f in files:
            os.makedirs(os.path.dirname(os.path.join(src, f)), exist_ok=True)
            shutil.copy2(os.path.join(ROOT, f), os.path.join(src, f))
        env = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH}
        run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", os.path.join(tmp, "out"), src], env=env)
        built = [n for n in os.listdir(os.path.join(tmp, "out")) if n.endswith(".whl")]
        if len(built) != 1:
            raise SystemExit(f"package: pip wheel made {built}, expected one wheel")
        name = built[0]
        wheel = os.path.join(DIST, name)
        os.makedirs(DIST, exist_ok=True)
        for old in os.listdir(DIST):
            if old.startswith(f"{meta['name']}-") and old.endswith(".whl") and old != name:
                os.remove(os.path.join(DIST, old))
        os.replace(os.path.join(tmp, "out", name), wheel)
    shutil.rmtree(src, ignore_errors=True)
    took = time.perf_counter() - started
    write_stamp("wheel.json", {"sources": want, "wheel": file_digest(wheel), "name": name})
    compiled = "with the compiled DOM walk and DP" if "-py3-none-any" not in name else \
        "pure Python: the compiled walk and DP were not built (see setup.py's warning)"
    say(f"built {os.path.relpath(wheel, ROOT)} ({os.path.getsize(wheel) / 1e3:.0f} kB, {took:.1f}s; {compiled})")
    return wheel, took


def runtime_requirements(with_pyspark: bool) -> list[str]:
    """templatemine's dependencies and theirs, transitively, pinned to the versions
    installed here (this interpreter is .venv's): `name==version` lines."""
    from importlib.metadata import PackageNotFoundError, distribution

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pinned: dict[str, str] = {}
    done: set[tuple[str, str]] = set()
    todo = [(Requirement(r), "") for r in project()["dependencies"]]
    while todo:
        req, extra = todo.pop()
        if req.marker and not req.marker.evaluate({"extra": extra}):
            continue
        key = canonicalize_name(req.name)
        for wanted in ("", *sorted(req.extras)):
            if (key, wanted) in done:
                continue
            done.add((key, wanted))
            try:
                dist = distribution(req.name)
            except PackageNotFoundError:
                raise SystemExit(f"package: {req.name} is not installed in {sys.prefix}: run scripts/bootstrap")
            pinned[key] = dist.version
            todo += [(Requirement(r), wanted) for r in dist.requires or []]
    skip = set() if with_pyspark else NOT_SHIPPED
    return [f"{k}=={v}" for k, v in sorted(pinned.items()) if k not in skip]


def build_env(wheel: str, with_pyspark: bool, python_prefix: str | None) -> tuple[str, dict]:
    """.cache/pack-venv (with the wheel, not editable) and dist/templatemine-env.tar.gz."""
    import venv_pack

    suffix = "-pyspark" if with_pyspark else ""
    venv = os.path.join(ROOT, ".cache", f"pack-venv{suffix}")
    archive = os.path.join(DIST, f"templatemine-env{suffix}.tar.gz")
    requirements = runtime_requirements(with_pyspark)
    base = os.path.realpath(sys._base_executable)  # the interpreter bin/python will link to
    deps_key = digest(base, *requirements)
    want = digest(deps_key, file_digest(wheel), python_prefix or "", venv_pack.__version__)
    stamp = read_stamp(f"env{suffix}.json")
    if (os.path.exists(archive) and stamp.get("env") == want and stamp.get("archive") == file_digest(archive)
            and os.path.exists(os.path.join(venv, "bin", "python"))):
        say(f"environment up to date: {os.path.relpath(archive, ROOT)} ({os.path.getsize(archive) / 1e6:.0f} MB)")
        return archive, {"install_s": 0.0, "pack_s": 0.0, "bytes": os.path.getsize(archive), "rebuilt": False}
    started = time.perf_counter()
    pip = [sys.executable, "-m", "pip", "--python", os.path.join(venv, "bin", "python"), "install", "-q", "--no-deps"]
    if stamp.get("deps") != deps_key or not os.path.exists(os.path.join(venv, "bin", "python")):
        say(f"creating {os.path.relpath(venv, ROOT)}: {len(requirements)} packages"
            + (" (pyspark included)" if with_pyspark else " (pyspark and py4j come from the cluster's Spark)"))
        shutil.rmtree(venv, ignore_errors=True)
        # no pip/setuptools inside: they would only make the archive bigger (.venv's pip installs)
        run([base, "-m", "venv", "--without-pip", venv])
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as reqs:
            reqs.write("\n".join(requirements) + "\n")
            reqs.flush()
            run([*pip, "-r", reqs.name])  # --no-deps: the list is already the closure
    run([*pip, "--force-reinstall", wheel])
    installed = time.perf_counter() - started
    started = time.perf_counter()
    tmp = archive + ".tmp.tar.gz"
    venv_pack.pack(prefix=venv, output=tmp, python_prefix=python_prefix, force=True)
    os.chmod(tmp, 0o644)  # venv-pack writes 0600; others (and the cluster's uploader) read it
    os.replace(tmp, archive)
    packed = time.perf_counter() - started
    write_stamp(f"env{suffix}.json", {"env": want, "deps": deps_key, "archive": file_digest(archive)})
    size = os.path.getsize(archive)
    say(f"packed {os.path.relpath(archive, ROOT)}: {size / 1e6:.0f} MB in {packed:.1f}s (install {installed:.1f}s)")
    return archive, {"install_s": round(installed, 1), "pack_s": round(packed, 1), "bytes": size, "rebuilt": True}


def run(cmd: list[str], **kwargs) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"package: failed ({proc.returncode}): {shlex.join(cmd)}")


def submit_command(profile: str, master: str | None, archive: str, offline: bool) -> dict:
    """spark-submit's arguments up to the entry point, and the job's own arguments."""
    conf_file = os.path.join("conf", f"{profile}.toml")
    with open(os.path.join(ROOT, conf_file), "rb") as fh:
        spark_conf = tomllib.load(fh).get("spark", {})
    settings = PROFILES[profile]
    client = settings["deploy_mode"] == "client"
    cmd = [".venv/bin/spark-submit", "--master", master or settings["master"], "--deploy-mode", settings["deploy_mode"]]
    if offline:  # the jars scripts/bootstrap fetched, no Maven resolution at submit time
        cmd += ["--jars", ",".join(os.path.relpath(j, ROOT) for j in local_jars())]
    else:
        cmd += ["--packages", ",".join(c for group in JVM_PACKAGES.values() for c in group)]
    cmd += ["--archives", f"{os.path.relpath(archive, ROOT)}#environment",
            "--conf", "spark.pyspark.python=./environment/bin/python"]
    if client:
        # the driver runs here, in the same environment as the executors (unpacked);
        # PYTHONPATH gets Spark's pyspark.zip like the executors'
        venv = os.path.join(".cache", "pack-venv" + ("-pyspark" if archive.endswith("-pyspark.tar.gz") else ""))
        cmd += ["--conf", f"spark.pyspark.driver.python={venv}/bin/python"]
        job_conf = conf_file
    else:
        # the driver runs in the cluster (YARN AM / driver pod) from ./environment too,
        # and reads the profile from its working directory
        cmd += ["--files", conf_file]
        job_conf = os.path.basename(conf_file)
    for key, value in spark_conf.items():
        if key.startswith(SUBMIT_TIME):
            cmd += ["--conf", f"{key}={value}"]
    cmd.append("jobs/run.py")
    return {"cwd": ROOT, "spark_submit": cmd, "job_args": ["--config", job_conf]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", choices=sorted(PROFILES), default="standalone", help="conf/<profile>.toml")
    ap.add_argument("--master", help="master URL (default: a placeholder for the profile's cluster manager)")
    ap.add_argument("--offline", action="store_true", help="--jars .cache/jars/*.jar instead of --packages")
    ap.add_argument("--with-pyspark", action="store_true", help="also pack pyspark and py4j (for measuring)")
    ap.add_argument("--python-prefix", help="where Python 3.11 lives on the nodes, if not where it is here")
    ap.add_argument("--json", action="store_true", help="print the command and what was built as JSON")
    args = ap.parse_args()

    os.makedirs(STAMPS, exist_ok=True)
    with open(os.path.join(STAMPS, "lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two builds at once (a test and a person) would share dist/ and the venv
        wheel, wheel_s = build_wheel()
        archive, env = build_env(wheel, args.with_pyspark, args.python_prefix)
    command = submit_command(args.profile, args.master, archive, args.offline)
    if args.json:
        print(json.dumps({"wheel": wheel, "archive": archive, "wheel_s": round(wheel_s, 1), **env, **command}))
        return 0
    lines = command["spark_submit"][:1]
    rest = command["spark_submit"][1:]
    while rest:  # one flag and its value per line
        take = 2 if rest[0].startswith("--") and len(rest) > 1 and not rest[1].startswith("--") else 1
        lines.append(shlex.join(rest[:take]))
        rest = rest[take:]
    lines[-1] += " INPUT... --out OUT " + shlex.join(command["job_args"])
    print(f"# from {ROOT}; INPUT and OUT on storage every node reads (hdfs://, s3a://, a shared mount)")
    if not args.offline:
        print("# offline (no Maven at submit time): --jars .cache/jars/*.jar instead of --packages (scripts/package --offline)")
    print(" \\\n  ".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
