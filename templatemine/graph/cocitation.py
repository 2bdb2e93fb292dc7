"""Related pages by co-citation (Dean & Henzinger), as section 4 of
Bar-Yossef & Rajagopalan revisits it (case 3):

1. "co-citation is counted only if it occurs within the same pagelet, not
   simply on the same page";
2. "citations from template pagelets are entirely ignored".

A *citing unit* is a page (the classic algorithm) or a pagelet (the rule
above; a link in no pagelet is a unit of its own page). Two pages are
co-cited once per unit that links to both. `related` counts, for one page,
every page co-cited with it, highest count first. A template stamped on
thousands of pages otherwise co-cites everything it links, thousands of times.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

PAGE, PAGELET = "page", "pagelet"


def citations(links: DataFrame, template_pagelets: DataFrame | None, unit: str = PAGELET) -> DataFrame:
    """(unit, src_page_key, dst_page_key, dst_url) per distinct citation; with
    `template_pagelets` given, links out of template pagelets are dropped."""
    if unit not in (PAGE, PAGELET):
        raise ValueError(f"unit is {PAGE!r} or {PAGELET!r}, not {unit!r}")
    cites = links.select("src_page_key", "pagelet_ordinal", "dst_page_key", "dst_url")
    if template_pagelets is not None:
        members = template_pagelets.select(F.col("page_key").alias("src_page_key"),
                                           F.col("ordinal").alias("pagelet_ordinal")).distinct()
        cites = cites.join(members, ["src_page_key", "pagelet_ordinal"], "left_anti")
    unit_col = (F.col("src_page_key") if unit == PAGE
                else F.xxhash64(F.col("src_page_key"), F.col("pagelet_ordinal")))
    return (cites.where(F.col("src_page_key") != F.col("dst_page_key"))
            .select(unit_col.alias("unit"), "src_page_key", "dst_page_key", "dst_url")
            .dropDuplicates(["unit", "dst_page_key"]))


def related(cites: DataFrame, target_key: int, n: int = 20) -> DataFrame:
    """Pages co-cited with `target_key`: dst_page_key, url, cocitations (citing
    units naming both), citing_pages (distinct pages holding those units)."""
    units = cites.where(F.col("dst_page_key") == F.lit(target_key)).select("unit").distinct()
    return (cites.join(units, "unit").where(F.col("dst_page_key") != F.lit(target_key))
            .groupBy("dst_page_key")
            .agg(F.countDistinct("unit").alias("cocitations"), F.countDistinct("src_page_key").alias("citing_pages"),
                 F.min("dst_url").alias("url"))
            .orderBy(F.desc("cocitations"), F.desc("citing_pages"), "url")
            .limit(n))
