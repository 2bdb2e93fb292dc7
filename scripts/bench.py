"""One benchmark run: templatemine's `run` against the single-process ceiling and the peers.

    scripts/bench --pages 10000 [--seed 1] [--work /tmp/templatemine-bench] [--sample 300] [--markup lean|real]
    scripts/bench --corpus DIR          # a synthetic web already written by scripts/synth_web.py
    scripts/bench --pagelevel auto      # also the NODES table and the page-level stage (default: site)
    scripts/bench --pagelevel auto --model run   # ... with a model trained on this run's site-level labels

On one corpus (a synthetic web, generated into WORK/web unless it holds the web of
the same --pages, --seed and --markup already), in one run:

1. ceiling: one Python process reads every record with warcio, parses the
   HTML with selectolax (Lexbor) and collects its text and links
   (scripts/bench_extract.py's `ceiling`): pages/s on one core;
2. peers: trafilatura and resiliparse on a sample of the same pages (every
   k-th response), single process: pages/s on one core;
3. templatemine: extract, detect and clean (with WET) in local mode on all
   cores, each stage its own Spark job group: seconds, pages/s per core
   (pages / (seconds x cores)), shuffle bytes (Spark's status API), the worst
   task/median ratio of the detect stages, the connected components' share of
   detect (`detect.json`), and the peak resident memory of the driver JVM and
   of the Python workers together, sampled from /proc every 0.2 s.
   `--pagelevel site` (default) is `templatemine run --pagelevel site`: the
   site-level detection of Bar-Yossef & Rajagopalan, no NODES table;
   `--pagelevel auto` is `run`'s default, with the page-level stage timed too;
   `--model run` trains its model on the run's own site-level labels within
   that stage (pagelevel.model = "run"), else the shipped model judges;
4. quality, when the corpus has the generator's truth/: template pagelet
   precision and recall (templatemine/evaluate/pagelet_truth.py) of detect's
   template_pagelets, plus with --pagelevel auto the pagelets the page-level
   model removed whole on the pages it judged alone (page mode); hybrid pages'
   extra removals are scored apart. Not timed.

Shuffle partitions: max(8, pages / 25,000), which AQE coalesces (40 at a
million pages; their sizes are in docs/scaling.md).

Prints, and writes WORK/bench.json and WORK/bench.md: the ratios to the
ceiling and to trafilatura, per core. The report (report.html) is not timed.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))


class PeakMemory(threading.Thread):
    """Peak RSS of this driver's JVM and of its Python workers (summed), from /proc."""

    def __init__(self, jvm_pid: int):
        super().__init__(daemon=True)
        self.jvm_pid = jvm_pid
        self.jvm_peak = 0
        self.workers_peak = 0
        self.stop = threading.Event()

    @staticmethod
    def _rss(pid: int) -> int:
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def _workers(self) -> int:
        total = 0
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    cmd = fh.read()
            except OSError:
                continue
            if b"pyspark.daemon" in cmd or b"pyspark.worker" in cmd:
                total += self._rss(int(pid))
        return total

    def run(self) -> None:
        while not self.stop.is_set():
            self.jvm_peak = max(self.jvm_peak, self._rss(self.jvm_pid))
            self.workers_peak = max(self.workers_peak, self._workers())
            time.sleep(0.2)


def response_html(paths: list[str], every: int) -> list[str]:
    from warcio.archiveiterator import ArchiveIterator

    out, i = [], 0
    for path in paths:
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type != "response":
                    continue
                if i % every == 0:
                    out.append(rec.content_stream().read().decode("utf-8", "replace"))
                i += 1
    return out


def peer_rates(html: list[str]) -> dict:
    from templatemine.evaluate.peers import available_peers

    peers, missing = available_peers(["trafilatura", "resiliparse"])
    rates = {}
    for name, extract in peers.items():
        t0 = time.perf_counter()
        for doc in html:
            try:
                extract(doc)
            except Exception:
                pass
        rates[name] = round(len(html) / (time.perf_counter() - t0), 2)
    return {"pages": len(html), "pages_per_s": rates, "missing": missing}


