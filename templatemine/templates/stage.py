"""Spark stages over an extract output: detect templates, then clean.

    OUT/pages, links, pagelets  (extract)
      -> OUT/templates, template_pagelets          (detect; manifest detect.json)
      -> OUT/clean_pages, clean_links               (clean;  manifest clean.json)

Each stage is committed atomically like extract (templatemine/tables/output.py).
Which detector runs: `mode` "global" (Fig. 5) or "local" (Fig. 4); "auto"
picks local for collections of fewer than `local_max_pages` pages, where a
template's pages are unlikely to be linked to each other inside the sample
(section 3.2: "the first algorithm ... is more suitable for document sets that
consist only of a small fraction of the documents from the larger universe").
"etdm" runs Alarte et al.'s detector (templates/etdm_stages.py), which works at
DOM-node level and also writes `page_templates` (each page's clean text and
template tokens, node level); "etdm+global" removes what either detector finds.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from templatemine.clean.clean import clean_links, clean_pages
from templatemine.config import CleanConfig, DetectConfig
from templatemine.spark import empty_frame
from templatemine.tables.cache import persisted, released
from templatemine.tables.output import (AFTER_DETECT, RunOutput, extract_config, new_run_id, path_exists,
                                       read_json, require_tables)
from templatemine.tables.targets import crawled_targets, out_aliases
from templatemine.templates.detect import (GLOBAL, LOCAL, evidence_filter, global_template_pagelets,
                                           local_template_pagelets, template_id, templates_table)

TEMPLATES, TEMPLATE_PAGELETS, CLEAN_PAGES, CLEAN_LINKS = "templates", "template_pagelets", "clean_pages", "clean_links"
WET = "wet"  # clean text as WARC conversion records (clean/wet.py)
PAGE_TEMPLATES = "page_templates"  # node-level result of the etdm modes
ETDM, COMBINED = "etdm", "etdm+global"


def _read(spark: SparkSession, out: str, name: str):
    return spark.read.parquet(f"{out.rstrip('/')}/{name}")


def run_detect(spark: SparkSession, out: str, config: DetectConfig = DetectConfig(),
               progress: Callable[[str], None] = print) -> dict:
    """Template detection over OUT's tables, written to OUT. Links are
    followed through the redirects of OUT's RECORDS, or of its REDIRECTS in a
    night's folder (tables/targets.py `out_aliases`)."""
    started = time.time()
    require_tables(spark, out, ("pages", "pagelets", "links"), "detect")
    output = RunOutput(spark, out, new_run_id())
    spark.sparkContext.setCheckpointDir(config.checkpoint_dir or f"{output.out}/_checkpoints")
    pages, pagelets, links = (_read(spark, out, n) for n in ("pages", "pagelets", "links"))
    ngram = int(extract_config(spark, out).get("shingle_ngram", 2))  # the n-grams of the extract's shingles
    mode = config.mode
    if mode == "auto":
        mode = LOCAL if pages.count() < config.local_max_pages else GLOBAL
    progress(f"detect: {mode} template detection over {out}")
    tables = [TEMPLATES, TEMPLATE_PAGELETS]
    extra: dict = {}
    components: dict = {}
    try:
        # what detect persists (memberships, carriers, edges, components) is
        # released once its tables are written, or when it fails
        with released():
            # Figure 5's self-join: a link to a page's scheme twin, or to a URL that redirects
            # to it, reaches it (tables/targets.py; the aliases made once)
            links = crawled_targets(links, pages, known=persisted(out_aliases(spark, out, pages)))
            if mode in (ETDM, COMBINED):
                extra = _detect_etdm(spark, output, pages, pagelets, links, config, mode, progress, components,
                                     ngram)
                tables.append(PAGE_TEMPLATES)
            else:
                _detect_bar_yossef(spark, output, pages, pagelets, links, config, mode, components, ngram)
        n_templates = spark.read.parquet(output.staged(TEMPLATES)).count()
        n_members = spark.read.parquet(output.staged(TEMPLATE_PAGELETS)).count()
    except BaseException:
        output.cleanup()
        try:  # the components rounds' checkpoints too (they were left behind; found in review)
            output.remove_path(spark.sparkContext.getCheckpointDir())
        except Exception:  # noqa: BLE001 (the run's own error is the one to see)
            pass
        raise
    manifest = {
        "stage": "detect", "run_id": output.run_id, "out": output.out, "config": asdict(config), "mode": mode,
        "connected_components": components,  # global modes: implementation (and rounds)
        "rows": {TEMPLATES: n_templates, TEMPLATE_PAGELETS: n_members, **extra.pop("rows", {})},
        **extra,
        "timings": {"total_s": round(time.time() - started, 3)},
    }
    stale = output.remove_stale((*AFTER_DETECT, *(() if PAGE_TEMPLATES in tables else (PAGE_TEMPLATES,))))
    if stale:
        progress(f"detect: removed the earlier {', '.join(stale)} from {out}: they describe the templates this "
                 f"detect replaces")
    output.commit(tables, "detect.json", manifest)
    # the components rounds' checkpoints served this run only (its tables are written)
    output.remove_path(spark.sparkContext.getCheckpointDir())
    return manifest


