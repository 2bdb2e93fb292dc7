"""The extract stage end to end in a local Spark session."""

import json
import os
from dataclasses import replace

import pytest
from pyspark.sql import functions as F

from templatemine import schema as S
from templatemine.config import ExtractConfig
from templatemine.tables.extract import run_extract
from templatemine.warc.inputs import expand_inputs
from tests.warcgen import SAMPLES, sample, small_site, write_warc

QUIET = dict(progress=lambda _m: None)


def _tables(spark, out):
    return {name: spark.read.parquet(os.path.join(out, name)) for name in S.EXTRACT_TABLES}


def test_iana_pages_links_pagelets_and_accounting(spark, tmp_path):
    out = str(tmp_path / "iana")
    manifest = run_extract(spark, expand_inputs([sample("iana.warc.gz")]), out, ExtractConfig(), **QUIET)
    t = _tables(spark, out)
    assert manifest["records"]["read"] == 343 and manifest["records"]["accounted"]
    assert manifest["records"]["by_outcome"] == {"page": 16, "non_response": 295, "non_html": 28, "non_2xx": 4}
    assert t["records"].count() == 343
    pages = t["pages"]
    assert pages.count() == 16 and pages.select("page_key").distinct().count() == 16
    assert pages.where("site != 'iana.org' or host != 'www.iana.org'").count() == 0
    assert {r["url"] for r in pages.collect()} >= {"http://www.iana.org/", "http://www.iana.org/domains/root/db"}
    # links and pagelets belong to pages, and counts agree with the page rows
    keys = pages.select(F.col("page_key").alias("k"))
    assert t["links"].join(keys, t["links"].src_page_key == keys.k, "left_anti").count() == 0
    per_page = t["pagelets"].groupBy("page_key").count()
    mismatch = pages.join(per_page, "page_key").where("count != n_pagelets")
    assert mismatch.count() == 0 and per_page.count() == 16
    assert t["links"].where("same_site").join(keys, t["links"].dst_page_key == keys.k).count() > 0
    assert manifest["rows"] == {name: t[name].count() for name in S.EXTRACT_TABLES}
    # schemas are the declared ones
    for name in S.EXTRACT_TABLES:
        assert t[name].schema.names == S.TABLE_SCHEMAS[name].names
    on_disk = json.load(open(os.path.join(out, "manifest.json")))
    assert on_disk["run_id"] == manifest["run_id"] and on_disk["versions"]["warcio"]
    assert not os.path.exists(os.path.join(out, "_staging"))


def test_tables_are_zstd_unless_the_user_sets_a_codec(spark, tmp_path):
    """spark.DEFAULT_SQL_CONF: Parquet in zstd; a codec the user gives wins."""
    import glob

    import pyarrow.parquet as pq

    from templatemine.spark import get_session

    def codecs(out):
        files = glob.glob(os.path.join(out, "*", "*.parquet"))
        assert files
        metadata = [pq.ParquetFile(f).metadata for f in files]
        return {m.row_group(0).column(0).compression for m in metadata if m.num_row_groups}

    key = "spark.sql.parquet.compression.codec"
    assert spark.conf.get(key) == "zstd"
    run_extract(spark, expand_inputs([sample("iana.warc.gz")]), str(tmp_path / "zstd"), ExtractConfig(), **QUIET)
    assert codecs(str(tmp_path / "zstd")) == {"ZSTD"}
    try:  # the same session, asked for again with the user's codec (the [spark] table, --conf)
        assert get_session("again", conf={key: "snappy"}).conf.get(key) == "snappy"
        run_extract(spark, expand_inputs([sample("iana.warc.gz")]), str(tmp_path / "snappy"), ExtractConfig(),
                    **QUIET)
        assert codecs(str(tmp_path / "snappy")) == {"SNAPPY"}
    finally:
        spark.conf.set(key, "zstd")


