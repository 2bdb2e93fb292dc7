"""`templatemine` command line: thin wrappers over the stages.

    templatemine extract INPUT... --out OUT     WARC -> records, pages, links, pagelets
    templatemine detect OUT [--mode M]          -> templates, template_pagelets
    templatemine clean OUT                      -> clean_pages, clean_links
    templatemine run INPUT... --out OUT         all three, the page-level model (--pagelevel: auto by
                                                default, site: none) and OUT/report.html
    templatemine pagelevel OUT [--pagelevel M]  -> page_templateness (the model's judgement of pages)
    templatemine train OUT... --model DIR       a templateness model from site-level runs' labels
    templatemine density OUT                    OUT/density/: Kohlschuetter's Fig. 1 and Table 1 (PNG, HTML)
    templatemine evaluate --pred OUT --gold GOLD.jsonl [--peers]
                                                bag-of-words P/R/F1 of clean_pages (and the peers')
    templatemine report OUT                     OUT/report.html (run writes it too)
    templatemine nightly --state STATE --manifest NEW_WARCS.txt
                                                one incremental night over Delta state (nightly/)
    templatemine nightly --state STATE --history
                                                what each night did (Delta's history)
    templatemine distill --query "..." OUT      six Clever configurations + DOM/MDL distiller (graph/)
    templatemine related URL OUT                pages co-cited with URL within non-template pagelets
    templatemine priority OUT                   -> crawl_priority (URLs linked only from removed pagelets rank lower)

Common options: --master M, --conf k=v, --preset, --config FILE, --set SECTION.NAME=VALUE (extract.k=4),
--quiet (only the summary), --log-json (one JSON object per line).

A command that writes into OUT (WRITE_OUT; density into OUT/density) holds OUT/_lock while it runs
(tables/lock.py): a second one on the same OUT is refused at once, one line, exit 2.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
from contextlib import contextmanager
from dataclasses import replace
from urllib.parse import urlsplit

from templatemine.config import CHOICES
from templatemine.warc.inputs import InputError, UnwritableOutput, check_output, expand_inputs, local_file

MODES = list(CHOICES[("detect", "mode")])
PAGELEVEL_MODES = list(CHOICES[("pagelevel", "mode")])


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--master", help="Spark master (default: local[*], or spark-submit's)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="Spark conf, repeatable")
    parser.add_argument("--preset", help="config preset: local, test, cluster (default: --config's, else local)")
    parser.add_argument("--config", help="TOML file with [extract], [detect], [clean], [pagelevel], [distill] "
                                         "and [spark] tables, and an optional preset = \"...\" (see conf/)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.NAME=VALUE",
                        help="override one config field (e.g. extract.k=4), repeatable")
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    parser.add_argument("--log-json", action="store_true",
                        help="machine-readable: one JSON object per line on stdout (progress, stages, summary)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="templatemine", description="Mine site templates from web archives.")
    sub = parser.add_subparsers(dest="command", required=True)
    extract = sub.add_parser("extract", help="WARC/ARC files -> records, pages, links, pagelets tables")
    extract.add_argument("inputs", nargs="+", metavar="INPUT",
                         help="WARC/ARC files, directories, globs or manifests (local, file://, hdfs://, s3a://)")
    extract.add_argument("--out", required=True, help="output folder (local, hdfs://, s3a://)")
    extract.add_argument("--fail-fast", action="store_true", help="stop at the first malformed record")
    _common(extract)

    run = sub.add_parser("run", help="extract, detect, the page-level model (--pagelevel), clean and "
                                     "OUT/report.html in one go")
    run.add_argument("inputs", nargs="+", metavar="INPUT",
                     help="WARC/ARC files, directories, globs or manifests (local, file://, hdfs://, s3a://)")
    run.add_argument("--out", required=True, help="output folder (local, hdfs://, s3a://)")
    run.add_argument("--fail-fast", action="store_true", help="stop at the first malformed record")
    run.add_argument("--mode", choices=MODES, help="template detector (default: config's, auto)")
    run.add_argument("--pagelevel", choices=PAGELEVEL_MODES,
                     help="site: templates only; page: the model only; hybrid: templates, then the model; "
                          "auto (default): hybrid for sites with >= pagelevel.min_site_pages pages, else page")
    _common(run)

    pagelevel = sub.add_parser("pagelevel", help="judge OUT's pages with the templateness model -> page_templateness")
    pagelevel.add_argument("out", metavar="OUT")
    pagelevel.add_argument("--pagelevel", choices=PAGELEVEL_MODES, help="default: config's (auto)")
    _common(pagelevel)

    train = sub.add_parser("train", help="train the templateness model on site-level runs' labels (MLlib)",
                           description="Labels: a node is template iff all its own text is in template pagelets "
                                       "of the site-level run. Writes MODEL/<version>/ and MODEL/LATEST.")
    train.add_argument("outs", nargs="+", metavar="OUT", help="outputs of `templatemine run` (nodes + templates)")
    train.add_argument("--model", required=True, help="model root folder (local, or a URI: hdfs://, s3a://, file://)")
    _common(train)

    density = sub.add_parser("density", help="OUT/density/: tokens per text density (Kohlschuetter Fig. 1) with "
                                             "the fitted two-class mixture, and term typicality (his Table 1)")
    density.add_argument("out", metavar="OUT")
    density.add_argument("--dest", help="folder to write (default OUT/density); an existing one is replaced only "
                                        "when empty or an earlier density report, and never OUT or a folder holding "
                                        "OUT (exit 2)")
    _common(density)

    detect = sub.add_parser("detect", help="templates and template_pagelets from an extract output")
    detect.add_argument("out", metavar="OUT")
    detect.add_argument("--mode", choices=MODES, help="default: config's (auto)")
    _common(detect)

    clean = sub.add_parser("clean", help="clean_pages and clean_links from a detect output")
    clean.add_argument("out", metavar="OUT")
    _common(clean)

    report = sub.add_parser("report", help="write OUT/report.html: counts, per-site table, plots, page viewer")
    report.add_argument("out", metavar="OUT")
    _common(report)

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

    nightly = sub.add_parser(
        "nightly", help="one incremental night: new WARC files into Delta state, templates of the touched sites",
        description="Ingests the WARC files no earlier night ingested into STATE (Delta tables), recomputes the "
                    "templates of the sites they touch and writes STATE/nights/<night>/. Running the same night "
                    "again changes nothing; a killed night re-run gives the uninterrupted result.")
    nightly.add_argument("inputs", nargs="*", metavar="INPUT", help="WARC files, folders, globs or manifests")
    nightly.add_argument("--state", required=True, help="the state folder (local, hdfs://, s3a://)")
    nightly.add_argument("--manifest", action="append", default=[], metavar="NEW_WARCS.txt",
                         help="a file listing WARC paths, one per line (repeatable)")
    nightly.add_argument("--history", action="store_true", help="show what each night did and exit")
    nightly.add_argument("--fail-fast", action="store_true")
    _common(nightly)

    from templatemine.graph import CONFIGS, DOM_CONFIGS

    distill = sub.add_parser(
        "distill", help="topic distillation: HITS/Clever in the six configurations of Bar-Yossef & Rajagopalan "
                        "section 5, and Chakrabarti's DOM-level distiller with MDL segmentation",
        description="Root set: pages whose clean text matches the query; base set: one link step out and in. "
                    "Prints the top hubs and authorities of each configuration.")
    distill.add_argument("out", metavar="OUT")
    distill.add_argument("--query", required=True, help='words must all occur; "quoted phrases" as phrases')
    distill.add_argument("--configs", default=",".join(CONFIGS + DOM_CONFIGS),
                         help=f"comma-separated subset of: {', '.join(CONFIGS + DOM_CONFIGS)}")
    distill.add_argument("--json", metavar="FILE", help="write the full result (50 ranked authorities each) as JSON")
    _common(distill)

    related = sub.add_parser("related", help="pages co-cited with URL (Dean & Henzinger, section 4 case 3)")
    related.add_argument("url", metavar="URL")
    related.add_argument("out", metavar="OUT")
    related.add_argument("-n", type=_count, default=20, help="how many (default 20)")
    related.add_argument("--unit", choices=["pagelet", "page"], default="pagelet",
                         help="count co-citation within one pagelet (default) or anywhere on a page (classic)")
    related.add_argument("--keep-templates", action="store_true",
                         help="count citations from template pagelets too (classic)")
    related.add_argument("--json", metavar="FILE")
    _common(related)

    priority = sub.add_parser("priority", help="OUT/crawl_priority: discovered URLs scored for a crawl frontier")
    priority.add_argument("out", metavar="OUT")
    _common(priority)
    return parser


def _count(text: str) -> int:
    """A non-negative int (`related -n -1` reached DataFrame.limit(-1))."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _spark_conf(items: list[str]) -> dict:
    """--conf KEY=VALUE items; a ValueError (exit 2, before Spark starts) for one without `=` or a key."""
    conf = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--conf {item!r} is not KEY=VALUE")
        conf[key.strip()] = value
    return conf