def _detect_bar_yossef(spark, output: RunOutput, pages, pagelets, links, config: DetectConfig, mode: str,
                       components: dict, ngram: int) -> None:
    """The global (Fig. 5) and local (Fig. 4) modes: template pagelets, the
    evidence filter, then the templates and template_pagelets tables."""
    if mode == GLOBAL:
        members = global_template_pagelets(spark, pagelets, links, config, components)
    elif mode == LOCAL:
        members = local_template_pagelets(pages, pagelets)
    else:
        raise ValueError(f"unknown detection mode {mode!r}")
    members = persisted(evidence_filter(members, pagelets, pages, config, ngram))
    templates = templates_table(members, pagelets, pages, mode if config.enabled else f"{mode}-paper")
    templates.write.mode("overwrite").parquet(output.staged(TEMPLATES))
    members.select("page_key", "ordinal", template_id()).write.mode("overwrite").parquet(
        output.staged(TEMPLATE_PAGELETS))


def _detect_etdm(spark, output: RunOutput, pages, pagelets, links, config: DetectConfig, mode: str,
                 progress, components: dict, ngram: int) -> dict:
    """The etdm modes: key pages and CSs, templates, every page mapped; in
    etdm+global, the global detector's template pagelets are removed too."""
    from templatemine.templates.etdm_stages import (etdm_template_pagelets, etdm_templates_table,
                                                    extract_templates, key_pages_and_subdigraphs, map_pages,
                                                    site_links)

    edges = persisted(site_links(pages, links, pagelets))
    keys = persisted(key_pages_and_subdigraphs(pages, pagelets, edges, config))
    templates = persisted(extract_templates(pages, keys, config))
    progress(f"detect: {templates.count()} etdm templates from {keys.count()} key pages")
    removed = global_members = None
    if mode == COMBINED:
        global_members = persisted(evidence_filter(global_template_pagelets(spark, pagelets, links, config, components),
                                                   pagelets, pages, config, ngram))
        removed = global_members.join(pagelets.select("page_key", "ordinal", "dom_path"), ["page_key", "ordinal"])
    map_pages(spark, pages, templates, config, removed).write.mode("overwrite").parquet(
        output.staged(PAGE_TEMPLATES))
    mapped = spark.read.parquet(output.staged(PAGE_TEMPLATES))
    members = etdm_template_pagelets(pagelets, mapped)
    table = etdm_templates_table(templates, keys, pages, mapped, mode)
    if global_members is not None:
        # a pagelet both detectors found takes etdm's template (F.first would take whichever row
        # the shuffle brought first: template ids, and the report's labels, changing between runs)
        members = members.select("page_key", "ordinal", "template_id", F.lit(0).alias("by")).unionByName(
            global_members.select("page_key", "ordinal", template_id(), F.lit(1).alias("by"))).groupBy(
            "page_key", "ordinal").agg(F.min(F.struct("by", "template_id"))["template_id"].alias("template_id"))
        table = table.unionByName(templates_table(global_members, pagelets, pages, GLOBAL), allowMissingColumns=True)
    table.write.mode("overwrite").parquet(output.staged(TEMPLATES))
    members.write.mode("overwrite").parquet(output.staged(TEMPLATE_PAGELETS))
    stats = spark.read.parquet(output.staged(TEMPLATES)).where(F.col("mode") == mode).agg(
        F.count("*").alias("templates"), F.avg(F.col("explored") + 1).alias("explored"),
        F.avg("pages_parsed").alias("parsed"), F.avg(F.col("complete").cast("double")).alias("complete"),
    ).first()
    load = mapped.agg(F.count("*").alias("pages"), F.count("load_error").alias("errors"),
                      F.count("template_id").alias("matched")).first()
    return {
        "rows": {PAGE_TEMPLATES: load["pages"]},
        "etdm": {
            "templates": stats["templates"],
            "mean_pages_explored_per_template": round(stats["explored"] or 0.0, 2),
            "mean_pages_parsed_per_template": round(stats["parsed"] or 0.0, 2),
            "complete_subdigraph_share": round(stats["complete"] or 0.0, 3),
            "pages_matched_to_a_template": load["matched"],
            "pages_not_reloaded": load["errors"],
        },
    }


