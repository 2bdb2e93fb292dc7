"""A crawl frontier's priorities from the clean graph (Bar-Yossef &
Rajagopalan, section 4, case 2: "pages which are pointed to out of template
pagelets can be assigned a reduced priority for crawling").

Every discovered URL (any link target, crawled or not, that a page other than
itself and not a near-duplicate links to) gets

    priority = content_citing_pages + template_weight * citing_templates

where content_citing_pages counts distinct pages linking to it from a
non-template pagelet, and citing_templates the distinct *templates* linking to
it: a template stamped on 10,000 pages is one vote, not 10,000 (its pages were
written once, by one hand). A URL reached only through templates therefore
ranks below any URL a page's own content links to, unless many different
templates point at it. Near-duplicate pages (PAGES.dup_of) cast no vote.
An uncrawled URL linked under both schemes (`http://s.org/y` and
`https://s.org/y`) is one URL to crawl, listed under https (most sites
answer http with a redirect there), its votes counted once per citing page;
a crawled page is listed under its own URL, and a link to its uncrawled twin
already counts for it (tables/targets.py).
Where the page-level model judged the run, a pagelet it removed is no content
either (clean_links drops its links): it counts in template_citing_pages and
casts no template's vote, unless a site-level template holds it on a page
judged in hybrid mode (on a page judged in page mode the site-level templates
do not count at all, as in clean, so there template_weight has no votes to weigh).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

CRAWL_PRIORITY = "crawl_priority"


def crawl_priority(pages: DataFrame, links: DataFrame, template_pagelets: DataFrame,
                   template_weight: float = 0.1) -> DataFrame:
    """dst_page_key, url, crawled, content_citing_pages, content_citing_sites,
    template_citing_pages, citing_templates, priority; sorted by priority (a
    distributed range sort, so the written files are in crawl order; no global
    row number, which would pull every URL into one task)."""
    live = pages.where(F.col("dup_of").isNull()).select(F.col("page_key").alias("src_page_key"),
                                                         F.col("site").alias("src_site"))
    # a pagelet the page-level model removed has no template_id: not content, no template's vote
    members = template_pagelets.select(F.col("page_key").alias("src_page_key"),
                                       F.col("ordinal").alias("pagelet_ordinal"), "template_id",
                                       F.lit(True).alias("removed"))
    cites = (one_per_scheme_twins(links, pages).where(F.col("src_page_key") != F.col("dst_page_key"))
             .join(live, "src_page_key")
             .join(members, ["src_page_key", "pagelet_ordinal"], "left"))
    content = F.col("removed").isNull()
    per_url = cites.groupBy("dst_page_key").agg(
        F.min("dst_url").alias("url"),
        F.countDistinct(F.when(content, F.col("src_page_key"))).alias("content_citing_pages"),
        F.countDistinct(F.when(content, F.col("src_site"))).alias("content_citing_sites"),
        F.countDistinct(F.when(~content, F.col("src_page_key"))).alias("template_citing_pages"),
        F.countDistinct("template_id").alias("citing_templates"),
    )
    # a crawled page under its own URL (a link may name its scheme twin: tables/targets.py)
    crawled = pages.select(F.col("page_key").alias("dst_page_key"), F.col("url").alias("page_url")).dropDuplicates(
        ["dst_page_key"]).withColumn("crawled", F.lit(True))
    scored = (per_url.join(crawled, "dst_page_key", "left")
              .withColumn("url", F.coalesce("page_url", "url"))
              .withColumn("crawled", F.coalesce("crawled", F.lit(False)))
              .withColumn("priority", F.col("content_citing_pages")
                          + F.lit(float(template_weight)) * F.col("citing_templates")))
    return scored.select(
        "dst_page_key", "url", "crawled", "content_citing_pages", "content_citing_sites",
        "template_citing_pages", "citing_templates", "priority",
    ).orderBy(F.desc("priority"), F.desc("content_citing_sites"), "url")


def one_per_scheme_twins(links: DataFrame, pages: DataFrame) -> DataFrame:
    """`links` (dst_page_key, dst_url and any others) where a link to an
    uncrawled `http://` URL whose `https://` twin is linked too, and is not
    crawled either, names that twin (key and URL); every other link as it was.
    Twins are matched on the URL after its scheme (a join of strings, no
    Python): `html.urls.scheme_twin`, which gives no twin to a URL naming a
    port (normalised URLs never write a default one)."""
    rest = F.regexp_extract("dst_url", r"^https?://(.*)$", 1)
    targets = links.select("dst_page_key", "dst_url").dropDuplicates(["dst_page_key"]).join(
        pages.select(F.col("page_key").alias("dst_page_key")), "dst_page_key", "left_anti").where(
        ~rest.rlike(r"^[^/?#]*:[0-9]+([/?#]|$)"))
    http = targets.where(F.col("dst_url").startswith("http://")).select("dst_page_key", rest.alias("_rest"))
    https = targets.where(F.col("dst_url").startswith("https://")).select(
        rest.alias("_rest"), F.col("dst_page_key").alias("_twin_key"), F.col("dst_url").alias("_twin_url"))
    merged = http.join(https, "_rest").drop("_rest")
    return links.join(merged, "dst_page_key", "left").select(
        *[F.coalesce("_twin_key", "dst_page_key").alias(c) if c == "dst_page_key"
          else F.coalesce("_twin_url", "dst_url").alias(c) if c == "dst_url" else F.col(c) for c in links.columns])


def inlink_baseline(pages: DataFrame, links: DataFrame) -> DataFrame:
    """The frontier without templates known: distinct citing pages per URL
    (scheme twins merged as `crawl_priority` merges them)."""
    live = pages.where(F.col("dup_of").isNull()).select(F.col("page_key").alias("src_page_key"))
    return (one_per_scheme_twins(links, pages).where(F.col("src_page_key") != F.col("dst_page_key"))
            .join(live, "src_page_key")
            .groupBy("dst_page_key").agg(F.min("dst_url").alias("url"),
                                         F.countDistinct("src_page_key").alias("citing_pages")))
