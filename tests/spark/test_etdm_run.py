"""run --mode etdm end to end on a generated site with two templates."""

import json
import os

from templatemine.config import DetectConfig, ExtractConfig
from templatemine.tables.extract import run_extract
from templatemine.templates.stage import run_clean, run_detect
from templatemine.warc.inputs import expand_inputs
from tests.warcgen import two_template_site, write_warc

QUIET = dict(progress=lambda _m: None)


def test_etdm_mode_finds_both_templates_and_cleans_every_page(spark, tmp_path):
    out = str(tmp_path / "two")
    lonely = {"url": "https://lonely.example.net/", "html": "<html><body><p>A site of one page keeps its text"
              "</p><a href='/'>home</a></body></html>"}
    warc = write_warc(str(tmp_path / "two.warc.gz"), two_template_site() + [lonely])
    run_extract(spark, expand_inputs([warc]), out, ExtractConfig(), **QUIET)
    detected = run_detect(spark, out, DetectConfig(mode="etdm"), **QUIET)
    assert detected["mode"] == "etdm"
    stats = detected["etdm"]
    assert stats["pages_not_reloaded"] == 0 and stats["pages_matched_to_a_template"] == 11
    templates = spark.read.parquet(os.path.join(out, "templates")).collect()
    assert len(templates) == 2
    by_key = {t["key_url"]: t for t in templates}
    assert "https://two.example.org/" in by_key and any("/post/" in u for u in by_key)
    assert all(t["mode"] == "etdm" and t["complete"] and t["cs_size"] == 4 for t in by_key.values()
               if "two.example.org" in t["key_url"])
    assert all(t["pages_parsed"] == 5 for t in by_key.values() if "two.example.org" in t["key_url"])

    run_clean(spark, out, **QUIET)
    clean = {r["url"]: r for r in spark.read.parquet(os.path.join(out, "clean_pages")).collect()}
    assert len(clean) == spark.read.parquet(os.path.join(out, "pages")).count() == 12
    # a one-page site has no CS, so no template: its text stays whole
    assert clean["https://lonely.example.net/"]["clean_text"] == "A site of one page keeps its text home"
    post = clean["https://two.example.org/post/2/"]
    assert "sentence 0" in post["clean_text"] and "In this series" not in post["clean_text"]
    section = clean["https://two.example.org/section/bravo/"]
    assert "paragraph 0" in section["clean_text"] and "Section footer" not in section["clean_text"]
    assert 0 < post["template_token_fraction"] < 1
    # the pagelet view of the node-level result: the series box and footers are template pagelets
    tp = spark.read.parquet(os.path.join(out, "template_pagelets")).join(
        spark.read.parquet(os.path.join(out, "pagelets")), ["page_key", "ordinal"])
    removed = {r["text"] for r in tp.collect()}
    assert any("Share this story" in t for t in removed) and not any("sentence 0" in t for t in removed)
    with open(os.path.join(out, "detect.json")) as fh:
        assert json.load(fh)["rows"]["page_templates"] == 11  # pages of sites with a template

    # switching back to global: clean_pages no longer uses the node-level table
    run_detect(spark, out, DetectConfig(mode="global"), **QUIET)
    cleaned = run_clean(spark, out, **QUIET)
    assert cleaned["rows"]["clean_pages"] == len(clean)


def test_etdm_on_a_real_crawl_sample(spark, tmp_path):
    """iana.warc.gz: the home page has its own layout. With the paper's Algorithm 2
    it shrinks the templates to a few nodes and no page has a template path (this
    once failed in Spark 4's ANSI mode); etdm_min_overlap skips it."""
    out = str(tmp_path / "iana")
    run_extract(spark, expand_inputs([os.path.join(os.path.dirname(__file__), "..", "..", "samples",
                                                   "iana.warc.gz")]), out, ExtractConfig(), **QUIET)
    paper = run_detect(spark, out, DetectConfig(mode="etdm"), **QUIET)
    assert paper["etdm"]["pages_not_reloaded"] == 0 and paper["rows"]["template_pagelets"] == 0
    skipping = run_detect(spark, out, DetectConfig(mode="etdm", etdm_min_overlap=0.5), **QUIET)
    assert skipping["rows"]["template_pagelets"] > 0
    cleaned = run_clean(spark, out, **QUIET)
    assert cleaned["rows"]["clean_pages"] == 16 and cleaned["mean_template_token_fraction"] > 0
