"""Detect and clean on a small generated site whose template we know."""

import os

from pyspark.sql import functions as F

from templatemine.config import ExtractConfig
from templatemine.html.urls import page_key
from templatemine.tables.extract import run_extract
from templatemine.templates.components import min_label_propagation, star_contraction
from templatemine.config import DetectConfig
from templatemine.templates.stage import run_clean, run_detect
from templatemine.warc.inputs import expand_inputs
from tests.graphs import bfs_components
from tests.warcgen import moved_site, small_site, write_warc

QUIET = dict(progress=lambda _m: None)


def test_min_label_propagation(spark):
    v = spark.createDataFrame([(i,) for i in range(7)], ["id"])
    e = spark.createDataFrame([(0, 1), (2, 1), (3, 4), (4, 5), (5, 3)], ["src", "dst"])
    got = {r["id"]: r["component"] for r in min_label_propagation(v, e).collect()}
    assert got == {0: 0, 1: 0, 2: 0, 3: 3, 4: 3, 5: 3, 6: 6}
    report = {}
    stars = {r["id"]: r["component"] for r in star_contraction(v, e, report=report).collect()}
    assert stars == {i: c for i, c in got.items() if i != 6} and report["rounds"] >= 1  # 6 is isolated


def test_star_contraction_equals_a_bfs_on_random_graphs(spark):
    """Large-star/small-star against a plain BFS: random forests of long paths
    (large diameter, where label propagation needs many rounds) and random
    graphs with signed 64-bit ids like the hashed (shingle, page) vertices."""
    import random

    rng = random.Random(5)
    for trial in range(3):
        ids = [rng.randint(-2**63, 2**63 - 1) for _ in range(300)]
        if trial == 0:  # paths of length 60: diameter 59
            edges = [(ids[i], ids[i + 1]) for i in range(299) if (i + 1) % 60]
        else:
            edges = [(rng.choice(ids), rng.choice(ids)) for _ in range(250)]
        v = spark.createDataFrame([(i,) for i in ids], "id long")
        e = spark.createDataFrame(edges, "src long, dst long")
        report = {}
        got = {r["id"]: r["component"] for r in star_contraction(v, e, report=report).collect()}
        want = {x: c for x, c in bfs_components([(a, b) for a, b in edges if a != b]).items()}
        assert got == want
        if trial == 0:
            assert report["rounds"] < 20  # far fewer than the diameter


def test_grouped_components_split_between_memory_and_distributed(spark):
    """Groups of <= cc_in_memory_max_edges edges are solved in memory, the
    others by the distributed algorithm; together they equal a BFS."""
    import random
    from dataclasses import replace

    from templatemine.templates.components import grouped_components

    rng = random.Random(9)
    rows, want = [], {}
    for group, n_edges in enumerate([3, 8, 40, 120, 2]):
        ids = [rng.randint(-2**63, 2**63 - 1) for _ in range(n_edges)]
        edges = [(rng.choice(ids), rng.choice(ids)) for _ in range(n_edges)]
        rows += [(group, a, b) for a, b in edges]
        # the distributed algorithms drop isolated vertices (self-loops only)
        want.update(bfs_components([(a, b) for a, b in edges if a != b]))
    edges = spark.createDataFrame(rows, "group long, src long, dst long")
    for limit, large in ((10, 2), (0, 5), (10**6, 0)):
        report = {}
        config = replace(DetectConfig(), cc_in_memory_max_edges=limit)
        got = {r["id"]: r["component"] for r in grouped_components(spark, edges, config, report).collect()}
        assert {x: c for x, c in got.items() if x in want} == want
        assert report["large_groups"] == large and report["small_groups"] == 5 - large
        assert report["small_edges"] + report["large_edges"] == len(rows)
    assert grouped_components(spark, edges.limit(0), DetectConfig()).count() == 0  # no template links at all


