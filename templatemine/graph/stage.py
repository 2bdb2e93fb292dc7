"""The graph commands over a run's output: `distill`, `related`, `priority`.

    OUT/pages, links, pagelets, template_pagelets, clean_pages
      -> distill QUERY : top hubs and authorities of the six Clever
                         configurations and the DOM/MDL distiller (printed, --json)
      -> related URL   : pages co-cited with URL (printed)
      -> priority      : OUT/crawl_priority (manifest priority.json)
"""

from __future__ import annotations

import json
import time
from typing import Callable

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from templatemine.config import DistillConfig
from templatemine.graph.cocitation import PAGE, PAGELET, citations, related
from templatemine.graph.distill import CONFIGS, DOM_CONFIGS, distill, read_tables
from templatemine.graph.priority import CRAWL_PRIORITY, crawl_priority
from templatemine.html.urls import normalize_url, page_key
from templatemine.tables.cache import persisted, released
from templatemine.tables.output import RunOutput, extract_config, new_run_id
from templatemine.tables.targets import crawled_targets, out_aliases


def run_distill(spark: SparkSession, out: str, query: str, config: DistillConfig = DistillConfig(),
                configs: tuple = CONFIGS + DOM_CONFIGS, progress: Callable[[str], None] = print) -> dict:
    result = distill(spark, out, query, config, configs, progress=progress)
    result.pop("base")
    if result["sizes"]["root"] == 0:
        progress(f"distill: no page's clean text matches {query!r}; nothing to rank")
    return result


def distill_lines(result: dict, top: int) -> list[str]:
    lines = [f"distill {result['query']!r}: root set {result['sizes']['root']}, base set {result['sizes']['base']} "
             f"pages, {result['sizes']['links']} links ({result['seconds']} s)"]
    for name, r in result["configs"].items():
        lines.append(f"\n== {name}: {r['edges']} {'leaves' if name in DOM_CONFIGS else 'edges'}, "
                     f"{r['iterations']} iterations{'' if r['converged'] else ' (NOT converged)'}")
        lines.append("  authorities:")
        for a in r["authorities"][:top]:
            lines.append(f"    {a['score']:.4f}  {a['url']}")
        lines.append("  hubs:")
        for h in r["hubs"][:top]:
            if name in DOM_CONFIGS:
                where = f"  [{h['subtree']}, {h['links']} links, {h['frontier_nodes']} frontier nodes]"
            elif h.get("pagelet") is not None:
                where = (f"  [pagelet {h['pagelet']} {h.get('dom_path') or ''}"
                         f"{' TEMPLATE' if h.get('template') else ''}] {h.get('text', '')[:50]!r}")
            else:
                where = ""
            lines.append(f"    {h['score']:.4f}  {h['url']}{where}")
        if "history" in r:
            lines.append("  MDL per iteration (Chakrabarti 2001 figs 13-14): iteration expanded/pruned/frontier "
                         "L1-change")
            lines.append("    " + "  ".join(f"{x['iteration']}:{x['expanded']}/{x['pruned']}/{x['frontier']}/"
                                            f"{x['change']:.1e}" for x in r["history"]))
    return lines


def run_related(spark: SparkSession, out: str, url: str, n: int = 20, unit: str = PAGELET,
                keep_templates: bool = False) -> dict:
    # the URL keyed as OUT's pages were (its extract may have kept index.html)
    norm = normalize_url(url, extract_config(spark, out).get("strip_index", True))
    if norm is None:
        raise ValueError(f"not an http(s) URL: {url!r}")
    key = page_key(norm)
    tables = read_tables(spark, out, ("links", "template_pagelets", "pages"))
    pages = tables["pages"]
    # a link to a crawled page's scheme twin, or to a URL that redirects to it, cites that
    # page (tables/targets.py); made once, for the query URL and for the links
    known = out_aliases(spark, out, pages).persist()
    try:
        # the query URL itself, where it is such an alias: its crawled page
        hit = known.where(F.col("written_key") == F.lit(key)).join(pages.select("page_key", "url"), "page_key") \
            .select("page_key", "url").first()
        if hit:
            norm, key = hit["url"], hit["page_key"]
        # a near-duplicate (a mirror, http beside https) is not a second citing page:
        # distill and crawl priority leave them out too
        originals = pages.where(F.col("dup_of").isNull()).select(F.col("page_key").alias("src_page_key"))
        links = crawled_targets(tables["links"], pages, known=known).join(originals, "src_page_key", "left_semi")
        templates = None if keep_templates else tables["template_pagelets"]
        cites = citations(links, templates, unit)
        rows = related(cites, key, n).collect()
        cited_by = cites.where(F.col("dst_page_key") == F.lit(key)).count()
    finally:
        known.unpersist()
    # a crawled page under its own URL, not the alias a link spelt (found in review)
    crawled = {r.page_key: r.url for r in pages.where(
        F.col("page_key").isin([r.dst_page_key for r in rows])).select("page_key", "url").collect()} if rows else {}
    return {"url": norm, "unit": unit, "templates_ignored": not keep_templates, "citing_units": cited_by,
            "related": [{"url": crawled.get(r.dst_page_key, r.url), "cocitations": r.cocitations,
                         "citing_pages": r.citing_pages} for r in rows]}


