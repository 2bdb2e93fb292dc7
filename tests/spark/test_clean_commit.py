"""Clean's text, its WET files and its commit, from review: clean_text of
pagelets without words, WET files written where Spark's tables are (OUT as
Hadoop resolves it, not as a task would), and no manifest naming a run whose
tables are not (all) in OUT."""

import glob
import json
import os
import re
from dataclasses import replace

import pytest
from warcio.archiveiterator import ArchiveIterator

from templatemine.clean.clean import clean_pages
from templatemine.config import TEST
from templatemine.tables.extract import run_extract
from templatemine.tables.output import RunOutput
from templatemine.templates.stage import run_clean, run_detect
from templatemine.warc.inputs import expand_inputs
from tests.warcgen import site_page, write_warc

QUIET = lambda _m: None  # noqa: E731
NAV = [("/", "Home"), ("/news", "News"), ("/about", "About")]
MOUNT = "tmclean"  # a viewfs mount table of this module's own (the session's Hadoop configuration)


@pytest.fixture(scope="module")
def site(spark, tmp_path_factory):
    """(OUT as the tests name it on a viewfs default file system, the local
    folder it is there): an extracted and detected site of three pages. The
    viewfs fallback puts every path under DISK, so a task that writes OUT as a
    local path writes elsewhere than Spark, as on YARN with HDFS."""
    base = tmp_path_factory.mktemp("clean_commit")
    disk, out = base / "disk", str(base / "o")
    real = f"{disk}{out}"
    pages = [{"url": f"https://www.example.org/{name}",
              "html": site_page(name, f"<p>The {name} page says {name} things.</p><p><a href='/x'><img src='/x.png'>"
                                      "</a></p>", NAV)} for name in ("a", "b", "c")]
    run_extract(spark, expand_inputs([write_warc(str(base / "s.warc.gz"), pages)]), real, TEST.extract, QUIET)
    run_detect(spark, real, TEST.detect, QUIET)
    spark.sparkContext._jsc.hadoopConfiguration().set(f"fs.viewfs.mounttable.{MOUNT}.linkFallback", f"file://{disk}")
    return out, real


def test_clean_text_joins_the_words_of_pagelets_that_have_some(spark):
    """Found in review: pagelets without text (an image link) were joined too,
    giving leading and doubled spaces, and " " for a page whose words were all
    template; the text is now its pagelets' words joined by one space, or ""."""
    pages = spark.createDataFrame([(1, "http://x/a", "x"), (2, "http://x/b", "x"), (3, "http://x/c", "x")],
                                  "page_key long, url string, site string")
    pagelets = spark.createDataFrame([
        (1, 0, "", 0), (1, 1, "one two three", 3), (1, 2, "", 0), (1, 3, "Body text", 2), (1, 4, "", 0),
        (2, 0, "one two three", 3), (2, 1, "", 0), (2, 2, "", 0),
        (3, 0, "", 0)], "page_key long, ordinal int, text string, n_tokens int")
    members = spark.createDataFrame([(1, 1, 7), (2, 0, 7)], "page_key long, ordinal int, template_id long")
    rows = {r["page_key"]: r for r in clean_pages(pages, pagelets, members).collect()}
    assert {k: r["clean_text"] for k, r in rows.items()} == {1: "Body text", 2: "", 3: ""}
    assert [rows[k]["n_template_pagelets"] for k in (1, 2, 3)] == [1, 1, 0]
    assert [rows[k]["template_token_fraction"] for k in (1, 2, 3)] == [0.6, 1.0, 0.0]


def _staged(spark, out: str, run: str, tables: dict) -> RunOutput:
    output = RunOutput(spark, out, run)
    for name, rows in tables.items():
        spark.range(rows).write.parquet(output.staged(name))
    return output


def test_a_failed_commit_leaves_no_stage_entry_of_the_run_before(spark, tmp_path):
    """Found in review: a commit deleted clean.json before moving the tables, but
    manifest.json's stages.clean went on naming the run before until the end;
    after a move that failed (or a kill) it named a run whose tables were
    partly replaced. The entry goes before the first move, and comes back with
    the commit that completes."""
    out = str(tmp_path / "out")
    os.makedirs(out)
    with open(os.path.join(out, "manifest.json"), "w") as fh:
        json.dump({"stage": "extract", "run_id": "EXTRACT", "rows": {"pages": 3}}, fh)

    def manifest():
        with open(os.path.join(out, "manifest.json")) as fh:
            return json.load(fh)

    tables = {"clean_pages": 3, "clean_links": 2}
    _staged(spark, out, "OLD", tables).commit(list(tables), "clean.json", {"stage": "clean", "run_id": "OLD"})
    assert manifest()["stages"]["clean"]["run_id"] == "OLD"
    new = _staged(spark, out, "NEW", {"clean_pages": 5})  # no clean_links staged: its move fails
    with pytest.raises(OSError, match="could not move .*clean_links"):
        new.commit(list(tables), "clean.json", {"stage": "clean", "run_id": "NEW"})
    assert spark.read.parquet(os.path.join(out, "clean_pages")).count() == 5  # moved before the failure
    assert not os.path.exists(os.path.join(out, "clean.json"))
    assert manifest() == {"stage": "extract", "run_id": "EXTRACT", "rows": {"pages": 3}}  # as the extract wrote it
    again = _staged(spark, out, "AGAIN", tables)
    again.commit(list(tables), "clean.json", {"stage": "clean", "run_id": "AGAIN"})
    assert manifest()["stages"]["clean"]["run_id"] == "AGAIN"