def test_detect_and_clean_remove_the_shared_template(spark, tmp_path):
    out = str(tmp_path / "site")
    run_extract(spark, expand_inputs([write_warc(str(tmp_path / "s.warc.gz"), small_site())]), out, ExtractConfig(),
                **QUIET)
    members = {}
    def cached():  # the ids of the blocks the session keeps (Spark's cleaner may drop earlier tests' meanwhile)
        return set(spark.sparkContext._jsc.getPersistentRDDs().keySet())

    before = cached()
    for limit in (0, 10**6):  # every shingle group distributed; every one in memory
        run_detect(spark, out, DetectConfig(mode="global", cc_in_memory_max_edges=limit), **QUIET)
        members[limit] = sorted(tuple(r) for r in spark.read.parquet(os.path.join(out, "template_pagelets")).collect())
        # the memberships, carriers, edges and components detect persisted are released with its run
        assert not cached() - before
    assert members[0] == members[10**6] and members[0]
    for mode in ("global", "local"):
        said = []
        detected = run_detect(spark, out, DetectConfig(mode=mode), progress=said.append)
        assert detected["mode"] == mode and detected["rows"]["templates"] >= 2
        # the clean output of the templates before goes with them (found in review: it stayed, looking current)
        assert not any(os.path.exists(os.path.join(out, name)) for name in ("clean.json", "clean_pages", "clean_links"))
        assert (mode == "local") == any("removed the earlier clean.json, clean_pages, clean_links" in m for m in said)
        run_clean(spark, out, **QUIET)
        pages = {r["url"]: r for r in spark.read.parquet(os.path.join(out, "clean_pages")).collect()}
        docs = pages["https://www.example.org/docs/"]
        assert "Install it with pip" in docs["clean_text"]
        assert "Privacy" not in docs["clean_text"] and "Copyright" not in docs["clean_text"]
        assert 0 < docs["template_token_fraction"] < 1 and docs["n_template_pagelets"] >= 2
        links = spark.read.parquet(os.path.join(out, "clean_links"))
        # on www.example.org the nav and footer links are gone; the link inside
        # the docs text stays. (The mirror's footer is no template in global
        # mode: no link connects the mirror to the site, Definition 4.)
        www = spark.read.parquet(os.path.join(out, "pages")).where("host = 'www.example.org'").select(
            F.col("page_key").alias("src_page_key"))
        assert links.join(www, "src_page_key").where(F.col("anchor_text") == "Privacy").count() == 0
        assert links.join(www, "src_page_key").where(F.col("anchor_text") == "about").count() == 1


def test_a_detect_that_fails_after_its_components_leaves_no_cache_or_checkpoint(spark, tmp_path, monkeypatch):
    """Found in review (2026-11-28): the components' group sizes and large
    groups' edges were persisted outside detect's release scope, and a failed
    run left OUT/_checkpoints/<uuid> behind."""
    import pytest

    import templatemine.templates.stage as stage

    out = str(tmp_path / "site")
    run_extract(spark, expand_inputs([write_warc(str(tmp_path / "s.warc.gz"), small_site())]), out, ExtractConfig(),
                **QUIET)

    import templatemine.templates.components as components

    def fail(*_args, **_kwargs):
        raise RuntimeError("a stage failed")

    before = spark.sparkContext._jsc.getPersistentRDDs().size()
    # inside the components (their distributed part), and after them
    for module, name in ((components, "connected_components"), (stage, "evidence_filter")):
        with monkeypatch.context() as patch:
            patch.setattr(module, name, fail)
            with pytest.raises(RuntimeError, match="a stage failed"):
                run_detect(spark, out, DetectConfig(mode="global", cc_in_memory_max_edges=0), **QUIET)
        assert spark.sparkContext._jsc.getPersistentRDDs().size() == before, name
        assert not any(os.scandir(os.path.join(out, "_checkpoints"))), name


