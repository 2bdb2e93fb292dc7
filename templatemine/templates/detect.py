"""Template detection: Bar-Yossef & Rajagopalan, section 3.2, as DataFrame stages.

Definition 4: a template is a collection of pagelets with (approximately) equal
content whose owner pages form an undirected connected component. Two
algorithms over the PAGES, LINKS and PAGELETS tables:

- Global (Figure 5), for large collections: TEMPLATE_SHINGLES (shingles on at
  least two pages: the paper's "at least two occurrences", two on one page
  being no template), TEMPLATE_CANDIDATES (pagelets carrying one),
  TEMPLATE_LINKS (the triple join candidates x links x candidates on source and
  destination page and equal shingle), then connected components over the
  (shingle, page) vertices joined by template links; every non-singleton
  component is a template.
- Local (Figure 4), for small or sparse collections: duplicates removed, then
  every group of pagelets sharing a shingle is a template (only the first
  requirement of Definition 4 is checked).

Taken literally (`evidence_filter` off) these remove content that merely
recurs: a blog post's summary on its tag and index pages, inherited members
on every subclass page of an API reference, re-exported pages. Definition 3
asks more of a template ("share the same look and feel"); `evidence_filter`
keeps a template on a site only if
- it is on at least `min_site_support` of the site's pages (look and feel is
  site-wide; duplicated content sits on a few pages), both counted in
  originals (a near-duplicate is its original again) and of pages with a
  pagelet (an empty script shell can hold no template). With `support_of="path"`
  (the default) the pages are counted over the template's DOM path, so
  variants of one block add up; so do unrelated kept templates at the same
  path: three pairs of pages sharing three different lead paragraphs, all at
  the article's first <p>, count six pages each (`support_of="template"`
  counts each template alone),
- at least `min_path_share` of its pagelets sit at the same DOM path (a
  template is stamped at one place; a repeated item moves: li[1], li[6]; off by
  default since bridges made it cost more than it gains),
- it spans at least two pages that are not near-duplicates of each other
  (whole-sale duplication is not a template, section 3.2),
- optionally (`min_resemblance`, off by default: measured in its doc), its
  pagelets are almost identical, not only equal in shingle (`almost_identical`).
The defaults were measured on ../shared/corpora/sites (scripts/eval_sites.py).
"""

from __future__ import annotations

import pandas as pd
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from templatemine.config import DetectConfig, EvidenceConfig
from templatemine.html.shingles import resemblance
from templatemine.spark import shuffle_partitions
from templatemine.tables.cache import persisted
from templatemine.templates.components import grouped_components, truncate_lineage

GLOBAL, LOCAL = "global", "local"