def run_clean(spark: SparkSession, out: str, progress: Callable[[str], None] = print,
              config: CleanConfig = CleanConfig()) -> dict:
    started = time.time()
    output = RunOutput(spark, out, new_run_id())
    detected = output.read_json(output.final("detect.json")) or {}
    judged = _page_level(spark, output, out, detected, progress)
    alone = judged_alone(spark, out, judged)
    require_tables(spark, out, ("pages", "pagelets", "links", *(() if alone else (TEMPLATE_PAGELETS,))), "clean")
    pages, pagelets, links = (_read(spark, out, n) for n in ("pages", "pagelets", "links"))
    members = no_members(spark) if alone else _read(spark, out, TEMPLATE_PAGELETS)
    progress(f"clean: removing template pagelets from pages and links in {out}")
    try:
        cleaned = clean_pages(pages, pagelets, members)
        if detected.get("mode") in (ETDM, COMBINED):  # node level: the text left by the mapping
            progress("clean: node-level text of the etdm mapping (page_templates)")
            node = _read(spark, out, PAGE_TEMPLATES).where(F.col("clean_text").isNotNull()).select(
                "page_key", F.col("clean_text").alias("node_text"),
                (F.col("template_tokens") / F.when(F.col("n_tokens") > 0, F.col("n_tokens"))).alias("node_fraction"))
            cleaned = cleaned.join(node, "page_key", "left").select(
                "page_key", "url", "site", F.coalesce("node_text", "clean_text").alias("clean_text"),
                F.coalesce("node_fraction", "template_token_fraction").alias("template_token_fraction"),
                "n_template_pagelets")
        removed = members
        if judged is None:
            cleaned = cleaned.withColumn("mode", F.lit("site"))
        else:  # pages judged by the model: their text and template pagelets from there
            removed = removed_pagelets(members, judged)
            counts = removed.join(judged.select("page_key"), "page_key", "left_semi").groupBy("page_key").agg(
                F.countDistinct("ordinal").alias("page_template_pagelets"))
            cleaned = cleaned.join(judged.select(
                "page_key", "mode", F.col("clean_text").alias("page_text"),
                (F.col("template_tokens") / F.when(F.col("tokens") > 0, F.col("tokens"))).alias("page_fraction")),
                "page_key", "left").join(counts, "page_key", "left").select(
                "page_key", "url", "site", F.coalesce("page_text", "clean_text").alias("clean_text"),
                F.coalesce("page_fraction", "template_token_fraction").alias("template_token_fraction"),
                F.when(F.col("mode").isNull(), F.col("n_template_pagelets"))
                .otherwise(F.coalesce("page_template_pagelets", F.lit(0))).alias("n_template_pagelets"),
                F.coalesce("mode", F.lit("site")).alias("mode"))
        cleaned.write.mode("overwrite").parquet(output.staged(CLEAN_PAGES))
        clean_links(links, removed).write.mode("overwrite").parquet(output.staged(CLEAN_LINKS))
        cp = spark.read.parquet(output.staged(CLEAN_PAGES))
        stats = cp.agg(F.count("*").alias("pages"), F.avg("template_token_fraction").alias("mean_template_fraction"),
                       F.sum("n_template_pagelets").alias("template_pagelets_removed")).first().asDict()
        n_links = spark.read.parquet(output.staged(CLEAN_LINKS)).count()
        # no pages (a crawl of errors only, a night of 404s): no WET file rather than a missing folder
        wet = _write_wet(cp, pages, output.staged(WET), stats["pages"], config) if config.wet and stats["pages"] else None
    except BaseException:
        output.cleanup()
        raise
    manifest = {
        "stage": "clean", "run_id": output.run_id, "out": output.out,
        "rows": {CLEAN_PAGES: stats["pages"], CLEAN_LINKS: n_links},
        "mean_template_token_fraction": round(stats["mean_template_fraction"] or 0.0, 4),
        "template_pagelets_removed": stats["template_pagelets_removed"] or 0,
        **({"wet": wet} if wet else {}),
        "timings": {"total_s": round(time.time() - started, 3)},
    }
    if not wet:  # an earlier run's WET files do not match this clean_pages: removed before the commit
        output.remove_stale([WET])  # (RunOutput.remove_stale), so no new clean.json ever sits beside them
    output.commit([CLEAN_PAGES, CLEAN_LINKS, *([WET] if wet else [])], "clean.json", manifest)
    return manifest