def test_evidence_keeps_recurring_content_the_paper_removes(spark, tmp_path):
    """A post summary listed on two linked pages is a template by Definition 4
    (equal pagelets, connected pages) but not by the evidence filter: it is on
    2 of 11 pages of the site, at different DOM paths."""
    from tests.warcgen import blog_site

    out = str(tmp_path / "blog")
    run_extract(spark, expand_inputs([write_warc(str(tmp_path / "b.warc.gz"), blog_site())]), out, ExtractConfig(),
                **QUIET)
    texts = {}
    for name, enabled in (("paper", False), ("evidence", True)):
        run_detect(spark, out, DetectConfig(mode="global", enabled=enabled), **QUIET)
        run_clean(spark, out, **QUIET)
        texts[name] = {r["url"]: r["clean_text"] for r in spark.read.parquet(os.path.join(out, "clean_pages")).collect()}
    index = "https://blog.example.org/"
    assert "summary of the first post" not in texts["paper"][index]
    assert "summary of the first post" in texts["evidence"][index]
    for name in texts:  # both remove the real template
        assert "Privacy" not in texts[name][index] and "Copyright" not in texts[name][index]


def _site(host, nav, topic, share):
    from tests.warcgen import site_page

    pages = []
    for i in range(4):
        body = f"<p>Page {['one', 'two', 'three', 'four'][i]} about {topic}: {topic} facts number {'x' * (i + 1)}.</p>"
        pages.append({"url": f"{host}/p{i}.html", "html": site_page(f"{topic} {i}", body + share, nav)})
    return pages


def test_global_keeps_unrelated_sites_and_mirrors_apart(spark, tmp_path):
    """Definition 4's second condition: a pagelet two unrelated sites share by
    accident, and the template of a mirror that no link connects to its
    original, form one template per connected component, never one across."""
    share = ("<div class='share'><a href='https://social.example/a'>Share on A</a> "
             "<a href='https://social.example/b'>Share on B</a> <a href='https://social.example/c'>Share on C</a></div>")
    nav_a = [(f"/p{i}.html", f"Chapter {i}") for i in range(4)]
    nav_b = [(f"/p{i}.html", f"Recipe {i}") for i in range(4)]
    site_a = _site("https://docs.alpha.org", nav_a, "astronomy", share)
    site_b = _site("https://www.beta.net", nav_b, "cooking", share)
    mirror = [{**p, "url": p["url"].replace("docs.alpha.org", "alpha-mirror.com")} for p in site_a]
    out = str(tmp_path / "three")
    run_extract(spark, expand_inputs([write_warc(str(tmp_path / "t.warc.gz"), site_a + site_b + mirror)]), out,
                ExtractConfig(), **QUIET)
    run_detect(spark, out, DetectConfig(mode="global"), **QUIET)
    templates = spark.read.parquet(os.path.join(out, "templates"))
    assert templates.where("n_sites > 1").count() == 0  # no template spans sites
    share_templates = templates.where(F.col("sample_text").startswith("Share on A"))
    assert share_templates.count() == 3 and share_templates.where("n_pages = 4").count() == 3
    nav_a_templates = templates.where(F.col("sample_text").startswith("Chapter 0"))
    assert nav_a_templates.count() == 2  # the original and the mirror, apart
    assert {r["n_pages"] for r in nav_a_templates.collect()} == {4}


