"""Page-level model in Spark: training from site-level labels (MLlib), the model
round-tripping to disk, scoring as a Spark stage, and the run modes."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from pyspark.sql import functions as F

from templatemine.config import DetectConfig, ExtractConfig, PageLevelConfig
from templatemine.pagelevel.model import judge_page, load_model
from templatemine.pagelevel.stage import run_pagelevel
from templatemine.pagelevel.train import labelled_nodes, model_files, node_labels, train_page_model
from templatemine.tables.extract import run_extract
from templatemine.templates.stage import run_clean, run_detect
from templatemine.warc.inputs import expand_inputs
from tests.warcgen import blog_site, site_page, small_site, two_template_site, write_warc

QUIET = lambda _m: None  # noqa: E731


def _lonely_pages():
    """Pages of sites with one page each: only the model can judge them."""
    nav = [("/", "Home"), ("/news/", "News"), ("/sport/", "Sport"), ("/contact/", "Contact")]
    # the div's own text goes on after its paragraph: the clean text keeps it there (NODES.text_at)
    body = ("<div>From our town desk, a report. <p>"
            + "The council met on Tuesday and agreed the new budget for the town library. " * 6
            + "</p> The library will open its new wing next spring, the council said in a statement.</div>")
    return [{"url": f"https://www.lonely{i}.com/story.html", "html": site_page(f"story {i}", body, nav,
                                                                                f"Copyright {2000 + i} Lonely")}
            for i in range(3)]


@pytest.fixture(scope="module")
def trained(spark, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pagelevel")
    warc = write_warc(str(tmp / "sites.warc.gz"), small_site() + blog_site() + two_template_site() + _lonely_pages())
    out = str(tmp / "out")
    run_extract(spark, expand_inputs([warc]), out, ExtractConfig(), progress=QUIET)
    run_detect(spark, out, DetectConfig(mode="global"), progress=QUIET)
    model_root = str(tmp / "model")
    # k estimated from however few held-out templates the toy sites give
    config = PageLevelConfig(bands="0,5", holdout=0.3, pu_min_held_templates=1)
    summary = train_page_model(spark, [out], model_root, config, progress=QUIET)
    return out, model_root, summary


def test_labels_follow_the_site_level_templates(spark, trained):
    out, _, _ = trained
    nodes = spark.read.parquet(f"{out}/nodes")
    labels = node_labels(nodes, spark.read.parquet(f"{out}/template_pagelets"))
    joined = nodes.join(labels, ["page_key", "node"]).join(spark.read.parquet(f"{out}/pages"), "page_key")

    def labels_of(site):
        return {r["dom_label"]: sorted(r["labels"]) for r in joined.where(F.col("site") == site).groupBy(
            "dom_label").agg(F.collect_set("label").alias("labels")).collect()}

    ours = labels_of("example.org")
    assert ours["nav#menu"] == [1]  # the shared menu is a template on every page of the site
    assert ours["body"] == [0] and ours["main"] == [0]  # every page has content
    assert labels_of("lonely0.com")["nav#menu"] == [0]  # one page per site: no site-level template


def test_model_round_trips_through_mllib_and_json(spark, trained):
    from pyspark.ml.classification import LogisticRegressionModel
    from pyspark.ml.functions import array_to_vector, vector_to_array

    out, root, summary = trained
    model = load_model(root)
    assert model.version == summary["version"] and os.path.exists(os.path.join(root, "LATEST"))
    nodes = spark.read.parquet(f"{out}/nodes").where(F.col("n_tokens") >= 5)
    band = LogisticRegressionModel.load(os.path.join(root, model.version, "band-1"))
    assert np.allclose(band.coefficients.toArray(), model.coefficients[1], rtol=0, atol=1e-12)
    rows = band.transform(nodes.withColumn("fv", array_to_vector("features"))).select(
        vector_to_array("fv").alias("f"), "n_tokens", vector_to_array("probability")[1].alias("p")).collect()
    f = np.array([r["f"] for r in rows])
    ours = model.probability(f, np.array([r["n_tokens"] for r in rows]))
    assert len(rows) > 20 and np.allclose(ours, [r["p"] for r in rows], rtol=0, atol=1e-9)
    meta = json.load(open(os.path.join(root, model.version, "model.json")))
    assert meta["trained_on"]["bands"][1]["train_template"] > 0 and 0 < meta["pu_k"][1] <= 1


def test_training_labels_come_from_sites_with_several_pages(spark, trained):
    out, _, summary = trained
    sites = {r["site"] for r in labelled_nodes(spark, [out], min_site_pages=2).select("site").distinct().collect()}
    every = {r["site"] for r in labelled_nodes(spark, [out], min_site_pages=1).select("site").distinct().collect()}
    one_page = {r["site"] for r in spark.read.parquet(f"{out}/pages").groupBy("site").count().where(
        "count = 1").collect()}
    # the one-page sites' menus are labelled content (nothing repeats): kept out of training by default
    assert {"lonely0.com", "lonely1.com", "lonely2.com"} <= one_page
    assert every - sites == one_page and "example.org" in sites
    assert summary["config"]["train_min_site_pages"] == PageLevelConfig().train_min_site_pages == 2
    pages = spark.read.parquet(f"{out}/pages").count()
    sampled = labelled_nodes(spark, [out], max_pages=pages // 2).select("page_key").distinct().count()
    assert 0 < sampled < pages  # a sample of pages, by page hash


def test_model_root_given_as_a_uri_goes_through_hadoop(spark, trained, tmp_path):
    """A model root named by a URI (hdfs://, s3a://; here file://, the one
    scheme a test has) is written and read through the session's Hadoop
    FileSystem: train, LATEST, MLlib's copy, and the stage loading it."""
    out, _, _ = trained
    root = f"file://{tmp_path}/models"
    config = PageLevelConfig(bands="0,5", holdout=0.3, pu_min_held_templates=1)
    summary = train_page_model(spark, [out], root, config, progress=QUIET)
    version = summary["version"]
    assert summary["path"] == f"{root}/{version}"
    assert (tmp_path / "models" / "LATEST").read_text() == version + "\n"
    assert (tmp_path / "models" / version / "band-1" / "metadata").is_dir()  # MLlib's own copy
    model = load_model(root, model_files(spark, root))
    assert model.version == version and model == load_model(str(tmp_path / "models"))
    judged = run_pagelevel(spark, out, PageLevelConfig(mode="page", model=root), progress=QUIET)
    assert judged["model"] == version

    # a root that cannot be read says so in one line naming the file, as local disk does, not
    # with Hadoop's Java stack trace (2026-11-28; before, Py4J's error of some 40 lines)
    (tmp_path / "broken" / "LATEST").mkdir(parents=True)  # a directory where LATEST should be
    broken = f"file://{tmp_path}/broken"
    with pytest.raises(ValueError) as err:
        load_model(broken, model_files(spark, broken))
    assert str(err.value) == f"cannot read {broken}/LATEST (java.io.FileNotFoundException: {tmp_path}/broken/LATEST " \
                             "(Is a directory))"
    (tmp_path / "latin1").mkdir()
    (tmp_path / "latin1" / "model.json").write_bytes(b'{"version": "caf\xe9"}')
    with pytest.raises(ValueError, match=r"^cannot read file:.*/latin1/model.json \(not UTF-8: "):
        load_model(f"file://{tmp_path}/latin1", model_files(spark, f"file://{tmp_path}/latin1"))


