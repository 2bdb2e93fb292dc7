"""Nightly runs on Delta state: idempotent, crash-safe, never half-visible.

Two nights over a generated crawl: night 1 has half of two sites' pages;
night 2 the other half, a newer capture of a page night 1 held, and a 404 for
another. Run A goes through both nights without trouble; run B is killed
(os._exit, in a separate driver process) in the middle of night 2, after it
merged pages but before links, and then re-run. The three properties of the
issue are checked on them.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from templatemine.config import TEST
from templatemine.spark import delta_jars_present, repo_root
from templatemine.warc.inputs import expand_inputs
from tests.warcgen import blog_site, site_page, two_template_site, write_warc

pytestmark = pytest.mark.skipif(not delta_jars_present(), reason="Delta jars not fetched (scripts/bootstrap)")

TABLES = ("records", "pages", "links", "pagelets", "nodes", "templates", "template_pagelets")


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    d = tmp_path_factory.mktemp("nightly-input")
    a, b = two_template_site(), blog_site()
    first = a[::2] + b[::2]
    nav = [("/", "Home"), ("/tags/python/", "Python"), ("/about/", "About")]
    second = a[1::2] + b[1::2] + [
        # a newer capture of a page night 1 holds: it must win
        {"url": a[0]["url"], "date": "2026-11-05T00:00:00Z",
         "html": site_page("Home", "<p>The home page, captured again on the second night.</p>", nav)},
        # night 1's blog home answers 404 now: removed (kept, with removed_at)
        {"url": b[0]["url"], "html": "gone", "status": "404 Not Found", "date": "2026-11-06T00:00:00Z"},
    ]
    return write_warc(str(d / "night1.warc.gz"), first), write_warc(str(d / "night2.warc.gz"), second)


def _night(spark, state, paths):
    from templatemine.nightly.night import run_night

    return run_night(spark, state, expand_inputs(list(paths)), TEST, progress=lambda _m: None)


def _rows(frame, drop=()):
    cols = sorted(c for c in frame.columns if c not in drop)
    return sorted(tuple(str(r[c]) for c in cols) for r in frame.select(*cols).collect())


@pytest.fixture(scope="module")
def run_a(spark, nights, tmp_path_factory):
    state = str(tmp_path_factory.mktemp("state-a"))
    one = _night(spark, state, nights[:1])
    two = _night(spark, state, nights)  # the manifest lists both: night 1's file is skipped
    return state, one, two


def test_night_merges_newest_capture_and_tracks_removals(spark, run_a, nights):
    from pyspark.sql import functions as F

    from templatemine.nightly.state import State

    state, one, two = run_a
    assert one["files"] == 1 and two["files"] == 1 and two["files_already_ingested"] == 1
    # the night's manifest does not vouch for the nodes' features: they are the state's, of earlier nights
    import json

    assert "node_features" not in json.load(open(os.path.join(two["output"], "manifest.json")))
    pages = State(spark, state).read_table("pages")
    home = pages.where(F.col("url") == "https://two.example.org/").first()
    assert str(home["fetch_time"]).startswith("2026-11-05")  # night 2's newer capture won
    blog_home = pages.where(F.col("url") == "https://blog.example.org/").first()
    assert blog_home is not None and str(blog_home["removed_at"]).startswith("2026-11-06")  # kept, marked
    assert two["pages_removed"] == 1
    # every record of both files is in the state, once
    assert State(spark, state).read_table("records").count() == one["records"] + two["records"]
    # the removed page is not cleaned any more; every live page is
    clean = spark.read.parquet(f"{two['output']}/clean_pages")
    live = pages.where(F.col("removed_at").isNull())
    assert clean.count() == live.count() == two["snapshot_pages"]
    assert clean.where(F.col("url") == "https://blog.example.org/").count() == 0


def test_nights_judge_small_sites_with_the_page_level_model(spark, run_a):
    """pagelevel.mode auto (the default): the state keeps every page's nodes,
    of its newest capture, and each night judges the touched sites that have
    fewer than pagelevel.min_site_pages live pages page by page, the others
    in hybrid mode."""
    from pyspark.sql import functions as F

    from templatemine.nightly.state import State

    state, _, two = run_a
    st = State(spark, state)
    pages, nodes = st.read_table("pages"), st.read_table("nodes")
    assert {r["page_key"] for r in nodes.select("page_key").distinct().collect()} == {
        r["page_key"] for r in pages.select("page_key").collect()}
    home = pages.where(F.col("url") == "https://two.example.org/").first()["page_key"]
    home_text = " ".join(r["text"] for r in nodes.where(F.col("page_key") == home).collect())
    assert "captured again on the second night" in home_text  # night 2's capture's nodes replaced night 1's
    clean = spark.read.parquet(f"{two['output']}/clean_pages")
    live = pages.where(F.col("removed_at").isNull()).groupBy("site").count()
    expected = {r["site"]: "hybrid" if r["count"] >= TEST.pagelevel.min_site_pages else "page" for r in live.collect()}
    got = {r["site"]: r["modes"] for r in clean.groupBy("site").agg(F.collect_set("mode").alias("modes")).collect()}
    assert got == {site: [mode] for site, mode in expected.items()}  # every live page judged, by its site's size
    assert sum(m["pages"] for m in two["pagelevel"]["modes"].values()) == two["snapshot_pages"]
    t = two["timings"]  # the summary splits detect+judge+clean into its stages' own times
    assert 0 < t["detect_s"] + t["pagelevel_s"] + t["clean_s"] + t.get("report_s", 0) <= t["detect_clean_s"]


def test_site_mode_night_keeps_no_stale_nodes(spark, nights, tmp_path):
    """A night in pagelevel.mode=site after a page-level one: the pages it
    re-captures lose their old nodes (else a later page-level night would judge
    the old capture), and it cleans at site level."""
    from dataclasses import replace

    from pyspark.sql import functions as F

    from templatemine.nightly.night import run_night
    from templatemine.nightly.state import State

    state = str(tmp_path / "state-site")
    _night(spark, state, nights[:1])
    site_mode = replace(TEST, pagelevel=replace(TEST.pagelevel, mode="site"))
    two = run_night(spark, state, expand_inputs(list(nights)), site_mode, progress=lambda _m: None)
    st = State(spark, state)
    pages = st.read_table("pages")
    winners = pages.where((F.col("night") == two["night"]) & F.col("removed_at").isNull()).select("page_key")
    assert winners.count() == two["pages_won"] > 0
    with_nodes = st.read_table("nodes").select("page_key").distinct()
    assert with_nodes.join(winners, "page_key", "left_semi").count() == 0
    assert with_nodes.count() > 0  # night 1's pages that night 2 did not touch keep theirs
    clean = spark.read.parquet(f"{two['output']}/clean_pages")
    assert {r["mode"] for r in clean.select("mode").distinct().collect()} == {"site"} and "pagelevel" not in two
    assert "pagelevel_s" not in two["timings"] and two["timings"]["detect_s"] > 0


def test_a_night_sets_aside_the_state_pages_of_another_features_format(spark, nights, tmp_path):
    """A state's nodes come from many nights, perhaps of an older templatemine
    whose features meant something else: each row says its format, and a page
    of a touched site whose nodes hold another is not judged by the model but
    cleaned at site level, counted in the night's summary."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from templatemine.nightly.state import State
    from templatemine.pagelevel.features import FORMAT, N_FEATURES

    state = str(tmp_path / "state-format")
    _night(spark, state, nights[:1])
    st = State(spark, state)
    assert {r[0] for r in st.read_table("nodes").select("features_format").distinct().collect()} == {FORMAT}
    older = "https://two.example.org/section/charlie/"  # night 1's, not captured again, on a site night 2 touches
    key = st.read_table("pages").where(F.col("url") == older).first()["page_key"]
    DeltaTable.forPath(spark, st.path("nodes")).update(F.col("page_key") == key,
                                                      {"features_format": F.lit(FORMAT - 1)})
    two = _night(spark, state, nights)
    assert two["pagelevel"]["set_aside"] == {"pages": 1, "formats": {str(FORMAT - 1): 1}}
    from templatemine.cli import pagelevel_lines  # the night's printed summary says so

    assert any(line.startswith(f"  1 page(s) set aside, their nodes of other features than this templatemine's "
                               f"(format {FORMAT}, {N_FEATURES}): format {FORMAT - 1}: 1; cleaned by the site-level")
               for line in pagelevel_lines(two["pagelevel"]))
    clean = {r["url"]: r["mode"] for r in spark.read.parquet(f"{two['output']}/clean_pages").collect()}
    assert len(clean) == two["snapshot_pages"] and clean[older] == "site"
    site = [u for u in clean if "two.example.org" in u]
    judged = "hybrid" if len(site) >= TEST.pagelevel.min_site_pages else "page"
    assert {clean[u] for u in site if u != older} == {judged}