def test_run_writes_wet_manifest_stages_and_evaluates(spark, tmp_path, capsys):
    """clean writes OUT/wet (one conversion record per clean page, referring to
    its response record), manifest.json lists every stage, and evaluate
    (both argument forms) scores clean_pages per site."""
    import argparse
    import json

    from warcio.archiveiterator import ArchiveIterator

    import pytest

    from templatemine.cli import _evaluate
    from templatemine.evaluate.bow import gold_name

    from tests.warcgen import site_page

    out = str(tmp_path / "site")
    # one capture with an unreadable WARC-Date: its fetch_time is null (the demo's samples have such records)
    undated = {"url": "https://www.example.org/undated.html", "date": "sometime in 2026",
               "html": site_page("undated", "<p>A page whose capture time nobody knows.</p>", [])}
    # one captured as an URI that normalises otherwise: its WET record names the URI as captured
    raw = {"url": "HTTPS://WWW.Example.ORG:443/Guide.html",
           "html": site_page("guide", "<p>A guide whose link had the host in capitals.</p>", [])}
    run_extract(spark, expand_inputs([write_warc(str(tmp_path / "s.warc.gz"), small_site() + [undated, raw])]), out,
                ExtractConfig(), **QUIET)
    run_detect(spark, out, DetectConfig(mode="global"), **QUIET)
    from templatemine.config import CleanConfig

    # a page a file, spread by a hash of the URL: some parts get none (and write no file), some two or more
    cleaned = run_clean(spark, out, config=CleanConfig(wet_pages_per_file=1), **QUIET)
    clean = {r["url"]: r for r in spark.read.parquet(os.path.join(out, "clean_pages")).collect()}
    pages = spark.read.parquet(os.path.join(out, "pages")).collect()
    captured = {r["target_uri"] or r["url"]: r["url"] for r in pages}
    assert {r["url"]: r["target_uri"] for r in pages if r["target_uri"]} == {
        "https://www.example.org/Guide.html": raw["url"]}  # null where it is the url
    source_ids = {r["url"]: r["warc_record_id"] for r in pages}
    wet, dates, per_file = {}, {}, []
    for name in sorted(os.listdir(os.path.join(out, "wet"))):
        with open(os.path.join(out, "wet", name), "rb") as fh:
            per_file.append(0)
            for rec in ArchiveIterator(fh):
                if rec.rec_type == "conversion":
                    per_file[-1] += 1
                    url = captured[rec.rec_headers.get_header("WARC-Target-URI")]
                    wet[url] = (rec.rec_headers.get_header("WARC-Refers-To"), rec.content_stream().read().decode())
                    dates[url] = rec.rec_headers.get_header("WARC-Date")
    assert cleaned["wet"]["records"] == len(wet) == len(clean)
    assert cleaned["wet"]["files"] == len(per_file) and min(per_file) >= 1, per_file
    assert dates[undated["url"]] == "1970-01-01T00:00:00Z" and dates["https://www.example.org/docs/"].startswith("2026")
    for url, (refers_to, text) in wet.items():
        assert refers_to == source_ids[url] and refers_to.startswith("<urn:uuid:")
        assert text == clean[url]["clean_text"]
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    assert manifest["stage"] == "extract" and set(manifest["stages"]) == {"detect", "clean"}
    assert manifest["stages"]["clean"]["rows"]["clean_pages"] == len(clean)
    assert manifest["stages"]["detect"]["timings"]["total_s"] > 0
    assert manifest["stages"]["detect"]["rows"]["templates"] > 0 and "wet" in manifest["stages"]["clean"]
    assert not os.path.exists(os.path.join(out, "_checkpoints")) or not any(
        os.scandir(os.path.join(out, "_checkpoints")))  # the components rounds' checkpoints are gone

    assert "wet" not in run_clean(spark, out, config=CleanConfig(wet=False), **QUIET)
    assert not os.path.exists(os.path.join(out, "wet"))  # no stale WET from the run before

    gold = tmp_path / "gold.jsonl"
    docs = "https://www.example.org/docs/"
    gold.write_text(json.dumps({"url": docs, "gold_text": clean[docs]["clean_text"]}) + "\n"
                    + json.dumps({"url": "https://mirror.example.net/docs/", "gold_text": "zebra quartz"}) + "\n")
    report = tmp_path / "scores.json"
    _evaluate(spark, argparse.Namespace(out=out, golds=[str(gold)], peers=False, json=str(report)))
    printed = capsys.readouterr().out
    scores = json.load(open(report))["templatemine"]["per_file"][gold_name(str(gold))]
    # two sites (example.org, example.net), one page each: the mean of 1.0 and 0.0
    assert scores["sites"] == 2 and scores["f1"] == 0.5 and "0.500" in printed
    assert json.load(open(report))["gold_pages_in_out"] == 2 and "gold pages are not in" not in printed
    gold.write_text(json.dumps({"url": "https://elsewhere.example.com/", "gold_text": "x"}) + "\n")
    with pytest.raises(ValueError, match="none of the 1 gold URL"):  # a wrong --pred is not F1 0
        _evaluate(spark, argparse.Namespace(out=out, golds=[str(gold)], peers=False, json=None))