def test_pu_correction_needs_enough_held_out_templates(spark, trained, tmp_path):
    out, _, _ = trained
    summary = train_page_model(spark, [out], str(tmp_path / "m"),
                               PageLevelConfig(bands="0,5", holdout=0.3, pu_min_held_templates=10**6), progress=QUIET,
                               save_mllib=False)
    assert all(b["pu_k"] == 1.0 and not b["pu_k_estimated"] and b["held_out_templates"] < 10**6
               for b in summary["bands"])
    assert load_model(summary["path"]).pu_k == (1.0, 1.0)
    assert os.listdir(summary["path"]) == ["model.json"]  # no MLlib copy asked for (model=run, remote outputs)


def test_nodes_and_models_of_other_features_are_refused(spark, trained, tmp_path, monkeypatch):
    """Found in review: training on an output extracted by a templatemine whose
    features differ (in meaning: the manifest's record; in number: an output
    from before the record) made a model that loaded as current or not at all;
    a model that `load_model` refuses was saved and LATEST pointed at it; the
    stage failed at a reshape. Each is now refused, saying why, and LATEST
    keeps naming the last good version."""
    import shutil
    from dataclasses import replace

    from templatemine.pagelevel.features import FORMAT, N_FEATURES
    from templatemine.pagelevel.model import PageModel
    from templatemine.pagelevel.train import _version
    from templatemine.tables.output import replace_text

    out, _, _ = trained
    assert json.load(open(f"{out}/manifest.json"))["node_features"] == {"format": FORMAT, "count": N_FEATURES}
    config = PageLevelConfig(bands="0,5", holdout=0.3, pu_min_held_templates=1)
    root = str(tmp_path / "models")
    good = train_page_model(spark, [out], root, config, progress=QUIET, save_mllib=False)["version"]
    assert _version([out], config) != _version([out], config)  # two trainings in one second: two directories

    older = str(tmp_path / "older")  # its manifest records format-1 features
    shutil.copytree(out, older)
    manifest = json.load(open(f"{older}/manifest.json"))
    manifest["node_features"]["format"] = 1
    replace_text(spark, f"{older}/manifest.json", json.dumps(manifest))  # and its Hadoop checksum
    with pytest.raises(ValueError, match="format-1 features .*header.*extract it again"):
        train_page_model(spark, [older], root, config, progress=QUIET, save_mllib=False)
    with pytest.raises(ValueError, match="page-level detection: its nodes hold format-1 features"):
        run_pagelevel(spark, older, PageLevelConfig(mode="page"), progress=QUIET)

    oldest = str(tmp_path / "oldest")  # no record nor features_format column, and one feature fewer per node
    shutil.copytree(out, oldest, ignore=shutil.ignore_patterns("nodes"))
    del manifest["node_features"]
    replace_text(spark, f"{oldest}/manifest.json", json.dumps(manifest))
    nodes = spark.read.parquet(f"{out}/nodes").drop("features_format")
    nodes.withColumn("features", F.slice("features", 1, N_FEATURES - 1)).write.parquet(f"{oldest}/nodes")
    with pytest.raises(ValueError, match=f"other than the {N_FEATURES} features"):
        train_page_model(spark, [oldest], root, config, progress=QUIET, save_mllib=False)
    with pytest.raises(ValueError, match=f"page-level detection: nodes with other than the {N_FEATURES} features"):
        run_pagelevel(spark, oldest, PageLevelConfig(mode="page"), progress=QUIET)

    # a band without both labels is found before any band is fitted: nothing of that training is left
    with pytest.raises(ValueError, match=r"band 2 \(>= 1000000 tokens\): 0 content and 0 template nodes"):
        train_page_model(spark, [out], root, replace(config, bands="0,5,1000000"), progress=QUIET)
    assert sorted(os.listdir(root)) == sorted(["LATEST", good])

    def refuse(self):
        raise ValueError("a coefficient or intercept is not a finite number")

    monkeypatch.setattr(PageModel, "check", refuse)
    with pytest.raises(ValueError, match="unusable model, not saved"):  # nor MLlib's copy of its bands
        train_page_model(spark, [out], root, config, progress=QUIET)
    monkeypatch.undo()
    assert sorted(os.listdir(root)) == sorted(["LATEST", good])
    assert open(f"{root}/LATEST").read().strip() == good and load_model(root).version == good
    assert [v for v in os.listdir(root) if os.path.exists(f"{root}/{v}/model.json")] == [good]