def test_newest_capture_wins_and_mirrors_are_duplicates(spark, tmp_path):
    path = write_warc(str(tmp_path / "site.warc.gz"), small_site())
    out = str(tmp_path / "site")
    manifest = run_extract(spark, expand_inputs([path]), out, ExtractConfig(), **QUIET)
    t = _tables(spark, out)
    assert manifest["records"]["by_outcome"] == {"page": 5, "superseded": 1}
    home = t["pages"].where("url = 'https://www.example.org/'").collect()
    assert len(home) == 1 and "newer capture" in " ".join(
        r["text"] for r in t["pagelets"].where(F.col("page_key") == home[0]["page_key"]).collect())
    superseded = t["records"].where("outcome = 'superseded'").collect()
    assert len(superseded) == 1 and superseded[0]["page_key"] == home[0]["page_key"]
    # the mirror on another host duplicates /docs/; the representative has the smaller URL
    docs = t["pages"].where("url = 'https://www.example.org/docs/'").first()
    mirror = t["pages"].where("url = 'https://mirror.example.net/docs/'").first()
    assert docs["dup_of"] == mirror["page_key"] and mirror["dup_of"] is None
    assert t["pages"].where("dup_of is not null").count() == 1
    # internal links resolve to the pages' keys, /blog/index.html -> /blog/
    assert manifest["links"]["internal_resolved"] > 0
    blog = t["pages"].where("url = 'https://www.example.org/blog/'").first()
    # the nav of the 4 pages of www.example.org (the mirror links its own host)
    assert t["links"].where(F.col("dst_page_key") == blog["page_key"]).count() == 4


def test_a_newer_answer_that_is_not_a_page_supersedes_nothing(spark, tmp_path):
    """A 200 then a 304 (or 503) of the same URL: the 200 stays the page; it was
    marked superseded by the newer non-page answer and the URL left PAGES."""
    html = "<html><body><p>The page as it was crawled first.</p></body></html>"
    path = write_warc(str(tmp_path / "again.warc.gz"), [
        {"url": "https://a.example.com/", "html": html, "date": "2026-11-01T00:00:00Z"},
        {"url": "https://a.example.com/", "html": "", "status": "304 Not Modified", "date": "2026-11-02T00:00:00Z"},
        {"url": "https://b.example.com/", "html": html, "date": "2026-11-01T00:00:00Z"},
        {"url": "https://b.example.com/", "html": "busy", "status": "503 Service Unavailable",
         "date": "2026-11-03T00:00:00Z"}])
    manifest = run_extract(spark, expand_inputs([path]), str(tmp_path / "out"), ExtractConfig(), **QUIET)
    assert manifest["records"]["by_outcome"] == {"page": 2, "non_2xx": 2}
    assert sorted(r["url"] for r in _tables(spark, str(tmp_path / "out"))["pages"].collect()) == [
        "https://a.example.com/", "https://b.example.com/"]


