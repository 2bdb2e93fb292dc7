"""The graph jobs (templatemine/graph/) on a small generated topic web: HITS
against numpy, the template community that fools page-based HITS and not
pagelet FT FNM, the DOM/MDL iteration against a pure-Python replay, the
co-citation rule and the crawl priorities."""

import json
import os
import random
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from pyspark.sql import functions as F

from templatemine.config import TEST, DistillConfig
from templatemine.evaluate.synthetic_topics import NETWORK, TopicWebSpec, generate_topics, read_truth
from templatemine.graph.cocitation import PAGE, PAGELET, citations, related
from templatemine.graph.distill import base_set, distill, read_tables
from templatemine.graph.dom import dom_distill, dom_leaves, leaf_path
from templatemine.graph.hits import hits, hits_reference
from templatemine.graph.mdl import quantum, segment, spread
from templatemine.graph.query import match_column, matches, parse_query
from templatemine.graph.stage import run_priority
from templatemine.html.urls import normalize_url, page_key, scheme_twin
from templatemine.tables.extract import run_extract
from templatemine.templates.stage import run_clean, run_detect
from templatemine.warc.inputs import expand_inputs

SPEC = TopicWebSpec(topics=("rock climbing", "java", "oracle", "sushi", "blues", "cheese"), authorities=6, hubs=4,
                    portals=5, portal_pages=6)
QUIET = lambda _m: None  # noqa: E731


def test_hits_equals_the_numpy_iteration(spark):
    rng = random.Random(3)
    edges = [(rng.randrange(40), 1000 + rng.randrange(30)) for _ in range(150)]
    result = hits(spark.createDataFrame(edges, "hub long, auth long"), max_iter=7, tol=0.0)
    h_ref, a_ref = hits_reference(edges, 7)
    assert result.iterations == 7 and not result.converged
    a = {r.auth: r.a for r in result.authorities.collect()}
    h = {r.hub: r.h for r in result.hubs.collect()}
    assert a.keys() == a_ref.keys() and h.keys() == h_ref.keys()
    assert max(abs(a[k] - a_ref[k]) for k in a) < 1e-12 and max(abs(h[k] - h_ref[k]) for k in h) < 1e-12


