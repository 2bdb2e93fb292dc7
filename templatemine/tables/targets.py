"""Link targets resolved to crawled pages.

LINKS.dst_page_key is the key of the URL as written (resolved and normalised,
`html/urls.py`); a link reaches a crawled page where that key is a
PAGES.page_key. A link written to the other scheme's twin of a crawled page
(`http://example.org/a` where the crawl holds `https://example.org/a`) names
the same page: SURT keys leave the scheme out for this reason, and a site that
moved to https keeps old `http://` links in its templates. `crawled_targets`
gives such a link the crawled page's key, where the twin was not crawled
itself (both crawled are two pages, and each link keeps its own).

A link written to a URL whose newest non-2xx response in the run redirects
(3xx, RECORDS.redirect_page_key: its Location, where that is on the URL's
site, so that a link keeps its `same_site`) names the page the redirects end on,
where that is a crawled page or its twin: a site's template keeps linking
`/about` after the page moved to `/about/`, or to `http://` pages the server
answers with a 301 to `https://`. At most MAX_HOPS redirects are followed
(a chain longer, or one that loops, reaches no page). A URL crawled as a page
is that page, whatever redirect it also answered.

Figure 5's self-join on links (`templates/detect.template_links`), the bridge
links and ETDM's site links read links through it (`run_detect`), as do
`priority` and `related` (`graph/stage.py`) and the extract summary's count
of internal links that reach a page. LINKS and clean_links keep the key of
the URL written (`dst_url`'s), so that a night's LINKS never depend on which
twin another night crawled.

A night's output folder holds the night's RECORDS nowhere (they are merged
into the state's), so the snapshot writes there REDIRECTS: `redirect_keys`
over the state's RECORDS (every night's since RECORDS kept them, 2026-11-29;
older rows hold none) and the snapshot's pages. Every reader of an output
folder (`out_aliases`) takes OUT/redirects where it is, else OUT's RECORDS:
the night's own detect, and a `detect`, `priority` or `related` run on its
folder later, follow the same redirects.

Not resolved: links in `distill`, whose base set joins a small root set to
the links (resolving them first would shuffle them all; README, Known gaps).
"""

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from templatemine import schema as S

# redirects followed from the URL a link names (Chrome and Firefox stop at 20,
# curl's default is 50; crawlers follow fewer: Heritrix 5 or so, wget 20)
MAX_HOPS = 5
TWIN, REDIRECT = "twin", "redirect"


def _twin_key_udf():
    """A column function: the key of a URL's scheme twin (`html.urls.scheme_twin`), null where it has none."""
    import pandas as pd

    from templatemine.html.urls import page_key, scheme_twin

    @F.pandas_udf("long")
    def twin_key(urls: pd.Series) -> pd.Series:
        return pd.Series([page_key(t) if u is not None and (t := scheme_twin(u)) else None for u in urls],
                         dtype="Int64")

    # nondeterministic only so that the optimiser does not copy the UDF into the filter
    # below it (the plan ran it twice per page; found in review)
    return twin_key.asNondeterministic()


def twin_keys(pages: DataFrame) -> DataFrame:
    """(written_key, page_key): the key of each crawled page's scheme twin
    (`html.urls.scheme_twin`) that was not crawled itself, and the page's."""
    crawled = pages.select(F.col("page_key").alias("written_key"))
    twins = pages.select(_twin_key_udf()("url").alias("written_key"), "page_key").where(
        F.col("written_key").isNotNull())
    # one page per twin key (two would be one URL crawled twice, which PAGES does not hold; min, to be sure)
    return twins.join(crawled, "written_key", "left_anti").groupBy("written_key").agg(
        F.min("page_key").alias("page_key"))