def test_a_stage_manifest_removed_as_stale_takes_its_stages_entry(spark, tmp_path):
    """Found in review: a detect that removed clean.json and clean's tables
    (remove_stale) left manifest.json's stages.clean naming that clean run."""
    out = str(tmp_path / "out")
    os.makedirs(out)
    with open(os.path.join(out, "manifest.json"), "w") as fh:
        json.dump({"stage": "extract", "run_id": "EXTRACT"}, fh)
    tables = {"clean_pages": 3, "clean_links": 2}
    _staged(spark, out, "CLEAN", tables).commit(list(tables), "clean.json", {"stage": "clean", "run_id": "CLEAN"})
    _staged(spark, out, "PRIO", {"crawl_priority": 1}).commit(["crawl_priority"], "priority.json",
                                                              {"stage": "priority", "run_id": "PRIO"})
    removed = RunOutput(spark, out, "DETECT").remove_stale(["clean.json", "clean_pages", "clean_links", "wet"])
    assert removed == ["clean.json", "clean_pages", "clean_links"]
    with open(os.path.join(out, "manifest.json")) as fh:
        stages = json.load(fh)["stages"]
    assert list(stages) == ["priority"]  # clean's entry went with clean.json; the other stays


def test_clean_without_wet_removes_the_old_wet_files_before_its_commit(spark, site, monkeypatch):
    """Found in review: with clean.wet=false (or no page) clean committed first
    and removed OUT/wet after, so a crash between left the new clean.json beside
    WET files of the clean_pages it replaced."""
    _, real = site
    os.makedirs(os.path.join(real, "wet"), exist_ok=True)
    with open(os.path.join(real, "wet", "part-00000.warc.wet.gz"), "wb") as fh:
        fh.write(b"an earlier run's")
    seen = []
    commit = RunOutput.commit

    def observed(self, tables, manifest_name, manifest):
        seen.append((manifest_name, os.path.exists(os.path.join(real, "wet"))))
        return commit(self, tables, manifest_name, manifest)

    monkeypatch.setattr(RunOutput, "commit", observed)
    cleaned = run_clean(spark, real, QUIET, replace(TEST.clean, wet=False))
    assert "wet" not in cleaned and seen == [("clean.json", False)]
    assert not os.path.exists(os.path.join(real, "wet"))


def test_wet_files_of_a_file_uri_out_are_written_into_it(spark, site):
    """Found in review: `file:/path` (Hadoop's form of a local path) as OUT
    had Spark write the tables under /path and each task its WET file under
    ./file:/path; the commit then found no staged wet to move, after moving
    clean_pages. The tasks now write where the driver's Hadoop qualified."""
    _, real = site
    cleaned = run_clean(spark, f"file:{real}", QUIET, TEST.clean)
    files = sorted(glob.glob(os.path.join(real, "wet", "*.warc.wet.gz")))
    assert cleaned["wet"]["files"] == len(files) >= 1
    records = []
    for name in files:
        with open(name, "rb") as fh:
            records += [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(fh)
                        if r.rec_type == "conversion"]
    assert sorted(records) == [f"https://www.example.org/{n}" for n in "abc"] and cleaned["wet"]["records"] == 3
    assert not os.path.exists("file:") and not glob.glob(os.path.join(real, "_staging", "*"))


def test_wet_files_go_to_the_default_file_system_or_fail_before_any_table_moves(spark, site):
    """Found in review: an OUT without a scheme on a session whose default file
    system is not local disk (fs.defaultFS hdfs://... on YARN) had Spark write
    clean_pages there and every task its WET file on its own local disk. Here
    fs.defaultFS is a viewfs mount table of the session alone, backed by a
    local folder: Spark writes through it; the tasks are given the qualified
    viewfs:// folder, which pyarrow's HDFS client cannot reach (no libhdfs, and
    no such mount table outside this session), so clean fails naming it before
    moving any table, and writes no file at OUT read as a local path."""
    out, real = site
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    before = sorted(os.listdir(real))
    clean_json = open(os.path.join(real, "clean.json")).read() if "clean.json" in before else None
    default = conf.get("fs.defaultFS")
    conf.set("fs.defaultFS", f"viewfs://{MOUNT}/")
    try:
        with pytest.raises(Exception, match=re.escape(f"viewfs://{MOUNT}{out}/_staging/") + "[^/]+/wet/part-"):
            run_clean(spark, out, QUIET, TEST.clean)
    finally:
        conf.set("fs.defaultFS", default)
    assert not os.path.exists(out)  # OUT as a task's local path: nothing written there
    assert sorted(os.listdir(real)) == before
    if clean_json is not None:
        assert open(os.path.join(real, "clean.json")).read() == clean_json
    assert not glob.glob(os.path.join(real, "_staging", "*"))
