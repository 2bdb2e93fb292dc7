"""The run report: OUT/report.html, one self-contained file (issue 5, part 4).

    write_report(spark, out, progress=None) -> path of OUT/report.html

- density.py: Kohlschütter's text density of a block (pure, the reference);
- viewer.py: a page's HTML made inert for the viewer (pure);
- render.py, assets.py: HTML, inline SVG, CSS and JS from plain data (pure);
- gather.py: the Spark side, bounded aggregates of OUT's tables, and the writer.

`write_report` is imported lazily so that the pure modules need no pyspark.
"""

from __future__ import annotations


def write_report(spark, out: str, progress=None) -> str:
    """See templatemine.report.gather.write_report."""
    from templatemine.report.gather import write_report as _write

    return _write(spark, out, progress)


__all__ = ["write_report"]
