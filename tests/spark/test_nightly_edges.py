"""Nightly runs at the edges a real crawl brings (found in review, 2026-11-28):
a listed file no task can open, a dead URL crawled again night after night, a
404 and a capture in the same second, and a night of another detection mode."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest

from templatemine.config import TEST
from templatemine.spark import delta_jars_present
from templatemine.warc.inputs import InputFile, expand_inputs
from tests.warcgen import blog_site, two_template_site, write_warc

pytestmark = pytest.mark.skipif(not delta_jars_present(), reason="Delta jars not fetched (scripts/bootstrap)")


def _night(spark, state, files, config=TEST):
    from templatemine.nightly.night import run_night

    said: list[str] = []
    files = [f if isinstance(f, InputFile) else expand_inputs([f])[0] for f in files]
    return run_night(spark, state, files, config, progress=said.append), said


def _pages(spark, state):
    from templatemine.nightly.state import State

    return {r["url"]: r for r in State(spark, state).read_table("pages").collect()}


def test_a_file_that_cannot_be_opened_is_left_for_a_later_night(spark, tmp_path):
    """Listed, then gone (or not readable yet) when the task opens it: before,
    its one `malformed` row was merged and the file committed as ingested, so
    no later night read it; now the night leaves it out, and a later night that
    can open it ingests it, its first record included."""
    from pyspark.sql import functions as F

    from templatemine.nightly.night import NothingOpened
    from templatemine.nightly.state import State

    a, b = two_template_site(), blog_site()
    first = write_warc(str(tmp_path / "first.warc.gz"), a)
    late = str(tmp_path / "late.warc.gz")  # listed, not there yet
    state = str(tmp_path / "state")

    with pytest.raises(NothingOpened, match="none of its 1 new file"):
        _night(spark, state, [InputFile(late, 1000)])
    assert not State(spark, state).nights()  # nothing committed, nothing merged

    one, said = _night(spark, state, [expand_inputs([first])[0], InputFile(late, 1000)])
    assert one["files"] == 1 and one["files_unopened"] == [late]
    assert any("could not be opened" in m and late in m for m in said)
    st = State(spark, state)
    assert st.processed()[0] == {first}
    # the night's records are those it merged: the unopened file's row is not counted (it was, and again later)
    assert one["records"] == sum(one["records_by_outcome"].values()) == st.read_table("records").count() == len(a)
    assert st.read_table("records").where(F.col("warc_file") == late).count() == 0

    write_warc(late, b)
    two, _ = _night(spark, state, [first, late])
    assert two["files"] == 1 and two["files_unopened"] == [] and st.processed()[0] == {first, late}
    records = st.read_table("records").where(F.col("warc_file") == late)
    assert records.count() == len(b) and records.where(F.col("warc_offset") == 0).first()["outcome"] == "page"
    assert sum(1 for url in _pages(spark, state) if url.startswith("https://blog.example.org")) == len(
        {p["url"] for p in b})


def test_a_dead_url_is_removed_once_and_a_same_second_capture_wins(spark, tmp_path):
    """A page that answers 404 night after night was counted removed, and its
    site re-detected, every night; a 404 and a capture of one second won by
    their files' names within a night but the capture across nights: now the
    capture wins either way. Two 404s of one URL in one second make one
    removal (their tie must not give Delta's MERGE two rows for one page)."""
    a = two_template_site()
    gone_url, tie_url = a[1]["url"], a[2]["url"]
    state = str(tmp_path / "state")
    _night(spark, state, [write_warc(str(tmp_path / "n1.warc.gz"), a)])

    def not_found(url, date):
        return {"url": url, "html": "gone", "status": "404 Not Found", "date": date}

    # twice in one second (a retried fetch): one removal, not two rows of one page in Delta's MERGE
    twice = [not_found(gone_url, "2026-11-06T00:00:00Z")] * 2
    two, _ = _night(spark, state, [write_warc(str(tmp_path / "n2.warc.gz"), twice)])
    assert two["pages_removed"] == 1 and two["touched_sites"] == 1
    three, _ = _night(spark, state, [write_warc(str(tmp_path / "n3.warc.gz"), [not_found(gone_url, "2026-11-07T00:00:00Z")])])
    assert three["pages_removed"] == 0 and three["touched_sites"] == 0
    assert str(_pages(spark, state)[gone_url]["removed_at"]).startswith("2026-11-06")  # gone since the first 404

    # one night, the 404 in a file that sorts after the capture's, both at the same second
    same = "2026-11-08T00:00:00Z"
    tie = dict(a[2], date=same)
    four, _ = _night(spark, state, [write_warc(str(tmp_path / "n4-a.warc.gz"), [tie]),
                                    write_warc(str(tmp_path / "n4-z.warc.gz"), [not_found(tie_url, same)])])
    assert four["pages_removed"] == 0 and _pages(spark, state)[tie_url]["removed_at"] is None
    # the same second on a later night: the capture held still wins
    five, _ = _night(spark, state, [write_warc(str(tmp_path / "n5.warc.gz"), [not_found(tie_url, same)])])
    assert five["pages_removed"] == 0 and _pages(spark, state)[tie_url]["removed_at"] is None


def test_a_night_of_another_detection_mode_after_an_etdm_night(spark, tmp_path):
    """An etdm night adds columns to the state's templates (its key page, its
    cluster); a later global night's rows lack them and its MERGE failed on
    every run, for good. Now they are written null; and an etdm template of no
    page stays until its site is detected again."""
    from pyspark.sql import functions as F

    from templatemine.nightly.state import State

    a, b = two_template_site(), blog_site()
    state = str(tmp_path / "state")
    etdm = replace(TEST, detect=replace(TEST.detect, mode="etdm"))
    first = write_warc(str(tmp_path / "n1.warc.gz"), a + b)
    _night(spark, state, [first], etdm)
    st = State(spark, state)
    assert "key_url" in st.read_table("templates").columns
    shutil.copy(first, tmp_path / "n2.warc.gz")
    later = [dict(p, date="2026-11-09T00:00:00Z") for p in a]  # only the first site again
    two, _ = _night(spark, state, [first, write_warc(str(tmp_path / "n2.warc.gz"), later)])
    assert two["touched_sites"] == 1
    templates = st.read_table("templates")
    fresh = templates.where(F.col("key_url").isNull())  # the global night's rows
    assert fresh.count() == two["templates"] > 0
    held = st.read_table("template_pagelets").select("template_id").distinct()
    stale = templates.join(held, "template_id", "left_anti").where(F.coalesce("n_pages", F.lit(0)) > 0)
    assert stale.count() == 0


def test_one_night_at_a_time_each_file_once_whatever_its_name(spark, tmp_path):
    """Found in review (2026-11-28, eleventh session): two nights at once both
    committed, under one sequence number, having wiped each other's scratch; a
    file read before through a symlinked folder was ingested again, its records
    counted twice; a killed night's published output stayed when its re-run had
    another id; an empty file (being written) was committed as ingested; a night
    with other page-key or shingle settings mixed incompatible rows into the state."""
    import json
    import socket
    import subprocess
    from datetime import datetime, timezone

    from templatemine.nightly.state import State, StateError, _process_facts
    from templatemine.warc.inputs import same_file

    a, b = two_template_site(), blog_site()
    data = tmp_path / "data"
    data.mkdir()
    first = write_warc(str(data / "first.warc.gz"), a)
    second = write_warc(str(tmp_path / "second.warc.gz"), b)
    (tmp_path / "empty.warc.gz").write_bytes(b"")
    (tmp_path / "link").symlink_to(data)
    state = str(tmp_path / "state")
    one, _ = _night(spark, state, [first])
    lock = tmp_path / "state" / "_lock"

    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        alive = {"host": socket.gethostname(), "pid": sleeper.pid, **_process_facts(sleeper.pid)}
        for holder in (alive, {**alive, "host": "elsewhere"}, {**alive, "pidns": 1}, {}):  # {}: being written
            lock.write_text(json.dumps(holder))
            with pytest.raises(StateError, match="another night holds the state"):
                _night(spark, state, [second])
    finally:
        sleeper.kill()
        sleeper.wait()
    other = replace(TEST, extract=replace(TEST.extract, strip_index=not TEST.extract.strip_index))
    lock.unlink()
    with pytest.raises(StateError, match="extract.strip_index = .* the state's"):
        _night(spark, state, [second], other)
    assert not lock.exists()  # released by the night that failed
    ended = subprocess.Popen(["true"])
    ended.wait()  # a process of this machine that has ended: its lock is stale (a killed night's)
    # (its facts but the start time, which a process that has ended has no more)
    lock.write_text(json.dumps({"host": socket.gethostname(), "pid": ended.pid, **_process_facts(ended.pid)}))
    stale_output = tmp_path / "state" / "nights" / "0009-0000000000"
    stale_output.mkdir(parents=True)
    files = expand_inputs([str(tmp_path / "link" / "first.warc.gz"), second, str(tmp_path / "empty.warc.gz")])
    two, said = _night(spark, state, files)
    assert any("took over the lock" in m for m in said) and not lock.exists()
    assert two["files"] == 1 and two["files_already_ingested"] == 1 and two["files_empty"] == [
        str(tmp_path / "empty.warc.gz")]
    assert two["records"] == len(b) and not stale_output.exists()
    st = State(spark, state)
    assert st.processed()[0] == {first, second}
    assert st.nights()[1]["file_keys"] == [same_file(second)]  # what it is, as resolved when ingested
    assert st.read_table("records").count() == one["records"] + two["records"]
    now = datetime.now(timezone.utc)
    with pytest.raises(StateError, match="another night committed sequence number 1"):
        st.commit_night({"seq": 1, "night": "0001-x", "started_at": now, "finished_at": now, "files": [],
                         "output": "", "versions": {}, "summary": "{}"})
    assert [n["seq"] for n in st.nights()] == [1, 2]


def test_a_night_follows_the_redirects_an_earlier_night_crawled(spark, tmp_path):
    """The 301s of a site's old URLs come in one night, its pages (whose menu
    links those URLs) in the next: the later night's detect reads the state's
    RECORDS, so the links reach the pages and the menu is a template of all
    four without bridges (tables/targets.py; the night's own records alone
    hold no redirect).

    The night's folder holds no RECORDS (they went into the state), so its
    snapshot writes REDIRECTS: `priority` and `detect` run on the folder later
    follow the redirects the night did. Before, priority listed the moved
    menu's old URLs as uncrawled, and detect there lost the menu template."""
    from pyspark.sql import functions as F

    from templatemine.config import DistillConfig
    from templatemine.graph.stage import run_priority
    from templatemine.nightly.state import State
    from templatemine.templates.stage import run_detect
    from tests.warcgen import moved_site

    pages, answers = moved_site()
    state = str(tmp_path / "state")
    config = replace(TEST, detect=replace(TEST.detect, mode="global", bridges=False))
    _night(spark, state, [write_warc(str(tmp_path / "n1.warc.gz"), answers)], config)
    second, _ = _night(spark, state, [write_warc(str(tmp_path / "n2.warc.gz"), [
        dict(p, date="2026-11-04T00:00:00Z") for p in pages])], config)
    templates = State(spark, state).read_table("templates")
    menu = templates.where(F.col("sample_text").startswith("Chapter 0")).collect()
    assert [r["n_pages"] for r in menu] == [4]

    # the night's folder, read later
    folder = State(spark, state).nights()[-1]["output"]
    host = "https://docs.gamma.org"
    moved = {f"{host}/old/p0", f"{host}/old/p1", f"{host}/old/p2"}
    links = spark.read.parquet(f"{folder}/links")
    assert {r["dst_url"] for r in links.select("dst_url").distinct().collect()} >= moved | {f"{host}/old/p3"}
    assert spark.read.parquet(f"{folder}/redirects").count() == second["snapshot_redirects"] > len(moved)

    run_priority(spark, folder, DistillConfig(), progress=lambda _: None)
    frontier = spark.read.parquet(f"{folder}/crawl_priority")
    uncrawled = {r["url"] for r in frontier.where(~F.col("crawled")).collect()}
    assert not uncrawled & moved and f"{host}/old/p3" in uncrawled  # the 404 stays a URL of its own
    cited = {r["url"]: r["content_citing_pages"] + r["template_citing_pages"] for r in frontier.collect()}
    assert all(cited[f"{host}/p{i}.html"] >= 3 for i in range(3))  # the other three pages' menus

    run_detect(spark, folder, config.detect, progress=lambda _: None)
    menu = spark.read.parquet(f"{folder}/templates").where(F.col("sample_text").startswith("Chapter 0")).collect()
    assert [r["n_pages"] for r in menu] == [4]