def redirect_keys(records: DataFrame, pages: DataFrame, twins: DataFrame) -> DataFrame:
    """(written_key, page_key): each URL not crawled as a page whose newest
    non-2xx response redirects, in at most MAX_HOPS redirects within its site
    (RECORDS.redirect_page_key), to a crawled page or to the uncrawled twin of
    one (`twins`: `twin_keys(pages)`), and that page's key. The newest non-2xx
    response decides (a 404 after a 301 of the same URL: the URL is gone, not
    moved); a later 2xx that is no page (non_html, oversized) has no key in
    RECORDS and does not. In a nightly run `pages` are the snapshot's (the
    touched sites') and `records` the state's: a crawled page of another site
    that once answered a 301 is taken for its redirect, which stays on that
    site."""
    newest = Window.partitionBy("page_key").orderBy(
        F.col("fetch_time").desc_nulls_last(), F.col("warc_file").desc(), F.col("warc_offset").desc())
    latest = records.where((F.col("outcome") == "non_2xx") & F.col("page_key").isNotNull()).select(
        "page_key", "redirect_page_key", F.row_number().over(newest).alias("_n")).where("_n = 1")
    crawled = pages.select("page_key")
    hops = latest.where(F.col("redirect_page_key").isNotNull()).join(crawled, "page_key", "left_anti").select(
        F.col("page_key").alias("src"), F.col("redirect_page_key").alias("dst"))
    step = hops.select(F.col("src").alias("dst"), F.col("dst").alias("_next"))
    ends = hops
    for _ in range(MAX_HOPS - 1):  # each round follows one more redirect where the chain goes on
        ends = ends.join(step, "dst", "left").select("src", F.coalesce("_next", "dst").alias("dst"))
    # a chain still redirecting after MAX_HOPS (or looping) reaches no page, not even where it
    # stopped on a crawled page's twin (found in review)
    ends = ends.join(step.select("dst"), "dst", "left_anti")
    reached = crawled.select(F.col("page_key").alias("dst"), "page_key").unionByName(
        twins.select(F.col("written_key").alias("dst"), "page_key"))
    return ends.join(reached, "dst").select(F.col("src").alias("written_key"), "page_key")


def aliases(pages: DataFrame, records: DataFrame | None = None, redirects: DataFrame | None = None) -> DataFrame:
    """(written_key, page_key, via): every key a link may name a crawled page
    by other than its own, `via` TWIN or REDIRECT (`records`: the run's
    RECORDS, or `redirects`: `redirect_keys` already made, REDIRECTS_SCHEMA;
    neither, twins alone). A URL that both redirects and is a twin is taken
    as the server answered it (its redirect)."""
    twins = twin_keys(pages)
    found = twins.select("written_key", "page_key", F.lit(TWIN).alias("via"))
    if redirects is None and records is not None:
        redirects = redirect_keys(records, pages, twins)
    if redirects is None:
        return found
    redirects = redirects.select("written_key", "page_key", F.lit(REDIRECT).alias("via"))
    # REDIRECT sorts before TWIN: one row per key, the redirect's where there are both
    first = F.min(F.struct(F.col("via") != REDIRECT, "page_key", "via"))
    return redirects.unionByName(found).groupBy("written_key").agg(first.alias("_a")).select(
        "written_key", "_a.page_key", "_a.via")


def redirect_records(spark: SparkSession, out: str) -> DataFrame | None:
    """OUT's RECORDS, where they say where 3xx responses redirect (an extract
    by a templatemine before 2026-11-29 did not: None, as where OUT has no
    RECORDS, e.g. a night's output folder)."""
    from templatemine.tables.output import path_exists

    path = f"{out.rstrip('/')}/{S.RECORDS}"
    if not path_exists(spark, path):
        return None
    records = spark.read.parquet(path)
    return records if "redirect_page_key" in records.columns else None


def out_aliases(spark: SparkSession, out: str, pages: DataFrame) -> DataFrame:
    """`aliases` of OUT's pages (`pages`, as read from OUT): through
    OUT/redirects where a night's snapshot wrote them (from the state's
    RECORDS), else through OUT's RECORDS (twins alone where it has neither,
    e.g. a night's folder written before REDIRECTS were)."""
    from templatemine.tables.output import path_exists

    path = f"{out.rstrip('/')}/{S.REDIRECTS}"
    if path_exists(spark, path):
        return aliases(pages, redirects=spark.read.parquet(path))
    return aliases(pages, redirect_records(spark, out))


def crawled_targets(links: DataFrame, pages: DataFrame, records: DataFrame | None = None, via: str | None = None,
                    known: DataFrame | None = None) -> DataFrame:
    """`links` (any columns with dst_page_key) with dst_page_key the crawled
    page's key where the URL written is another key of it (`aliases`: its
    uncrawled twin, or a URL that redirects to it; `records`, the run's
    RECORDS, for the redirects); every other link as it was. Columns and rows
    as `links`, and with `via`, a column of that name: TWIN, REDIRECT, or null
    where the link was not so resolved. `known`: `aliases(pages, records)`
    made once by a caller that reads the links more than once (detect persists
    it: every read of the links would hash the pages' twins again)."""
    known = (aliases(pages, records) if known is None else known).select(
        F.col("written_key").alias("dst_page_key"), F.col("page_key").alias("_alias_key"),
        F.col("via").alias("_via"))
    resolved = links.join(known, "dst_page_key", "left").withColumn(
        "dst_page_key", F.coalesce("_alias_key", "dst_page_key"))
    if via:
        return resolved.select(*links.columns, F.col("_via").alias(via))
    return resolved.select(*links.columns)