def evidence_filter(members: DataFrame, pagelets: DataFrame, pages: DataFrame,
                    config: EvidenceConfig = EvidenceConfig(), ngram: int = 2) -> DataFrame:
    """Keep the template memberships (page_key, ordinal, shingle, template_key)
    that have the evidence of `config`, per site; `ngram` is the shingle's
    (extract.shingle_ngram), for `almost_identical`."""
    if not config.enabled:
        return members
    if config.min_resemblance > 0:
        members = almost_identical(members, pagelets, config.min_resemblance, ngram)
    # a site's pages as the support counts them: originals (a near-duplicate copy of
    # a page is that page again, section 3.2), and only pages with a pagelet, which
    # could hold a template (found in review: three ?utm= copies of a page lifted a
    # block on two pages over the share, and fifteen empty script shells sank a menu
    # on the site's six other pages under it)
    site_pages = pages.where(F.coalesce("n_pagelets", F.lit(1)) > 0).groupBy("site").agg(
        F.countDistinct(F.coalesce("dup_of", "page_key")).alias("site_pages"))
    # read four times below; persisted, or each read computes the memberships
    # anew, the reads' inferred filters keeping Spark from reusing one plan:
    # at 1M pages detect ran 224 stages before, 166 after, in 909 s not 1,116
    m = members.join(pagelets.select("page_key", "ordinal", "dom_path"), ["page_key", "ordinal"]).join(
        pages.select("page_key", "site", F.coalesce("dup_of", "page_key").alias("original")), "page_key")
    m = persisted(m)
    key = ["shingle", "template_key", "site"]
    per_path = m.groupBy(*key, "dom_path").agg(F.count("*").alias("at_path"))
    top = per_path.withColumn("rank", F.row_number().over(
        Window.partitionBy(*key).orderBy(F.desc("at_path"), "dom_path"))).where("rank = 1").select(
        *key, F.col("dom_path").alias("top_path"), F.col("at_path").alias("at_top_path"))
    evidence = m.groupBy(*key).agg(
        F.count("*").alias("occurrences"),
        F.countDistinct("page_key").alias("n_pages"),
        F.countDistinct("original").alias("n_originals"),
    ).join(top, key).join(site_pages, "site")
    placed = evidence.where(
        (F.col("at_top_path") >= F.col("occurrences") * config.min_path_share)
        & (F.col("n_originals") >= config.min_distinct_pages)
    )
    if config.support_of == "path":
        # the pages on which some placed template sits at this one's DOM path:
        # variants of one template block (a footer with two release dates)
        # share their support
        cover = m.join(placed.select(*key, F.col("top_path").alias("dom_path")), [*key, "dom_path"]).groupBy(
            "site", F.col("dom_path").alias("top_path")).agg(F.countDistinct("original").alias("support_pages"))
        placed = placed.join(cover, ["site", "top_path"])
    elif config.support_of == "template":
        placed = placed.withColumn("support_pages", F.col("n_originals"))
    else:
        raise ValueError(f"support_of must be 'path' or 'template', not {config.support_of!r}")
    keep = placed.where(F.col("support_pages") >= F.col("site_pages") * config.min_site_support).select(*key)
    return m.join(keep, key, "left_semi").select("page_key", "ordinal", "shingle", "template_key")


def almost_identical(members: DataFrame, pagelets: DataFrame, min_resemblance: float, ngram: int = 2) -> DataFrame:
    """The template memberships (page_key, ordinal, shingle, template_key)
    whose pagelet is almost identical to its template's: section 3.2 relaxes
    Definition 4 to "every two pagelets ... are almost-identical", and takes
    an equal shingle as the test of it. A MinHash shingle of r rows is equal
    for two texts of resemblance J with probability J ** r (html/shingles.py),
    so with r = 2 two short pagelets that share one line (post headers with
    the same byline, J ~ 0.3) agree about once in eleven, and across the many
    pagelet pairs of a site such a group forms, removing the post titles as a
    template. A stricter shingle (more rows) also splits the true templates'
    variants (a menu of J ~ 0.85 agrees with p = 0.52 at r = 4).

    The test, on the shingle's own features (`resemblance`, word n-grams of
    `ngram`): a template's *text* is its most common pagelet text (ties: the
    least text hash), and a member stays if it resembles that text at least
    `min_resemblance`. A member with the template's text passes untested, so
    the Python work is the members that differ from it. Each member within
    1 - m of the template's text (Jaccard distance) puts any two within
    2 (1 - m). What a run drops can leave a template on one page, which
    `evidence_filter` then drops (min_distinct_pages), or on pages that only
    the dropped ones joined: connectivity (Definition 4's second requirement)
    is not tested again after this filter (found in review: a chain of links
    1-2-3-4 whose middle pages differ keeps 1 and 4 as one template)."""
    key = ["shingle", "template_key"]
    texts = pagelets.select("page_key", "ordinal", "text")
    hashed = members.join(pagelets.select("page_key", "ordinal", F.xxhash64("text").alias("text_hash")),
                          ["page_key", "ordinal"])
    # per template, its most common text and one pagelet carrying it; combined
    # map-side, so the web-wide bar's group is no straggler
    by_text = hashed.groupBy(*key, "text_hash").agg(
        F.count("*").alias("n"), F.min(F.struct("page_key", "ordinal")).alias("witness"))
    chosen = by_text.groupBy(*key).agg(
        F.max(F.struct("n", F.bitwise_not("text_hash").alias("tie"), "text_hash", "witness")).alias("top")
    ).select(*key, F.col("top.text_hash").alias("template_hash"), F.col("top.witness.page_key").alias("w_page"),
             F.col("top.witness.ordinal").alias("w_ordinal"))
    placed = hashed.join(chosen, key)
    cols = ["page_key", "ordinal", "shingle", "template_key"]
    same = placed.where(F.col("text_hash") == F.col("template_hash")).select(*cols)
    template_text = chosen.join(texts.withColumnRenamed("page_key", "w_page").withColumnRenamed(
        "ordinal", "w_ordinal").withColumnRenamed("text", "template_text"), ["w_page", "w_ordinal"])
    differing = placed.where(F.col("text_hash") != F.col("template_hash")).select(*cols).join(
        texts, ["page_key", "ordinal"]).join(template_text.select(*key, "template_text"), key)
    resembles = _resemblance_udf(ngram)
    return same.unionByName(differing.where(resembles("text", "template_text") >= min_resemblance).select(*cols))


