"""Template pagelet precision and recall against a synthetic web's ground truth (Spark).

The generator (evaluate/synthetic.py) records, per page, its blocks (header,
network bar, menu, sidebar, related list, share bar, footer) with their text
and whether each is a template block, and the page's gold main text. A run's
pagelets do not map one to one onto those blocks (Definition 2 splits a
sidebar into its heading and its list), so each pagelet is labelled by the
text that holds it:

- template: its text lies inside a template block's text, and inside no
  other block or the gold;
- not template: it lies inside non-template text only (a related list, the gold);
- ambiguous: inside both (a short text that a template block and the gold
  or a related list both hold); unmatched: inside no one block (a pagelet that spans several, as a
  page's whole wrapper does when no child holds k links): counted and
  reported, not scored;
- no text: pagelets without words (image links): counted, not scored.

Texts are compared with all whitespace removed, so the separators Lexbor puts
between inline elements do not matter. Predicted = what clean removes
(templates/stage.removed_pagelets, the same function): the run's
`template_pagelets`, except on a page the current page-level judgement (one
made after OUT's last detect, templates/stage.current_judgement) judged in
page mode, where the page's `page_templateness.template_pagelets` alone: every
node of it judged template. Hybrid pages' extra removals are scored apart
(`pagelet_quality`).

Two scopes are reported: every page, and the pages of sites with at least two
crawled pages. A block on a one-page site occurs once in the crawl; no
detector that looks for repetition (Definition 4 asks for pages that share it)
can find it, so the second scope says how well the detector does on what is
findable, and the first what a user gets.
"""

from __future__ import annotations

import glob
import os

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from templatemine.tables.output import require_tables
from templatemine.templates.stage import current_judgement, judged_alone, no_members, removed_pagelets

TEMPLATE, CONTENT, AMBIGUOUS, UNMATCHED, NO_TEXT = "template", "content", "ambiguous", "unmatched", "no_text"


def _squash(col):
    return F.regexp_replace(col, r"\s+", "")


