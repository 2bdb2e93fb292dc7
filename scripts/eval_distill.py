"""Measure the uses of the clean graph (templatemine/graph/, issue 8):

1. the six Clever configurations of Bar-Yossef & Rajagopalan section 5 and the
   DOM/MDL distiller on a generated topic web with known relevance
   (evaluate/synthetic_topics.py: a sister network whose bar links all its
   portals, the ITtoolbox case), precision at 10 and 50;
2. the same table for a query on ../shared/corpora/sites, relevance judged by
   the query occurring in the page's *gold* main text (a proxy; the top
   results are listed so a reader can judge them);
3. co-citation for each portal's home page with and without the pagelet rule
   (related iff same topic);
4. crawl priorities: of the URLs never crawled, how many of the top K are the
   held-out authorities content links point at (the others are reached only
   through templates), against ranking by in-link count.

    .venv/bin/python scripts/eval_distill.py [--work /tmp/distill-eval] [--query-sites thread]
        [--json docs/measurements/distill.json]

Everything is written under --work (reused when present; the topic web and its
run only while its spec.json records the same spec: another --query, or a web made
by another version of the generator, is regenerated and re-run).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
SITES = os.path.join(ROOT, "..", "shared", "corpora", "sites")
TEMPLATEMINE = os.path.join(ROOT, ".venv", "bin", "templatemine")


def run_pipeline(warcs: list[str], out: str) -> None:
    if os.path.exists(os.path.join(out, "clean.json")):
        return
    subprocess.run([TEMPLATEMINE, "run", *warcs, "--out", out, "--quiet"], check=True)


def precision(urls: list[str], relevant, n: int) -> float:
    return sum(1 for u in urls[:n] if relevant(u)) / n


def table(result: dict, relevant) -> list[dict]:
    rows = []
    for name, r in result["configs"].items():
        urls = [a["url"] for a in r["authorities"]]
        rows.append({"config": name, "p10": precision(urls, relevant, 10), "p50": precision(urls, relevant, 50),
                     "ranked": len(urls), "iterations": r["iterations"], "converged": r["converged"],
                     "seconds": r["seconds"], "top": urls[:10]})
    return rows


def print_table(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    print(f"  {'configuration':<17}{'P@10':>6}{'P@50':>6}{'ranked':>8}{'iters':>7}{'secs':>7}")
    for r in rows:
        print(f"  {r['config']:<17}{r['p10']:>6.2f}{r['p50']:>6.2f}{r['ranked']:>8}"
              f"{r['iterations']:>6}{'' if r['converged'] else '*'}{r['seconds']:>7.1f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/distill-eval")
    ap.add_argument("--query", default="rock climbing", help="the synthetic web's query topic")
    ap.add_argument("--query-sites", default="thread")
    ap.add_argument("--json")
    args = ap.parse_args()

    from pyspark.sql import functions as F

    from templatemine.config import LOCAL, DistillConfig
    from templatemine.evaluate.synthetic import reuse_web
    from templatemine.evaluate.synthetic_topics import TopicWebSpec, generate_topics, read_truth
    from templatemine.graph.cocitation import PAGE, PAGELET, citations, related
    from templatemine.graph.distill import CONFIGS, DOM_CONFIGS, distill
    from templatemine.graph.priority import crawl_priority, inlink_baseline
    from templatemine.graph.query import matches, parse_query
    from templatemine.html.urls import normalize_url, page_key
    from templatemine.spark import get_session

    report: dict = {"date": time.strftime("%Y-%m-%d"), "query": args.query}
    web = os.path.join(args.work, "topics")
    reuse_web(web, TopicWebSpec(query_topic=args.query), generate_topics, "eval_distill")  # its run is in web/out
    with open(os.path.join(web, "spec.json")) as fh:
        spec = json.load(fh)
    run_pipeline([os.path.join(web, "warc", "topics.warc.gz")], os.path.join(web, "out"))
    truth = {t["url"]: t for t in read_truth(web)}
    report["web"] = {k: spec[k] for k in ("pages", "kinds", "relevant")}

    spark = get_session("eval_distill", None, {**LOCAL.spark, "spark.ui.showConsoleProgress": "false"})
    spark.sparkContext.setLogLevel("ERROR")
    quiet = lambda msg: None  # noqa: E731
    config = DistillConfig()

    # 1. six configurations on the topic web
    result = distill(spark, os.path.join(web, "out"), args.query, config, CONFIGS + DOM_CONFIGS, progress=quiet)
    result.pop("base")
    rows = table(result, lambda u: truth.get(u, {}).get("relevant", False))
    report["synthetic"] = {"sizes": result["sizes"], "table": rows,
                           "mdl": {n: result["configs"][n]["history"] for n in DOM_CONFIGS}}
    print(f"topic web: {spec['pages']} pages {spec['kinds']}, {spec['relevant']} relevant to {args.query!r}; "
          f"root {result['sizes']['root']}, base {result['sizes']['base']}, links {result['sizes']['links']}")
    print_table(f"precision of the top authorities, query {args.query!r} (truth: generator)", rows)
    for n in DOM_CONFIGS:
        h = result["configs"][n]["history"]
        print(f"  {n}: expanded/pruned per iteration " + " ".join(f"{x['expanded']}/{x['pruned']}" for x in h[:12])
              + (" ..." if len(h) > 12 else "") + f"; last L1 change {h[-1]['change']:.1e}")

    # 3. co-citation of each portal's home page
    out = os.path.join(web, "out")
    links = spark.read.parquet(f"{out}/links")
    members = spark.read.parquet(f"{out}/template_pagelets")
    variants = {"classic (page, templates counted)": citations(links, None, PAGE).persist(),
                "pagelet rule, templates ignored": citations(links, members, PAGELET).persist()}
    portals = sorted(u for u, t in truth.items() if t["kind"] == "portal" and u.endswith(".com/"))
    cocite: dict = {}
    for label, cites in variants.items():
        precs, examples = [], {}
        for url in portals:
            got = [r.url for r in related(cites, page_key(normalize_url(url)), 10).collect()]
            if got:
                precs.append(sum(truth.get(u, {}).get("topic") == truth[url]["topic"]
                                 and truth.get(u, {}).get("kind") != "portal" for u in got) / len(got))
            examples[url] = got[:5]
        cocite[label] = {"mean_precision_at_10": sum(precs) / len(precs) if precs else 0.0,
                         "portals_with_results": len(precs), "examples": examples}
    report["cocitation"] = cocite
    print("\nco-citation, related pages of each portal home page (related = same topic, not a portal)")
    for label, c in cocite.items():
        print(f"  {label:<36} precision@10 {c['mean_precision_at_10']:.2f} over {c['portals_with_results']} portals")
    example = portals[0]
    for label, c in cocite.items():
        print(f"    {label}: {example} -> {c['examples'][example][:4]}")

    # 4. crawl priorities over the URLs never crawled
    pages = spark.read.parquet(f"{out}/pages")
    pri = crawl_priority(pages, links, members, config.template_weight).where(~F.col("crawled"))
    base = (inlink_baseline(pages, links).join(pages.select(F.col("page_key").alias("dst_page_key")),
                                               "dst_page_key", "left_anti")
            .orderBy(F.desc("citing_pages"), "url"))
    held_out = {u for u, t in truth.items() if not t["crawled"]}
    pri_urls = [r.url for r in pri.select("url").collect()]
    base_urls = [r.url for r in base.select("url").collect()]
    k = len([u for u in pri_urls if u in held_out])
    report["priority"] = {
        "uncrawled": len(pri_urls), "content_linked_uncrawled": k,
        "precision_at_k": {"crawl_priority": precision(pri_urls, held_out.__contains__, k),
                           "inlink_count": precision(base_urls, held_out.__contains__, k)},
        "top10": {"crawl_priority": pri_urls[:10], "inlink_count": base_urls[:10]}}
    print(f"\ncrawl priority: {len(pri_urls)} uncrawled URLs, {k} of them content-linked (held-out authorities); "
          f"share of those in the top {k}: crawl_priority {report['priority']['precision_at_k']['crawl_priority']:.2f}"
          f", in-link count {report['priority']['precision_at_k']['inlink_count']:.2f}")
    print(f"  top 5 by in-link count: {base_urls[:5]}")
    print(f"  top 5 by crawl_priority: {pri_urls[:5]}")

    # 2. a real corpus
    golds = sorted(glob.glob(os.path.join(SITES, "*", "gold.jsonl")))
    if golds:
        sites_out = os.path.join(args.work, "sites")
        run_pipeline(sorted(glob.glob(os.path.join(SITES, "*", "pages.warc.gz"))), sites_out)
        terms = parse_query(args.query_sites)
        gold_match = {}
        for path in golds:
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    g = json.loads(line)
                    gold_match[normalize_url(g["url"]) or g["url"]] = matches(g.get("gold_text", ""), terms)
        res = distill(spark, sites_out, args.query_sites, config, CONFIGS + DOM_CONFIGS, progress=quiet)
        res.pop("base")
        srows = table(res, lambda u: gold_match.get(u, False))
        report["sites"] = {"query": args.query_sites, "sizes": res["sizes"], "table": srows,
                           "mdl": {n: res["configs"][n]["history"] for n in DOM_CONFIGS}}
        print(f"\nsites corpus, query {args.query_sites!r}: root {res['sizes']['root']}, base {res['sizes']['base']}"
              f", links {res['sizes']['links']}; {sum(gold_match.values())} of {len(gold_match)} gold pages "
              "mention it")
        print_table("precision of the top authorities (relevant: the query occurs in the page's gold text)", srows)
        for r in srows:
            print(f"  {r['config']}: " + ", ".join(u.split("//", 1)[1] + ("" if gold_match.get(u) else " (-)")
                                                   for u in r["top"][:10]))
    else:
        print(f"\n(no {SITES}: the real-corpus table is skipped)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)
        print(f"\nwrote {args.json}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