def _resemblance_udf(ngram: int):
    from pyspark.sql.functions import pandas_udf

    @pandas_udf("double")
    def resembles(a: pd.Series, b: pd.Series) -> pd.Series:
        return pd.Series([resemblance(x, y, ngram) for x, y in zip(a, b)], dtype="float64")

    return resembles


def template_shingles(pagelets: DataFrame, min_pages: int = 2) -> DataFrame:
    """Figure 5 step 1: shingles of pagelets that occur on >= `min_pages` pages."""
    return pagelets.groupBy("shingle").agg(F.countDistinct("page_key").alias("n_pages")).where(
        F.col("n_pages") >= min_pages)


def template_candidates(pagelets: DataFrame, shingles: DataFrame) -> DataFrame:
    """Figure 5 step 2: the pagelets whose shingle recurs."""
    return pagelets.join(shingles.select("shingle"), "shingle", "left_semi").select("page_key", "ordinal", "shingle")


def template_carriers(candidates: DataFrame) -> DataFrame:
    """(shingle, page_key), once per pair: the pages carrying each template
    shingle, the vertices of the groups G_s (Figure 5 step 4). The self-join,
    the bridges and the components all read it; persist it once. Derived
    anew in each of them, its distinct was computed six times at 10,000 pages
    (broadcast joins, each inferring its own not-null filters below the
    distinct, so no two plans were alike; at 1M, with sort-merge joins, it
    was computed once either way)."""
    return candidates.select("shingle", "page_key").distinct()


def spread_carriers(carriers: DataFrame) -> DataFrame:
    """`carriers` (or the candidates) hashed on (shingle, page_key), into
    spark.sql.shuffle.partitions partitions (an explicit number, which AQE
    does not coalesce), so that the self-join's output is spread evenly: it
    streams the carriers past the broadcast links and keeps their
    partitioning. The candidates' semi-join, their distinct and the class
    semi-join leave them partitioned by shingle alone, every carrier of a
    shingle in one partition, so the self-join made each group's edges in
    one task, the giant group's (the web-wide bar, 1.49M of 8.2M edges at
    100,000 pages) included; that task was 30-50x the median in every stage
    that read the edges, and at 1M the persisted candidates' own partition
    of the bar (1.19M pagelets) was 16x the median task that read them
    (docs/scaling.md, "The skew was one group's edges in one task")."""
    n = shuffle_partitions(carriers.sparkSession)
    return carriers.repartition(n, "shingle", "page_key")


def carrier_classes(carriers: DataFrame) -> DataFrame:
    """(shingle, representative): shingles whose carrier page sets are equal
    share a representative, the least shingle of the class. G_s is a function
    of the pages carrying s alone (its vertices; its edges are the links
    among them, and the bridges the same-site links leaving them), so one
    representative's components are every class member's.

    A set is compared by (size, XOR of its page keys, XOR of a second hash of
    them), aggregated without collecting it: two different sets of the same
    size collide only if both 64-bit XORs of their symmetric difference vanish,
    about 2^-128 for a pair of sets. `carriers` as `template_carriers`
    (each (shingle, page) once)."""
    sig = carriers.groupBy("shingle").agg(
        F.count("*").alias("n"), F.bit_xor("page_key").alias("x1"),
        F.bit_xor(F.xxhash64("page_key")).alias("x2"))
    rep = Window.partitionBy("n", "x1", "x2")
    return sig.select("shingle", F.min("shingle").over(rep).alias("representative"))