def test_a_snapshots_pages_of_another_features_format_are_set_aside(spark, trained, tmp_path):
    """A nightly run's snapshot records no format in its manifest: its nodes
    come from the state, of many nights, perhaps of an older templatemine.
    Each NODES row says its format (`features_format`); a page whose nodes
    hold another is neither judged nor trained on, the run says how many, and
    clean takes its text from the site-level templates. A row of null format
    (a state's node from before the column, so of format 2 or older) is set
    aside as of an unknown format, whatever its number of features (it was
    judged when that was right, and format 3 kept it at 43: found in review)."""
    import shutil

    from templatemine.pagelevel.features import FORMAT, N_FEATURES
    from templatemine.tables.output import replace_text

    out, _, _ = trained
    nodes = spark.read.parquet(f"{out}/nodes")
    assert {r["features_format"] for r in nodes.select("features_format").distinct().collect()} == {FORMAT}
    snap = str(tmp_path / "snapshot")
    shutil.copytree(out, snap, ignore=shutil.ignore_patterns("nodes", "page_templateness", "pagelevel.json",
                                                             "clean_*", "model"))
    manifest = json.load(open(f"{out}/manifest.json"))
    del manifest["node_features"]
    replace_text(spark, f"{snap}/manifest.json", json.dumps({**manifest, "snapshot": {"pages": 0}}))
    pages = spark.read.parquet(f"{out}/pages")
    key = {r["url"]: r["page_key"] for r in pages.collect()}
    old, unverified, short = (key[f"https://www.lonely{i}.com/story.html"] for i in range(3))
    page = F.col("page_key")
    nodes.withColumn("features_format", F.when(page == old, F.lit(FORMAT - 1)).when(
        page.isin(unverified, short), F.lit(None)).otherwise(F.col("features_format"))).withColumn(
        "features", F.when(page == short, F.slice("features", 1, 3)).otherwise(F.col("features"))).write.parquet(
        f"{snap}/nodes")

    said: list[str] = []
    manifest = run_pagelevel(spark, snap, PageLevelConfig(mode="page"), progress=said.append)
    assert manifest["set_aside"] == {"pages": 3, "formats": {str(FORMAT - 1): 1, "unknown": 2}}
    assert [m for m in said if "set aside" in m] == [
        f"page-level detection: 3 page(s) set aside, their nodes of other features than this templatemine's "
        f"(format {FORMAT}, {N_FEATURES}): format {FORMAT - 1}: 1, format unknown: 2; cleaned by the site-level "
        "templates until captured again"]
    judged = {r["page_key"] for r in spark.read.parquet(f"{snap}/page_templateness").select("page_key").collect()}
    assert judged == set(key.values()) - {old, short, unverified}  # null format: set aside, its count right or not
    run_clean(spark, snap, progress=QUIET)
    clean = {r["page_key"]: r for r in spark.read.parquet(f"{snap}/clean_pages").collect()}
    assert len(clean) == len(key)  # every page is cleaned, the set-aside one at site level
    assert clean[old]["mode"] == clean[short]["mode"] == clean[unverified]["mode"] == "site"
    assert "Copyright 2000 Lonely" in clean[old]["clean_text"]

    said.clear()
    trained_on = labelled_nodes(spark, [snap], progress=said.append).select("page_key").distinct().collect()
    assert {r["page_key"] for r in trained_on} == set(key.values()) - {old, short, unverified}
    assert [m[:34] for m in said if "set aside" in m] == ["training: 3 page(s) set aside, the"]
    said.clear()  # a model trained on the run itself: the stage's check serves its training too
    on_run = run_pagelevel(spark, snap, PageLevelConfig(mode="page", model="run", bands="0,5", holdout=0.3,
                                                        pu_min_held_templates=1), progress=said.append)
    assert on_run["trained"]["from_run"] and on_run["set_aside"] == manifest["set_aside"]
    assert [m[:46] for m in said if "set aside" in m] == ["page-level detection: 3 page(s) set aside, the"]