def test_same_night_twice_changes_nothing(spark, run_a, nights):
    from templatemine.nightly.state import State

    state, _, _ = run_a
    st = State(spark, state)
    before = {name: st.version(name) for name in (*TABLES, "nights")}
    again = _night(spark, state, nights)
    assert again["night"] is None and again["files_already_ingested"] == 2
    assert {name: st.version(name) for name in (*TABLES, "nights")} == before  # no commit at all
    # a manifest's gone entries (expand_inputs(..., missing)): one ingested before is no
    # concern, one never ingested is counted and named, and the night goes on
    from templatemine.nightly.night import run_night

    said: list[str] = []
    gone = str(os.path.join(os.path.dirname(nights[0]), "never.warc.gz"))
    third = run_night(spark, state, expand_inputs(list(nights[1:])), TEST, said.append, missing=[nights[0], gone])
    assert third["night"] is None and third["files_missing"] == 1 and third["files_already_ingested"] == 1
    assert any("1 listed file(s) not found" in m and gone in m for m in said), said
    assert {name: st.version(name) for name in (*TABLES, "nights")} == before


def test_killed_night_is_invisible_then_rerun_equals_uninterrupted(spark, run_a, nights, tmp_path):
    from templatemine.nightly.night import CRASH_ENV
    from templatemine.nightly.state import State, StateError

    state_a = run_a[0]
    state_b = str(tmp_path / "state-b")
    _night(spark, state_b, nights[:1])
    b = State(spark, state_b)
    committed = {name: _rows(b.read_table(name)) for name in ("pages", "links")}
    # night 2 in its own driver, killed after the pages MERGE, before links
    env = {**os.environ, CRASH_ENV: "pages", "PYTHONPATH": repo_root()}
    proc = subprocess.run([sys.executable, "-m", "templatemine.cli", "nightly", "--state", state_b, *nights,
                           "--preset", "test", "--quiet"], env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 86, proc.stderr[-2000:]
    # the state did change (half a night is in the tables) ...
    assert _rows(b.latest("pages")) != committed["pages"]
    # ... but readers see exactly night 1: the pages merged, the links not, neither visible
    assert [n["seq"] for n in b.nights()] == [1]
    assert {name: _rows(b.read_table(name)) for name in ("pages", "links")} == committed
    assert os.listdir(os.path.join(state_b, "nights")) == [b.nights()[0]["night"]]  # night 2 not published
    with pytest.raises(StateError):
        b.read_table("no-such-table")
    # the re-run commits night 2 with the same id and the same tables as run A
    rerun = _night(spark, state_b, nights)
    a = State(spark, state_a)
    assert rerun["night"] == a.nights()[1]["night"]
    for name in TABLES:
        assert _rows(b.read_table(name)) == _rows(a.read_table(name)), name
    out_a, out_b = a.nights()[1]["output"], b.nights()[1]["output"]
    for name in ("clean_pages", "clean_links", "templates", "template_pagelets"):
        assert _rows(spark.read.parquet(f"{out_b}/{name}")) == _rows(spark.read.parquet(f"{out_a}/{name}")), name


def test_history_comes_from_delta(spark, run_a):
    from templatemine.nightly.state import State

    history = State(spark, run_a[0]).history()
    per_night = {}
    for row in history:
        per_night.setdefault(row["night"], set()).add((row["table"], row["operation"]))
    nights = [n["night"] for n in State(spark, run_a[0]).nights()]
    assert set(per_night) == set(nights)
    for night in nights:
        assert ("pages", "MERGE") in per_night[night] and ("nights", "MERGE") in per_night[night]


def test_a_state_from_before_a_new_column_gains_it(spark, tmp_path):
    """An older templatemine's state (nodes without `unlikely`, `article`,
    `text_at` and `features_format`): the night's create_if_missing adds the columns, the old rows
    read null, new rows keep theirs, and the page-level stage judges the old
    rows without the rules (null `article`: all of the page is the article;
    null `text_at`: the own texts in preorder)."""
    from pyspark.sql import functions as F

    from templatemine import schema as S
    from templatemine.nightly.state import NODES, State
    from templatemine.pagelevel.features import FORMAT, page_nodes
    from templatemine.pagelevel.model import Scoring, load_model
    from templatemine.pagelevel.stage import judged_pages

    comment = "I disagree with every word of this piece."
    html = ("<html><body><div id='main'><p>" + "A long sentence of article text that a reader came for. " * 12
            + f"</p></div><div class='comment-list'><p>{comment}</p></div></body></html>")
    rows = [(7, *n, FORMAT) for n in page_nodes(html)]
    unlikely = S.NODES_SCHEMA.names.index("unlikely")
    assert any(r[unlikely] for r in rows)  # the comment box is an unlikely candidate
    full = spark.createDataFrame(rows, S.NODES_SCHEMA)
    state = State(spark, str(tmp_path / "state"))
    full.drop("unlikely", "article", "text_at", "features_format").write.format("delta").save(state.path(NODES))
    state.create_if_missing(NODES, S.NODES_SCHEMA)
    table = state.latest(NODES)
    assert table.columns == S.NODES_SCHEMA.names
    assert table.where(F.col("unlikely").isNull() & F.col("article").isNull() & F.col("text_at").isNull()
                       & F.col("features_format").isNull()).count() == len(rows)
    state.merge(NODES, full.withColumn("page_key", F.lit(8).cast("long")), ["page_key", "node"], update_all=False)
    assert state.latest(NODES).where("page_key = 8 AND unlikely IS NULL").count() == 0
    modes = spark.createDataFrame([(7, "page"), (8, "page")], "page_key long, mode string")
    judged = {r["page_key"]: r for r in judged_pages(state.latest(NODES), modes, None, load_model(""),
                                                       Scoring()).collect()}
    assert comment in judged[7]["clean_text"] and judged[7]["unlikely_tokens"] == 0  # old rows: no rule
    assert judged[7]["outside_article_tokens"] == 0
    assert comment not in judged[8]["clean_text"] and judged[8]["unlikely_tokens"] == len(comment.split())


def test_a_rerun_night_keeps_its_removal_when_the_404s_file_sorts_first(spark, nights, tmp_path):
    """Killed after the pages MERGE (which marked night 2's 404 removed), night 2
    is run again. The state holds the removed capture's file and offset, not the
    404's: compared with those, a 404 from a file that sorts before the page's
    was no longer newer, so the re-run did not count the removal, and a site with
    no other news that night was not re-detected (night.py `held_order`)."""
    import shutil

    from pyspark.sql import functions as F

    from templatemine.nightly.night import CRASH_ENV
    from templatemine.nightly.state import State

    first, second = str(tmp_path / "z-night1.warc.gz"), str(tmp_path / "a-night2.warc.gz")  # the 404's sorts first
    shutil.copy(nights[0], first)
    shutil.copy(nights[1], second)
    state = str(tmp_path / "state")
    _night(spark, state, [first])
    env = {**os.environ, CRASH_ENV: "pages", "PYTHONPATH": repo_root()}
    proc = subprocess.run([sys.executable, "-m", "templatemine.cli", "nightly", "--state", state, first, second,
                           "--preset", "test", "--quiet"], env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 86, proc.stderr[-2000:]
    rerun = _night(spark, state, [first, second])
    assert rerun["pages_removed"] == 1  # as in the uninterrupted run A
    gone = State(spark, state).read_table("pages").where(F.col("removed_at").isNotNull()).collect()
    assert [r["url"] for r in gone] == ["https://blog.example.org/"]
    clean = spark.read.parquet(f"{rerun['output']}/clean_pages")
    assert clean.where(F.col("url") == "https://blog.example.org/").count() == 0