def _check_folder(path: str | None, label: str) -> None:
    """Before Spark starts: an empty OUT (an unset $OUT) or a local one that is a
    file started Spark and ended in a Py4J traceback (found in review)."""
    from templatemine.spark import under_spark_submit

    if path is None:
        return
    local = local_file(path)
    if not path.strip() or (local is not None and not local.strip()):
        raise ValueError(f"{label} is empty{' (' + repr(path) + ')' if path else ''}: an unset variable?")
    if urlsplit(path).scheme == "" and under_spark_submit():
        return  # a path without a scheme is on fs.defaultFS there (HDFS on YARN), not the driver's disk
    if local is not None and os.path.isfile(local):
        raise ValueError(f"{'' if label == 'OUT' else label + ' '}{path}: is a file, not a folder")


def _check_json(path: str | None) -> None:
    """--json FILE is written after the whole computation: a missing folder lost the results to a traceback."""
    if path is None:
        return
    if not path.strip():
        raise ValueError(f"--json {path!r}: empty file name")
    if os.path.isdir(path):
        raise ValueError(f"--json {path}: is a folder, not a file")
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise ValueError(f"--json {path}: no such folder {folder}")


def check_args(args) -> None:
    """The arguments' checks that need no Spark: a ValueError says what is wrong (exit 2)."""
    _spark_conf(args.conf)
    if args.command in ("extract", "run"):
        _check_folder(args.out, "--out")
    elif getattr(args, "out", None) is not None:
        _check_folder(args.out, "OUT")
    for out in getattr(args, "outs", None) or ():
        _check_folder(out, "OUT")
    for name in ("model", "state", "dest"):
        _check_folder(getattr(args, name, None), f"--{name}")
    _check_json(getattr(args, "json", None))


