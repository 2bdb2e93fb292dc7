"""`templatemine` command line: thin wrappers over the stages.

    templatemine extract INPUT... --out OUT     WARC -> records, pages, links, pagelets
    templatemine detect OUT [--mode M]          -> templates, template_pagelets
    templatemine clean OUT                      -> clean_pages, clean_links
    templatemine run INPUT... --out OUT         all three
    templatemine evaluate --pred OUT --gold GOLD.jsonl [--peers]
                                                bag-of-words P/R/F1 of clean_pages (and the peers')

Common options: --master M, --conf k=v, --preset, --config FILE, --set extract.k=4.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from dataclasses import replace

from templatemine.warc.inputs import InputError, expand_inputs

MODES = ["auto", "global", "local", "etdm", "etdm+global"]  # templates/stage.py


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--master", help="Spark master (default: local[*], or spark-submit's)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="Spark conf, repeatable")
    parser.add_argument("--preset", default="local", help="config preset: local, test, cluster (default local)")
    parser.add_argument("--config", help="TOML file with [extract], [detect], [clean] and [spark] tables (see conf/)")
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

    evaluate = sub.add_parser(
        "evaluate", help="bag-of-words P/R/F1 of clean_pages against gold.jsonl files (and the peers with --peers)",
        description="Per page, averaged per site (registered domain), then over sites; one row per gold file. "
                    "Either `evaluate OUT GOLD...` or `evaluate --pred OUT --gold GOLD [--gold GOLD...]`.")
    evaluate.add_argument("paths", nargs="*", metavar="OUT GOLD.jsonl")
    evaluate.add_argument("--pred", metavar="OUT", help="the run output whose clean_pages are scored")
    evaluate.add_argument("--gold", action="append", default=[], metavar="GOLD.jsonl", help="repeatable")
    evaluate.add_argument("--peers", action="store_true",
                          help="also score trafilatura, resiliparse, jusText and boilerpy3 on the same pages "
                               "(the `bench` extra)")
    evaluate.add_argument("--json", metavar="FILE", help="write the scores as JSON too")
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
        if args.command == "evaluate":
            args.out, args.golds = _evaluate_paths(args)
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
            cleaned = run_clean(spark, args.out, progress, config.clean)
            print(f"  clean pages {cleaned['rows']['clean_pages']}, clean links {cleaned['rows']['clean_links']}, "
                  f"mean template token fraction {cleaned['mean_template_token_fraction']:.3f}", flush=True)
            if "wet" in cleaned:
                wet = cleaned["wet"]
                print(f"  wet: {wet['records']} conversion records in {wet['files']} file(s), "
                      f"{wet['bytes'] / 1e6:.1f} MB -> {args.out.rstrip('/')}/wet/", flush=True)
        if args.command == "evaluate":
            _evaluate(spark, args)
    except Exception as exc:
        first = next((line.strip() for line in str(exc).splitlines() if "malformed record in" in line), None)
        if config.extract.fail_fast and first:
            print(f"templatemine: {first}", file=sys.stderr)
            return 1
        raise
    finally:
        spark.stop()
    return 0


def _evaluate_paths(args) -> tuple[str, list[str]]:
    """(OUT, gold files) from `OUT GOLD...` or `--pred OUT --gold GOLD...`."""
    paths = list(args.paths)
    out = args.pred or (paths.pop(0) if paths else None)
    golds = [*args.gold, *paths]
    if not out or not golds:
        raise ValueError("evaluate needs an output and gold files: evaluate OUT GOLD.jsonl... "
                         "or evaluate --pred OUT --gold GOLD.jsonl")
    for path in golds:
        if not os.path.isfile(path):
            raise ValueError(f"gold file not found: {path}")
    return out, golds


def _evaluate(spark, args) -> None:
    from pyspark.sql import functions as F

    from templatemine.evaluate.bow import evaluate_texts, read_gold
    from templatemine.html.urls import normalize_url, registered_domain, url_host

    out, golds = args.out, args.golds
    site_of = lambda url: registered_domain(url_host(url))  # noqa: E731
    # only the gold pages come to the driver, not the whole crawl
    urls = sorted({normalize_url(u) or u for path in golds for u in read_gold(path)})
    wanted = spark.createDataFrame([(u,) for u in urls], "url string")
    clean = spark.read.parquet(f"{out.rstrip('/')}/clean_pages").join(wanted, "url", "left_semi")
    systems = {"templatemine": {r["url"]: r["clean_text"] for r in clean.select("url", "clean_text").collect()}}
    missing: dict[str, str] = {}
    if args.peers:
        from templatemine.evaluate.peers import available_peers, load_html, run_peers

        peers, missing = available_peers()
        pages = spark.read.parquet(f"{out.rstrip('/')}/pages").join(wanted, "url", "left_semi").select(
            "url", "warc_file", "warc_offset").where(F.col("warc_file").isNotNull())
        html, unread = load_html([(r["url"], r["warc_file"], r["warc_offset"]) for r in pages.collect()])
        if unread:  # the peers score nothing on these pages
            print(f"  peers: {len(unread)} page(s) could not be read back, e.g. {unread[0]}")
        systems.update(run_peers(html, peers))
    results = {name: evaluate_texts(texts, golds, normalize_url, site_of) for name, texts in systems.items()}
    ours = results["templatemine"]
    others = [n for n in systems if n != "templatemine"]
    print(f"{'gold':<32}{'pages':>6}{'sites':>6}{'P':>7}{'R':>7}{'F1':>7}" + "".join(f"{n:>13}" for n in others))
    for name, s in ours["per_file"].items():
        print(f"{name[-31:]:<32}{s.pages:>6}{s.sites:>6}{s.precision:>7.3f}{s.recall:>7.3f}{s.f1:>7.3f}"
              + "".join(f"{results[n]['per_file'][name].f1:>13.3f}" for n in others))
    print(f"{'mean over gold files (F1)':<32}{'':>6}{'':>6}{'':>7}{'':>7}{ours['mean_f1']:>7.3f}"
          + "".join(f"{results[n]['mean_f1']:>13.3f}" for n in others))
    for name, why in missing.items():
        print(f"  {name}: {why}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({name: {"mean_f1": r["mean_f1"], "per_file": {k: vars(v) for k, v in r["per_file"].items()}}
                       for name, r in results.items()} | {"missing_peers": missing}, fh, indent=1)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    return run_command(args)


if __name__ == "__main__":
    sys.exit(main())
