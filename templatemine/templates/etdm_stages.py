"""Alarte et al.'s detector as Spark stages (the algorithms: templates/etdm.py).

    PAGES, LINKS, PAGELETS
      -> key_pages_and_subdigraphs   per site: key pages (choose_key_pages) and
                                     Algorithm 1 on the site's links; no page loaded
      -> extract_templates           per key page: load it and its CS pages from
                                     the WARC files (random access), Algorithm 2
      -> map_pages                   per WARC file: every page of a site with a
                                     template, mapped onto its best template;
                                     its template nodes removed (node level)

Per-site work is a `cogroup(...).applyInPandas` over the site's pages and links
(one task handles a site: the link lists of very large sites are the limit, see
docs/etdm.md); loading pages happens per template and per WARC file, so the
expensive part (parsing every page again) is spread like extract.
"""

from __future__ import annotations

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from templatemine.config import DetectConfig
from templatemine.ids import hash64

KEY_SCHEMA = ("site string, key_page_key long, key_rank int, cs array<long>, explored int, complete boolean, "
              "reachable int")
TEMPLATE_SCHEMA = ("site string, template_id long, key_page_key long, template_json string, n_nodes int, "
                   "pages_parsed int, sample_text string")
MAPPED_SCHEMA = ("page_key long, template_id long, clean_text string, n_tokens int, template_tokens int, "
                 "n_template_nodes int, template_paths array<string>, load_error string")


def etdm_template_id(site: str, key_page_key: int) -> int:
    return hash64(f"etdm\x00{site}\x00{key_page_key}")


def page_shapes(pagelets: DataFrame, depth: int) -> DataFrame:
    """(page_key, shape): a hash of the set of the page's pagelet DOM paths cut
    after `depth` steps below the root (/html/body/div[2] is depth 3)."""
    cut = F.array_join(F.slice(F.split("dom_path", "/"), 1, depth + 1), "/")
    return pagelets.groupBy("page_key").agg(
        F.xxhash64(F.array_join(F.array_sort(F.collect_set(cut)), "|")).alias("shape"))


def site_links(pages: DataFrame, links: DataFrame, pagelets: DataFrame) -> DataFrame:
    """Same-site links between crawled pages, with the link density of the
    pagelet holding each link (links per token; for the menu-first order)."""
    crawled = pages.select(F.col("page_key").alias("dst_page_key"))
    density = pagelets.select(
        F.col("page_key").alias("src_page_key"), F.col("ordinal").alias("pagelet_ordinal"),
        (F.col("n_links") / (F.col("n_tokens") + 1)).alias("density"))
    return (links.where(F.col("same_site") & (F.col("src_page_key") != F.col("dst_page_key")))
            .join(crawled, "dst_page_key", "left_semi")
            .join(density, ["src_page_key", "pagelet_ordinal"], "left")
            .join(pages.select(F.col("page_key").alias("src_page_key"), "site"), "src_page_key")
            .select("site", "src_page_key", "dst_page_key", "link_ordinal", F.coalesce("density", F.lit(0.0))
                    .alias("density")))


