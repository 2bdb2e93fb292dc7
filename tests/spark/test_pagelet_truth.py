"""Template pagelet precision and recall against the synthetic web's truth
(evaluate/pagelet_truth.py), on a small generated web run end to end."""

import json

import pytest
from pyspark.sql import functions as F

from templatemine.config import TEST
from templatemine.evaluate.pagelet_truth import pagelet_labels, pagelet_quality, truth_blocks
from templatemine.evaluate.synthetic import WebSpec, generate
from templatemine.tables.extract import run_extract
from templatemine.templates.stage import run_detect
from templatemine.warc.inputs import expand_inputs


@pytest.fixture(scope="module")
def synthetic_run(spark, tmp_path_factory):
    web = tmp_path_factory.mktemp("web")
    generate(WebSpec(pages=300, seed=11, shards=2), str(web), workers=1)
    out = str(tmp_path_factory.mktemp("out"))
    quiet = lambda _m: None  # noqa: E731
    from dataclasses import replace

    run_extract(spark, expand_inputs([str(web / "warc")]), out, replace(TEST.extract, nodes=False), quiet)
    run_detect(spark, out, replace(TEST.detect, mode="global"), quiet)
    return str(web), out


def test_every_pagelet_is_labelled_once(spark, synthetic_run):
    web, out = synthetic_run
    pagelets = spark.read.parquet(f"{out}/pagelets")
    blocks, _ = truth_blocks(spark, web, spark.read.parquet(f"{out}/records"))
    labels = pagelet_labels(pagelets, blocks)
    assert labels.count() == pagelets.count() == labels.select("page_key", "ordinal").distinct().count()
    # the web-wide share bar is a template block wherever it is found
    share = labels.join(pagelets.where(F.col("text") == "Home | Share | Privacy policy"), ["page_key", "ordinal"])
    assert share.count() > 0 and {r["truth"] for r in share.select("truth").distinct().collect()} == {"template"}
    # a page's title (its <h1>) is in the gold: content
    h1 = labels.join(pagelets.where(F.col("dom_label") == "h1"), ["page_key", "ordinal"])
    assert h1.count() > 0 and {r["truth"] for r in h1.select("truth").distinct().collect()} == {"content"}


def test_quality_counts_add_up_and_repeated_sites_score_higher_recall(spark, synthetic_run):
    web, out = synthetic_run
    q = pagelet_quality(spark, out, web)
    every, repeated = q["all_pages"], q["sites_with_2_or_more_pages"]
    n = spark.read.parquet(f"{out}/pagelets").count()
    total = (every["true_positive"] + every["false_positive"] + every["false_negative"] + every["true_negative"]
             + sum(every["not_scored"].values()))
    assert total == n
    predicted = spark.read.parquet(f"{out}/template_pagelets").count()
    assert every["true_positive"] + every["false_positive"] <= predicted
    # one-page sites' blocks occur once: missed by any repetition-based detector
    assert repeated["false_negative"] < every["false_negative"]
    assert repeated["recall"] > every["recall"]
    assert 0 < every["precision"] <= 1


def test_a_folder_without_truth_is_named(spark, synthetic_run, tmp_path):
    _, out = synthetic_run
    with pytest.raises(FileNotFoundError, match="truth"):
        truth_blocks(spark, str(tmp_path), spark.read.parquet(f"{out}/records"))


def test_pagelets_the_page_level_model_removed_count_as_predicted(spark, synthetic_run, tmp_path):
    web, out = synthetic_run
    import shutil

    site_only = pagelet_quality(spark, out, web)
    before = site_only["all_pages"]
    assert site_only["predicted_by"] == "template_pagelets" and "with_hybrid_removals" not in site_only
    detect_run = json.loads(open(f"{out}/detect.json").read())["run_id"]
    for mode in ("page", "hybrid"):
        judged = str(tmp_path / mode)
        for table in ("records", "pagelets", "template_pagelets"):
            shutil.copytree(f"{out}/{table}", f"{judged}/{table}")
        shutil.copy(f"{out}/detect.json", judged)
        # a page-level stage that removed every pagelet of every page
        every_pagelet = spark.read.parquet(f"{out}/pagelets").groupBy("page_key").agg(
            F.lit(mode).alias("mode"), F.collect_list("ordinal").alias("template_pagelets"))
        every_pagelet.write.parquet(f"{judged}/page_templateness")
        # a judgement from before the last detect is not OUT's, as clean has it: not scored
        _judged_after(judged, "some-earlier-detect")
        stale = pagelet_quality(spark, judged, web)
        assert stale["predicted_by"] == "template_pagelets" and stale["all_pages"] == before
        _judged_after(judged, detect_run)
        q = pagelet_quality(spark, judged, web)
        assert q["predicted_by"] == "template_pagelets + page_templateness (page mode)"
        # every removal counted: nothing template is missed, every content pagelet is a false positive
        removed = q["with_hybrid_removals"]
        assert removed["false_negative"] == 0 and removed["true_negative"] == 0
        assert removed["true_positive"] == before["true_positive"] + before["false_negative"]
        assert removed["false_positive"] == before["false_positive"] + before["true_negative"]
        if mode == "page":  # the model stands in for the site-level detection: its removals are templates
            assert q["all_pages"] == removed
        else:  # hybrid pages' removals are per-page boilerplate, not templates by Def. 4
            assert q["all_pages"] == before
            assert q["sites_with_2_or_more_pages"] == site_only["sites_with_2_or_more_pages"]


