"""What merging scheme twins costs `crawl_priority` (graph/priority.py).

    .venv/bin/python scripts/bench_priority.py [OUT] [--rounds 5]

OUT (default out/demo, which `scripts/demo` writes) is a run's output folder.
In one local session, after a first round that warms it and is not counted,
each round writes `crawl_priority` twice, in turn (each first every other round):
as built (an uncrawled URL linked under both schemes is one row:
`one_per_scheme_twins`), and with that step left out (the links as resolved,
each written URL a row of its own, as before 2026-11-29). Prints each write's
seconds, the medians and their ratio, and the rows and uncrawled URLs of each
(and how many of those only removed pagelets link).
Writes to a temporary folder; OUT is only read.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out/demo")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    from pyspark.sql import functions as F

    from templatemine.config import LOCAL
    from templatemine.graph import priority
    from templatemine.graph.distill import read_tables
    from templatemine.spark import get_session
    from templatemine.tables.targets import crawled_targets, out_aliases

    spark = get_session("templatemine bench_priority", None, {}, LOCAL.spark)
    merge = priority.one_per_scheme_twins
    variants = {"merged": merge, "as_written": lambda links, pages: links}
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    counts: dict[str, tuple[int, int, int]] = {}
    try:
        tables = read_tables(spark, args.out, ("pages", "links", "template_pagelets"))
        known = out_aliases(spark, args.out, tables["pages"]).persist()
        known.count()
        links = crawled_targets(tables["links"], tables["pages"], known=known)
        with tempfile.TemporaryDirectory(prefix="bench-priority-") as work:
            for r in range(-1, args.rounds):  # round -1: warm-up, not counted
                order = list(variants) if r % 2 == 0 else list(reversed(variants))  # neither always first
                for name in order:
                    priority.one_per_scheme_twins = variants[name]
                    path = f"{work}/{name}"
                    started = time.perf_counter()
                    priority.crawl_priority(tables["pages"], links, tables["template_pagelets"]).write.mode(
                        "overwrite").parquet(path)
                    took = time.perf_counter() - started
                    print(f"round {r + 1 or 'warm-up'} {name}: {took:.2f} s", flush=True)
                    if r >= 0:
                        seconds[name].append(took)
                    table = spark.read.parquet(path)
                    uncrawled = table.where(~F.col("crawled"))
                    counts[name] = (table.count(), uncrawled.count(),
                                    uncrawled.where(F.col("content_citing_pages") == 0).count())
    finally:
        priority.one_per_scheme_twins = merge
        spark.stop()
    medians = {name: statistics.median(s) for name, s in seconds.items()}
    for name in variants:
        rows, uncrawled, template_only = counts[name]
        print(f"{name}: median {medians[name]:.2f} s, {rows} rows, {uncrawled} uncrawled "
              f"({template_only} of them linked only from removed pagelets)")
    print(f"merged / as_written: {medians['merged'] / medians['as_written']:.2f}x "
          f"(+{medians['merged'] - medians['as_written']:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