def summary_lines(manifest: dict) -> list[str]:
    from templatemine.report.render import aliased_note

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
    for twice in rec.get("counted_twice") or ():  # what made `accounted` false
        lines.append(f"    counted twice: {twice['warc_file']} at offset {twice['warc_offset']} ({twice['rows']} rows)")
    if rec.get("files_without_rows"):
        lines.append(f"  files that gave no record (empty?): {rec['files_without_rows']}, e.g. "
                     + ", ".join(rec["files_without_rows_sample"][:3]))
    share = links["internal_resolved_share"]
    lines += [
        f"  pages {rows['pages']}, links {rows['links']}, pagelets {rows['pagelets']}, "
        f"near-duplicate pages {manifest['pages']['with_dup_of']}",
        f"  internal links resolving to a crawled page: {links['internal_resolved']}/{links['internal']}"
        + (f" ({100 * share:.1f}%)" if share is not None else "")
        + aliased_note(links),
        f"  time: read+parse {timings['read_parse_s']}s, tables {timings['tables_s']}s, "
        f"counts {timings['counts_s']}s, total {timings['total_s']}s",
    ]
    if manifest["malformed_sample"]:
        lines.append("  malformed records (file, offset: error):")
        for m in manifest["malformed_sample"]:
            lines.append(f"    {m['warc_file']}, {m['warc_offset']}: {m['detail']}")
    if manifest.get("flattened_sample"):
        lines.append(f"  pages whose nesting was flattened (html/nesting.py): "
                     f"{manifest['pages']['nesting_flattened']} (file, offset: detail):")
        for m in manifest["flattened_sample"]:
            lines.append(f"    {m['warc_file']}, {m['warc_offset']}: {m['detail']}")
    lines.append(f"  manifest: {manifest['out'].rstrip('/')}/manifest.json")
    return lines


def _load(args):
    from templatemine.config import load_config

    given: set[str] = set()
    config = load_config(args.preset, args.config, args.set, given)
    if getattr(args, "fail_fast", False):
        config = replace(config, extract=replace(config.extract, fail_fast=True))
    if getattr(args, "pagelevel", None):
        config = replace(config, pagelevel=replace(config.pagelevel, mode=args.pagelevel))
    # as given in --set ("extract.nodes = true" too) or in the --config file (read once: a FIFO too)
    explicit = "extract.nodes" in given
    if args.command == "run" and config.pagelevel.mode == "site" and not explicit:  # no model, no need for nodes
        config = replace(config, extract=replace(config.extract, nodes=False))
    if args.command == "run" and config.pagelevel.mode != "site" and not config.extract.nodes:
        # else extract and detect ran (a minute, or hours) before "no nodes table for page-level detection"
        raise ValueError(f"extract.nodes=false needs --pagelevel site (pagelevel mode {config.pagelevel.mode} "
                         f"judges the nodes table)")
    return config


def _session(args, config, name):
    from templatemine.spark import DELTA_CONF, get_session, under_spark_submit

    conf = _spark_conf(args.conf)  # this command's --conf: always set
    if name == "nightly":
        conf = {**DELTA_CONF, **conf}
    # the preset's or config file's [spark]: spark-submit's --conf wins over them; and under
    # spark-submit with neither --preset nor --config, the implied `local` preset's table (a
    # laptop's 8 shuffle partitions) is no choice of the user's: Spark's own defaults stand
    chosen = args.preset is not None or getattr(args, "config", None) is not None
    table = config.spark if chosen or not under_spark_submit() else {}
    defaults = {key: value for key, value in table.items() if key not in conf}
    # Spark's console progress bar is for a person at a terminal; it would garble logs, cron mail and JSON
    defaults.setdefault("spark.ui.showConsoleProgress",
                        "false" if args.quiet or args.log_json or not sys.stderr.isatty() else "true")
    return get_session(f"templatemine {name}", args.master, conf, defaults)


