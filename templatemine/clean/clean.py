"""Clean pages and links: what is left when template pagelets are removed.

- clean_pages: a page's non-template text in reading order (pagelet order),
  the pagelets' texts joined by one space, "" when none is left (pagelets
  without text, an image link, add none: they gave leading and doubled
  spaces, and " " for a page whose words were all template), with the
  fraction of its tokens that were template (0 when it has none:
  an image gallery, a frameset; clean.json's mean counts these pages too) and
  the number of template pagelets removed, so a user can see why a page lost
  text.
- clean_links: links that do not sit in a template pagelet: the graph that
  HITS and PageRank should see (section 4 of Bar-Yossef & Rajagopalan).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F


def text_in_order(keep: Column) -> Column:
    """Aggregate over a page's pagelets: the texts of those where KEEP holds
    (empty texts left out), in ordinal order, joined by a space; null when
    none is kept. The clean text, and the graph commands' whole text."""
    return F.array_join(F.transform(F.array_sort(F.collect_list(
        F.when(keep & (F.col("text") != ""), F.struct("ordinal", "text")))), lambda p: p["text"]), " ")


def clean_pages(pages: DataFrame, pagelets: DataFrame, template_pagelets: DataFrame) -> DataFrame:
    marked = pagelets.join(
        template_pagelets.select("page_key", "ordinal", F.lit(True).alias("is_template")).distinct(),
        ["page_key", "ordinal"], "left",
    ).withColumn("is_template", F.coalesce("is_template", F.lit(False)))
    per_page = marked.groupBy("page_key").agg(
        text_in_order(~F.col("is_template")).alias("kept"),
        F.sum("n_tokens").alias("n_tokens"),
        F.sum(F.when(F.col("is_template"), F.col("n_tokens")).otherwise(0)).alias("template_tokens"),
        F.sum(F.col("is_template").cast("int")).alias("n_template_pagelets"),
    )
    return pages.select("page_key", "url", "site").join(per_page, "page_key", "left").select(
        "page_key", "url", "site",
        F.coalesce("kept", F.lit("")).alias("clean_text"),
        F.coalesce(F.col("template_tokens") / F.when(F.col("n_tokens") > 0, F.col("n_tokens")), F.lit(0.0)).alias(
            "template_token_fraction"),
        F.coalesce("n_template_pagelets", F.lit(0)).alias("n_template_pagelets"),
    )


def clean_links(links: DataFrame, template_pagelets: DataFrame) -> DataFrame:
    in_templates = template_pagelets.select(F.col("page_key").alias("src_page_key"),
                                            F.col("ordinal").alias("pagelet_ordinal")).distinct()
    return links.join(in_templates, ["src_page_key", "pagelet_ordinal"], "left_anti").select(*links.columns)