def test_evaluate_keys_gold_urls_as_the_extract_keyed_pages(spark, tmp_path):
    """Found in review: with extract.strip_index=false, a gold .../index.html was
    looked for as .../ and scored as empty text."""
    import argparse
    import json

    from templatemine.cli import _evaluate
    from templatemine.evaluate.bow import gold_name

    out = tmp_path / "out"
    spark.createDataFrame([("https://s.org/t/index.html", "alpha beta gamma")], "url string, clean_text string") \
        .write.parquet(str(out / "clean_pages"))
    (out / "manifest.json").write_text(json.dumps({"config": {"strip_index": False}}))
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"url": "https://s.org/t/index.html", "gold_text": "alpha beta gamma"}) + "\n")
    report = tmp_path / "scores.json"
    _evaluate(spark, argparse.Namespace(out=str(out), golds=[str(gold)], peers=False, json=str(report)))
    assert json.load(open(report))["templatemine"]["per_file"][gold_name(str(gold))]["f1"] == 1.0


def test_carrier_classes_give_the_tables_of_one_join_per_shingle(spark, tmp_path):
    """Shingles carried by the same pages have the same group G_s: detect joins
    and solves one shingle of each class and copies the result, template keys
    recomputed per shingle. The tables equal those of a join per shingle, on a
    synthetic web whose sites' menus, footers and headers share their pages."""
    from templatemine.evaluate.synthetic import WebSpec, generate

    web = tmp_path / "web"
    generate(WebSpec(pages=400, seed=2, shards=2, markup="real", mirror_share=0.3, sister_share=0.3), str(web))
    out = str(tmp_path / "out")
    run_extract(spark, expand_inputs([str(web / "warc")]), out, ExtractConfig(nodes=False), **QUIET)
    tables, reports = {}, {}
    # classes with every group distributed, against a join per shingle with every group in memory
    for merge, limit in ((False, 10**6), (True, 0)):
        detected = run_detect(spark, out, DetectConfig(mode="global", merge_equal_carriers=merge,
                                                       cc_in_memory_max_edges=limit), **QUIET)
        reports[merge] = detected["connected_components"]
        tables[merge] = {name: sorted(tuple(r) for r in spark.read.parquet(os.path.join(out, name)).collect())
                         for name in ("templates", "template_pagelets")}
    assert tables[False]["template_pagelets"] and len(tables[False]["templates"]) > 100
    assert tables[True] == tables[False]
    classes = reports[True]["carrier_classes"]
    assert "carrier_classes" not in reports[False]
    assert classes["classes"] < classes["shingles"] / 2  # a site's blocks share their pages


def test_spread_carriers_puts_one_shingles_pages_in_every_partition(spark):
    """The carriers arrive partitioned by shingle alone (the candidates'
    semi-join shuffle); the self-join streams them, so a shingle on every page
    (a web-wide bar) made all its edges in one task. spread_carriers hashes
    them on (shingle, page_key) into spark.sql.shuffle.partitions partitions."""
    from templatemine.templates.detect import spread_carriers

    n = 6
    old = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", str(n))
    try:
        rows = [(7, p) for p in range(600)] + [(s, p) for s in range(8, 20) for p in range(s, 600, 37)]
        by_shingle = spark.createDataFrame(rows, "shingle long, page_key long").repartition(n, "shingle")
        per_part = lambda df: sorted(r["c"] for r in df.where("shingle = 7").groupBy(  # noqa: E731
            F.spark_partition_id().alias("p")).agg(F.count("*").alias("c")).collect())
        assert per_part(by_shingle) == [600]  # the skew: one partition holds the whole shingle
        spread = spread_carriers(by_shingle)
        assert spread.rdd.getNumPartitions() == n
        counts = per_part(spread)
        assert len(counts) == n and sum(counts) == 600 and max(counts) < 2 * 600 / n
        assert sorted(map(tuple, spread.collect())) == sorted(rows)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", old)