def run_command(args) -> int:
    from templatemine.progress import Progress

    try:
        config = _load(args)
        files = None  # expanded before Spark starts: a bad path fails in a second
        missing: list[str] = []  # nightly: a manifest's entries that are gone (run_night)
        if args.command in ("extract", "run"):
            files = expand_inputs(args.inputs)
        elif args.command == "nightly" and not args.history:
            files = expand_inputs([*args.inputs, *args.manifest], missing)
        if args.command == "evaluate":
            args.out, args.golds = _evaluate_paths(args)
        check_args(args)
        if args.command in ("run", "clean") and config.clean.wet:
            # an OUT whose scheme Python's tasks cannot write (wasb://, oss://) fails now, in one line,
            # not at clean's WET files after extract and detect have run (clean checks again, after
            # Spark has resolved a scheme-less OUT against fs.defaultFS)
            check_output(f"{args.out.rstrip('/')}/wet")
    except (ValueError, OSError, InputError) as exc:
        print(f"templatemine: {exc}", file=sys.stderr)
        return 2
    from templatemine.spark import stop_when_idle
    from templatemine.tables.lock import LocalFiles, LockError, folder_files

    progress = Progress(quiet=args.quiet, json_lines=args.log_json)
    out = written_out(args)
    before_spark = out is not None and _on_driver_disk(out)
    try:
        # a local OUT's lock is taken before Spark starts; another's once the session can reach it
        with _holding(out if before_spark else None, LocalFiles, args, progress):
            spark = _session(args, config, args.command)
            done = False
            try:
                # (and a path without a scheme that the session's fs.defaultFS puts on HDFS, set by --conf or
                # HADOOP_CONF_DIR outside spark-submit: its lock is taken there too; found in review)
                remote = out is not None and (not before_spark or (not urlsplit(out).scheme
                                                                   and not _session_fs_local(spark)))
                with _holding(out if remote else None, lambda: folder_files(spark, out), args, progress):
                    code = _stages(spark, args, config, files, missing, progress)
                done = True
                return code
            finally:
                # a command that returned (with any exit code) lets a job that adaptive execution left
                # running end too; one that raised (a failed job, Ctrl-C) stops at once
                if done:
                    stop_when_idle(spark)
                else:
                    spark.stop()
    except LockError as exc:  # another command writes OUT: nothing was started, nothing in OUT touched
        print(f"templatemine: {lock_refusal(out, exc)}", file=sys.stderr)
        return 2


def _stages(spark, args, config, files, missing, progress) -> int:
    """The command's work, in the session (and holding OUT's lock where it writes OUT)."""
    from templatemine.tables.extract import run_extract
    from templatemine.tables.output import MissingTables, UnreadableFile
    from templatemine.templates.stage import run_clean, run_detect

    summary: list[str] = []
    document: dict = {"command": args.command}
    try:
        if args.command == "nightly":
            from templatemine.nightly.night import NothingOpened
            from templatemine.nightly.state import StateError

            try:
                return _nightly(spark, args, config, files, progress, missing)
            except (NothingOpened, StateError) as exc:  # a failed night (or one held off by the lock, or
                # another night's commit), said in one line: the scheduler sees exit 1
                print(f"templatemine: {exc}", file=sys.stderr)
                return 1
        if args.command in ("distill", "related", "priority"):
            return _graph(spark, args, config, progress)
        if args.command in ("train", "density"):
            return _model_command(spark, args, config, progress)
        if files is not None:
            manifest = run_extract(spark, files, args.out, config.extract, progress)
            progress.stage("extract", manifest["records"]["read"], manifest["timings"]["total_s"],
                           {k: manifest["rows"][k] for k in ("pages", "links", "pagelets")}, unit="records")
            summary += summary_lines(manifest)
            document["extract"] = manifest
        n_pages = _pages_in(spark, args.out) if args.command in ("run", "detect", "clean") else 0
        if args.command in ("run", "detect"):
            detect_config = replace(config.detect, mode=args.mode) if args.mode else config.detect
            detected = run_detect(spark, args.out, detect_config, progress)
            progress.stage("detect", n_pages, detected["timings"]["total_s"], detected["rows"])
            summary.append(f"  templates {detected['rows']['templates']} ({detected['mode']} detection), "
                           f"template pagelets {detected['rows']['template_pagelets']}")
            document["detect"] = detected
        if args.command in ("run", "pagelevel") and config.pagelevel.mode != "site":
            from templatemine.pagelevel.stage import run_pagelevel

            try:
                judged = run_pagelevel(spark, args.out, config.pagelevel, progress)
            except ValueError as exc:  # no model, a model of other features, no nodes table
                print(f"templatemine: {exc}", file=sys.stderr)
                return 2
            progress.stage("pagelevel", judged["rows"]["page_templateness"], judged["timings"]["total_s"],
                           judged["rows"])
            summary += pagelevel_lines(judged)
            document["pagelevel"] = judged
        elif args.command in ("run", "pagelevel"):
            from templatemine.pagelevel.stage import run_pagelevel

            run_pagelevel(spark, args.out, config.pagelevel, progress)  # site: drops an earlier judgement
            if args.command == "pagelevel":  # said nothing at all, not even with --log-json
                summary.append(f"pagelevel: site mode: no page-level judgement in {args.out}")
                document["pagelevel"] = {"mode": "site", "out": args.out, "rows": {"page_templateness": 0}}
        if args.command in ("run", "clean"):
            cleaned = run_clean(spark, args.out, progress, config.clean)
            progress.stage("clean", n_pages, cleaned["timings"]["total_s"], cleaned["rows"])
            summary += clean_lines(cleaned, args.out)
            document["clean"] = cleaned
        if args.command == "report" or (args.command == "run" and config.clean.report):
            from templatemine.report import write_report

            document["report"] = write_report(spark, args.out, progress)
            summary.append(f"  report: {document['report']}")
        if summary:
            progress.summary(summary, document)
        if args.command == "evaluate":
            try:
                _evaluate(spark, args, progress)
            except ValueError as exc:  # MissingTables too: one line, exit 2
                print(f"templatemine: {exc}", file=sys.stderr)
                return 2
    except (MissingTables, UnreadableFile, UnwritableOutput) as exc:  # a mistyped OUT, a stage run before the
        print(f"templatemine: {exc}", file=sys.stderr)  # one it reads, a manifest that cannot be read, WET
        # files to a file system that Python's tasks cannot write
        return 2
    except Exception as exc:
        # the worker's error as Spark relays it (within a Python trace, whose source lines say the same words)
        found = re.search(r"malformed record in [^\n]+? at offset \d+: [^\n]*", str(exc))  # a path may hold spaces
        first = found.group(0) if found else None
        if config.extract.fail_fast and first:
            print(f"templatemine: {first}", file=sys.stderr)
            return 1
        raise
    return 0


