"""`templatemine` command line: thin wrappers over the stages.

    templatemine extract INPUT... --out OUT     WARC -> records, pages, links, pagelets
    templatemine detect OUT [--mode M]          -> templates, template_pagelets
    templatemine clean OUT                      -> clean_pages, clean_links
    templatemine run INPUT... --out OUT         all three
    templatemine evaluate OUT GOLD.jsonl...     bag-of-words P/R/F1 of clean_pages

Common options: --master M, --conf k=v, --preset, --config FILE, --set extract.k=4.
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import replace

from templatemine.warc.inputs import InputError, expand_inputs

MODES = ["auto", "global", "local", "etdm", "etdm+global"]  # templates/stage.py


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--master", help="Spark master (default: local[*], or spark-submit's)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="Spark conf, repeatable")
    parser.add_argument("--preset", default="local", help="config preset: local, test, cluster (default local)")
    parser.add_argument("--config", help="TOML file with [extract] and [spark] tables (see conf/)")
    parser.add_argument("--set", action="append", default=[], metavar="extract.NAME=VALUE",
                        help="override one config field, repeatable")
    parser.add_argument("--quiet", action="store_true", help="print only the summary")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="templatemine", description="Mine site templates from web archives.")
    sub = parser.add_subparsers(dest="command", required=True)
    extract = sub.add_parser("extract", help="WARC/ARC files -> records, pages, links, pagelets tables")
    extract.add_argument("inputs", nargs="+", metavar="INPUT",
                         help="WARC/ARC files, directories, globs or manifests (local, file://, hdfs://, s3a://)")
    extract.add_argument("--out", required=True, help="output folder (local, hdfs://, s3a://)")
    extract.add_argument("--fail-fast", action="store_true", help="stop at the first malformed record")
    _common(extract)

    run = sub.add_parser("run", help="extract, detect and clean in one go")
    run.add_argument("inputs", nargs="+", metavar="INPUT")
    run.add_argument("--out", required=True)
    run.add_argument("--fail-fast", action="store_true")
    run.add_argument("--mode", choices=MODES, help="template detector (default: config's, auto)")
    _common(run)

    detect = sub.add_parser("detect", help="templates and template_pagelets from an extract output")
    detect.add_argument("out", metavar="OUT")
    detect.add_argument("--mode", choices=MODES, help="default: config's (auto)")
    _common(detect)

    clean = sub.add_parser("clean", help="clean_pages and clean_links from a detect output")
    clean.add_argument("out", metavar="OUT")
    _common(clean)

    evaluate = sub.add_parser("evaluate", help="bag-of-words P/R/F1 of clean_pages against gold.jsonl files")
    evaluate.add_argument("out", metavar="OUT")
    evaluate.add_argument("gold", nargs="+", metavar="GOLD.jsonl")
    _common(evaluate)
    return parser


def _spark_conf(items: list[str]) -> dict:
    conf = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"templatemine: --conf {item!r} is not KEY=VALUE")
        conf[key.strip()] = value
    return conf


def summary_lines(manifest: dict) -> list[str]:
    rec = manifest["records"]
    rows = manifest["rows"]
    links = manifest["links"]
    timings = manifest["timings"]
    lines = [
        f"run {manifest['run_id']}: {len(manifest['inputs'])} file(s) -> {manifest['out']}",
        f"  records read   {rec['read']:>9}   (every one accounted for: {'yes' if rec['accounted'] else 'NO'})",
    ]
    for outcome, n in rec["by_outcome"].items():
        lines.append(f"    {outcome:<13}{n:>9}")
    share = links["internal_resolved_share"]
    lines += [
        f"  pages {rows['pages']}, links {rows['links']}, pagelets {rows['pagelets']}, "
        f"near-duplicate pages {manifest['pages']['with_dup_of']}",
        f"  internal links resolving to a crawled page: {links['internal_resolved']}/{links['internal']}"
        + (f" ({100 * share:.1f}%)" if share is not None else ""),
        f"  time: read+parse {timings['read_parse_s']}s, tables {timings['tables_s']}s, "
        f"counts {timings['counts_s']}s, total {timings['total_s']}s",
    ]
    if manifest["malformed_sample"]:
        lines.append("  malformed records (file, offset: error):")
        for m in manifest["malformed_sample"]:
            lines.append(f"    {m['warc_file']}, {m['warc_offset']}: {m['detail']}")
    lines.append(f"  manifest: {manifest['out'].rstrip('/')}/manifest.json")
    return lines


def _load(args):
    from templatemine.config import load_config

    config = load_config(args.preset, args.config, args.set)
    if getattr(args, "fail_fast", False):
        config = replace(config, extract=replace(config.extract, fail_fast=True))
    return config


def _session(args, config, name):
    from templatemine.spark import get_session

    conf = {**config.spark, **_spark_conf(args.conf)}
    if not sys.stderr.isatty():  # logs and cron: Spark's progress bar would garble them
        conf.setdefault("spark.ui.showConsoleProgress", "false")
    return get_session(f"templatemine {name}", args.master, conf)


def run_command(args) -> int:
    try:
        config = _load(args)
        files = expand_inputs(args.inputs) if args.command in ("extract", "run") else None  # before Spark starts
    except (ValueError, OSError, InputError) as exc:
        print(f"templatemine: {exc}", file=sys.stderr)
        return 2
    from templatemine.tables.extract import run_extract
    from templatemine.templates.stage import run_clean, run_detect

    spark = _session(args, config, args.command)
    progress = (lambda _msg: None) if args.quiet else (lambda msg: print(msg, flush=True))
    try:
        if files is not None:
            manifest = run_extract(spark, files, args.out, config.extract, progress)
            print("\n".join(summary_lines(manifest)), flush=True)
        if args.command in ("run", "detect"):
            detect_config = replace(config.detect, mode=args.mode) if args.mode else config.detect
            detected = run_detect(spark, args.out, detect_config, progress)
            print(f"  templates {detected['rows']['templates']} ({detected['mode']} detection), template pagelets "
                  f"{detected['rows']['template_pagelets']}", flush=True)
        if args.command in ("run", "clean"):
            cleaned = run_clean(spark, args.out, progress)
            print(f"  clean pages {cleaned['rows']['clean_pages']}, clean links {cleaned['rows']['clean_links']}, "
                  f"mean template token fraction {cleaned['mean_template_token_fraction']:.3f}", flush=True)
        if args.command == "evaluate":
            from templatemine.evaluate.bow import evaluate_texts, read_gold
            from templatemine.html.urls import normalize_url

            # only the gold pages' texts come to the driver, not the whole crawl's
            urls = sorted({normalize_url(u) or u for path in args.gold for u in read_gold(path)})
            wanted = spark.createDataFrame([(u,) for u in urls], "url string")
            clean = spark.read.parquet(f"{args.out.rstrip('/')}/clean_pages").join(wanted, "url", "left_semi")
            texts = {r["url"]: r["clean_text"] for r in clean.select("url", "clean_text").collect()}
            result = evaluate_texts(texts, args.gold, normalize_url)
            print(f"{'gold':<40}{'pages':>7}{'P':>7}{'R':>7}{'F1':>7}")
            for name, s in result["per_file"].items():
                print(f"{name[-39:]:<40}{s.pages:>7}{s.precision:>7.3f}{s.recall:>7.3f}{s.f1:>7.3f}")
            print(f"{'mean over gold files':<40}{'':>7}{'':>7}{'':>7}{result['mean_f1']:>7.3f}")
    except Exception as exc:
        first = next((line.strip() for line in str(exc).splitlines() if "malformed record in" in line), None)
        if config.extract.fail_fast and first:
            print(f"templatemine: {first}", file=sys.stderr)
            return 1
        raise
    finally:
        spark.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    return run_command(args)


if __name__ == "__main__":
    sys.exit(main())