def test_a_shingle_collision_is_no_template(spark):
    """Section 3.2: a template's pagelets are almost identical; an equal
    shingle is only the test of it. Three post headers sharing a byline and
    nothing else (resemblance ~0.4) are given one shingle, as a 2-row MinHash
    gives them about once in six: the evidence filter with `min_resemblance`
    drops them (what is left of the group is on one page), and keeps the
    menu whose one variant differs by an item. With 0 they stay a template."""
    from templatemine.config import EvidenceConfig
    from templatemine.templates.detect import almost_identical, evidence_filter

    menu = "News | Politics | Opinions | Local | Sports | Arts | Business | Tech | Travel"
    byline = "Posted by Bethonie Butler on February 14, 2013 at 11:02 am"
    headers = ["Hax-Philes: discuss advice in our new Hax forum", "How to contact the Post newsroom",
               "About Wednesday's impressionist front page photo"]
    pagelets = [(p, 0, "/html/body/ul[1]", menu if p < 4 else menu.replace("Travel", "Jobs"), 11) for p in range(1, 5)]
    pagelets += [(p, 1, "/html/body/header[1]", f"{headers[p - 1]} {byline}", 22) for p in range(1, 4)]
    pagelets += [(p, 2, "/html/body/p[1]", f"story {p}", 33) for p in range(1, 5)]
    pagelets = spark.createDataFrame(
        [(p, o, path, "ul" if o == 0 else "header", text, len(text.split()), 0, sh) for p, o, path, text, sh in pagelets],
        "page_key long, ordinal int, dom_path string, dom_label string, text string, n_tokens int, n_links int, "
        "shingle long")
    members = pagelets.where("ordinal < 2").select("page_key", "ordinal", "shingle", F.col("shingle").alias(
        "template_key"))
    pages = spark.createDataFrame([(p, "example.org", None, 3) for p in range(1, 5)],
                                  "page_key long, site string, dup_of long, n_pagelets int")
    kept = sorted(tuple(r) for r in almost_identical(members, pagelets, 0.5).select("page_key", "ordinal").collect())
    assert [k for k in kept if k[1] == 0] == [(p, 0) for p in range(1, 5)]  # the menu and its variant
    assert len([k for k in kept if k[1] == 1]) == 1  # the header the group's text is taken from
    by_setting = {m: {r["shingle"] for r in evidence_filter(members, pagelets, pages, EvidenceConfig(
        min_resemblance=m)).collect()} for m in (0.0, 0.5)}
    assert by_setting == {0.0: {11, 22}, 0.5: {11}}