def test_rows_that_are_not_ranked_do_not_share_one_task(spark):
    """Found in review: newest_captures' window put every record without a
    page_key (requests, metadata: two of a Common Crawl WARC's three records)
    in one partition, and mark_duplicates every page without text: one task
    took them all. Rows per task after each window, 8 shuffle partitions."""
    from templatemine.tables.extract import PAGE, mark_duplicates, newest_captures

    rows = [("request" if i % 3 else "page", None if i % 3 else i // 3, f"f{i % 4}", i, None) for i in range(3000)]
    captures = spark.createDataFrame(rows, "outcome string, page_key long, warc_file string, warc_offset long, "
                                           "detail string").withColumn("fetch_time", F.lit(None).cast("timestamp"))
    pages = spark.createDataFrame([(i, f"https://s.org/{i}", None if i % 2 else i % 7) for i in range(2000)],
                                  "page_key long, url string, dup_signature long")
    saved = {k: spark.conf.get(k) for k in ("spark.sql.adaptive.enabled", "spark.sql.shuffle.partitions")}
    spark.conf.set("spark.sql.adaptive.enabled", "false")  # no coalescing: the window's own partitions
    spark.conf.set("spark.sql.shuffle.partitions", "8")
    try:
        ranked = newest_captures(captures)
        # rows per task, collected with a column the window computes (else the optimizer drops the window)
        per_task = lambda df, col: df.groupBy(F.spark_partition_id()).agg(  # noqa: E731
            F.count("*").alias("rows"), F.count(col).alias("with")).collect()
        assert max(r["rows"] for r in per_task(ranked, "outcome")) < 0.3 * 3000  # all 2,000 requests in one before
        assert ranked.where(F.col("outcome") == PAGE).count() == 1000  # every page is its URL's only capture
        marked = mark_duplicates(pages)
        assert max(r["rows"] for r in per_task(marked, "dup_of")) < 0.3 * 2000  # 1,000 unsigned pages in one before
        assert marked.where(F.col("dup_signature").isNull() & F.col("dup_of").isNotNull()).count() == 0
        dups = {r.page_key: r.dup_of for r in marked.where(F.col("dup_signature").isNotNull()).collect()}
        firsts = {}  # each signature's representative is its smallest URL
        for key in sorted(dups, key=lambda k: f"https://s.org/{k}"):
            firsts.setdefault(key % 7, key)
        assert all(dups[k] == (None if firsts[k % 7] == k else firsts[k % 7]) for k in dups)
    finally:
        for k, v in saved.items():
            spark.conf.set(k, v)


def test_a_page_nested_too_deep_is_flattened_counted_and_keeps_its_links(spark, tmp_path):
    """12,000 nested <div>s (html/nesting.py): the page is parsed flattened,
    keeps every link, and the manifest counts and names it."""
    deep = "<html><body>" + "".join(f'<div>w{i} <a href="/p{i}">p</a> ' for i in range(12_000)) + "</body></html>"
    path = write_warc(str(tmp_path / "deep.warc.gz"), small_site() + [{"url": "https://deep.example.com/", "html": deep}])
    out = str(tmp_path / "deep")
    manifest = run_extract(spark, expand_inputs([path]), out, ExtractConfig(), **QUIET)
    assert manifest["records"]["accounted"] and manifest["records"]["by_outcome"]["page"] == 6
    assert manifest["pages"]["nesting_flattened"] == 1
    [flat] = manifest["flattened_sample"]
    assert flat["detail"] == ("nesting flattened (over 512 elements deep or 64 formatting elements open) "
                              "(11488 start tags dropped)")
    t = _tables(spark, out)
    key = t["pages"].where("url = 'https://deep.example.com/'").first()["page_key"]
    assert t["links"].where(F.col("src_page_key") == key).count() == 12_000
    assert t["records"].where("detail is not null and outcome = 'page'").count() == 1


def test_accounted_is_false_when_two_rows_name_one_record(spark, tmp_path):
    """`accounted` compared the sum of the outcome counts with itself: a record
    counted twice (a reader's resync that found it again) left it true. It is
    now false when two rows share a file and offset, and the manifest names
    them; a file that gave no row (an empty one) is listed, not an error (found
    in review, 2026-11-28)."""
    from templatemine.tables.extract import table_counts

    empty = tmp_path / "empty.warc"
    empty.write_bytes(b"")
    site = write_warc(str(tmp_path / "site.warc.gz"), small_site())
    out = str(tmp_path / "out")
    rec = run_extract(spark, expand_inputs([site, str(empty)]), out, ExtractConfig(), **QUIET)["records"]
    assert rec["accounted"] and rec["counted_twice"] == []
    assert rec["files_without_rows"] == 1 and rec["files_without_rows_sample"] == [str(empty)]
    paths = {name: os.path.join(out, name) for name in S.EXTRACT_TABLES}
    records = spark.read.parquet(paths[S.RECORDS])
    first = records.orderBy("warc_offset").limit(1)
    paths[S.RECORDS] = str(tmp_path / "twice")
    records.unionByName(first).write.parquet(paths[S.RECORDS])
    again = table_counts(spark, paths, [site])["records"]
    offset = first.first()["warc_offset"]
    assert not again["accounted"] and again["read"] == rec["read"] + 1
    assert again["counted_twice"] == [{"warc_file": site, "warc_offset": offset, "rows": 2}]


def test_malformed_samples_every_record_accounted(spark, tmp_path):
    files = expand_inputs([SAMPLES, sample("warcio-example-bad.warc.gz.bad")])
    out = str(tmp_path / "all")
    manifest = run_extract(spark, files, out, ExtractConfig(), **QUIET)
    rec = manifest["records"]
    assert rec["accounted"] and sum(rec["by_outcome"].values()) == rec["read"]
    assert rec["by_outcome"]["malformed"] == 1  # the clipped file; everything else is recovered
    assert {os.path.basename(m["warc_file"]) for m in manifest["malformed_sample"]} == {"resiliparse-clipped.warc.gz"}
    # good records of damaged files became pages (or lost to a newer capture of
    # the same URL: several samples hold http://example.com/)
    records = spark.read.parquet(os.path.join(out, "records")).where("outcome in ('page', 'superseded')")
    files_with_pages = {os.path.basename(r["warc_file"]) for r in records.select("warc_file").distinct().collect()}
    assert {"warcio-example-wrong-chunks.warc.gz", "warcio-example-bad-non-chunked.warc.gz",
            "warcio-example.arc.gz", "resiliparse-clueweb-quirk.warc.gz"} <= files_with_pages
    pages = spark.read.parquet(os.path.join(out, "pages"))
    assert pages.where("url = 'http://example.com/'").count() == 1
    assert pages.where("charset_source is null").count() == 0


def test_rerun_replaces_output_and_fail_fast_stops(spark, tmp_path):
    out = str(tmp_path / "again")
    files = expand_inputs([sample("warcio-example.warc.gz")])
    first = run_extract(spark, files, out, ExtractConfig(), **QUIET)
    second = run_extract(spark, files, out, ExtractConfig(), **QUIET)
    assert first["run_id"] != second["run_id"]
    assert spark.read.parquet(os.path.join(out, "pages")).count() == 1  # replaced, not appended
    with pytest.raises(Exception, match="malformed record in .*resiliparse-clipped.warc.gz at offset 0"):
        run_extract(spark, expand_inputs([sample("resiliparse-clipped.warc.gz")]), str(tmp_path / "ff"),
                    replace(ExtractConfig(), fail_fast=True), **QUIET)
    assert not os.path.exists(str(tmp_path / "ff" / "manifest.json"))


def test_cli_exit_codes_and_summary(tmp_path):
    """The user-facing command: exit 0 and a summary naming the bad record's
    file and offset; with --fail-fast, exit 1 with that error and no output."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "templatemine.cli", "extract", sample("resiliparse-clipped.warc.gz"),
           sample("warcio-example.warc.gz"), "--preset", "test", "--quiet"]
    ok = subprocess.run(cmd + ["--out", str(tmp_path / "ok")], capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert "every one accounted for: yes" in ok.stdout
    assert "resiliparse-clipped.warc.gz, 0: TruncatedRecord: record ends 13068 bytes before its declared" in ok.stdout
    ff = subprocess.run(cmd + ["--out", str(tmp_path / "ff"), "--fail-fast"], capture_output=True, text=True,
                        timeout=300)
    assert ff.returncode == 1
    said = [line for line in ff.stderr.splitlines() if line.startswith("templatemine: ")]
    assert said and said[0].startswith(f"templatemine: malformed record in {sample('resiliparse-clipped.warc.gz')} "
                                       "at offset 0: "), said  # the file and offset, not a line of source
    assert not (tmp_path / "ff" / "manifest.json").exists() and not (tmp_path / "ff" / "_staging").exists()