def expand_classes(members: DataFrame, classes: DataFrame) -> DataFrame:
    """A representative's (shingle, page_key, component) rows for every
    shingle of its class, each component named as `template_components`
    names it: the least vertex id (`_vertex_id`) of that shingle's pages in
    it, so the template keys are those of a run without classes."""
    rows = members.withColumnRenamed("shingle", "representative").join(classes, "representative").select(
        "shingle", "page_key", F.col("component").alias("class_component"))
    # a group-by (combined map-side) and a join, not a window: the web-wide
    # bar's one component would be one window partition, a straggler
    keys = rows.groupBy("shingle", "class_component").agg(
        F.min(_vertex_id("shingle", "page_key")).alias("component"))
    return rows.join(keys, ["shingle", "class_component"]).select("shingle", "page_key", "component")


def template_links(carriers: DataFrame, links: DataFrame) -> DataFrame:
    """Figure 5 step 3: links between two pages that both carry shingle s
    (T1.page_key = src, T2.page_key = dst, T1.shingle = T2.shingle);
    `carriers` as `template_carriers`."""
    pages_of = carriers.select("shingle", "page_key")
    page_links = links.where(F.col("src_page_key") != F.col("dst_page_key")).select(
        "src_page_key", "dst_page_key").distinct()
    t1 = pages_of.withColumnRenamed("page_key", "src_page_key")
    t2 = pages_of.withColumnRenamed("page_key", "dst_page_key")
    return page_links.join(t1, "src_page_key").join(t2, ["dst_page_key", "shingle"]).select(
        "shingle", "src_page_key", "dst_page_key")


def bridge_links(carriers: DataFrame, links: DataFrame) -> DataFrame:
    """Same-site links between a page carrying shingle s and a page r that does
    not: (shingle, src_page_key, dst_page_key), r being a *bridge*. Section 3.2
    accepts templatized pages "reachable one from the other by an undirected
    path of other templatized pages (possibly through the root of the site)";
    one bridge lets two pages that both link the site's index (and not each
    other, like the API pages of a reference) join one component. At most 2d
    rows per link (d: template pagelets on a page; each end's shingles the
    other end lacks), within the paper's d^2 * M bound for TEMPLATE_LINKS. `carriers` as `template_carriers`."""
    pages_of = carriers.select("shingle", "page_key")
    site_links = links.where(F.col("same_site") & (F.col("src_page_key") != F.col("dst_page_key"))).select(
        "src_page_key", "dst_page_key").distinct()
    carriers_src = site_links.join(pages_of.withColumnRenamed("page_key", "src_page_key"), "src_page_key")
    carriers_dst = site_links.join(pages_of.withColumnRenamed("page_key", "dst_page_key"), "dst_page_key")
    out_bridges = carriers_src.join(pages_of.withColumnRenamed("page_key", "dst_page_key"),
                                    ["shingle", "dst_page_key"], "left_anti")
    in_bridges = carriers_dst.join(pages_of.withColumnRenamed("page_key", "src_page_key"),
                                   ["shingle", "src_page_key"], "left_anti")
    cols = ["shingle", "src_page_key", "dst_page_key"]
    return out_bridges.select(*cols).union(in_bridges.select(*cols))


def template_id():
    """The template_id column of a membership row: one definition for the
    templates and template_pagelets tables, so that they join."""
    return F.xxhash64("shingle", "template_key").alias("template_id")


def _vertex_id(shingle, page_key):
    return F.xxhash64(shingle, page_key)