def test_a_page_with_a_non_finite_feature_is_set_aside_not_a_failed_stage(spark, trained, tmp_path):
    """A NaN or infinite feature (a nodes table written by other code, a
    corrupt file) cannot be smoothed: it failed the whole page-level stage
    ("x has non-finite scores") and made training's coefficients NaN. The
    page is set aside and named, clean takes its text from the site-level
    templates, and training leaves such nodes out and says how many."""
    import shutil

    out, _, _ = trained
    snap = str(tmp_path / "odd")
    shutil.copytree(out, snap, ignore=shutil.ignore_patterns("nodes", "page_templateness", "pagelevel.json",
                                                             "clean_*", "model"))
    key = {r["url"]: r["page_key"] for r in spark.read.parquet(f"{out}/pages").collect()}
    # one page of a one-page site, its root node; every node of one page of a site trained on
    nan_url, inf_url = "https://www.lonely0.com/story.html", "https://www.example.org/docs/"
    page = F.col("page_key")
    odd = F.when(page == key[nan_url], F.lit(float("nan"))).otherwise(F.lit(float("-inf")))
    spark.read.parquet(f"{out}/nodes").withColumn("features", F.when(
        (page == key[inf_url]) | ((page == key[nan_url]) & (F.col("node") == 0)),
        F.concat(F.array(odd.cast("float")), F.slice("features", 2, 10_000))).otherwise(F.col("features"))
    ).write.parquet(f"{snap}/nodes")

    said: list[str] = []
    manifest = run_pagelevel(spark, snap, PageLevelConfig(mode="page"), progress=said.append)
    assert manifest["set_aside"] == {"pages": 2, "formats": {}, "non_finite": 2,
                                     "non_finite_sample": [inf_url, nan_url]}
    assert "page-level detection: 2 page(s) set aside, a feature of their nodes not a finite number (NaN or " \
           f"infinite): {inf_url}, {nan_url}" in said
    assert set(manifest["modes"]) == {"page"} and manifest["rows"]["page_templateness"] == len(key) - 2
    judged = {r["page_key"] for r in spark.read.parquet(f"{snap}/page_templateness").select("page_key").collect()}
    assert judged == set(key.values()) - {key[nan_url], key[inf_url]}
    assert not os.path.exists(f"{snap}/_staging/{manifest['run_id']}")
    run_clean(spark, snap, progress=QUIET)
    clean = {r["page_key"]: r for r in spark.read.parquet(f"{snap}/clean_pages").collect()}
    assert len(clean) == len(key) and clean[key[nan_url]]["mode"] == clean[key[inf_url]]["mode"] == "site"

    said.clear()
    config = PageLevelConfig(bands="0,5", holdout=0.3, pu_min_held_templates=1)
    odd_nodes = labelled_nodes(spark, [out], config.train_min_site_pages).where(page == key[inf_url]).count()
    assert odd_nodes > 0
    summary = train_page_model(spark, [snap], str(tmp_path / "model"), config, progress=said.append)
    assert summary["non_finite_nodes"] == odd_nodes
    assert f"train: {odd_nodes} node(s) with a feature that is not a finite number (NaN or infinite) left out" \
        in said
    assert np.isfinite(np.concatenate(load_model(summary["path"]).coefficients)).all()


