"""Cost of global detection (Fig. 5) against the number of pages, on synthetic webs.

    .venv/bin/python scripts/detect_cost.py [--sizes 945,9450,94500] [--work /tmp/templatemine-cost]

For each size (default: 1x, 10x and 100x the 945 pages of ../shared/corpora/sites)
it generates a synthetic web (templatemine/evaluate/synthetic.py, seed 1),
extracts it, and runs `detect --mode global` in local mode once per
connected-components algorithm (--cc: the DataFrame large-star/small-star that
stands in for GraphFrames' two_phase, and min-label propagation), measuring
from Spark's own accounting (the status REST API of the driver):
- wall time of extract, detect and clean; shuffle bytes written and read by detect;
- skew: for every detect stage of at least 4 tasks, the longest task over the
  median one; the worst ratio among stages whose longest task took >= 1 s;
- the self-join's size against the paper's bound (section 3.2: TEMPLATE_LINKS
  has at most d^2 * M rows, d the most template pagelets on a page, M the links):
  TEMPLATE_LINKS rows, its first join's rows (page links x the source's
  shingles, at most d * M), bridge links, d and M;
- the giant group: pages in the largest shingle group (the synthetic web's share
  bar, "Home | Share | Privacy policy", on every page of every site) and sites in it;
- for contrast, Figure 5 steps 4-5 taken literally (TEMPLATE_LINKS grouped by
  shingle, each group's BFS in one task): the longest task of its slowest stage
  against that stage's median task.

Writes WORK/detect_cost.json and prints a Markdown table. Shuffle partitions are
16 with AQE's partition coalescing off, so that every stage has tasks to
compare (with coalescing on, local mode often runs a stage as one task).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

SPARK_CONF = {
    "spark.sql.shuffle.partitions": "16",
    "spark.sql.adaptive.coalescePartitions.enabled": "false",
    "spark.driver.memory": "6g",
    "spark.ui.showConsoleProgress": "false",
    # the status API must still know every stage of a run at the end of it
    "spark.ui.retainedStages": "200000",
    "spark.ui.retainedJobs": "100000",
    "spark.sql.ui.retainedExecutions": "100000",
    "spark.ui.retainedTasks": "2000000",
}


def _get(url: str):
    with urllib.request.urlopen(url, timeout=30) as fh:
        return json.load(fh)


def _ms(stamp: str | None) -> float | None:
    """Epoch ms of a status API time stamp ("2026-11-23T02:25:25.123GMT")."""
    if not stamp:
        return None
    from datetime import datetime, timezone

    return datetime.strptime(stamp.replace("GMT", ""), "%Y-%m-%dT%H:%M:%S.%f").replace(
        tzinfo=timezone.utc).timestamp() * 1000


def _records(metrics: dict) -> float:
    """Records a task read: scan input plus shuffle input (a task summary's
    quantile or one task's metrics: the two spell the shuffle field apart).
    A scan of a cached table counts its column batches (up to 10,000 rows
    each), not rows: compare bytes (`_bytes`) there."""
    shuffle = metrics.get("shuffleReadMetrics") or {}
    return (((metrics.get("inputMetrics") or {}).get("recordsRead") or 0)
            + (shuffle.get("readRecords", shuffle.get("recordsRead")) or 0))


def _bytes(metrics: dict) -> float:
    """Bytes a task read, scan (cached blocks included) plus shuffle; as `_records`."""
    shuffle = metrics.get("shuffleReadMetrics") or {}
    read = shuffle.get("readBytes")
    if read is None:
        read = (shuffle.get("remoteBytesRead") or 0) + (shuffle.get("localBytesRead") or 0)
    return ((metrics.get("inputMetrics") or {}).get("bytesRead") or 0) + (read or 0)


def _written(metrics: dict) -> float:
    """Shuffle records a task wrote (a task summary's quantile or one task's
    metrics): where its input is not counted (a checkpoint's files), the
    output still shows a skewed partition."""
    shuffle = metrics.get("shuffleWriteMetrics") or {}
    return shuffle.get("writeRecords", shuffle.get("recordsWritten")) or 0


def longest_task(base: str, sid: int, attempt: dict, median_records: float, median_bytes: float = 0.0,
                 median_written: float = 0.0) -> dict:
    """Why a stage's longest task was long: how many records and bytes it read
    against the median task (data skew reads more; on cached input only the
    bytes compare, `_records`); its run time, GC, deserialisation,
    shuffle fetch wait and scheduler delay; and when it started after the
    stage's first task (the first wave pays for starting Python workers and
    compiling code)."""
    rows = _get(f"{base}/stages/{sid}/{attempt['attemptId']}/taskList?sortBy=-runtime&length=1")
    if not rows:
        return {}
    task = rows[0]
    m = task.get("taskMetrics") or {}
    first, launched = _ms(attempt.get("firstTaskLaunchedTime")), _ms(task.get("launchTime"))
    records, read = _records(m), _bytes(m)
    return {"records": records, "median_records": median_records,
            "records_over_median": round(records / median_records, 2) if median_records else None,
            "bytes": read, "median_bytes": median_bytes,
            "bytes_over_median": round(read / median_bytes, 2) if median_bytes else None,
            "written": _written(m), "median_written": median_written,
            "written_over_median": round(_written(m) / median_written, 2) if median_written else None,
            # where its time went: running, of which GC; waiting for shuffle blocks; before it ran
            "duration_s": (task.get("duration") or 0) / 1000, "run_s": (m.get("executorRunTime") or 0) / 1000,
            "gc_s": (m.get("jvmGcTime") or 0) / 1000, "deserialize_s": (m.get("executorDeserializeTime") or 0) / 1000,
            "fetch_wait_s": ((m.get("shuffleReadMetrics") or {}).get("fetchWaitTime") or 0) / 1000,
            "scheduler_delay_s": (task.get("schedulerDelay") or 0) / 1000,
            "launched_after_first_s": round((launched - first) / 1000, 3) if first and launched else None}


def group_stages(spark, group: str, min_task_s: float = 1.0) -> list[dict]:
    """Shuffle bytes and task durations of the stages the job group ran; for
    stages of >= 4 tasks whose longest took >= min_task_s, also that task's
    rows, GC time and start (`longest_task`)."""
    sc = spark.sparkContext
    tracker = sc.statusTracker()
    stage_ids = sorted({s for j in tracker.getJobIdsForGroup(group) for s in (tracker.getJobInfo(j).stageIds or [])})
    base = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}"
    stages = []
    for sid in stage_ids:
        try:
            attempts = _get(f"{base}/stages/{sid}")
        except urllib.error.HTTPError:  # skipped stages (their shuffle was reused) are not listed
            continue
        for attempt in attempts:
            if attempt.get("status") != "COMPLETE":
                continue
            summary = _get(f"{base}/stages/{sid}/{attempt['attemptId']}/taskSummary?quantiles=0.5,1.0")
            median, longest = summary["duration"] if summary.get("duration") else (0.0, 0.0)
            stage = {
                "stage": sid, "name": attempt.get("name", "")[:60], "description": attempt.get("description", ""),
                "tasks": attempt["numTasks"],
                "shuffle_write_bytes": attempt.get("shuffleWriteBytes", 0),
                "shuffle_read_bytes": attempt.get("shuffleReadBytes", 0),
                "median_task_s": median / 1000, "max_task_s": longest / 1000,
            }
            if attempt["numTasks"] >= 4 and longest / 1000 >= min_task_s:
                median = {k: {f: v[0] for f, v in (summary.get(k) or {}).items() if isinstance(v, list) and v}
                          for k in ("inputMetrics", "shuffleReadMetrics", "shuffleWriteMetrics")}
                stage["longest_task"] = longest_task(base, sid, attempt, _records(median), _bytes(median),
                                                     _written(median))
            stages.append(stage)
    return stages


def skew(stages: list[dict], min_task_s: float = 1.0) -> dict:
    """Worst longest/median task ratio over stages of >= 4 tasks whose longest task took >= min_task_s."""
    ratios = [(s["max_task_s"] / max(s["median_task_s"], 1e-3), s) for s in stages
              if s["tasks"] >= 4 and s["max_task_s"] >= min_task_s]
    if not ratios:
        return {"worst_ratio": None, "stages_compared": 0}
    ratio, stage = max(ratios, key=lambda r: r[0])
    return {"worst_ratio": round(ratio, 2), "stage": stage["name"], "description": stage.get("description", ""),
            "max_task_s": stage["max_task_s"], "median_task_s": stage["median_task_s"],
            "longest_task": stage.get("longest_task", {}), "stages_compared": len(ratios),
            # every stage over 4x, to tell data skew (more rows) from fixed costs
            "over_4x": [{"stage": s["stage"], "name": s["name"], "description": s.get("description", ""),
                         "ratio": round(r, 2),
                         **s.get("longest_task", {})} for r, s in sorted(ratios, key=lambda x: -x[0]) if r > 4]}


def join_sizes(spark, out: str) -> dict:
    from pyspark.sql import functions as F

    from templatemine.templates.detect import (bridge_links, template_candidates, template_carriers, template_links,
                                               template_shingles)

    pagelets = spark.read.parquet(f"{out}/pagelets")
    links = spark.read.parquet(f"{out}/links")
    pages = spark.read.parquet(f"{out}/pages")
    candidates = template_candidates(pagelets, template_shingles(pagelets)).persist()
    per_page = candidates.select("page_key", "shingle").distinct().groupBy("page_key").count()
    d = per_page.agg(F.max("count")).first()[0] or 0
    page_links = links.where(F.col("src_page_key") != F.col("dst_page_key")).select(
        "src_page_key", "dst_page_key").distinct()
    m = page_links.count()
    first_join = page_links.join(per_page.withColumnRenamed("page_key", "src_page_key"), "src_page_key").agg(
        F.sum("count")).first()[0] or 0
    carriers = template_carriers(candidates).persist()
    tlinks = template_links(carriers, links).count()
    bridges = bridge_links(carriers, links).count()
    giant = candidates.join(pages.select("page_key", "site"), "page_key").groupBy("shingle").agg(
        F.countDistinct("page_key").alias("pages"), F.countDistinct("site").alias("sites")).orderBy(
        F.desc("pages")).first()
    carriers.unpersist()
    candidates.unpersist()
    return {"d": d, "M": m, "d2M": d * d * m, "dM": d * m, "first_join_rows": first_join,
            "template_links": tlinks, "bridge_links": bridges,
            "within_d2M": tlinks + bridges <= d * d * m,
            "giant_group_pages": giant["pages"] if giant else 0, "giant_group_sites": giant["sites"] if giant else 0,
            "candidates_pages_with_any": per_page.count()}


def literal_step4(spark, out: str) -> None:
    """Figure 5 steps 4-5 as the paper states them: each shingle's links in one
    place, BFS in memory. Run only to measure its skew."""
    import pandas as pd

    from templatemine.templates.detect import template_candidates, template_carriers, template_links, template_shingles

    pagelets = spark.read.parquet(f"{out}/pagelets")
    links = spark.read.parquet(f"{out}/links")
    tlinks = template_links(template_carriers(template_candidates(pagelets, template_shingles(pagelets))), links)

    def bfs(group: pd.DataFrame) -> pd.DataFrame:
        adjacency: dict = {}
        for a, b in zip(group["src_page_key"], group["dst_page_key"]):
            adjacency.setdefault(a, set()).add(b)
            adjacency.setdefault(b, set()).add(a)
        label: dict = {}
        for start in adjacency:
            if start in label:
                continue
            label[start] = start
            frontier = [start]
            while frontier:
                nxt = []
                for v in frontier:
                    for w in adjacency[v]:
                        if w not in label:
                            label[w] = start
                            nxt.append(w)
                frontier = nxt
        shingle = group["shingle"].iloc[0]
        return pd.DataFrame({"shingle": [shingle] * len(label), "page_key": list(label),
                             "component": list(label.values())})

    tlinks.groupBy("shingle").applyInPandas(bfs, "shingle long, page_key long, component long").write.mode(
        "overwrite").format("noop").save()


def measure(spark, size: int, work: str, seed: int, algorithms: list[str]) -> dict:
    from templatemine.config import DetectConfig, ExtractConfig
    from templatemine.evaluate.synthetic import WebSpec, generate, reuse_web
    from templatemine.tables.extract import run_extract
    from templatemine.templates.stage import run_clean, run_detect
    from templatemine.warc.inputs import expand_inputs

    web = os.path.join(work, f"web-{size}")
    out = os.path.join(work, f"out-{size}")
    # a web of another seed (or generator) is made again, and its extract with it
    reuse_web(web, WebSpec(pages=size, seed=seed, shards=8), lambda s, f: generate(s, f, workers=os.cpu_count() or 1),
              "detect_cost", derived=(out,))
    with open(os.path.join(web, "spec.json")) as fh:
        spec = json.load(fh)
    quiet = lambda _m: None  # noqa: E731
    sc = spark.sparkContext
    row: dict = {"pages": spec["pages"], "sites": spec["sites"], "largest_site": spec["largest_sites"][0]}
    t0 = time.perf_counter()
    if not os.path.exists(os.path.join(out, "manifest.json")):
        sc.setJobGroup("extract", "extract")
        run_extract(spark, expand_inputs(sorted(glob.glob(os.path.join(web, "warc", "*.warc.gz")))), out,
                    ExtractConfig(), progress=quiet)
    row["extract_s"] = round(time.perf_counter() - t0, 1)
    row["detect"] = {}
    for algorithm in algorithms:
        group = f"detect-{size}-{algorithm}"
        sc.setJobGroup(group, "detect")
        t0 = time.perf_counter()
        detected = run_detect(spark, out, DetectConfig(mode="global", cc_algorithm=algorithm), quiet)
        took = round(time.perf_counter() - t0, 1)
        stages = group_stages(spark, group)
        row["detect"][algorithm] = {
            "detect_s": took, "components": detected["connected_components"],
            "stages": len(stages),
            "shuffle_write_mb": round(sum(s["shuffle_write_bytes"] for s in stages) / 1e6, 1),
            "shuffle_read_mb": round(sum(s["shuffle_read_bytes"] for s in stages) / 1e6, 1),
            "skew": skew(stages),
            "templates": detected["rows"]["templates"],
            "template_pagelets": detected["rows"]["template_pagelets"],
        }
    sc.setJobGroup(f"clean-{size}", "clean")
    t0 = time.perf_counter()
    run_clean(spark, out, quiet)
    row["clean_s"] = round(time.perf_counter() - t0, 1)
    sc.setJobGroup(f"sizes-{size}", "join sizes")
    row["join"] = join_sizes(spark, out)
    sc.setJobGroup(f"literal-{size}", "Fig. 5 step 4 literally")
    t0 = time.perf_counter()
    literal_step4(spark, out)
    row["literal_step4_s"] = round(time.perf_counter() - t0, 1)
    slowest = max(group_stages(spark, f"literal-{size}"), key=lambda s: s["max_task_s"])
    row["literal_step4_skew"] = {"worst_ratio": round(slowest["max_task_s"] / max(slowest["median_task_s"], 1e-3), 1),
                                 "max_task_s": slowest["max_task_s"], "median_task_s": slowest["median_task_s"],
                                 "tasks": slowest["tasks"]}
    return row


def print_table(rows: list[dict]) -> None:
    base = rows[0]
    algorithms = list(base["detect"])
    print("\n| pages | sites | cc algorithm | rounds | detect s | ms per page | x time vs first | shuffle MB written "
          "| worst task / median (stages with a task >= 1 s) |")
    print("|" + "---|" * 9)
    for r in rows:
        for a in algorithms:
            d = r["detect"][a]
            sk = d["skew"]
            worst = (f"{sk['worst_ratio']} ({sk['max_task_s']:.1f} s vs {sk['median_task_s']:.1f} s, "
                     f"{sk['stages_compared']} stages)" if sk["worst_ratio"] is not None else "no task >= 1 s")
            print(f"| {r['pages']:,} | {r['sites']:,} | {a} | {d['components'].get('rounds', '-')} | {d['detect_s']} | "
                  f"{1000 * d['detect_s'] / r['pages']:.2f} | {d['detect_s'] / base['detect'][a]['detect_s']:.1f} | "
                  f"{d['shuffle_write_mb']:,} | {worst} |")
    print("\n| pages | M (page links) | d | d*M | d^2*M | first join rows | TEMPLATE_LINKS | bridge links "
          "| giant group pages / sites | Fig. 5 step 4 literally: s, longest task / median |")
    print("|" + "---|" * 10)
    for r in rows:
        j, lit = r["join"], r["literal_step4_skew"]
        print(f"| {r['pages']:,} | {j['M']:,} | {j['d']} | {j['dM']:,} | {j['d2M']:,} | {j['first_join_rows']:,} | "
              f"{j['template_links']:,} | {j['bridge_links']:,} | {j['giant_group_pages']:,} / "
              f"{j['giant_group_sites']:,} | {r['literal_step4_s']}, {lit['worst_ratio']} "
              f"({lit.get('max_task_s')} s vs {lit.get('median_task_s')} s) |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="945,9450,94500")
    ap.add_argument("--work", default="/tmp/templatemine-cost")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cc", default="two_phase,graphx",
                    help="connected-components algorithms to time (detect.cc_algorithm), comma-separated")
    args = ap.parse_args()
    from templatemine.spark import get_session

    os.makedirs(args.work, exist_ok=True)
    spark = get_session("templatemine-detect-cost", None, SPARK_CONF)
    spark.sparkContext.setCheckpointDir(os.path.join(args.work, "_checkpoints"))
    rows = []
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            row = measure(spark, size, args.work, args.seed, args.cc.split(","))
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        spark.stop()
    result = {"spark_conf": SPARK_CONF, "cores": os.cpu_count(), "rows": rows}
    with open(os.path.join(args.work, "detect_cost.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