def truth_blocks(spark: SparkSession, web: str, records: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(blocks, sites) from WEB/truth/*.jsonl.gz: blocks = (page_key, block_text,
    template) with the gold as one more non-template block; sites = (page_key,
    site_pages), the crawled pages of the page's site. A truth URL is the
    record's WARC-Target-URI: the run's RECORDS table gives its page_key, the
    one extract computed."""
    files = sorted(glob.glob(os.path.join(web, "truth", "*.jsonl.gz")))
    if not files:
        raise FileNotFoundError(f"no truth/*.jsonl.gz under {web}: not a synthetic web (scripts/synth_web.py)")
    keys = records.where(F.col("page_key").isNotNull()).select(
        F.col("target_uri").alias("url"), "page_key").distinct()
    truth = spark.read.json(files).join(keys, "url").select("page_key", "site", "gold_text", "blocks")
    blocks = truth.select("page_key", F.explode("blocks").alias("b")).select(
        "page_key", _squash(F.col("b.text")).alias("block_text"), F.col("b.template").alias("template"))
    gold = truth.select("page_key", _squash("gold_text").alias("block_text"), F.lit(False).alias("template"))
    sizes = truth.groupBy("site").agg(F.count("*").alias("site_pages"))
    sites = truth.select("page_key", "site").join(sizes, "site").select("page_key", "site_pages")
    return blocks.unionByName(gold), sites


def pagelet_labels(pagelets: DataFrame, blocks: DataFrame) -> DataFrame:
    """(page_key, ordinal, truth): each pagelet labelled by the blocks its text lies in."""
    texts = pagelets.select("page_key", "ordinal", _squash("text").alias("t"))
    inside = texts.where(F.length("t") > 0).join(blocks, "page_key").where(F.instr("block_text", F.col("t")) > 0)
    votes = inside.groupBy("page_key", "ordinal").agg(
        F.min(F.col("template").cast("int")).alias("all_t"), F.max(F.col("template").cast("int")).alias("any_t"))
    label = (F.when(F.length("t") == 0, F.lit(NO_TEXT))
             .when(F.col("all_t").isNull(), F.lit(UNMATCHED))
             .when(F.col("all_t") == 1, F.lit(TEMPLATE))
             .when(F.col("any_t") == 0, F.lit(CONTENT))
             .otherwise(F.lit(AMBIGUOUS)))
    return texts.join(votes, ["page_key", "ordinal"], "left").select("page_key", "ordinal", label.alias("truth"))


def _scores(counts: dict) -> dict:
    tp, fp, fn = counts.get((TEMPLATE, True), 0), counts.get((CONTENT, True), 0), counts.get((TEMPLATE, False), 0)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    return {
        "precision": None if precision is None else round(precision, 4),
        "recall": None if recall is None else round(recall, 4),
        "true_positive": tp, "false_positive": fp, "false_negative": fn,
        "true_negative": counts.get((CONTENT, False), 0),
        "not_scored": {k: counts.get((k, True), 0) + counts.get((k, False), 0) for k in (AMBIGUOUS, UNMATCHED, NO_TEXT)},
    }


def pagelet_quality(spark: SparkSession, out: str, web: str) -> dict:
    """Precision and recall of OUT's template pagelets against WEB's truth, on
    every page and on the pages of sites with >= 2 crawled pages.

    Predicted template: what clean removes (templates/stage.removed_pagelets,
    as clean, the report and the graph commands call it): detect's
    template_pagelets and, when OUT holds a current page-level judgement
    (current_judgement: made after OUT's last detect), on the pages it judged
    in *page* mode the pagelets the model removed whole *instead of* the
    site-level ones: there it stands in for the site-level detection. An
    output judged with no detect at all (extract, then `pagelevel --pagelevel
    page`) is scored by the model alone. On *hybrid* pages the model removes
    per-page boilerplate on top of the site's templates (related lists, share
    bars: not templates in Definition 4's sense, which asks for the same
    pagelet on several pages); `with_hybrid_removals` scores every page with
    those counted too, exactly what clean removes, so the cost of that choice
    is reported, not hidden."""
    out = out.rstrip("/")
    judged = current_judgement(spark, out)
    alone = judged_alone(spark, out, judged)
    require_tables(spark, out, ("records", "pagelets", *(() if alone else ("template_pagelets",))),
                   "the pagelet evaluation")
    pagelets = spark.read.parquet(f"{out}/pagelets")
    members = no_members(spark) if alone else spark.read.parquet(f"{out}/template_pagelets")
    blocks, sites = truth_blocks(spark, web, spark.read.parquet(f"{out}/records"))
    labelled = pagelet_labels(pagelets, blocks).join(sites, "page_key", "left").persist()
    if judged is None:
        predicted, by = members.select("page_key", "ordinal"), "template_pagelets"
    else:  # clean's rule with the hybrid pages' own removals left out: those are scored apart below
        predicted = removed_pagelets(members, judged.where(F.col("mode") == "page"))
        by = ("page_templateness (page mode)" if alone
              else "template_pagelets + page_templateness (page mode)")
    every, repeated = _counts(labelled, predicted.select("page_key", "ordinal"))
    result = {"all_pages": _scores(every), "sites_with_2_or_more_pages": _scores(repeated), "predicted_by": by}
    if judged is not None:
        every_removal, _ = _counts(labelled, removed_pagelets(members, judged).select("page_key", "ordinal"))
        result["with_hybrid_removals"] = _scores(every_removal)
    labelled.unpersist()
    return result


def _counts(labelled: DataFrame, predicted: DataFrame) -> tuple[dict, dict]:
    """(truth, predicted) -> pagelets, on every page and on sites with >= 2 pages."""
    predicted = predicted.distinct().withColumn("predicted", F.lit(True))
    scored = labelled.join(predicted, ["page_key", "ordinal"], "left").select(
        "truth", F.coalesce("predicted", F.lit(False)).alias("predicted"),
        (F.coalesce("site_pages", F.lit(0)) >= 2).alias("repeated"))
    every: dict = {}
    repeated: dict = {}
    for r in scored.groupBy("truth", "predicted", "repeated").count().collect():
        every[(r["truth"], r["predicted"])] = every.get((r["truth"], r["predicted"]), 0) + r["count"]
        if r["repeated"]:
            repeated[(r["truth"], r["predicted"])] = r["count"]
    return every, repeated
