"""Detect and clean on a small generated site whose template we know."""

import os

from pyspark.sql import functions as F

from templatemine.config import ExtractConfig
from templatemine.tables.extract import run_extract
from templatemine.templates.components import min_label_propagation
from templatemine.config import DetectConfig
from templatemine.templates.stage import run_clean, run_detect
from templatemine.warc.inputs import expand_inputs
from tests.warcgen import small_site, write_warc

QUIET = dict(progress=lambda _m: None)


def test_min_label_propagation(spark):
    v = spark.createDataFrame([(i,) for i in range(7)], ["id"])
    e = spark.createDataFrame([(0, 1), (2, 1), (3, 4), (4, 5), (5, 3)], ["src", "dst"])
    got = {r["id"]: r["component"] for r in min_label_propagation(v, e).collect()}
    assert got == {0: 0, 1: 0, 2: 0, 3: 3, 4: 3, 5: 3, 6: 6}


def test_detect_and_clean_remove_the_shared_template(spark, tmp_path):
    out = str(tmp_path / "site")
    run_extract(spark, expand_inputs([write_warc(str(tmp_path / "s.warc.gz"), small_site())]), out, ExtractConfig(),
                **QUIET)
    for mode in ("global", "local"):
        detected = run_detect(spark, out, DetectConfig(mode=mode), **QUIET)
        assert detected["mode"] == mode and detected["rows"]["templates"] >= 2
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
