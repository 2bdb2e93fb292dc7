"""Link targets resolved to crawled pages.

LINKS.dst_page_key is the key of the URL as written (resolved and normalised,
`html/urls.py`); a link reaches a crawled page where that key is a
PAGES.page_key. A link written to the other scheme's twin of a crawled page
(`http://example.org/a` where the crawl holds `https://example.org/a`) names
the same page: SURT keys leave the scheme out for this reason, and a site that
moved to https keeps old `http://` links in its templates. `crawled_targets`
gives such a link the crawled page's key, where the twin was not crawled
itself (both crawled are two pages, and each link keeps its own).

Figure 5's self-join on links (`templates/detect.template_links`), the bridge
links and ETDM's site links read links through it (`run_detect`), as do
`priority` and `related` (`graph/stage.py`) and the extract summary's count
of internal links that reach a page. LINKS and clean_links keep the key of
the URL written (`dst_url`'s), so that a night's LINKS never depend on which
twin another night crawled.

Not resolved: a link to a URL that redirects to a crawled page (a 3xx record
keeps no Location; one that is also the twin of a crawled page is resolved as
a twin), and links in `distill`, whose base set joins a small root set to the
links (resolving them first would shuffle them all; README, Known gaps).
"""

from pyspark.sql import DataFrame
from pyspark.sql import functions as F


def _twin_key_udf():
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


def crawled_targets(links: DataFrame, pages: DataFrame, by_twin: str | None = None,
                    twins: DataFrame | None = None) -> DataFrame:
    """`links` (any columns with dst_page_key) with dst_page_key the crawled
    twin's key where the URL written is the uncrawled twin of a crawled page;
    every other link as it was. Columns and rows as `links`, and with
    `by_twin`, a boolean column of that name: whether the link was so resolved.
    `twins`: `twin_keys(pages)` made once by a caller that reads the links
    more than once (detect persists it: every read of the links would run the
    hashing UDF over the pages again)."""
    twins = (twin_keys(pages) if twins is None else twins).select(
        F.col("written_key").alias("dst_page_key"), F.col("page_key").alias("_twin_page_key"))
    resolved = links.join(twins, "dst_page_key", "left").withColumn(
        "dst_page_key", F.coalesce("_twin_page_key", "dst_page_key"))
    if by_twin:
        return resolved.select(*links.columns, F.col("_twin_page_key").isNotNull().alias(by_twin))
    return resolved.select(*links.columns)