def test_hits_partitions_follow_the_edges(spark, monkeypatch):
    """The edges' partitions were always 2 (found in review, 2026-11-28): one
    per EDGES_PER_PARTITION distinct edges now, at least 2, at most the
    session's shuffle partitions; the scores stay the numpy iteration's."""
    import templatemine.graph.hits as hits_module

    rng = random.Random(4)
    edges = [(rng.randrange(40), 1000 + rng.randrange(30)) for _ in range(150)]
    n = len(set(edges))
    monkeypatch.setattr(hits_module, "EDGES_PER_PARTITION", 20)
    before = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        for most, want in ((3, 3), (64, -(-n // 20))):
            spark.conf.set("spark.sql.shuffle.partitions", str(most))
            result = hits(spark.createDataFrame(edges, "hub long, auth long"), max_iter=5, tol=0.0)
            assert (result.partitions, result.edges) == (want, n)
            a_ref = hits_reference(edges, 5)[1]
            assert max(abs(r.a - a_ref[r.auth]) for r in result.authorities.collect()) < 1e-12
        from templatemine.spark import shuffle_partitions

        spark.conf.unset("spark.sql.shuffle.partitions")  # not set: Spark's default (it was the parallelism)
        assert shuffle_partitions(spark) == 200
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)


def test_match_column_is_matches(spark):
    texts = ["Rock-climbing gear", "rock and climbing", "ROCK CLIMBING, Java", "java", "", None, "Ünïcode rock climbing"]
    for query in ('"rock climbing"', '"rock climbing" java', "climbing"):
        terms = parse_query(query)
        got = [r.m for r in spark.createDataFrame([(t,) for t in texts], "text string")
               .select(match_column(F.col("text"), terms).alias("m")).collect()]
        assert got == [matches(t, terms) for t in texts], query


@pytest.fixture(scope="module")
def web(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("topics")
    summary = generate_topics(SPEC, str(root))
    out = str(root / "out")
    run_extract(spark, expand_inputs(summary["warc_files"]), out, TEST.extract, progress=QUIET)
    run_detect(spark, out, TEST.detect, progress=QUIET)
    run_clean(spark, out, QUIET, TEST.clean)
    return {"out": out, "truth": {t["url"]: t for t in read_truth(str(root))}}


def test_the_template_community_fools_page_hits_not_pagelet_ft_fnm(spark, web):
    result = distill(spark, web["out"], "rock climbing", DistillConfig(max_iter=30),
                     ("page vanilla", "pagelet FT FNM"), n_ranked=10, progress=QUIET)
    truth = web["truth"]
    page = [a["url"] for a in result["configs"]["page vanilla"]["authorities"]][:5]
    clean = [a["url"] for a in result["configs"]["pagelet FT FNM"]["authorities"]][:5]
    # page-based HITS ranks the sister portals, whose shared bar links them all (the TKC effect)
    assert sum(truth[u]["kind"] == "portal" for u in page) >= 4
    # with template pagelets' links dropped and non-matching pagelets filtered, the top is on topic
    assert len(clean) == 5 and all(truth[u]["relevant"] for u in clean)
    hubs = result["configs"]["pagelet FT FNM"]["hubs"]
    assert hubs and not any(h["template"] for h in hubs)


def _replay(leaves: pd.DataFrame, root: set, iterations: int, node_bits: float) -> dict:
    """The DOM/MDL iteration in plain Python: what dom_distill must equal."""
    leaves = leaves.sort_values(["page_key", "link_ordinal"])
    pages = [(k, g, [leaf_path(p, o) for p, o in zip(g.dom_path, g.link_ordinal)]) for k, g in leaves.groupby("page_key")]
    a = {k: 1.0 / len(root) for k in root}
    for _ in range(iterations):
        hs = [np.array([a.get(d, 0.0) for d in g.dst_page_key]) for _k, g, _p in pages]
        delta = quantum(np.concatenate(hs))
        new: dict = {}
        for (_k, g, paths), h in zip(pages, hs):
            for d, v in zip(g.dst_page_key, spread(h, segment(paths, h, delta, node_bits))):
                new[d] = new.get(d, 0.0) + v
        total = sum(new.values())
        a = {k: v / total for k, v in new.items()}
    return a


def test_dom_mdl_converges_and_equals_the_plain_python_replay(spark, web):
    base = base_set(read_tables(spark, web["out"]), "rock climbing", DistillConfig())
    out = dom_distill(base, filter_templates=True, max_iter=50, tol=1e-6)
    assert out["converged"] and out["iterations"] <= 20  # the paper saw 10-20
    history = out["history"]
    assert all(h["expanded"] > 0 and h["pruned"] > 0 for h in history)
    ref = _replay(dom_leaves(base, True).toPandas(), {r.page_key for r in base.root.collect()},
                  out["iterations"], 1.0)
    got = {r.auth: r.a for r in out["authorities"].collect()}
    assert got.keys() == ref.keys()
    assert max(abs(got[k] - ref[k]) for k in got) < 1e-9
    # the best hub subtrees are link lists, pooled whole (not single links, not whole pages)
    best = out["segmented"].orderBy(F.desc("frontier_h"), "page_key", "link_ordinal").limit(20).collect()
    assert all(r.frontier.endswith("]") and "/ul[" in r.frontier and r.frontier_links > 1 for r in best)
    base.unpersist()


def test_cocitation_within_non_template_pagelets(spark, web):
    links = spark.read.parquet(os.path.join(web["out"], "links"))
    members = spark.read.parquet(os.path.join(web["out"], "template_pagelets"))
    truth = web["truth"]
    home = "https://java.toolboxnet.com/"
    key = page_key(normalize_url(home))
    classic = [r.url for r in related(citations(links, None, PAGE), key, 5).collect()]
    rule = [r.url for r in related(citations(links, members, PAGELET), key, 5).collect()]
    # the network bar co-cites every portal (and its service pages) with every other, on every portal page
    assert len(classic) == 5 and all(NETWORK in u for u in classic)
    # only the java hubs' lists co-cite it, with java pages
    assert all(truth[u]["kind"] != "portal" and truth[u]["topic"] == "java" for u in rule)


def test_crawl_priority_ranks_template_only_urls_lower(spark, web):
    manifest = run_priority(spark, web["out"], DistillConfig(), progress=QUIET)
    table = spark.read.parquet(os.path.join(web["out"], "crawl_priority"))
    assert table.count() == manifest["rows"]["crawl_priority"] > 0
    frontier = table.where(~F.col("crawled")).collect()
    content = [r for r in frontier if r.content_citing_pages > 0]
    template_only = [r for r in frontier if r.content_citing_pages == 0]
    assert content and template_only and manifest["template_only"] >= len(template_only)
    assert any("/jobs/" in r.url for r in template_only)  # the network bar's service links
    assert min(r.priority for r in content) > max(r.priority for r in template_only)
    # the held-out authorities hubs list are content links (a few fall to sketch collisions of a hub's
    # list with a menu listing the same titles, which detection takes for a template)
    held_out = [r for r in frontier if not web["truth"].get(r.url, {"crawled": True})["crawled"]]
    assert sum(r.content_citing_pages > 0 for r in held_out) >= 0.8 * len(held_out) > 0
    # a template stamped on many pages is one vote
    jobs = next(r for r in template_only if "/jobs/" in r.url)
    assert jobs.template_citing_pages == SPEC.portals * SPEC.portal_pages and jobs.citing_templates == 1


def test_distill_command_line(web, tmp_path):
    out_json = str(tmp_path / "distill.json")
    proc = subprocess.run([sys.executable, "-m", "templatemine.cli", "distill", web["out"], "--query",
                           '"rock climbing"', "--configs", "page FNM,pagelet FT FNM", "--preset", "test",
                           "--json", out_json], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "== pagelet FT FNM" in proc.stdout and "authorities:" in proc.stdout
    with open(out_json) as fh:
        result = json.load(fh)
    assert set(result["configs"]) == {"page FNM", "pagelet FT FNM"} and result["sizes"]["root"] > 0
    bad = subprocess.run([sys.executable, "-m", "templatemine.cli", "distill", web["out"], "--query", "x",
                          "--configs", "page magic"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown configuration" in bad.stderr


def test_related_and_priority_commands(spark, web, capsys, tmp_path):
    from templatemine.cli import _graph, build_parser
    from templatemine.config import load_config
    from templatemine.progress import Progress

    config = load_config("test")
    args = build_parser().parse_args(["related", "https://java.toolboxnet.com", web["out"], "-n", "3"])
    assert _graph(spark, args, config, Progress()) == 0
    shown = capsys.readouterr().out
    assert "co-cited within one pagelet, template pagelets ignored" in shown
    assert len([line for line in shown.splitlines() if "https://www.java-" in line]) == 3
    args = build_parser().parse_args(["priority", web["out"], "--set", "distill.template_weight=0.5"])
    assert _graph(spark, args, load_config("test", None, args.set), Progress()) == 0
    shown = capsys.readouterr().out
    assert "linked only from removed pagelets" in shown and "top uncrawled" in shown
    with open(os.path.join(web["out"], "priority.json")) as fh:
        assert json.load(fh)["template_weight"] == 0.5
    # not a run's output: a clear error, exit 2; a query nothing matches: empty rankings, no crash
    assert _graph(spark, build_parser().parse_args(["priority", str(tmp_path)]), config, Progress()) == 2
    assert (f"{tmp_path}: no pages, links, template_pagelets tables for the graph commands; they come from "
            f"`templatemine extract` and `templatemine detect` on {tmp_path} first") in capsys.readouterr().err
    args = build_parser().parse_args(["distill", web["out"], "--query", "zzyzx", "--configs",
                                      "pagelet FT FNM,dom MDL FT"])
    assert _graph(spark, args, config, Progress()) == 0
    shown = capsys.readouterr().out
    assert "root set 0" in shown and "nothing to rank" in shown


def test_related_counts_a_mirror_once_and_keys_the_url_as_extract_did(spark, tmp_path):
    """Found in review: a near-duplicate page (dup_of set: a mirror, http beside
    https) co-cited its targets a second time; and `related` keyed the URL with
    index.html stripped whatever OUT's extract did."""
    from templatemine.graph.stage import run_related

    out = tmp_path / "out"
    a, b, t, x = (page_key(u) for u in ("https://s.org/a", "https://s.org/b", "https://s.org/t/index.html",
                                        "https://s.org/x"))
    spark.createDataFrame([(a, "https://s.org/a", None), (b, "https://s.org/b", a)],
                          "page_key long, url string, dup_of long").write.parquet(str(out / "pages"))
    spark.createDataFrame([(src, 0, dst, url) for src in (a, b) for dst, url in
                           ((t, "https://s.org/t/index.html"), (x, "https://s.org/x"))],
                          "src_page_key long, pagelet_ordinal int, dst_page_key long, dst_url string") \
        .write.parquet(str(out / "links"))
    spark.createDataFrame([], "page_key long, ordinal int").write.parquet(str(out / "template_pagelets"))
    (out / "manifest.json").write_text(json.dumps({"config": {"strip_index": False}}))
    got = run_related(spark, str(out), "https://s.org/t/index.html")
    assert [(r["url"], r["cocitations"], r["citing_pages"]) for r in got["related"]] == [("https://s.org/x", 1, 1)]


def test_the_graph_commands_see_the_links_clean_keeps(spark, tmp_path):
    """Found in review: the graph commands took the site-level template pagelets
    alone, so on a page the page-level model judged, a link clean removes (a
    "related stories" list) still voted as content, and on a page-mode page a
    site-level template's link clean keeps did not."""
    from templatemine.graph.stage import run_priority

    out = tmp_path / "out"
    a, b, t, x = (page_key(f"https://s.org/{p}") for p in "abtx")
    spark.createDataFrame([(a, "https://s.org/a", "s.org", None), (b, "https://s.org/b", "s.org", None)],
                          "page_key long, url string, site string, dup_of long").write.parquet(str(out / "pages"))
    spark.createDataFrame([(src, o, dst, f"https://s.org/{name}") for src in (a, b)
                           for o, dst, name in ((0, t, "t"), (1, x, "x"))],
                          "src_page_key long, pagelet_ordinal int, dst_page_key long, dst_url string") \
        .write.parquet(str(out / "links"))
    spark.createDataFrame([(a, 0, 7), (b, 0, 7)], "page_key long, ordinal int, template_id long") \
        .write.parquet(str(out / "template_pagelets"))
    # a judged in page mode, b in hybrid; the model removed pagelet 1 (the link to x) on both
    spark.createDataFrame([(a, "page", [1]), (b, "hybrid", [1])],
                          "page_key long, mode string, template_pagelets array<int>") \
        .write.parquet(str(out / "page_templateness"))
    (out / "detect.json").write_text(json.dumps({"run_id": "d1"}))
    judged = {"detect_run_id": "d1", "rows": {"page_templateness": 2}, "model": "m"}
    (out / "pagelevel.json").write_text(json.dumps(judged))

    removed = {(r.page_key, r.ordinal, r.template_id)
               for r in read_tables(spark, str(out), ("template_pagelets",))["template_pagelets"].collect()}
    assert removed == {(a, 1, None), (b, 0, 7), (b, 1, None)}
    run_priority(spark, str(out), DistillConfig(), progress=QUIET)
    got = {r.url: (r.content_citing_pages, r.template_citing_pages, r.citing_templates)
           for r in spark.read.parquet(str(out / "crawl_priority")).collect()}
    assert got == {"https://s.org/t": (1, 1, 1), "https://s.org/x": (0, 2, 0)}

    # a judgement from before the last detect is not OUT's: the site-level templates alone
    (out / "pagelevel.json").write_text(json.dumps({**judged, "detect_run_id": "d0"}))
    removed = {(r.page_key, r.ordinal) for r in
               read_tables(spark, str(out), ("template_pagelets",))["template_pagelets"].collect()}
    assert removed == {(a, 0), (b, 0)}


def _tiny_tables(spark, pages, clean, links, pagelets):
    return {"pages": spark.createDataFrame(pages, "page_key long, url string, host string, dup_of long"),
            "clean_pages": spark.createDataFrame(clean, "page_key long, clean_text string"),
            "links": spark.createDataFrame(
                links, "src_page_key long, link_ordinal int, pagelet_ordinal int, dst_page_key long"),
            "pagelets": spark.createDataFrame(
                pagelets, "page_key long, ordinal int, dom_path string, dom_label string, text string"),
            "template_pagelets": spark.createDataFrame([], "page_key long, ordinal int")}


def test_a_near_duplicate_takes_no_in_link_place_of_a_live_page(spark):
    """The in_links budget ranks live pages only: a near-duplicate first in the
    hash order took the one place and was then dropped, so the live in-linker
    never entered the base set (found in review, 2026-11-28)."""
    order = spark.range(10, 40).select(F.col("id").alias("k"), F.xxhash64("id").alias("h")).orderBy("h").collect()
    dup, live = order[0]["k"], order[1]["k"]  # the near-duplicate ranks first
    root, original = 1, 2
    tables = _tiny_tables(
        spark, [(root, "https://r.org/", "r.org", None), (dup, "https://d.org/", "d.org", original),
                (live, "https://p.org/", "p.org", None), (original, "https://m.org/", "m.org", None)],
        [(root, "rock climbing"), (dup, "x"), (live, "x"), (original, "x")],
        [(dup, 0, 0, root), (live, 0, 0, root)],
        [(k, 0, "/html", "html", "t") for k in (root, dup, live, original)])
    base = base_set(tables, "rock climbing", DistillConfig(in_links=1))
    try:
        assert sorted(r["page_key"] for r in base.pages.collect()) == sorted([root, live])
        assert base.sizes["links"] == 1
    finally:
        base.unpersist()


def test_a_phrase_over_two_pagelets_matches_the_whole_text(spark):
    """The whole text is the pagelets' texts joined in order, as clean text is:
    a phrase split over two pagelets matched the clean text but not, pagelet by
    pagelet, the whole text, and FNM dropped the root page (found in review)."""
    root, hub = 1, 2
    tables = _tiny_tables(
        spark, [(root, "https://r.org/", "r.org", None), (hub, "https://h.org/", "h.org", None)],
        [(root, "Rock climbing gear"), (hub, "rock climbing hub")],
        [(hub, 0, 0, root)],
        [(root, 0, "/html/body/h1[1]", "h1", "Rock"), (root, 1, "/html/body/p[1]", "p", "climbing gear"),
         (hub, 0, "/html/body/ul[1]", "ul", "rock climbing hub")])
    base = base_set(tables, '"rock climbing"', DistillConfig())
    try:
        got = {r["page_key"]: (r["clean_match"], r["full_match"]) for r in base.pages.collect()}
        assert got == {root: (True, True), hub: (True, True)}
        assert matches("Rock climbing gear", parse_query('"rock climbing"'))  # the pure twin agrees
    finally:
        base.unpersist()


def test_priority_lists_a_url_linked_under_both_schemes_once(spark, tmp_path):
    """An uncrawled URL linked as http:// by one page and https:// by another
    was two rows of the frontier, each with half its votes; it is one, under
    https, each citing page counted once (a page linking both forms too). A
    URL linked under http alone stays as written, and one whose twin is the
    crawled page counts for that page."""
    from templatemine.graph.priority import inlink_baseline

    out = tmp_path / "out"
    a, b, c = (page_key(f"https://s.org/{p}") for p in "abc")
    spark.createDataFrame([(k, f"https://s.org/{p}", "s.org", None) for k, p in ((a, "a"), (b, "b"), (c, "c"))],
                          "page_key long, url string, site string, dup_of long").write.parquet(str(out / "pages"))
    written = [(a, 0, "http://s.org/y"), (a, 1, "https://s.org/y"), (b, 0, "https://s.org/y"),
               (c, 0, "http://s.org/y"), (c, 1, "http://s.org/z"), (a, 2, "http://s.org/b"),
               # another port is another server (html.urls.scheme_twin): two URLs
               (a, 3, "http://s.org:8080/p"), (b, 1, "https://s.org:8080/p"), (a, 4, "http://[::1]/q"),
               (b, 2, "https://[::1]/q")]
    spark.createDataFrame([(src, o, page_key(url), url) for src, o, url in written],
                          "src_page_key long, pagelet_ordinal int, dst_page_key long, dst_url string") \
        .write.parquet(str(out / "links"))
    spark.createDataFrame([], "page_key long, ordinal int, template_id long").write.parquet(
        str(out / "template_pagelets"))
    manifest = run_priority(spark, str(out), DistillConfig(), progress=QUIET)
    got = {r.url: (r.dst_page_key, r.crawled, r.content_citing_pages)
           for r in spark.read.parquet(str(out / "crawl_priority")).collect()}
    assert got == {"https://s.org/y": (page_key("https://s.org/y"), False, 3),
                   "http://s.org/z": (page_key("http://s.org/z"), False, 1),
                   "https://s.org/b": (b, True, 1), "http://s.org:8080/p": (page_key("http://s.org:8080/p"), False, 1),
                   "https://s.org:8080/p": (page_key("https://s.org:8080/p"), False, 1),
                   "https://[::1]/q": (page_key("https://[::1]/q"), False, 2)}
    assert manifest["uncrawled"] == 5
    # the in-link baseline (scripts/eval_distill.py) merges them the same way
    base = {r.url: r.citing_pages for r in inlink_baseline(spark.read.parquet(str(out / "pages")),
                                                           spark.read.parquet(str(out / "links"))).collect()}
    assert base["https://s.org/y"] == 3 and "http://s.org/y" not in base and base["http://s.org:8080/p"] == 1
    assert scheme_twin("http://s.org:8080/p") is None and scheme_twin("http://[::1]/q") == "https://[::1]/q"