def test_model_trained_on_the_run_itself(spark, trained):
    out, _, _ = trained
    config = PageLevelConfig(mode="auto", min_site_pages=3, model="run", bands="0,5", holdout=0.3,
                             pu_min_held_templates=1)
    manifest = run_pagelevel(spark, out, config, progress=QUIET)
    trained_run = manifest["trained"]
    assert trained_run["from_run"] and trained_run["path"].startswith(os.path.join(out, "model"))
    model = load_model(os.path.join(out, "model"))  # LATEST: the version this stage trained and judged with
    on_disk = json.load(open(f"{out}/pagelevel.json"))  # the coefficients judged with, in the run's manifest
    assert manifest["model"] == on_disk["model"] == model.version
    assert on_disk["trained"]["pu_k"] == list(model.pu_k) and on_disk["trained"]["coefficients"][1] == list(
        model.coefficients[1])
    assert set(manifest["modes"]) == {"page", "hybrid"}
    # a band it cannot train (no node has 10**6 tokens): the shipped model judges, and the manifest says why
    fallback = run_pagelevel(spark, out, PageLevelConfig(mode="auto", model="run", bands="0,1000000"),
                             progress=QUIET)
    assert not fallback["trained"]["from_run"] and "band 1" in fallback["trained"]["reason"]
    assert fallback["model"] == load_model("").version


