"""Two nights over two halves of the nine sites vs one run over all of it.

Each site's pages.warc.gz (../shared/corpora/sites) is split in two by a hash
of the record's target URI (all records of a URL stay together), giving 18
files. Night 1 ingests the first halves, night 2 the second; a plain `run`
(extract, detect, the page-level model, clean, with `run`'s default
pagelevel.mode auto, as the nights) takes all 18 files at once. Printed: per night its
counts and times, then how the final night's templates, template membership
and clean text compare with the one run's, and both scored on the gold.

    .venv/bin/python scripts/nightly_halves.py [--work /tmp/templatemine-halves]
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import shutil
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
SITES = os.path.join(ROOT, "..", "shared", "corpora", "sites")


def split_warc(src: str, dst_a: str, dst_b: str) -> tuple[int, int]:
    from warcio.archiveiterator import ArchiveIterator
    from warcio.warcwriter import WARCWriter

    counts = [0, 0]
    with open(src, "rb") as fh, open(dst_a, "wb") as fa, open(dst_b, "wb") as fb:
        writers = [WARCWriter(fa, gzip=True), WARCWriter(fb, gzip=True)]
        for record in ArchiveIterator(fh):
            uri = record.rec_headers.get_header("WARC-Target-URI") or ""
            half = hashlib.sha1(uri.encode()).digest()[0] % 2
            writers[half].write_record(record)
            counts[half] += 1
    return counts[0], counts[1]


def rows(spark, path: str, cols: list[str]) -> set:
    return {tuple(r) for r in spark.read.parquet(path).select(*cols).collect()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/templatemine-halves")
    args = ap.parse_args()
    warcs = sorted(glob.glob(os.path.join(SITES, "*", "pages.warc.gz")))
    golds = sorted(glob.glob(os.path.join(SITES, "*", "gold.jsonl")))
    if not warcs:
        print(f"no sites under {SITES}", file=sys.stderr)
        return 1
    from templatemine.config import LOCAL
    from templatemine.evaluate.bow import evaluate_texts
    from templatemine.html.urls import normalize_url
    from templatemine.nightly.night import run_night
    from templatemine.nightly.state import State
    from templatemine.pagelevel.stage import run_pagelevel
    from templatemine.spark import DELTA_CONF, get_session
    from templatemine.tables.extract import run_extract
    from templatemine.templates.stage import run_clean, run_detect
    from templatemine.warc.inputs import expand_inputs

    shutil.rmtree(args.work, ignore_errors=True)
    halves: list[list[str]] = [[], []]
    for w in warcs:
        site = os.path.basename(os.path.dirname(w))
        a, b = (os.path.join(args.work, "warc", f"{site}-{h}.warc.gz") for h in ("1", "2"))
        os.makedirs(os.path.dirname(a), exist_ok=True)
        split_warc(w, a, b)
        halves[0].append(a)
        halves[1].append(b)
    spark = get_session("nightly halves", None, {**LOCAL.spark, **DELTA_CONF, "spark.ui.showConsoleProgress": "false"})
    quiet = lambda _m: None  # noqa: E731
    state = os.path.join(args.work, "state")
    nights = []
    for i, files in enumerate(halves, 1):
        nights.append(run_night(spark, state, expand_inputs(files), LOCAL, quiet))
        n = nights[-1]
        judged = ", ".join(f"{m['pages']} {mode}" for mode, m in sorted(n.get("pagelevel", {}).get("modes", {}).items()))
        print(f"night {i} ({n['night']}): {n['files']} files, {n['records']} records, {n['pages_won']} pages new, "
              f"{n['touched_sites']} sites touched, {n['snapshot_pages']} pages re-detected ({n['detect_mode']}), "
              f"judged: {judged or 'site level'}, "
              f"{n['templates']} templates, {n['timings']['total_s']} s (extract {n['timings']['extract_s']}, "
              f"merge {n['timings']['merge_s']}, detect+judge+clean {n['timings']['detect_clean_s']}, "
              f"templates {n['timings']['templates_s']})")
    one = os.path.join(args.work, "one-run")
    t = time.time()
    run_extract(spark, expand_inputs(halves[0] + halves[1]), one, LOCAL.extract, quiet)
    detected = run_detect(spark, one, LOCAL.detect, quiet)
    run_pagelevel(spark, one, LOCAL.pagelevel, quiet)  # as `run` and the nights do (pagelevel.mode auto)
    run_clean(spark, one, quiet, LOCAL.clean)
    print(f"one run over all 18 files: {detected['rows']['templates']} templates ({detected['mode']}), "
          f"{time.time() - t:.1f} s")

    last = State(spark, state).nights()[-1]["output"]
    report = {}
    for name, cols in (("templates", ["template_id", "n_pages", "n_sites"]),
                       ("template_pagelets", ["page_key", "ordinal", "template_id"]),
                       ("clean_pages", ["url", "clean_text"])):
        a, b = rows(spark, f"{last}/{name}", cols), rows(spark, f"{one}/{name}", cols)
        report[name] = {"nightly": len(a), "one_run": len(b), "only_nightly": len(a - b), "only_one_run": len(b - a)}
        print(f"{name:<18} nightly {len(a):>6}  one run {len(b):>6}  only in nightly {len(a - b):>5}  "
              f"only in one run {len(b - a):>5}")
    members = ["page_key", "ordinal", "template_id"]
    in_state = {tuple(r) for r in State(spark, state).read_table("template_pagelets").select(*members).collect()}
    same = in_state == rows(spark, f"{one}/template_pagelets", members)
    report["state_template_pagelets_equal"] = same
    print(f"state template_pagelets equal to the one run's: {same}")
    for label, out in (("nightly", last), ("one run", one)):
        texts = {r["url"]: r["clean_text"] for r in spark.read.parquet(f"{out}/clean_pages").collect()}
        score = evaluate_texts(texts, golds, normalize_url)
        report[f"f1_{label}"] = round(score["mean_f1"], 4)
        print(f"{label}: mean F1 over the nine sites {score['mean_f1']:.3f}")
    with open(os.path.join(args.work, "halves.json"), "w") as fh:
        json.dump({"nights": nights, "compare": report}, fh, indent=1, default=str)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