def test_site_support_counts_original_pages_that_have_pagelets(spark):
    """The evidence filter's share of a site's pages counts originals (three
    ?utm= copies of a page lifted a block on two of ten pages over 30%: 5 of
    13) and pages with a pagelet (fifteen empty script shells sank a menu on
    the six other pages under it: 6 of 21). Found in review."""
    from templatemine.config import EvidenceConfig
    from templatemine.templates.detect import evidence_filter

    pages, pagelets = [], []
    for i in range(13):  # s1: ten pages, 10-12 copies of page 0; block 2 on pages 0 and 1 (and the copies)
        pages.append((i, "s1.com", 0 if i >= 10 else None, 2))
        pagelets += [(i, 0, "/html/body/ul[1]", 1), (i, 1, "/html/body/p[1]", 1000 + min(i, 10))]
        if i in (0, 1) or i >= 10:
            pagelets.append((i, 2, "/html/body/div[2]", 2))
    for i in range(100, 121):  # s2: a menu on six pages, fifteen pages without pagelets
        pages.append((i, "s2.com", None, 2 if i < 106 else 0))
        if i < 106:
            pagelets += [(i, 0, "/html/body/ul[1]", 21), (i, 1, "/html/body/p[1]", 3000 + i)]
    pages = spark.createDataFrame(pages, "page_key long, site string, dup_of long, n_pagelets int")
    pagelets = spark.createDataFrame(pagelets, "page_key long, ordinal int, dom_path string, shingle long")
    members = pagelets.where("shingle < 1000").select("page_key", "ordinal", "shingle",
                                                      F.col("shingle").alias("template_key"))
    for support_of in ("path", "template"):
        kept = {r["shingle"] for r in evidence_filter(members, pagelets, pages,
                                                       EvidenceConfig(support_of=support_of)).collect()}
        assert kept == {1, 21}, support_of  # the menus stay; the block of two pages and its copies goes


def test_links_written_to_the_http_twin_of_crawled_https_pages_join_them(spark, tmp_path):
    """A site crawled under https:// whose menu still links http:// (a site that
    moved to https): Figure 5's self-join used to find no link between its
    pages, so its menu and footer were no template in global mode (README,
    Known gaps). A link to the twin now reaches the crawled page
    (tables/targets.py); where both twins are crawled each keeps its own."""
    from templatemine.graph.stage import run_priority, run_related

    nav = [(f"http://docs.alpha.org/p{i}.html", f"Chapter {i}") for i in range(4)]
    site = _site("https://docs.alpha.org", nav, "astronomy", "")
    # both twins of one page crawled: two pages, a link to each reaches its own
    both = [{"url": "https://www.beta.net/a.html", "html": "<p>beta a <a href='http://www.beta.net/b.html'>b</a></p>"},
            {"url": "https://www.beta.net/b.html", "html": "<p>beta b over https</p>"},
            {"url": "http://www.beta.net/b.html", "html": "<p>beta b over http</p>"}]
    out = str(tmp_path / "twins")
    extracted = run_extract(spark, expand_inputs([write_warc(str(tmp_path / "t.warc.gz"), site + both)]), out,
                            ExtractConfig(), **QUIET)
    links = extracted["links"]
    # 4 pages x 4 menu links to http twins (the home page's own link is counted too: it is a link written)
    assert links["internal_resolved_by_twin"] == 16
    assert links["internal_resolved"] == 16 + 1  # and beta's link to its crawled http page
    # Figure 5's own links (no bridges: the uncrawled twins would connect the pages through themselves)
    run_detect(spark, out, DetectConfig(mode="global", bridges=False), **QUIET)
    templates = spark.read.parquet(os.path.join(out, "templates"))
    menu = templates.where(F.col("sample_text").startswith("Chapter 0")).collect()
    assert [r["n_pages"] for r in menu] == [4]
    assert templates.where(F.col("sample_text").startswith("Copyright")).count() == 1
    # ETDM's complete subdigraph is made of links between crawled pages: it found none before
    etdm = run_detect(spark, out, DetectConfig(mode="etdm"), **QUIET)
    assert etdm["etdm"]["templates"] == 1 and etdm["etdm"]["pages_matched_to_a_template"] == 4
    # LINKS keeps the URL written and its key
    written = spark.read.parquet(os.path.join(out, "links")).where(F.col("dst_url").startswith("http://docs"))
    assert {r["dst_page_key"] for r in written.collect()} == {
        page_key(f"http://docs.alpha.org/p{i}.html") for i in range(4)}
    # the graph commands: the twin is the crawled page, no URL to crawl; `related` takes either
    run_clean(spark, out, **QUIET)
    priority = run_priority(spark, out, progress=lambda _m: None)
    assert not [r for r in priority["top_uncrawled"] if r["url"].startswith("http://docs")]
    table = spark.read.parquet(os.path.join(out, "crawl_priority"))
    assert table.where(F.col("url").startswith("http://docs")).count() == 0
    assert table.where(F.col("url").startswith("https://docs") & F.col("crawled")).count() == 4
    assert table.where((F.col("url") == "http://www.beta.net/b.html") & F.col("crawled")).count() == 1
    related = run_related(spark, out, "http://docs.alpha.org/p1.html", keep_templates=True)
    assert related["url"] == "https://docs.alpha.org/p1.html"
    # the menu co-cites the other chapters, each under the URL crawled (the links spell http://)
    assert sorted(r["url"] for r in related["related"]) == [f"https://docs.alpha.org/p{i}.html" for i in (0, 2, 3)]