def test_page_mode_removes_the_template_from_single_pages(spark, trained):
    out, _, _ = trained
    # the shipped model (trained on real sites), not the toy one: it knows a menu and a footer
    manifest = run_pagelevel(spark, out, PageLevelConfig(mode="auto", min_site_pages=3), progress=QUIET)
    assert set(manifest["modes"]) == {"page", "hybrid"}
    cleaned = run_clean(spark, out, progress=QUIET)
    assert cleaned["rows"]["clean_pages"] == spark.read.parquet(f"{out}/pages").count()
    clean = {r["url"]: r for r in spark.read.parquet(f"{out}/clean_pages").collect()}
    lonely = [r for u, r in clean.items() if "lonely" in u]
    assert len(lonely) == 3 and {r["mode"] for r in lonely} == {"page"}
    model = load_model("")
    nodes = spark.read.parquet(f"{out}/nodes")
    for r in lonely:  # the Spark stage judged each page exactly as the pure scorer does
        ns = sorted(nodes.where(F.col("page_key") == r["page_key"]).collect(), key=lambda n: n["node"])
        pure = judge_page([n["parent"] for n in ns], [n["features"] for n in ns], [n["n_tokens"] for n in ns],
                          [n["text"] for n in ns], model, PageLevelConfig().scoring(), at=[n["text_at"] for n in ns])
        assert r["clean_text"] == pure.clean_text and "council met on Tuesday" in r["clean_text"]
        text = r["clean_text"]
        assert text.index("town desk") < text.index("council met") < text.index("new wing")  # document order
        assert r["template_token_fraction"] == pytest.approx(pure.template_tokens / pure.tokens)
        assert "Contact" not in r["clean_text"] and "Copyright" not in r["clean_text"]
    judged = spark.read.parquet(f"{out}/page_templateness")
    sizes = judged.join(spark.read.parquet(f"{out}/nodes").groupBy("page_key").count(), "page_key").where(
        F.size("x") != F.col("count")).count()
    assert sizes == 0  # x, y and template are aligned with the page's nodes
    # clean_links keeps exactly the links outside the pagelets the model removed whole and,
    # on hybrid pages, outside the site-level template pagelets (removed first, words or not)
    removed = {(r["page_key"], o) for r in judged.collect() for o in r["template_pagelets"]}
    hybrid = {r["page_key"] for r in judged.where(F.col("mode") == "hybrid").select("page_key").collect()}
    site_level = {(r["page_key"], r["ordinal"]) for r in spark.read.parquet(f"{out}/template_pagelets").collect()
                  if r["page_key"] in hybrid}
    assert hybrid and site_level
    removed |= site_level
    links = spark.read.parquet(f"{out}/links").collect()
    judged_keys = {r["page_key"] for r in judged.select("page_key").collect()}
    expected = sorted((r["src_page_key"], r["link_ordinal"]) for r in links
                      if r["src_page_key"] in judged_keys and (r["src_page_key"], r["pagelet_ordinal"]) not in removed)
    got = sorted((r["src_page_key"], r["link_ordinal"]) for r in spark.read.parquet(f"{out}/clean_links").collect()
                 if r["src_page_key"] in judged_keys)
    assert removed and got == expected and len(got) < len(links)
    per_page: dict = {}
    for key, o in removed:
        per_page[key] = per_page.get(key, 0) + 1
    assert {r["page_key"]: r["n_template_pagelets"] for r in spark.read.parquet(f"{out}/clean_pages").collect()
            if r["page_key"] in judged_keys} == {k: per_page.get(k, 0) for k in judged_keys}