def site_subdigraphs(pages, edges, n: int, max_templates: int, min_shape_share: float,
                     menu_first: bool) -> list[tuple]:
    """One site's key pages (etdm.choose_key_pages) and, for each, the
    n-complete subdigraph of Algorithm 1 found on its links. Returns
    [(key_page_key, key_rank, CompleteSubdigraph, reachable)].

    `pages`: (page_key, url, shape, original) of every crawled page of the site,
    original = coalesce(dup_of, page_key); `edges`: (src, dst, link_ordinal,
    density), the site's links between crawled pages (site_links).

    Near-duplicates (dup_of set) take no part: links are those of original
    pages, the pages Algorithm 1 would load, and a link to a near-duplicate is
    a link to its original (/docs/index.html to /docs/), whose content it has.
    A duplicate's own out-links are left out (an original is not "loaded" as
    its copy). So a duplicate is never a key page, never in a CS (the key
    page's own /index.html was a CS of one page, and the template the whole
    key page; found in review) and casts no extra in-link vote. A link whose
    original is not one of this site's pages is dropped; so are self-links
    after the mapping (/ to /index.html)."""
    from templatemine.templates.etdm import choose_key_pages, complete_subdigraph, explore_order

    pages = list(pages)
    original = {int(k): int(o) for k, _url, _shape, o in pages}
    originals = [(int(k), url, int(shape)) for k, url, shape, o in pages if int(k) == int(o)]
    out_links: dict[int, set[int]] = {k: set() for k, _url, _shape in originals}
    by_src: dict[int, list] = {}
    linked_from: dict[int, set[int]] = {}
    for src, dst, ordinal, dens in edges:
        src, dst = int(src), original.get(int(dst))
        if src not in out_links or dst not in out_links or dst == src:
            continue
        out_links[src].add(dst)
        by_src.setdefault(src, []).append((int(ordinal), dst, float(dens)))
        linked_from.setdefault(dst, set()).add(src)
    rows = [(k, url, shape, len(linked_from.get(k, ()))) for k, url, shape in originals]
    result = []
    for rank, key in enumerate(choose_key_pages(rows, max_templates, min_shape_share)):
        order = explore_order(by_src.get(key, []), menu_first)
        cs = complete_subdigraph(key, out_links, n, order)
        reachable = sum(1 for u in order if u != key and u in out_links)
        result.append((key, rank, cs, reachable))
    return result


def key_pages_and_subdigraphs(pages: DataFrame, pagelets: DataFrame, edges: DataFrame,
                              config: DetectConfig) -> DataFrame:
    """Per site: its key pages and, for each, the n-complete subdigraph of
    Algorithm 1 found on the LINKS table (site_subdigraphs, which also counts
    the in-links). Every page of the site comes with its original,
    coalesce(dup_of, page_key): computed here, since a null long column
    reaches pandas as float64, which cannot hold a 64-bit page key."""
    shapes = page_shapes(pagelets, config.etdm_shape_depth)
    info = (pages.select("page_key", "url", "site", F.coalesce("dup_of", "page_key").alias("original"))
            .join(shapes, "page_key", "left")
            .select("site", "page_key", "url", F.coalesce("shape", F.lit(0)).alias("shape"), "original"))
    n, max_t, share, menu_first = (config.etdm_n, config.etdm_max_templates, config.etdm_min_shape_share,
                                   config.etdm_menu_first)
    columns = ["site", "key_page_key", "key_rank", "cs", "explored", "complete", "reachable"]

    def per_site(site_pages: pd.DataFrame, site_edges: pd.DataFrame) -> pd.DataFrame:
        if site_pages.empty:
            return pd.DataFrame(columns=columns)
        site = site_pages["site"].iloc[0]
        found = site_subdigraphs(
            zip(site_pages["page_key"].tolist(), site_pages["url"].tolist(), site_pages["shape"].tolist(),
                site_pages["original"].tolist()),
            zip(site_edges["src_page_key"].tolist(), site_edges["dst_page_key"].tolist(),
                site_edges["link_ordinal"].tolist(), site_edges["density"].tolist()),
            n, max_t, share, menu_first)
        return pd.DataFrame([(site, key, rank, cs.pages, cs.explored, cs.complete, reachable)
                             for key, rank, cs, reachable in found], columns=columns)

    return info.groupBy("site").cogroup(edges.groupBy("site")).applyInPandas(per_site, KEY_SCHEMA)


def _load_trees(warc_file: str, offsets: list[int]) -> tuple[dict, dict]:
    """{offset: DomTree} of the HTML records at `offsets`, and {offset: error}."""
    from templatemine.html.record import html_at
    from templatemine.templates.etdm import DomTree

    html, errors = html_at(warc_file, offsets)
    trees = {}
    for offset, doc in html.items():
        try:
            trees[offset] = DomTree.from_html(doc)
        except Exception as exc:  # unparsable: the page keeps its text
            errors[offset] = f"{warc_file} offset {offset}: {type(exc).__name__}: {exc}"[:300]
    return trees, errors