# the commands that write into OUT (tables, manifests, report.html, density/): each holds
# OUT/_lock while it runs (tables/lock.py), as a night holds STATE/_lock
WRITE_OUT = ("extract", "run", "detect", "pagelevel", "clean", "report", "priority")
CREATE_OUT = ("extract", "run")  # the others read OUT's tables first: no OUT, no lock (and their one-line error)


def written_out(args) -> str | None:
    """The OUT this command writes into, whose lock it holds; None for a command
    that only reads OUT (distill, related, evaluate, density --dest elsewhere),
    writes elsewhere (train: MODEL's new version folder, then LATEST replaced
    whole) or holds a lock of its own (nightly: STATE/_lock)."""
    if args.command in WRITE_OUT:
        return args.out
    if args.command == "density" and _within(args.dest or args.out, args.out):
        return args.out
    return None


def _within(path: str, folder: str) -> bool:
    """Whether PATH is FOLDER or lies in it, as spelt (local ones resolved)."""
    inner, outer = local_file(path), local_file(folder)
    if inner is None or outer is None:
        inner, outer = path.rstrip("/"), folder.rstrip("/")
    else:
        inner, outer = os.path.realpath(inner), os.path.realpath(outer)
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def _session_fs_local(spark) -> bool:
    """Whether the session puts a path without a scheme on the driver's disk (its fs.defaultFS)."""
    from templatemine.pagelevel.train import _default_fs_is_local

    return _default_fs_is_local(spark)


def _on_driver_disk(path: str) -> bool:
    """Whether PATH is on this machine's disk before any session says so: a
    local path or file: URI, except a path without a scheme under spark-submit
    (fs.defaultFS's there: HDFS on YARN)."""
    from templatemine.spark import under_spark_submit

    return local_file(path) is not None and not (urlsplit(path).scheme == "" and under_spark_submit())


@contextmanager
def _holding(out: str | None, file_ops, args, progress):
    """OUT/_lock held for the with-block (nothing when OUT is None); `file_ops()`
    gives the lock its file operations. A lock of a process that is gone is
    taken over, said in the progress. A SIGTERM (a scheduler's kill) ends the
    process as it always did, leaving the lock to be taken over: raising from
    a handler waited for the running Spark job, then left py4j's answers off
    by one, so a Hadoop lock stayed anyway (found in review)."""
    if out is None:
        yield
        return
    from templatemine.tables.lock import FolderLock, LockError, describe

    files = file_ops()
    lock = FolderLock(out, files, command=f"templatemine {args.command}")
    try:
        there = args.command in CREATE_OUT or files.exists(out)
    except OSError as exc:  # HDFS refused even to look (a folder the user may not enter, no NameNode)
        raise LockError(f"cannot read {out} ({exc.strerror or exc})", lock.path) from None
    if not there:
        # a stage that reads OUT's tables (detect, clean, ...) on a mistyped OUT: no folder made for
        # the lock, so the stage says "no such output" (a lock's empty OUT made it "no tables")
        yield
        return
    try:
        lock.__enter__()
    except OSError as exc:  # OUT (or its parent) not writable, a read-only file system; on HDFS
        # AccessControlException, SafeModeException (tables/lock.py hadoop_error)
        raise LockError(f"cannot create {lock.path} ({exc.strerror or exc})", lock.path) from None
    try:
        if lock.taken_over:
            progress(f"{args.command}: took over {lock.path}, left by {describe(lock.taken_over)}, which is gone")
        yield
    finally:
        lock.release()  # (one the file system will not remove: a warning; the command's outcome stands)