def test_hybrid_removes_site_templates_even_when_the_model_would_not(spark, trained, tmp_path):
    out, root, _ = trained
    run_pagelevel(spark, out, PageLevelConfig(mode="site"), progress=QUIET)
    assert not os.path.exists(f"{out}/page_templateness")
    run_clean(spark, out, progress=QUIET)
    site = {r["url"]: r["clean_text"] for r in spark.read.parquet(f"{out}/clean_pages").collect()}
    # threshold above 1: the model never calls a node template; without the unlikely and article
    # rules (which remove a lonely story's menu and footer by themselves), hybrid = the site-level result
    run_pagelevel(spark, out, PageLevelConfig(mode="hybrid", model=root, threshold=1.01, unlikely=False,
                                              article=False), progress=QUIET)
    run_clean(spark, out, progress=QUIET)
    hybrid = {r["url"]: r["clean_text"] for r in spark.read.parquet(f"{out}/clean_pages").collect()}
    assert hybrid.keys() == site.keys()
    for url in site:
        assert sorted(hybrid[url].split()) == sorted(site[url].split()), url
    # and in the same order: the lonely stories' text after their paragraph stays after it (NODES.text_at)
    lonely = [u for u in site if "lonely" in u]
    assert lonely and all(hybrid[u] == site[u] for u in lonely)


def test_a_new_judgement_removes_the_clean_output_of_the_old_one(spark, trained, tmp_path):
    """clean_pages, clean_links, WET and clean.json describe the judgement clean
    read: a `pagelevel` run again removes them (as detect does), and so does site
    mode when it drops a judgement; site mode with none to drop leaves them (a
    re-run pagelevel left the old clean output until clean; found in review)."""
    import shutil

    out, _, _ = trained
    copy = str(tmp_path / "out")
    shutil.copytree(out, copy)
    after = ("clean.json", "clean_pages", "clean_links", "wet")

    def there():
        return [name for name in after if os.path.exists(f"{copy}/{name}")]

    run_pagelevel(spark, copy, PageLevelConfig(mode="page"), progress=QUIET)
    run_clean(spark, copy, progress=QUIET)
    assert there() == list(after) and "clean" in json.load(open(f"{copy}/manifest.json"))["stages"]
    said: list[str] = []
    run_pagelevel(spark, copy, PageLevelConfig(mode="hybrid"), progress=said.append)
    assert there() == [] and "clean" not in json.load(open(f"{copy}/manifest.json"))["stages"]
    assert any(m.startswith("pagelevel: removed the earlier clean.json, clean_pages, clean_links, wet") for m in said)
    run_clean(spark, copy, progress=QUIET)
    run_pagelevel(spark, copy, PageLevelConfig(mode="site"), progress=QUIET)  # drops the judgement clean used
    assert there() == [] and not os.path.exists(f"{copy}/page_templateness")
    run_clean(spark, copy, progress=QUIET)
    run_pagelevel(spark, copy, PageLevelConfig(mode="site"), progress=QUIET)  # nothing to drop: clean stays valid
    assert there() == list(after)


def test_hybrid_judges_a_one_page_site_on_the_model_alone(spark, trained):
    """A one-page site's site-level labels are all content (nothing can repeat):
    hybrid judges its page as page mode does, not with those labels as evidence
    against the model (its menu stayed, found in review)."""
    out, _, _ = trained
    run_pagelevel(spark, out, PageLevelConfig(mode="page"), progress=QUIET)
    page = {r["page_key"]: r["clean_text"] for r in spark.read.parquet(f"{out}/page_templateness").collect()}
    run_pagelevel(spark, out, PageLevelConfig(mode="hybrid"), progress=QUIET)
    pages = spark.read.parquet(f"{out}/pages")
    sizes = pages.groupBy("site").agg(F.count("*").alias("site_pages"))
    judged = spark.read.parquet(f"{out}/page_templateness").join(
        pages.select("page_key", "url", "site"), "page_key").join(sizes, "site").collect()
    lonely = [r for r in judged if "lonely" in r["url"]]
    assert len(lonely) == 3 and {r["mode"] for r in lonely} == {"page"}
    assert {r["mode"] for r in judged if r["site_pages"] == 1} == {"page"}
    assert {r["mode"] for r in judged if r["site_pages"] >= 2} == {"hybrid"}
    for r in lonely:
        assert r["clean_text"] == page[r["page_key"]] and "Contact" not in r["clean_text"]


