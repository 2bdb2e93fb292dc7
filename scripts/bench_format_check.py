"""Benchmark: what checking the nodes' features format costs a nightly run.

    .venv/bin/python scripts/bench_format_check.py OUT [--copies 250] [--rounds 3] [--work DIR]

OUT is any output with a `nodes` table (`scripts/demo` writes one to
out/demo). Its nodes are copied `--copies` times under new page keys, each
row of this templatemine's format (`features_format`, as a nightly state's
rows written since the column), and written to WORK as 8 files. Then, best
of `--rounds`, the time to find the pages to set aside
(pagelevel/train.py `judgeable_nodes`) two ways on the same table:

- `or`: one scan, the two conditions in one OR; Parquet cannot take an OR
  with size() in it, so every row group and the features column are read;
- `union`: the two conditions as two scans whose format filters Parquet
  takes (what `judgeable_nodes` does), so row groups all of this format are
  skipped by their statistics.

It prints both times, the ratio, and the pushed filters of each plan; then
the same on a copy where `--null-share` of the pages (0.01: one in a hundred,
spread over every file) have null format with the right number of features,
a state's rows from before the column: there no row group can be skipped, and
the two scans read the format column twice.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--copies", type=int, default=250)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", default="/tmp/bench-format-check")
    ap.add_argument("--null-share", type=float, default=0.01)
    args = ap.parse_args()

    from pyspark.sql import functions as F

    from templatemine.pagelevel.features import FORMAT, N_FEATURES
    from templatemine.spark import get_session

    spark = get_session("bench-format-check", conf={"spark.ui.showConsoleProgress": "false",
                                                    "spark.driver.memory": "6g"})
    spark.sparkContext.setLogLevel("ERROR")
    nodes = spark.read.parquet(os.path.join(args.out, "nodes")).withColumn("features_format", F.lit(FORMAT))
    copies = spark.range(args.copies).withColumnRenamed("id", "copy")
    table = os.path.join(args.work, "nodes")
    nodes.crossJoin(copies).withColumn("page_key", F.xxhash64("page_key", "copy")).drop("copy").repartition(
        8).write.mode("overwrite").parquet(table)
    mixed = os.path.join(args.work, "nodes-mixed")
    spark.read.parquet(table).withColumn("features_format", F.when(
        (F.abs(F.col("page_key")) % 10_000) < args.null_share * 10_000, F.lit(None)).otherwise(
        F.col("features_format"))).write.mode("overwrite").parquet(mixed)
    fmt = F.col("features_format")
    wrong_size = F.coalesce(F.size("features"), F.lit(-1)) != N_FEATURES
    cases = (("every row of this format", table), (f"{args.null_share:.0%} of the pages of null format", mixed))
    for label, path in cases:
        rows = spark.read.parquet(path)
        ways = {
            "or": lambda: rows.where((fmt.isNotNull() & (fmt != FORMAT)) | (fmt.isNull() & wrong_size)),
            "union": lambda: rows.where(fmt.isNotNull() & (fmt != FORMAT)).unionByName(
                rows.where(fmt.isNull()).where(wrong_size)),
        }
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
        print(f"{label}: {rows.count():,} nodes ({size / 1e6:.0f} MB, {args.copies} copies of {args.out}'s), "
              f"best of {args.rounds} rounds, the two ways alternating")
        best = {}
        for r in range(args.rounds):
            for name in (ways if r % 2 == 0 else reversed(ways)):
                stale = ways[name]().groupBy("page_key").agg(F.max(F.when(fmt != FORMAT, fmt)).alias("format"))
                started = time.time()
                found = stale.groupBy("format").count().collect()
                best[name] = min(best.get(name, float("inf")), time.time() - started)
                assert not found, found  # every row is of this format or of the right count: none set aside
        for name, way in ways.items():
            plan = way()._jdf.queryExecution().executedPlan().toString()
            print(f"  {name:<6} {best[name]:.3f} s   " + "; ".join(re.findall(r"PushedFilters: \[[^\]]*\]", plan)))
        print(f"  or / union: {best['or'] / best['union']:.1f}x")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