def _judged_after(out: str, detect_run_id: str | None, pages: int = 1) -> None:
    """pagelevel.json, as the page-level stage writes it after the detect DETECT_RUN_ID."""
    with open(f"{out}/pagelevel.json", "w") as fh:
        json.dump({"stage": "pagelevel", "run_id": "P1", "model": "test", "detect_run_id": detect_run_id,
                   "rows": {"page_templateness": pages}}, fh)


def _menu_page(spark, root, removed: list[int], with_members: bool) -> tuple[str, str]:
    """One page, a menu (a template block of the truth) and its story (the gold),
    judged in page mode with REMOVED taken out; the menu a site-level template
    too WITH_MEMBERS (found in review)."""
    import gzip

    out, web = f"{root}/out", f"{root}/web"
    (root / "web" / "truth").mkdir(parents=True)
    with gzip.open(f"{web}/truth/t.jsonl.gz", "wt") as fh:
        fh.write(json.dumps({"url": "https://a.example/1", "site": "a.example", "gold_text": "Story text here",
                             "blocks": [{"text": "Menu Home About", "template": True}]}) + "\n")
    spark.createDataFrame([("https://a.example/1", 1)], "target_uri string, page_key long").write.parquet(
        f"{out}/records")
    spark.createDataFrame([(1, 0, "Menu Home About"), (1, 1, "Story text here")],
                          "page_key long, ordinal int, text string").write.parquet(f"{out}/pagelets")
    if with_members:
        spark.createDataFrame([(1, 0, 5)], "page_key long, ordinal int, template_id long").write.parquet(
            f"{out}/template_pagelets")
    spark.createDataFrame([(1, "page", removed)], "page_key long, mode string, template_pagelets array<int>") \
        .write.parquet(f"{out}/page_templateness")
    _judged_after(out, None)  # no detect.json: a judgement naming no detect is current
    return out, web


def test_a_page_mode_page_is_scored_by_the_model_alone_as_clean_removes(spark, tmp_path):
    """On a page judged in page mode clean drops the site-level templates and
    removes what the model judged (templates/stage.removed_pagelets). The score
    counted the site-level menu as removed there, which clean keeps: a missed
    template scored as found (found in review)."""
    from templatemine.templates.stage import current_judgement, removed_pagelets

    out, web = _menu_page(spark, tmp_path, removed=[], with_members=True)
    kept = removed_pagelets(spark.read.parquet(f"{out}/template_pagelets"), current_judgement(spark, out))
    assert kept.count() == 0  # clean keeps the menu
    q = pagelet_quality(spark, out, web)
    for scope in ("all_pages", "with_hybrid_removals"):
        s = q[scope]
        assert (s["true_positive"], s["false_positive"], s["false_negative"], s["true_negative"]) == (0, 0, 1, 1), scope


def test_an_output_judged_alone_is_scored_by_the_model(spark, tmp_path):
    """extract + `pagelevel --pagelevel page`: no template_pagelets, which clean
    and the report accept (the model alone decides); the score read the missing
    table and failed (found in review)."""
    out, web = _menu_page(spark, tmp_path, removed=[0], with_members=False)
    q = pagelet_quality(spark, out, web)
    s = q["all_pages"]
    assert (s["true_positive"], s["false_positive"], s["false_negative"], s["true_negative"]) == (1, 0, 0, 1)
    assert q["with_hybrid_removals"] == s