def lock_refusal(out: str, exc) -> str:
    """The one line of a command refused OUT's lock."""
    from templatemine.tables.lock import LockHeld

    if isinstance(exc, LockHeld):
        return (f"OUT {out} is being written by another command: {exc}; run one command per OUT at a time, or, "
                f"if that process is gone (it ran on another machine or container), delete {exc.path}")
    return f"OUT {out}: {exc}"


def pagelevel_lines(judged: dict) -> list[str]:
    from templatemine.pagelevel.stage import token_shares

    parts = []
    for mode, m in sorted(judged["modes"].items()):
        share, rule, outside = token_shares(m)
        parts.append(f"{m['pages']} {mode} ({share:.1%} of tokens template"
                     + (f", {rule:.1%} as unlikely candidates" if rule else "")
                     + (f", {outside:.1%} outside the article" if outside else "") + ")")
    trained = judged.get("trained")
    origin = ("" if trained is None else " (trained on this run's sites)" if trained["from_run"]
              else f" (shipped: not trainable on this run, {trained['reason']})")
    lines = [f"  page-level model {judged['model']}{origin}: " + ", ".join(parts)]
    aside = judged.get("set_aside")  # a nightly state's pages whose nodes hold older features (judgeable_nodes)
    if aside:
        from templatemine.pagelevel.features import set_aside_message

        lines.append(f"  {set_aside_message(aside)}")
    return lines


def _model_command(spark, args, config, progress) -> int:
    try:
        if args.command == "train":
            from templatemine.pagelevel.train import train_page_model

            result = train_page_model(spark, args.outs, args.model, config.pagelevel, progress)
            lines = [f"  model {result['version']} -> {result['path']}"] + [
                f"  band >= {b['lower']} tokens: {b['train_content']} content / {b['train_template']} template "
                f"nodes, held-out accuracy {b['held_out_accuracy']:.3f}, k {b['pu_k']:.3f}" for b in result["bands"]]
        else:
            from templatemine.report.density_report import run_density

            result = run_density(spark, args.out, args.dest, progress)
            lines = [f"  density report -> {result['paths']['html']} (and {result['paths']['png']})"]
    except ValueError as exc:
        print(f"templatemine: {exc}", file=sys.stderr)
        return 2
    progress.summary(lines, result)
    return 0


def clean_lines(cleaned: dict, out: str) -> list[str]:
    lines = [f"  clean pages {cleaned['rows']['clean_pages']}, clean links {cleaned['rows']['clean_links']}, "
             f"mean template token fraction {cleaned['mean_template_token_fraction']:.3f}"]
    if "wet" in cleaned:
        wet = cleaned["wet"]
        lines.append(f"  wet: {wet['records']} conversion records in {wet['files']} file(s), "
                     f"{wet['bytes'] / 1e6:.1f} MB -> {out.rstrip('/')}/wet/")
    return lines


def _pages_in(spark, out: str) -> int:
    """Pages the detect and clean stages read: the extract manifest's count (no Spark job)."""
    from templatemine.tables.output import path_exists, read_json

    manifest = read_json(spark, f"{out.rstrip('/')}/manifest.json")  # one that is no JSON: one line, exit 2
    if manifest is not None:
        return int((manifest.get("rows") or {}).get("pages", 0))
    pages = f"{out.rstrip('/')}/pages"
    # remote OUT: one count; none at all: the stage itself says what is missing
    return spark.read.parquet(pages).count() if path_exists(spark, pages) else 0