def template_components(spark: SparkSession, carriers: DataFrame, tlinks: DataFrame,
                        config: DetectConfig = DetectConfig(), report: dict | None = None) -> DataFrame:
    """Figure 5 steps 4-5: undirected connected components of each shingle's
    group G_s; (shingle, page_key, component) for the pages of components
    holding two or more of them. Vertices are (shingle, page) pairs with hashed
    ids, so one components run serves every shingle at once; `tlinks` may also
    hold bridge links, whose pages join the graph but not the templates; a
    component is named by the least vertex id of its carrier pages;
    `carriers` as `template_carriers`."""
    carriers = carriers.withColumn("id", _vertex_id("shingle", "page_key"))
    edges = persisted(tlinks.select(F.col("shingle").alias("group"), _vertex_id("shingle", "src_page_key").alias("src"),
                                    _vertex_id("shingle", "dst_page_key").alias("dst")))
    # the graph is the disjoint union of the groups G_s: small ones are solved
    # in memory, the giant ones by GraphFrames (whose inputs are persisted
    # there: its rounds re-read them)
    components = grouped_components(spark, edges, config, report)
    labelled = carriers.join(components, "id")
    # a component is named by its least carrier vertex: bridge pages join the
    # graph, not the template, and a carrier class names its members' alike
    named = labelled.groupBy("component").agg(F.count("*").alias("size"), F.min("id").alias("name"))
    return labelled.join(named.where(F.col("size") > 1), "component").select(
        "shingle", "page_key", F.col("name").alias("component"))


def global_template_pagelets(spark: SparkSession, pagelets: DataFrame, links: DataFrame,
                             config: DetectConfig = DetectConfig(), report: dict | None = None) -> DataFrame:
    """(page_key, ordinal, shingle, template_key) of every pagelet in a template
    (Fig. 5); `report` gets what connected components did."""
    # spread: the carriers' distinct and the final join then reuse the partitioning
    candidates = persisted(spread_carriers(template_candidates(pagelets, template_shingles(pagelets))))
    carriers = template_carriers(candidates)
    classes = None
    if config.merge_equal_carriers:
        # the self-join and the components once per class of equal carrier sets
        carriers = persisted(carriers)
        classes = persisted(carrier_classes(carriers))
        carriers = carriers.join(classes.where(F.col("shingle") == F.col("representative")).select(
            "shingle"), "shingle", "left_semi")
    carriers = persisted(spread_carriers(carriers))
    tlinks = template_links(carriers, links)
    if config.enabled and config.bridges:
        tlinks = tlinks.union(bridge_links(carriers, links))
    members = template_components(spark, carriers, tlinks, config, report)
    if classes is not None:
        # checkpointed: evidence_filter reads the memberships four times, and
        # each read would otherwise plan the expansion, and every cached table
        # under it, again
        members = truncate_lineage(expand_classes(members, classes))
        if report is not None:
            counts = classes.agg(F.count("*").alias("shingles"),
                                 F.countDistinct("representative").alias("classes")).first()
            report["carrier_classes"] = {"shingles": int(counts["shingles"]), "classes": int(counts["classes"])}
    return candidates.join(members, ["shingle", "page_key"]).select(
        "page_key", "ordinal", "shingle", F.col("component").alias("template_key"))


def local_template_pagelets(pages: DataFrame, pagelets: DataFrame) -> DataFrame:
    """Figure 4: drop duplicate pages (dup_of set), then every shingle shared
    by >= 2 of the remaining pages is a template; its pagelets are marked on
    all pages, duplicates included."""
    originals = pages.where(F.col("dup_of").isNull()).select("page_key")
    kept = pagelets.join(originals, "page_key", "left_semi")
    # shingles are counted without the duplicates (a mirrored page must not make
    # its content look like a template), then removed from every page
    candidates = template_candidates(pagelets, template_shingles(kept))
    return candidates.select("page_key", "ordinal", "shingle", F.col("shingle").alias("template_key"))


def templates_table(template_pagelets: DataFrame, pagelets: DataFrame, pages: DataFrame, mode: str) -> DataFrame:
    """One row per template: id, shingle, pages, sites, DOM paths, a sample text."""
    enriched = template_pagelets.join(pagelets.select("page_key", "ordinal", "dom_path", "text"),
                                      ["page_key", "ordinal"]).join(pages.select("page_key", "site"), "page_key")
    return enriched.groupBy("shingle", "template_key").agg(
        F.countDistinct("page_key").alias("n_pages"),
        F.countDistinct("site").alias("n_sites"),
        F.slice(F.array_sort(F.collect_set("dom_path")), 1, 5).alias("dom_paths"),
        F.substring(F.min("text"), 1, 200).alias("sample_text"),
    ).select(
        template_id(), "shingle", "n_pages", "n_sites", "dom_paths",
        "sample_text", F.lit(mode).alias("mode"),
    )
