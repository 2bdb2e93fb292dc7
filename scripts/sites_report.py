"""Per-site report of an extract run: pages, outcomes, charsets, internal links
that resolve to a crawled page.

    .venv/bin/python scripts/sites_report.py OUT            # an existing extract output
    .venv/bin/python scripts/sites_report.py --run [WARC...]  # extract first (default: ../shared/corpora/sites)

Counts come from the written tables (records, pages, links).
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
DEFAULT = os.path.join(ROOT, "..", "shared", "corpora", "sites", "*", "pages.warc.gz")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--run", action="store_true", help="run extract on PATHS (WARC files) first")
    args = ap.parse_args()

    from pyspark.sql import functions as F

    from templatemine.config import LOCAL
    from templatemine.spark import get_session

    spark = get_session("templatemine-report", None, {**LOCAL.spark, "spark.ui.showConsoleProgress": "false"})
    if args.run:
        from templatemine.config import ExtractConfig
        from templatemine.tables.extract import run_extract
        from templatemine.warc.inputs import expand_inputs

        warcs = sorted(p for pattern in (args.paths or [DEFAULT]) for p in glob.glob(pattern))
        out = tempfile.mkdtemp(prefix="tm-sites-")
        run_extract(spark, expand_inputs(warcs), out, ExtractConfig(), progress=lambda _m: None)
    else:
        if len(args.paths) != 1:
            ap.error("give one extract output folder, or --run")
        out = args.paths[0]

    records = spark.read.parquet(os.path.join(out, "records"))
    pages = spark.read.parquet(os.path.join(out, "pages"))
    links = spark.read.parquet(os.path.join(out, "links"))
    keys = pages.select(F.col("page_key").alias("dst_page_key"), F.lit(True).alias("resolved"))
    by_file = records.groupBy("warc_file").agg(
        F.count("*").alias("records"),
        F.sum((F.col("outcome") == "page").cast("int")).alias("pages"),
        F.sum((F.col("outcome") == "undecodable").cast("int")).alias("undecodable"),
        F.sum((F.col("outcome") == "malformed").cast("int")).alias("malformed"),
    )
    internal = (
        links.where("same_site")
        .join(pages.select(F.col("page_key").alias("src_page_key"), "warc_file"), "src_page_key")
        .join(keys, "dst_page_key", "left")
        .groupBy("warc_file")
        .agg(F.count("*").alias("internal_links"), F.count("resolved").alias("resolved"))
    )
    rows = by_file.join(internal, "warc_file", "left").orderBy("warc_file").collect()
    print(f"{'file (site)':<46}{'records':>8}{'pages':>7}{'undec.':>7}{'malf.':>6}{'internal':>10}{'resolve':>9}")
    tot = {"records": 0, "pages": 0, "undecodable": 0, "malformed": 0, "internal_links": 0, "resolved": 0}
    for r in rows:
        name = os.path.basename(r["warc_file"])
        if name == "pages.warc.gz":  # corpora/<site>/pages.warc.gz
            name = os.path.basename(os.path.dirname(r["warc_file"]))
        share = (r["resolved"] or 0) / r["internal_links"] if r["internal_links"] else float("nan")
        print(f"{name[-45:]:<46}{r['records']:>8}{r['pages']:>7}{r['undecodable']:>7}{r['malformed']:>6}"
              f"{r['internal_links'] or 0:>10}{100 * share:>8.1f}%")
        for k in tot:
            tot[k] += r[k] or 0
    share = tot["resolved"] / tot["internal_links"] if tot["internal_links"] else float("nan")
    print(f"{'all':<46}{tot['records']:>8}{tot['pages']:>7}{tot['undecodable']:>7}{tot['malformed']:>6}"
          f"{tot['internal_links']:>10}{100 * share:>8.1f}%")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
