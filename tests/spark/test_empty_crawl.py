"""A crawl with no page in it (only errors) runs through every stage: nothing to
clean is not an error. It used to fail in clean, renaming a WET folder nobody wrote."""

import os

from templatemine.config import TEST
from templatemine.tables.extract import run_extract
from templatemine.templates.stage import run_clean, run_detect
from templatemine.warc.inputs import expand_inputs
from tests.warcgen import write_warc


def test_run_on_a_crawl_of_404s_only(spark, tmp_path):
    warc = write_warc(str(tmp_path / "errors.warc.gz"), [
        {"url": "https://x.example.com/a", "html": "gone", "status": "404 Not Found"},
        {"url": "https://x.example.com/b", "html": "moved", "status": "301 Moved Permanently"}])
    out = str(tmp_path / "out")
    manifest = run_extract(spark, expand_inputs([warc]), out, TEST.extract, progress=lambda _m: None)
    assert manifest["records"]["by_outcome"] == {"non_2xx": 2} and manifest["rows"]["pages"] == 0
    assert run_detect(spark, out, TEST.detect, progress=lambda _m: None)["rows"]["templates"] == 0
    cleaned = run_clean(spark, out, lambda _m: None, TEST.clean)
    assert cleaned["rows"]["clean_pages"] == 0 and "wet" not in cleaned
    assert not os.path.exists(os.path.join(out, "wet"))
    # the 404 keeps its URL key and date: what tells a nightly run a page is gone
    records = spark.read.parquet(os.path.join(out, "records")).collect()
    assert {r["detail"] for r in records} == {"HTTP 404", "HTTP 301"}
    assert all(r["page_key"] is not None and r["fetch_time"] is not None for r in records)
