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
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Callable

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from templatemine.clean.clean import clean_links, clean_pages
from templatemine.config import DetectConfig
from templatemine.spark import graphframes_available
from templatemine.tables.output import RunOutput, new_run_id
from templatemine.templates.detect import (GLOBAL, LOCAL, evidence_filter, global_template_pagelets,
                                           local_template_pagelets, template_id, templates_table)

TEMPLATES, TEMPLATE_PAGELETS, CLEAN_PAGES, CLEAN_LINKS = "templates", "template_pagelets", "clean_pages", "clean_links"


def _read(spark: SparkSession, out: str, name: str):
    return spark.read.parquet(f"{out.rstrip('/')}/{name}")


def run_detect(spark: SparkSession, out: str, config: DetectConfig = DetectConfig(),
               progress: Callable[[str], None] = print) -> dict:
    started = time.time()
    output = RunOutput(spark, out, new_run_id())
    spark.sparkContext.setCheckpointDir(config.checkpoint_dir or f"{output.out}/_checkpoints")
    pages, pagelets, links = (_read(spark, out, n) for n in ("pages", "pagelets", "links"))
    mode = config.mode
    if mode == "auto":
        mode = LOCAL if pages.count() < config.local_max_pages else GLOBAL
    progress(f"detect: {mode} template detection over {out}")
    try:
        if mode == GLOBAL:
            members = global_template_pagelets(spark, pagelets, links, config)
        elif mode == LOCAL:
            members = local_template_pagelets(pages, pagelets)
        else:
            raise ValueError(f"unknown detection mode {mode!r}")
        members = evidence_filter(members, pagelets, pages, config).persist()
        templates = templates_table(members, pagelets, pages, mode if config.enabled else f"{mode}-paper")
        templates.write.mode("overwrite").parquet(output.staged(TEMPLATES))
        members.select("page_key", "ordinal", template_id()).write.mode("overwrite").parquet(
            output.staged(TEMPLATE_PAGELETS))
        n_templates = spark.read.parquet(output.staged(TEMPLATES)).count()
        n_members = spark.read.parquet(output.staged(TEMPLATE_PAGELETS)).count()
    except BaseException:
        output.cleanup()
        raise
    manifest = {
        "stage": "detect", "run_id": output.run_id, "out": output.out, "config": asdict(config), "mode": mode,
        "connected_components": "graphframes" if graphframes_available(spark) else "min-label propagation",
        "rows": {TEMPLATES: n_templates, TEMPLATE_PAGELETS: n_members},
        "timings": {"total_s": round(time.time() - started, 3)},
    }
    output.commit([TEMPLATES, TEMPLATE_PAGELETS], "detect.json", manifest)
    return manifest


def run_clean(spark: SparkSession, out: str, progress: Callable[[str], None] = print) -> dict:
    started = time.time()
    output = RunOutput(spark, out, new_run_id())
    pages, pagelets, links = (_read(spark, out, n) for n in ("pages", "pagelets", "links"))
    members = _read(spark, out, TEMPLATE_PAGELETS)
    progress(f"clean: removing template pagelets from pages and links in {out}")
    try:
        clean_pages(pages, pagelets, members).write.mode("overwrite").parquet(output.staged(CLEAN_PAGES))
        clean_links(links, members).write.mode("overwrite").parquet(output.staged(CLEAN_LINKS))
        cp = spark.read.parquet(output.staged(CLEAN_PAGES))
        stats = cp.agg(F.count("*").alias("pages"), F.avg("template_token_fraction").alias("mean_template_fraction"),
                       F.sum("n_template_pagelets").alias("template_pagelets_removed")).first().asDict()
        n_links = spark.read.parquet(output.staged(CLEAN_LINKS)).count()
    except BaseException:
        output.cleanup()
        raise
    manifest = {
        "stage": "clean", "run_id": output.run_id, "out": output.out,
        "rows": {CLEAN_PAGES: stats["pages"], CLEAN_LINKS: n_links},
        "mean_template_token_fraction": round(stats["mean_template_fraction"] or 0.0, 4),
        "template_pagelets_removed": stats["template_pagelets_removed"] or 0,
        "timings": {"total_s": round(time.time() - started, 3)},
    }
    output.commit([CLEAN_PAGES, CLEAN_LINKS], "clean.json", manifest)
    return manifest