def related_lines(result: dict) -> list[str]:
    rule = (f"co-cited within one {result['unit']}"
            + (", template pagelets ignored" if result["templates_ignored"] else ", templates counted"))
    lines = [f"related {result['url']}: {rule}; {result['citing_units']} citing units"]
    lines += [f"  {r['cocitations']:>6} {r['citing_pages']:>6}  {r['url']}" for r in result["related"]]
    if not result["related"]:
        lines.append("  (nothing co-cited)")
    return lines


def run_priority(spark: SparkSession, out: str, config: DistillConfig = DistillConfig(),
                 progress: Callable[[str], None] = print) -> dict:
    started = time.time()
    output = RunOutput(spark, out, new_run_id())
    tables = read_tables(spark, out, ("pages", "links", "template_pagelets"))
    pages, members = tables["pages"], tables["template_pagelets"]
    progress(f"priority: scoring discovered URLs of {out} (template weight {config.template_weight})")
    try:
        with released():
            # a link to a crawled page's scheme twin, or to a URL that redirects to it, is to that
            # page; the aliases made once (the range sort's sample and the twins' merge read the
            # links again: crawl_priority)
            links = crawled_targets(tables["links"], pages, known=persisted(out_aliases(spark, out, pages)))
            crawl_priority(pages, links, members, config.template_weight).write.mode("overwrite").parquet(
                output.staged(CRAWL_PRIORITY))
        table = spark.read.parquet(output.staged(CRAWL_PRIORITY))
        stats = table.agg(F.count("*").alias("urls"), F.sum((~F.col("crawled")).cast("int")).alias("uncrawled"),
                          F.sum(((F.col("content_citing_pages") == 0)).cast("int")).alias("template_only")).first()
        top = [r.asDict() for r in table.where(~F.col("crawled"))
               .orderBy(F.desc("priority"), F.desc("content_citing_sites"), "url").limit(10).collect()]
    except BaseException:
        output.cleanup()
        raise
    manifest = {"stage": "priority", "run_id": output.run_id, "out": output.out,
                "template_weight": config.template_weight,
                "rows": {CRAWL_PRIORITY: stats["urls"]}, "uncrawled": stats["uncrawled"] or 0,
                "template_only": stats["template_only"] or 0,
                "timings": {"total_s": round(time.time() - started, 3)}}
    output.commit([CRAWL_PRIORITY], "priority.json", manifest)
    manifest["top_uncrawled"] = top
    return manifest


def priority_lines(manifest: dict) -> list[str]:
    lines = [f"crawl_priority: {manifest['rows'][CRAWL_PRIORITY]} discovered URLs, {manifest['uncrawled']} not "
             f"crawled, {manifest['template_only']} linked only from removed pagelets "
             f"(templates or page-level boilerplate) -> "
             f"{manifest['out']}/{CRAWL_PRIORITY}", "  top uncrawled (priority, content pages, templates):"]
    lines += [f"  {r['priority']:>8.2f} {r['content_citing_pages']:>6} {r['citing_templates']:>4}  {r['url']}"
              for r in manifest["top_uncrawled"]]
    return lines


def write_json(path: str, document: dict) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(document, fh, indent=1, default=str)


__all__ = ["run_distill", "run_related", "run_priority", "PAGE", "PAGELET"]