def test_links_written_to_urls_that_redirect_to_crawled_pages_join_them(spark, tmp_path):
    """A site whose menu links the URLs its pages had before they moved: each
    answers a 301 (relative Location, to the http twin, or through a second
    redirect). Figure 5's self-join found no link between the pages, so the
    menu was no template without bridges; the links now reach the pages the
    redirects end on (tables/targets.py). A URL whose newest response is a 404,
    a loop, and a crawled page that also answered a 301 reach nothing else."""
    from templatemine.graph.stage import run_priority, run_related

    host = "https://docs.gamma.org"
    site, redirects = moved_site(host)
    out = str(tmp_path / "moved")
    extracted = run_extract(spark, expand_inputs([write_warc(str(tmp_path / "m.warc.gz"), site + redirects)]), out,
                            ExtractConfig(), **QUIET)
    links = extracted["links"]
    # 4 pages x 3 menu links whose redirects end on a page (p3's URL is gone); extra's link to p0 (its links
    # to the loop, the chain of 6 and the redirect to another site reach nothing)
    assert (links["internal_resolved_by_redirect"], links["internal_resolved_by_twin"]) == (12, 0)
    assert links["internal_resolved"] == 12 + 1
    records = spark.read.parquet(os.path.join(out, "records"))
    assert {r["target_uri"]: r["redirect_url"] for r in records.where(F.col("redirect_url").isNotNull()).collect()
            if r["target_uri"].endswith("/old/p0") or r["target_uri"].endswith("/mid/p2")} == {
        f"{host}/old/p0": f"{host}/p0.html", f"{host}/mid/p2": f"{host}/p2.html"}
    # Figure 5's own links (no bridges): the menu is a template of the four pages, where it was none
    run_detect(spark, out, DetectConfig(mode="global", bridges=False), **QUIET)
    templates = spark.read.parquet(os.path.join(out, "templates"))
    assert [r["n_pages"] for r in templates.where(F.col("sample_text").startswith("Chapter 0")).collect()] == [4]
    # LINKS keeps the URL written
    written = spark.read.parquet(os.path.join(out, "links")).where(F.col("dst_url").contains("/old/"))
    assert {r["dst_page_key"] for r in written.collect()} == {page_key(f"{host}/old/p{i}") for i in range(4)}
    run_clean(spark, out, **QUIET)
    run_priority(spark, out, progress=lambda _m: None)
    table = spark.read.parquet(os.path.join(out, "crawl_priority"))
    uncrawled = {r["url"] for r in table.where(~F.col("crawled")).collect()}
    assert {f"{host}/old/p3", f"{host}/loop/a", f"{host}/long/1", f"{host}/away"} <= uncrawled
    assert not {f"{host}/old/p{i}" for i in range(3)} & uncrawled
    related = run_related(spark, out, f"{host}/old/p1", keep_templates=True)
    assert related["url"] == f"{host}/p1.html"
    assert {f"{host}/p0.html", f"{host}/p2.html"} <= {r["url"] for r in related["related"]}
