"""Benchmark: extraction throughput against a single-process ceiling, in one run.

    .venv/bin/python scripts/bench_extract.py [WARC...] [--repeat N] [--cores C] [--json out.json]

Default input: ../shared/corpora/sites/*/pages.warc.gz (nine real sites).
Measured, on the same files in the same run:

1. ceiling: a plain single-process loop that reads each record with warcio,
   decodes it, parses it with selectolax (Lexbor) and collects its text and
   links (`body.text()`, every `a[href]`): the least any extractor does.
   Also reported: the same without the WARC reading (pages already in memory).
2. per-record path: templatemine's pure per-file function (`captures_of_files`:
   read, decode, URL normalisation, pagelets, links, shingles, page signature),
   single process, no Spark.
3. Spark stage: the extract job's read+parse stage (one task per file, Arrow
   batches, written to Parquet) in local mode on C cores, Spark start-up
   excluded (the session is up, and a warm-up job has started the Python
   workers, before the clock starts). Reported per core: pages / (seconds x C).

For the Spark stage the input files are concatenated into one WARC file per
core, each holding every input `--repeat` times (default 4): production-sized
tasks (a Common Crawl file holds ~40,000 pages), so that Spark's fixed cost
per task (~0.15 s here) is not what is measured; the nine sites alone are only
945 pages in nine small files.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

DEFAULT = os.path.join(ROOT, "..", "shared", "corpora", "sites", "*", "pages.warc.gz")


def ceiling(paths: list[str]) -> tuple[int, float, float]:
    """(pages, seconds with WARC reading, seconds of parsing alone)."""
    from selectolax.lexbor import LexborHTMLParser
    from warcio.archiveiterator import ArchiveIterator

    payloads = []
    t0 = time.perf_counter()
    n = 0
    for path in paths:
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type != "response":
                    continue
                html = rec.content_stream().read().decode("utf-8", "replace")
                tree = LexborHTMLParser(html)
                body = tree.body
                text = body.text(separator=" ")
                links = [a.attributes.get("href") for a in body.css("a[href]")]
                n += 1
                if len(payloads) < 2000:
                    payloads.append(html)
    with_read = time.perf_counter() - t0
    t0 = time.perf_counter()
    for html in payloads:
        body = LexborHTMLParser(html).body
        text = body.text(separator=" ")
        links = [a.attributes.get("href") for a in body.css("a[href]")]
    parse_only = (time.perf_counter() - t0) * n / max(len(payloads), 1)
    del text, links
    return n, with_read, parse_only


def per_record(paths: list[str]) -> tuple[int, float]:
    from templatemine.config import ExtractConfig
    from templatemine.tables.extract import captures_of_files

    t0 = time.perf_counter()
    n = sum(1 for c in captures_of_files(iter(paths), ExtractConfig()) if c.outcome == "page")
    return n, time.perf_counter() - t0


def concatenated(paths: list[str], n_files: int, repeat: int, folder: str) -> list[str]:
    """`n_files` WARC files, each the input files concatenated `repeat` times
    (gzip members and WARC records concatenate): production-sized tasks, so
    that Spark's per-task cost (~0.15 s here) is not what is measured."""
    out = []
    for i in range(n_files):
        target = os.path.join(folder, f"bench-{i:03d}.warc.gz")
        with open(target, "wb") as dst:
            for _ in range(repeat):
                for p in paths:
                    with open(p, "rb") as src:
                        shutil.copyfileobj(src, dst)
        out.append(target)
    return out


def spark_stage(paths: list[str], cores: int, repeat: int) -> tuple[int, float, dict]:
    from templatemine.config import LOCAL, ExtractConfig
    from templatemine.spark import get_session
    from templatemine.tables.extract import read_captures
    from templatemine.warc.inputs import InputFile

    spark = get_session("templatemine-bench", f"local[{cores}]",
                        {**LOCAL.spark, "spark.ui.showConsoleProgress": "false"})
    work = tempfile.mkdtemp(prefix="tm-bench-")
    try:
        big = concatenated(paths, cores, repeat, work)
        files = [InputFile(p, os.path.getsize(p)) for p in big]
        # warm-up: start the Python workers and import everything in them
        warm = [InputFile(p, os.path.getsize(p)) for p in paths[:cores]]
        read_captures(spark, warm, ExtractConfig()).write.mode("overwrite").parquet(work + "/warm")
        t0 = time.perf_counter()
        read_captures(spark, files, ExtractConfig()).write.mode("overwrite").parquet(work + "/captures")
        seconds = time.perf_counter() - t0
        pages = spark.read.parquet(work + "/captures").where("outcome = 'page'").count()
        info = {"master": spark.sparkContext.master, "tasks": len(files),
                "bytes_per_file": os.path.getsize(big[0])}
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    return pages, seconds, info


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("warcs", nargs="*")
    ap.add_argument("--repeat", type=int, default=4)
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--json", help="write the results here as JSON")
    args = ap.parse_args()
    paths = sorted(p for pattern in (args.warcs or [DEFAULT]) for p in glob.glob(pattern))
    if not paths:
        print(f"no WARC files found ({args.warcs or DEFAULT}); the default corpus lives in ../shared/corpora",
              file=sys.stderr)
        return 2
    print(f"{len(paths)} WARC file(s), {sum(os.path.getsize(p) for p in paths) / 1e6:.1f} MB; Spark stage on "
          f"{args.cores} core(s), {args.cores} file(s) of the inputs x {args.repeat}", flush=True)

    n_ceil, t_ceil, t_parse = ceiling(paths)
    ceil_rate, parse_rate = n_ceil / t_ceil, n_ceil / t_parse
    print(f"ceiling (warcio read + selectolax parse, text, links), 1 core: {ceil_rate:8.0f} pages/s", flush=True)
    print(f"  parse, text, links only (pages in memory),       1 core: {parse_rate:8.0f} pages/s", flush=True)

    n_rec, t_rec = per_record(paths)
    rec_rate = n_rec / t_rec
    print(f"templatemine per-record path, no Spark,             1 core: {rec_rate:8.0f} pages/s "
          f"({rec_rate / ceil_rate:.2f} x ceiling)", flush=True)

    n_spark, t_spark, info = spark_stage(paths, args.cores, args.repeat)
    spark_rate = n_spark / t_spark / args.cores
    print(f"templatemine Spark extract stage, per core ({args.cores} cores):  {spark_rate:8.0f} pages/s "
          f"({spark_rate / ceil_rate:.2f} x ceiling, {spark_rate / parse_rate:.2f} x parse-only) "
          f"[{n_spark} pages in {t_spark:.1f} s, {info['tasks']} tasks of {info['bytes_per_file'] / 1e6:.0f} MB]",
          flush=True)
    result = {
        "inputs": paths, "repeat": args.repeat, "cores": args.cores,
        "ceiling_pages_per_s": round(ceil_rate, 1), "parse_only_pages_per_s": round(parse_rate, 1),
        "per_record_pages_per_s": round(rec_rate, 1),
        "spark_stage_pages_per_s_per_core": round(spark_rate, 1),
        "spark_stage_seconds": round(t_spark, 2), "spark_stage_pages": n_spark,
        "ratio_spark_per_core_to_ceiling": round(spark_rate / ceil_rate, 3),
        "ratio_per_record_to_ceiling": round(rec_rate / ceil_rate, 3),
    }
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
