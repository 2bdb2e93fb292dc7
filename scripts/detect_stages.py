"""Detect again on an existing run's tables, and list every stage it ran.

    .venv/bin/python scripts/detect_stages.py OUT --json stages.json [--conf key=value ...] [--set detect.key=value ...]

For reading where detect's time and skew go without paying for extract again
(19 min at 1M pages instead of 40): `run_detect` over OUT's pages, pagelets and
links (OUT/templates and OUT/template_pagelets are rewritten, deterministic
ids, so the same rows), in local mode with `scripts/bench`'s Spark settings for
that many pages, plus any --conf. Writes every stage's tasks, median and longest
task, shuffle bytes and call site, and `detect_cost.skew`'s over-4x list; a
stage that appears several times with the same shuffle bytes is work computed
more than once (how the repeated reads of the memberships were found,
docs/scaling.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="a run's output folder (pages, pagelets, links)")
    ap.add_argument("--json", required=True, help="where to write the stages")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--conf", action="append", default=[], help="extra Spark conf, key=value")
    ap.add_argument("--set", action="append", default=[], dest="overrides",
                    help="templatemine setting, as run's --set: detect.merge_equal_carriers=false")
    args = ap.parse_args()
    from bench import bench_session
    from detect_cost import group_stages, skew

    from templatemine.config import load_config
    from templatemine.templates.stage import run_detect

    with open(os.path.join(args.out, "manifest.json")) as fh:
        pages = json.load(fh)["rows"]["pages"]
    extra = dict(c.split("=", 1) for c in args.conf)
    spark = bench_session("templatemine detect stages", args.cores, pages, extra)
    try:
        spark.sparkContext.setJobGroup("bench-detect", "detect")
        started = time.time()
        manifest = run_detect(spark, args.out, load_config("local", None, args.overrides).detect, lambda _m: None)
        seconds = round(time.time() - started, 1)
        stages = group_stages(spark, "bench-detect")
    finally:
        spark.stop()
    result = {"out": args.out, "pages": pages, "conf": extra, "set": args.overrides, "seconds": seconds, "rows": manifest["rows"],
              "components": manifest.get("connected_components"), "skew": skew(stages), "stages": stages}
    with open(args.json, "w") as fh:
        json.dump(result, fh, indent=1, default=str)
    sk = result["skew"]
    print(f"detect {seconds} s, {len(stages)} stages; worst task / median {sk['worst_ratio']} "
          f"({sk.get('description') or sk.get('stage')}); {len(sk.get('over_4x', []))} stages over 4x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
