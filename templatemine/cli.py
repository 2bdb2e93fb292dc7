"""`templatemine` command line: thin wrappers over the stages.

    templatemine extract INPUT... --out OUT [--master M] [--conf k=v] [--config FILE] [--set extract.k=4]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from templatemine.warc.inputs import InputError, expand_inputs


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


def run_extract_command(args) -> int:
    from templatemine.config import load_config

    try:
        config = load_config(args.preset, args.config, args.set)
    except (ValueError, OSError) as exc:
        print(f"templatemine: {exc}", file=sys.stderr)
        return 2
    if args.fail_fast:
        from dataclasses import replace

        config = replace(config, extract=replace(config.extract, fail_fast=True))
    try:
        files = expand_inputs(args.inputs)  # before Spark starts: bad paths fail fast
    except InputError as exc:
        print(f"templatemine: {exc}", file=sys.stderr)
        return 2

    from templatemine.spark import get_session
    from templatemine.tables.extract import run_extract

    spark = get_session("templatemine extract", args.master, {**config.spark, **_spark_conf(args.conf)})
    progress = (lambda _msg: None) if args.quiet else (lambda msg: print(msg, flush=True))
    try:
        manifest = run_extract(spark, files, args.out, config.extract, progress)
    except Exception as exc:
        first = next((line.strip() for line in str(exc).splitlines() if "malformed record in" in line), None)
        if config.extract.fail_fast and first:
            print(f"templatemine: {first}", file=sys.stderr)
            return 1
        raise
    finally:
        spark.stop()
    print("\n".join(summary_lines(manifest)), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    if args.command == "extract":
        return run_extract_command(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