def removed_pagelets(members: DataFrame, judged: DataFrame | None) -> DataFrame:
    """(page_key, ordinal, template_id) of the pagelets clean removes: the
    site-level template pagelets (`members`), except on pages the model judged
    in page mode (the model alone), and those the model removed
    (page_templateness.template_pagelets; template_id null unless a site-level
    template too). Hybrid removes the site-level templates first, so their
    pagelets go, links included, even those without words for the model to
    judge. The report counts and shades the same set."""
    site = members.select("page_key", "ordinal", "template_id")
    if judged is None:
        return site
    site = site.join(judged.where(F.col("mode") == "page").select("page_key"), "page_key", "left_anti")
    model = judged.select("page_key", F.explode("template_pagelets").alias("ordinal")) \
        .join(site, ["page_key", "ordinal"], "left_anti").withColumn("template_id", F.lit(None).cast("long"))
    return site.unionByName(model)


def judged_alone(spark: SparkSession, out: str, judged: DataFrame | None) -> bool:
    """An output judged page by page with no site-level run (`pagelevel
    --pagelevel page` after extract): the model alone decides what clean
    removes (and what the graph commands leave out), with no template_pagelets."""
    return judged is not None and not path_exists(spark, f"{out.rstrip('/')}/{TEMPLATE_PAGELETS}")


def no_members(spark: SparkSession) -> DataFrame:
    """The site-level template memberships of an output `judged_alone`: none."""
    return empty_frame(spark, "page_key long, ordinal int, template_id long")


def current_judgement(spark: SparkSession, out: str, progress: Callable[[str], None] = lambda _m: None):
    """OUT/page_templateness when the page-level stage ran after OUT's last
    detect (pagelevel.json names detect's run) or with no detect at all; None
    otherwise."""
    return _page_level(spark, RunOutput(spark, out.rstrip("/"), "read"), out.rstrip("/"),
                       read_json(spark, f"{out.rstrip('/')}/detect.json") or {}, progress)


def _page_level(spark, output: RunOutput, out: str, detected: dict, progress):
    """OUT/page_templateness when the page-level stage ran after this detect
    (pagelevel.json names detect's run); None otherwise."""
    from templatemine.pagelevel.stage import PAGE_TEMPLATENESS

    judged = output.read_json(output.final("pagelevel.json")) or {}
    if not judged:
        return None
    # (a judgement naming a detect whose detect.json is gone is no longer OUT's either)
    if judged.get("detect_run_id") != detected.get("run_id"):
        progress("clean: page_templateness is from before the last detect; using site-level templates only")
        return None
    progress(f"clean: {judged['rows'][PAGE_TEMPLATENESS]} pages judged by the page-level model ({judged['model']})")
    return _read(spark, out, PAGE_TEMPLATENESS)


def _write_wet(clean, pages, out_dir: str, n_pages: int, config: CleanConfig) -> dict:
    """OUT/wet/part-NNNNN.warc.wet.gz, about `wet_pages_per_file` records each
    (spread by a hash of the URL: uneven when that is small; a part that gets
    none is not written), sorted by URL within a file; (files, records, bytes)
    for the manifest. The tasks write under OUT_DIR as the driver qualified it
    (wet_folder), where Spark wrote the tables beside it."""
    from templatemine.clean.wet import EPOCH, WET_ROW_SCHEMA, wet_folder, wet_partitions

    out_dir = wet_folder(clean.sparkSession, out_dir)
    n_files = max(1, -(-n_pages // max(1, config.wet_pages_per_file)))
    for column in ("warc_record_id", "target_uri"):  # an extract output from before PAGES had them
        if column not in pages.columns:
            pages = pages.withColumn(column, F.lit(None).cast("string"))
    # strings, never null, from Spark: WARC's date format (UTC, the session's
    # zone) and "" for what is missing, so the Python side needs no null cases
    rows = clean.join(pages.select("page_key", "fetch_time", "warc_record_id", "target_uri"), "page_key").select(
        "url", F.coalesce("target_uri", "url").alias("target_uri"),
        F.coalesce(F.date_format("fetch_time", "yyyy-MM-dd'T'HH:mm:ss'Z'"), F.lit(EPOCH)).alias("warc_date"),
        F.coalesce("warc_record_id", F.lit("")).alias("warc_record_id"),
        F.coalesce("clean_text", F.lit("")).alias("clean_text"),
        "template_token_fraction", "n_template_pagelets")
    written = rows.repartition(n_files, "url").sortWithinPartitions("url").mapInPandas(
        lambda batches: wet_partitions(batches, out_dir), WET_ROW_SCHEMA).collect()
    return {"files": len(written), "records": sum(r["records"] for r in written),
            "bytes": sum(r["bytes"] for r in written)}