def shuffle_partitions(pages: int) -> int:
    return max(8, pages // 25_000)


def bench_session(name: str, cores: int, pages: int, extra: dict | None = None):
    """The local session the benchmark measures in (also scripts/detect_stages.py's),
    its Python workers started, so that no measured stage pays for that."""
    from templatemine.config import LOCAL
    from templatemine.spark import get_session

    spark = get_session(name, f"local[{cores}]", {
        **LOCAL.spark, "spark.ui.showConsoleProgress": "false", "spark.ui.retainedStages": "5000",
        "spark.ui.retainedTasks": "200000", "spark.driver.memory": "6g",
        "spark.sql.shuffle.partitions": str(shuffle_partitions(pages)),
        "spark.cleaner.periodicGC.interval": "5min",  # frees the components rounds' shuffle files on disk
        **(extra or {})})
    spark.range(cores * 4, numPartitions=cores).rdd.map(lambda x: x).count()
    return spark


def run_stages(paths: list[str], work: str, cores: int, pagelevel: str, pages_hint: int, model: str = "") -> dict:
    from dataclasses import replace

    from detect_cost import group_stages, skew

    from templatemine.config import LOCAL
    from templatemine.pagelevel.stage import run_pagelevel
    from templatemine.tables.extract import run_extract
    from templatemine.templates.stage import run_clean, run_detect
    from templatemine.warc.inputs import expand_inputs

    spark = bench_session("templatemine bench", cores, pages_hint)
    jvm_pid = int(spark.sparkContext._jvm.ProcessHandle.current().pid())
    memory = PeakMemory(jvm_pid)
    memory.start()
    out = os.path.join(work, "out")
    quiet = lambda _m: None  # noqa: E731
    stages, manifests = {}, {}
    extract_config = replace(LOCAL.extract, nodes=pagelevel != "site")
    names = ("extract", "detect", "clean") if pagelevel == "site" else ("extract", "detect", "pagelevel", "clean")
    for name in names:
        spark.sparkContext.setJobGroup(f"bench-{name}", name)
        t0 = time.time()
        if name == "extract":
            manifests[name] = run_extract(spark, expand_inputs(paths), out, extract_config, quiet)
        elif name == "detect":
            manifests[name] = run_detect(spark, out, LOCAL.detect, quiet)
        elif name == "pagelevel":
            manifests[name] = run_pagelevel(spark, out, replace(LOCAL.pagelevel, mode=pagelevel, model=model), quiet)
        else:
            manifests[name] = run_clean(spark, out, quiet, LOCAL.clean)
        seconds = time.time() - t0
        metrics = group_stages(spark, f"bench-{name}")
        stages[name] = {
            "seconds": round(seconds, 2),
            "shuffle_write_mb": round(sum(s["shuffle_write_bytes"] for s in metrics) / 1e6, 1),
            "skew": skew(metrics),
        }
    memory.stop.set()
    memory.join()
    pages = manifests["extract"]["rows"]["pages"]
    components = manifests["detect"].get("connected_components", {})
    for s in stages.values():
        s["pages_per_s_per_core"] = round(pages / (s["seconds"] * cores), 2)
    total = sum(s["seconds"] for s in stages.values())
    quality = None
    web = os.path.dirname(os.path.dirname(paths[0]))
    if glob.glob(os.path.join(web, "truth", "*.jsonl.gz")):
        from templatemine.evaluate.pagelet_truth import pagelet_quality

        spark.sparkContext.setJobGroup("bench-quality", "quality")
        quality = pagelet_quality(spark, out, web)
    spark.stop()
    return {
        "pages": pages, "cores": cores, "pagelevel": pagelevel,
        **({"model": manifests["pagelevel"]["model"], "model_trained": manifests["pagelevel"].get("trained")}
           if "pagelevel" in manifests else {}),
        "shuffle_partitions": shuffle_partitions(pages_hint), "stages": stages, "total_s": round(total, 2),
        "quality": quality,
        "run_pages_per_s_per_core": round(pages / (total * cores), 2),
        "templates": manifests["detect"]["rows"]["templates"], "detect_mode": manifests["detect"]["mode"],
        "components": components,
        "components_share_of_detect": round(components.get("seconds", 0) / stages["detect"]["seconds"], 3),
        "peak_rss_mb": {"driver_jvm": round(memory.jvm_peak / 1e6), "python_workers": round(memory.workers_peak / 1e6)},
    }


def components_line(c: dict) -> str:
    """What detect's connected components did: groups in memory, groups distributed (and its rounds)."""
    if "small_groups" not in c:
        return f"{c.get('implementation')}, {c.get('rounds')} rounds"
    line = f"{c['small_groups']:,} shingle groups ({c['small_edges']:,} edges) in memory"
    if c.get("large_groups"):
        d = c.get("distributed", {})
        line += (f", {c['large_groups']:,} ({c['large_edges']:,} edges) by {d.get('implementation')}"
                 f" in {d.get('rounds', '?')} rounds, {d.get('seconds')} s")
    return line + f"; largest group {c['largest_group_edges']:,} edges"


def markdown(result: dict) -> str:
    r = result["templatemine"]
    ceiling, peers = result["ceiling"], result["peers"]["pages_per_s"]
    lines = [
        f"Corpus: {result['corpus']} ({r['pages']} pages), {r['cores']} cores, {result['date']}, "
        f"commit {result.get('commit', 'unknown')}",
        *([f"Pages (median of the peers' sample): {p['median_bytes'] / 1e3:.1f} kB of HTML, "
           f"{p['median_body_elements']:.0f} elements in the body, {p['median_links']:.0f} links"]
          if (p := result.get("page_profile")) else []),
        "",
        "| what | pages/s per core | ratio to ceiling | ratio to trafilatura |",
        "|---|---|---|---|",
        f"| ceiling (warcio + selectolax, 1 process) | {ceiling['pages_per_s']} | 1.00 | "
        f"{ceiling['pages_per_s'] / peers['trafilatura']:.2f} |" if "trafilatura" in peers else "",
    ]
    for name, rate in peers.items():
        lines.append(f"| {name} (sample of {result['peers']['pages']}) | {rate} | {rate / ceiling['pages_per_s']:.3f} | "
                     + (f"{rate / peers['trafilatura']:.2f} |" if "trafilatura" in peers else "- |"))
    for name, s in r["stages"].items():
        lines.append(f"| templatemine {name} | {s['pages_per_s_per_core']} | "
                     f"{s['pages_per_s_per_core'] / ceiling['pages_per_s']:.3f} | "
                     + (f"{s['pages_per_s_per_core'] / peers['trafilatura']:.2f} |" if "trafilatura" in peers else "- |"))
    rate = r["run_pages_per_s_per_core"]
    lines.append(f"| **templatemine run (all {len(r['stages'])} stages)** | **{rate}** | **{rate / ceiling['pages_per_s']:.3f}** | "
                 + (f"**{rate / peers['trafilatura']:.2f}** |" if "trafilatura" in peers else "- |"))
    lines += [
        "",
        "| stage | seconds | shuffle written MB | worst task / median |",
        "|---|---|---|---|",
        *[f"| {n} | {s['seconds']} | {s['shuffle_write_mb']} | {s['skew']['worst_ratio'] or 'no task >= 1 s'} |"
          for n, s in r["stages"].items()],
        "",
        f"Connected components ({components_line(r['components'])}): "
        f"{r['components'].get('seconds')} s, {100 * r['components_share_of_detect']:.0f}% of detect. "
        f"Peak RSS: driver JVM {r['peak_rss_mb']['driver_jvm']} MB, Python workers {r['peak_rss_mb']['python_workers']} MB. "
        f"Templates: {r['templates']} ({r['detect_mode']}). `run --pagelevel {r['pagelevel']}`"
        + (f" (model {r['model']}{', trained on this run' if (r.get('model_trained') or {}).get('from_run') else ''})"
           if r.get("model") else "") + ", "
        f"{r['shuffle_partitions']} shuffle partitions.",
    ]
    sk = r["stages"]["detect"]["skew"]
    if sk.get("over_4x"):
        over = sk["over_4x"]
        # data skew reads (or, from a checkpoint, writes) more; bytes, since a cached scan counts batches as records
        more = [o for o in over if max(o.get("bytes_over_median") or 0, o.get("records_over_median") or 0,
                                       o.get("written_over_median") or 0) > 2]
        first = [o for o in over if o.get("launched_after_first_s") is not None and o["launched_after_first_s"] < 0.5]
        t = sk.get("longest_task", {})
        lines += ["", f"Detect stages with a task over 4x the median: {len(over)}. The worst "
                  f"({sk['description'] or sk['stage']}): {sk['max_task_s']} s vs {sk['median_task_s']} s, "
                  f"its longest task read {t.get('records')} records, {t.get('bytes')} bytes (median task "
                  f"{t.get('median_records')}, {t.get('median_bytes')}; cached input counts batches as records), "
                  f"GC {t.get('gc_s')} s, started {t.get('launched_after_first_s')} s after the stage's first task. "
                  f"Over all {len(over)}: {len(more)} longest tasks read or wrote over 2x the median task's "
                  "bytes or records (data skew), "
                  f"{len(first)} started in the stage's first 0.5 s."]
    q = r.get("quality")
    if q:
        lines += ["", "| template pagelets vs the generator's truth | precision | recall | TP | FP | FN | not scored |",
                  "|---|---|---|---|---|---|---|"]
        for scope, label in (("all_pages", "every page"), ("sites_with_2_or_more_pages", "sites with >= 2 pages")):
            s = q[scope]
            lines.append(f"| {label} | {s['precision']} | {s['recall']} | {s['true_positive']} | "
                         f"{s['false_positive']} | {s['false_negative']} | "
                         + ", ".join(f"{k} {v}" for k, v in s["not_scored"].items()) + " |")
        h = q.get("with_hybrid_removals")
        if h:  # what the hybrid pages' per-page boilerplate removals do to it (not templates by Def. 4)
            lines.append(f"| every page, hybrid pages' removals counted too | {h['precision']} | {h['recall']} | "
                         f"{h['true_positive']} | {h['false_positive']} | {h['false_negative']} | |")
        lines.append(f"\nPredicted template: {q.get('predicted_by', 'template_pagelets')}.")
    return "\n".join(line for line in lines if line is not None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", help="a synthetic web folder (with warc/); default: generate WORK/web")
    ap.add_argument("--pages", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--markup", choices=["lean", "real"], default="lean",
                    help="when generating: lean 4 kB pages, or the same content in a real site's markup")
    ap.add_argument("--work", default="/tmp/templatemine-bench")
    ap.add_argument("--sample", type=int, default=300, help="pages for the peers (every k-th response)")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--pagelevel", choices=["site", "auto"], default="site",
                    help="site: extract, detect, clean (no NODES); auto: run's default, page-level stage included")
    ap.add_argument("--model", default="", help='with --pagelevel auto: pagelevel.model ("" shipped, "run", a folder)')
    args = ap.parse_args()
    from bench_extract import ceiling

    from templatemine.evaluate.synthetic import WebSpec, generate, recorded_spec, reuse_web

    corpus = args.corpus or os.path.join(args.work, "web")
    make = lambda s, f: generate(s, f, workers=args.cores)  # noqa: E731
    spec = WebSpec(pages=args.pages, seed=args.seed, markup=args.markup)
    if not args.corpus:
        reuse_web(corpus, spec, make, "bench")
    elif not glob.glob(os.path.join(corpus, "warc", "*.warc.gz")):
        print(f"bench: generating a synthetic web of {args.pages} pages into {corpus}", flush=True)
        make(spec, corpus)
    paths = sorted(glob.glob(os.path.join(corpus, "warc", "*.warc.gz")))
    shutil.rmtree(os.path.join(args.work, "out"), ignore_errors=True)

    n, with_read, _ = ceiling(paths)
    import subprocess

    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    spec_of = recorded_spec(corpus)  # (pages, seed, markup, shards... of the web measured)
    result = {"corpus": corpus, "web_spec": spec_of if isinstance(spec_of, dict) else None,
              "date": time.strftime("%Y-%m-%d"), "commit": commit,
              "ceiling": {"pages": n, "seconds": round(with_read, 2), "pages_per_s": round(n / with_read, 2)}}
    print(f"bench: ceiling {result['ceiling']['pages_per_s']} pages/s on one core ({n} pages)", flush=True)
    sample = response_html(paths, max(1, n // args.sample))
    from templatemine.evaluate.synthetic import page_profile

    result["page_profile"] = page_profile(sample)
    result["peers"] = peer_rates(sample)
    print(f"bench: peers {result['peers']['pages_per_s']} pages/s on one core", flush=True)
    result["templatemine"] = run_stages(paths, args.work, args.cores, args.pagelevel, n, args.model)
    table = markdown(result)
    print(table)
    with open(os.path.join(args.work, "bench.json"), "w") as fh:
        json.dump(result, fh, indent=1, default=str)
    with open(os.path.join(args.work, "bench.md"), "w") as fh:
        fh.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