def extract_templates(pages: DataFrame, keys: DataFrame, config: DetectConfig) -> DataFrame:
    """Algorithm 2 per key page: load the key page and its CS pages and refine
    the key page's tree by an ETDM with each in turn. A key page whose CS is
    empty (a one-page site, a page that links nowhere) yields no template:
    Algorithm 2 would return the whole key page."""
    members = keys.select("site", "key_page_key", F.posexplode(
        F.concat(F.array("key_page_key"), "cs")).alias("role", "page_key"))
    located = members.join(pages.select("page_key", "warc_file", "warc_offset"), "page_key")
    equality, min_overlap = config.etdm_equality, config.etdm_min_overlap

    def per_key(group: pd.DataFrame) -> pd.DataFrame:
        from templatemine.templates.etdm import TEXT, Equality, extract_template

        eq = Equality.parse(equality)
        site, key = group["site"].iloc[0], int(group["key_page_key"].iloc[0])
        group = group.sort_values("role")
        trees = {}
        for warc_file, part in group.groupby("warc_file"):
            loaded, _errors = _load_trees(warc_file, [int(o) for o in part["warc_offset"]])
            for page_key, offset in zip(part["page_key"], part["warc_offset"]):
                if int(offset) in loaded:
                    trees[int(page_key)] = loaded[int(offset)]
        others = [trees[int(k)] for k in group["page_key"] if int(k) != key and int(k) in trees]
        if key not in trees or not others:  # no CS page: the key page alone would be its own "template"
            return pd.DataFrame(columns=["site", "template_id", "key_page_key", "template_json", "n_nodes",
                                         "pages_parsed", "sample_text"])
        template, used = extract_template(trees[key], others, eq, min_overlap)
        if not used:  # every CS page has another layout
            return pd.DataFrame(columns=["site", "template_id", "key_page_key", "template_json", "n_nodes",
                                         "pages_parsed", "sample_text"])
        sample = " ".join(t for tag, t in zip(template.tag, template.text) if tag == TEXT)[:200]
        return pd.DataFrame([(site, etdm_template_id(site, key), key, template.to_json(), len(template),
                              len(trees), sample)],
                            columns=["site", "template_id", "key_page_key", "template_json", "n_nodes",
                                     "pages_parsed", "sample_text"])

    return located.groupBy("site", "key_page_key").applyInPandas(per_key, TEMPLATE_SCHEMA)


def templates_by_site(rows) -> dict[str, list[tuple[int, str]]]:
    """site -> [(template_id, template_json)] in template_id order. best_template
    keeps the first of templates that map equally many nodes, so the order must
    not be the shuffle's: collected as they came, it changed with the number of
    shuffle partitions (local preset against a cluster), and with it a page's
    template and clean text (found in review)."""
    by_site: dict[str, list] = {}
    for site, template_id, template_json in rows:
        by_site.setdefault(site, []).append((template_id, template_json))
    for templates in by_site.values():
        templates.sort()
    return by_site