def test_cli_run_page_mode_with_the_shipped_model(tmp_path):
    warc = write_warc(str(tmp_path / "one.warc.gz"), _lonely_pages()[:1])
    out = str(tmp_path / "out")
    cli = [sys.executable, "-m", "templatemine.cli"]
    proc = subprocess.run([*cli, "run", warc, "--out", out, "--preset", "test", "--pagelevel", "page",
                           "--set", "clean.report=false"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "page-level model" in proc.stdout and "1 page (" in proc.stdout
    manifest = json.load(open(f"{out}/pagelevel.json"))
    assert manifest["modes"]["page"]["pages"] == 1 and manifest["model"] == load_model("").version
    bad = subprocess.run([*cli, "pagelevel", out, "--preset", "test", "--set", "pagelevel.model=/nonexistent"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "no page-level model at /nonexistent" in bad.stderr


def test_hybrid_removes_the_links_of_site_templates_without_words(spark, tmp_path):
    """A site-level template with no words (a bar of icon links on every page) gives
    the model nothing to judge; hybrid removes site-level templates first, so its
    links leave clean_links, as they do in site mode."""
    nav = [(f"/news/{j}.html", f"Story {j}") for j in range(6)]  # the pages link each other: Figure 5's groups
    icons = ('<div class="follow"><a href="https://fb.example.net/gazette"><img src="/f.png"></a> '
             '<a href="https://tw.example.net/gazette"><img src="/t.png"></a> '
             '<a href="https://ig.example.net/gazette"><img src="/i.png"></a></div>')  # k = 3 links: a pagelet
    pages = []
    for i in range(6):
        words = ["council", "budget", "library", "river", "bridge", "school", "harvest", "festival", "museum",
                 "market", "railway", "harbour", "orchard", "theatre", "clinic", "stadium", "garden", "tower"]
        body = ("<p>" + " ".join(f"The {words[(i * 5 + j) % 18]} {words[(i * 7 + 3 * j) % 18]} story number {i * 31 + j}."
                                 for j in range(30)) + " The council met.</p>")  # no two pages near-duplicates
        html = site_page(f"Story {i}", body, nav).replace("<body>", "<body>" + icons, 1)
        pages.append({"url": f"https://gazette.example.org/news/{i}.html", "html": html})
    out = str(tmp_path / "out")
    run_extract(spark, expand_inputs([write_warc(str(tmp_path / "g.warc.gz"), pages)]), out, ExtractConfig(),
                progress=QUIET)
    run_detect(spark, out, DetectConfig(mode="global"), progress=QUIET)
    links = spark.read.parquet(f"{out}/links")
    icon_pagelets = links.where(F.col("dst_url").startswith("https://fb.example.net")).select(
        F.col("src_page_key").alias("page_key"), F.col("pagelet_ordinal").alias("ordinal"))
    members = spark.read.parquet(f"{out}/template_pagelets")
    assert icon_pagelets.count() == 6 and icon_pagelets.join(members, ["page_key", "ordinal"]).count() == 6
    icons_left = lambda: spark.read.parquet(f"{out}/clean_links").where(  # noqa: E731
        F.col("dst_url").contains("example.net")).count()
    run_clean(spark, out, progress=QUIET)
    assert icons_left() == 0  # site mode
    run_pagelevel(spark, out, PageLevelConfig(mode="hybrid", threshold=1.01), progress=QUIET)  # model: all content
    run_clean(spark, out, progress=QUIET)
    assert icons_left() == 0
    clean = spark.read.parquet(f"{out}/clean_pages").collect()
    assert {r["mode"] for r in clean} == {"hybrid"} and all("council met" in r["clean_text"] for r in clean)
    per_page = {r["page_key"]: r["count"] for r in members.groupBy("page_key").count().collect()}
    assert {r["page_key"]: r["n_template_pagelets"] for r in clean} == per_page  # the site-level ones, no fewer