def _nightly(spark, args, config, files, progress, missing=()) -> int:
    from templatemine.nightly.night import run_night
    from templatemine.nightly.state import State

    state = State(spark, args.state)
    if args.history:
        from templatemine.tables.output import path_exists

        if not path_exists(spark, args.state):  # a mistyped --state reads as an empty history otherwise
            print(f"templatemine: {args.state}: no such state (a first night creates it)", file=sys.stderr)
            return 2
        rows = state.history()
        if args.log_json:
            for row in rows:
                progress.event({"event": "history", **row})
            return 0
        nights = {n["night"]: n for n in state.nights()}
        print(f"{'night':<17}{'table':<19}{'version':>8}  {'operation':<14}{'inserted':>9}{'updated':>9}"
              f"{'deleted':>9}  when")
        for r in rows:
            m = r["metrics"]
            label = (r["night"] or "-") + ("" if r["committed"] or r["night"] is None else " (not committed)")
            print(f"{label:<17}{r['table']:<19}{r['version']:>8}  {r['operation']:<14}"
                  f"{m.get('numTargetRowsInserted', m.get('numOutputRows', '')):>9}"
                  f"{m.get('numTargetRowsUpdated', ''):>9}{m.get('numTargetRowsDeleted', ''):>9}  {r['timestamp']}")
        for name, n in nights.items():
            s = json.loads(n["summary"])
            print(f"night {name}: {s['files']} file(s), {s['records']} records, {s['pages_won']} pages new/newer, "
                  f"{s['pages_removed']} removed, {s['touched_sites']} sites touched, {s['templates']} templates "
                  f"-> {n['output']}")
        return 0
    summary = run_night(spark, args.state, files, config, progress, missing)
    absent = f", {summary['files_missing']} listed file(s) not found" if summary["files_missing"] else ""
    if summary.get("files_empty"):
        absent += f", {len(summary['files_empty'])} empty, left for a later night"
    if summary["night"] is None:
        progress.summary([f"nightly: nothing new ({summary['files_already_ingested']} file(s) already "
                          f"ingested{absent})"], summary)
        return 0
    unopened = summary.get("files_unopened") or []
    if unopened:
        absent += f", {len(unopened)} not opened or not read whole, left for a later night"
    t = summary["timings"]
    parts = ", ".join(f"{name} {t[key]}s" for name, key in (("detect", "detect_s"), ("judge", "pagelevel_s"),
                                                             ("clean", "clean_s"), ("report", "report_s")) if key in t)
    progress.stage("nightly", summary["snapshot_pages"], t["total_s"],
                   {"records": summary["records"], "pages_won": summary["pages_won"],
                    "pages_removed": summary["pages_removed"], "templates": summary["templates"],
                    "clean_pages": summary["clean_pages"]})
    progress.summary([
        f"night {summary['night']}: {summary['files']} new file(s) ({summary['files_already_ingested']} already "
        f"ingested{absent}), {summary['records']} records",
        f"  pages new or newer {summary['pages_won']}, removed {summary['pages_removed']}, sites touched "
        f"{summary['touched_sites']} ({summary['snapshot_pages']} live pages re-detected"
        f"{_redirecting(summary.get('snapshot_redirects'))})",
        f"  templates {summary['templates']} ({summary['detect_mode']}), clean pages {summary['clean_pages']}, "
        f"mean template token fraction {summary['mean_template_token_fraction']:.3f}",
        *(pagelevel_lines(summary["pagelevel"]) if "pagelevel" in summary else []),
        f"  time: extract {t['extract_s']}s, merge {t['merge_s']}s, detect+judge+clean {t['detect_clean_s']}s "
        f"({parts}), templates {t['templates_s']}s, total {t['total_s']}s",
        f"  output: {summary['output']}   history: templatemine nightly --state {args.state} --history",
    ], summary)
    return 0


def _redirecting(n: int | None) -> str:
    """The night's words for its REDIRECTS: the URLs that redirect to a snapshot page (or its
    twin), linked or not (nothing said when there are none)."""
    return f", {n} URL(s) redirecting to them" if n else ""


def _graph(spark, args, config, progress) -> int:
    try:
        return _graph_command(spark, args, config, progress)
    except ValueError as exc:  # a missing table, a query without words, a URL that is not one
        print(f"templatemine: {exc}", file=sys.stderr)
        return 2


def _graph_command(spark, args, config, progress) -> int:
    from templatemine.graph import stage

    if args.command == "distill":
        from templatemine.graph import CONFIGS, DOM_CONFIGS

        names = tuple(n.strip() for n in args.configs.split(",") if n.strip())
        unknown = [n for n in names if n not in CONFIGS + DOM_CONFIGS]
        if unknown or not names:
            print(f"templatemine: unknown configuration(s) {unknown} (known: {', '.join(CONFIGS + DOM_CONFIGS)})",
                  file=sys.stderr)
            return 2
        result = stage.run_distill(spark, args.out, args.query, config.distill, names, progress)
        lines = stage.distill_lines(result, config.distill.top)
    elif args.command == "related":
        result = stage.run_related(spark, args.out, args.url, args.n, args.unit, args.keep_templates)
        lines = stage.related_lines(result)
    else:
        result = stage.run_priority(spark, args.out, config.distill, progress)
        progress.stage("priority", result["rows"]["crawl_priority"], result["timings"]["total_s"], result["rows"])
        lines = stage.priority_lines(result)
    progress.summary(lines, result)  # shown before the file is written: a write that fails loses nothing
    if getattr(args, "json", None):
        stage.write_json(args.json, result)
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