def map_pages(spark: SparkSession, pages: DataFrame, templates: DataFrame, config: DetectConfig,
              removed: DataFrame | None = None) -> DataFrame:
    """Every page of a site that has templates, mapped onto the template that
    covers most of it (etdm.best_template); its template nodes are removed.
    `removed`: optional (page_key, dom_path) of pagelets another detector
    found (the combined mode removes both). Pages are loaded per WARC file.

    The templates (at most etdm_max_templates per site, a few KB each) are
    collected and broadcast: joining them onto every page row instead would
    ship pages x template size through the shuffle. At millions of sites this
    collect is the limit (docs/etdm.md)."""
    rows = templates.select("site", "template_id", "template_json").collect()
    shared = spark.sparkContext.broadcast(templates_by_site((r["site"], r["template_id"], r["template_json"])
                                                            for r in rows))
    todo = pages.select("page_key", "site", "warc_file", "warc_offset").join(
        templates.select("site").distinct(), "site", "left_semi")
    if removed is not None:
        paths = removed.groupBy("page_key").agg(F.collect_set("dom_path").alias("removed_paths"))
        todo = todo.join(paths, "page_key", "left")
    else:
        todo = todo.withColumn("removed_paths", F.lit(None).cast("array<string>"))
    equality = config.etdm_equality

    def per_file(group: pd.DataFrame) -> pd.DataFrame:
        from templatemine.templates.etdm import DomTree, Equality, best_template, clean_page

        eq = Equality.parse(equality)
        warc_file = group["warc_file"].iloc[0]
        trees, errors = _load_trees(warc_file, [int(o) for o in group["warc_offset"]])
        parsed: dict[str, list] = {}
        out = []
        for page_key, site, offset, removed_paths in zip(group["page_key"], group["site"], group["warc_offset"],
                                                         group["removed_paths"]):
            tree = trees.get(int(offset))
            if tree is None:
                out.append((int(page_key), None, None, None, None, None, None, errors.get(int(offset), "not loaded")))
                continue
            if site not in parsed:
                parsed[site] = [(tid, DomTree.from_json(js)) for tid, js in shared.value.get(site, [])]
            candidates = parsed[site]
            k, mapped = best_template(tree, [t for _tid, t in candidates], eq)
            extra = frozenset(removed_paths) if removed_paths is not None else frozenset()
            cleaned = clean_page(tree, mapped, extra)
            out.append((int(page_key), candidates[k][0] if k is not None else None, cleaned.clean_text,
                        cleaned.n_tokens, cleaned.template_tokens, cleaned.n_template_nodes,
                        cleaned.template_paths, None))
        return pd.DataFrame(out, columns=["page_key", "template_id", "clean_text", "n_tokens", "template_tokens",
                                          "n_template_nodes", "template_paths", "load_error"])

    return todo.groupBy("warc_file").applyInPandas(per_file, MAPPED_SCHEMA)


def etdm_template_pagelets(pagelets: DataFrame, mapped: DataFrame) -> DataFrame:
    """The pagelet-level view of a node-level result: a pagelet is in the
    template when its DOM path is (or is under) a path that is template whole."""
    paths = mapped.where(F.col("template_id").isNotNull()).select(
        "page_key", "template_id", F.explode("template_paths").alias("tpath"))
    return pagelets.select("page_key", "ordinal", "dom_path").join(paths, "page_key").where(
        (F.col("dom_path") == F.col("tpath")) | F.col("dom_path").startswith(F.concat(F.col("tpath"), F.lit("/")))
    ).groupBy("page_key", "ordinal").agg(F.first("template_id").alias("template_id"))


def etdm_templates_table(templates: DataFrame, keys: DataFrame, pages: DataFrame, mapped: DataFrame,
                         mode: str) -> DataFrame:
    """The templates table of the other modes (template_id, shingle, n_pages,
    n_sites, dom_paths, sample_text, mode) plus what this detector adds: the
    key page, its CS, Algorithm 1's pages explored, pages parsed, nodes."""
    used = mapped.where(F.col("template_id").isNotNull()).groupBy("template_id").agg(
        F.count("*").alias("n_pages"),
        F.slice(F.array_sort(F.collect_set(F.try_element_at("template_paths", F.lit(1)))), 1, 5).alias("dom_paths"))
    return (templates.join(keys, ["site", "key_page_key"])
            .join(pages.select(F.col("page_key").alias("key_page_key"), F.col("url").alias("key_url")),
                  "key_page_key")
            .join(used, "template_id", "left")
            .select("template_id", F.lit(None).cast("long").alias("shingle"),
                    F.coalesce("n_pages", F.lit(0)).cast("long").alias("n_pages"), F.lit(1).cast("long").alias("n_sites"),
                    F.coalesce("dom_paths", F.array().cast("array<string>")).alias("dom_paths"),
                    "sample_text", F.lit(mode).alias("mode"), "site", "key_url", "key_rank",
                    F.size("cs").alias("cs_size"), "complete", "explored", "reachable", "pages_parsed", "n_nodes"))