def _evaluate(spark, args, progress=None) -> None:
    """Score OUT's clean_pages against the gold files: a table (or, with
    --log-json, the summary event). No gold page in OUT is a ValueError (a
    mistyped --pred scored 0 without a word); gold pages missing from it are
    counted and scored as empty text, as the scorer does."""
    from pyspark.sql import functions as F

    from templatemine.evaluate.bow import evaluate_texts, read_gold
    from templatemine.html.urls import normalize_url, registered_domain, url_host
    from templatemine.tables.output import extract_config, require_tables

    out, golds = args.out, args.golds
    require_tables(spark, out, ("clean_pages", *(("pages",) if args.peers else ())), "evaluate")
    site_of = lambda url: registered_domain(url_host(url))  # noqa: E731
    # gold URLs keyed as OUT's extract keyed its pages: with extract.strip_index=false
    # a gold .../index.html was looked for as .../ and scored as empty (found in review)
    strip_index = extract_config(spark, out).get("strip_index", True)
    normalize = lambda url: normalize_url(url, strip_index)  # noqa: E731
    # only the gold pages come to the driver, not the whole crawl
    urls = sorted({normalize(u) or u for path in golds for u in read_gold(path)})
    # a literal filter, which the Parquet scan takes: a join with a createDataFrame of the URLs was a
    # Python job of its own, which adaptive execution could leave running (spark.stop_when_idle)
    wanted = F.col("url").isin(urls)
    clean = spark.read.parquet(f"{out.rstrip('/')}/clean_pages").where(wanted)
    systems = {"templatemine": {r["url"]: r["clean_text"] for r in clean.select("url", "clean_text").collect()}}
    found = len(systems["templatemine"])
    if not found:
        raise ValueError(f"none of the {len(urls)} gold URL(s) of {', '.join(golds)} is among {out}'s clean_pages "
                         f"(a gold of another crawl, or the wrong --pred?)")
    missing: dict[str, str] = {}
    if args.peers:
        from templatemine.evaluate.peers import available_peers, load_html, run_peers

        peers, missing = available_peers()
        pages = spark.read.parquet(f"{out.rstrip('/')}/pages").where(wanted).select(
            "url", "warc_file", "warc_offset").where(F.col("warc_file").isNotNull())
        html, unread = load_html([(r["url"], r["warc_file"], r["warc_offset"]) for r in pages.collect()])
        if unread:  # the peers score nothing on these pages
            (progress or print)(f"  peers: {len(unread)} page(s) could not be read back, e.g. {unread[0]}")
        systems.update(run_peers(html, peers))
    results = {name: evaluate_texts(texts, golds, normalize, site_of) for name, texts in systems.items()}
    ours = results["templatemine"]
    others = [n for n in systems if n != "templatemine"]
    lines = [f"{'gold':<32}{'pages':>6}{'sites':>6}{'P':>7}{'R':>7}{'F1':>7}" + "".join(f"{n:>13}" for n in others)]
    for name, s in ours["per_file"].items():
        lines.append(f"{name[-31:]:<32}{s.pages:>6}{s.sites:>6}{s.precision:>7.3f}{s.recall:>7.3f}{s.f1:>7.3f}"
                     + "".join(f"{results[n]['per_file'][name].f1:>13.3f}" for n in others))
    lines.append(f"{'mean over gold files (F1)':<32}{'':>6}{'':>6}{'':>7}{'':>7}{ours['mean_f1']:>7.3f}"
                 + "".join(f"{results[n]['mean_f1']:>13.3f}" for n in others))
    if found < len(urls):
        lines.append(f"  {len(urls) - found} of {len(urls)} gold pages are not in {out}'s clean_pages: "
                     f"scored as empty text")
    lines += [f"  {name}: {why}" for name, why in missing.items()]
    # (the --json file also holds each site's and page's scores, worst page first; the summary event
    # of --log-json only the means: a crawl's gold can be thousands of pages)
    document = {name: {"mean_f1": r["mean_f1"], "per_file": {k: vars(v) for k, v in r["per_file"].items()}}
                for name, r in results.items()} | {"missing_peers": missing,
                                                   "gold_pages": len(urls), "gold_pages_in_out": found}
    if progress is None:  # shown before the file is written: a write that fails loses nothing
        print("\n".join(lines))
    else:
        progress.summary(lines, {"command": "evaluate", "evaluate": document})
    if args.json:
        detail = {name: {**document[name],
                         "per_site": {k: {site: vars(v) for site, v in sites.items()}
                                      for k, sites in r["per_site"].items()},
                         "per_page": r["per_page"]} for name, r in results.items()}
        with open(args.json, "w") as fh:
            json.dump(document | detail, fh, indent=1)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    return run_command(args)


if __name__ == "__main__":
    sys.exit(main())
