"""OUT/report.html from a real run on small generated sites, and the page viewer
checked in Debian's headless chromium (installed by scripts/bootstrap)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from collections import Counter
from html.parser import HTMLParser

import pytest
from pyspark.sql import functions as F

from templatemine.config import DetectConfig, ExtractConfig
from templatemine.report.browser import CHROMIUM, chromium
from templatemine.report.density import density_histogram, wrap
from templatemine.report.gather import density_columns, gather_report, write_report
from templatemine.tables.extract import run_extract
from templatemine.templates.stage import run_clean, run_detect
from templatemine.warc.inputs import expand_inputs
from tests.warcgen import two_template_site, write_warc

QUIET = dict(progress=lambda _m: None)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ARTIFACTS = os.path.join(ROOT, ".cache", "test-artifacts")
TOPICS = ["rockets", "orbits", "fuel", "staging", "landing", "docking", "telemetry", "guidance", "antennas",
          "batteries", "wheels", "parachutes", "science"]


def banner_site(host: str = "https://docs.example.com", n: int = 8) -> list[dict]:
    """Pages whose template includes text directly inside <body> (pagelets
    `/html/body/text()[i]`), split by a script and a comment, so the viewer
    has text runs to find, beside element pagelets."""
    nav = "".join(f"<li><a href='/p{i}.html'>Chapter {i}</a></li>" for i in range(n))
    pages = []
    for i in range(n):
        # words, not numbers: shingles fold digits, and pages differing only in numbers are near-duplicates
        words = " ".join(f"This {TOPICS[(i + k) % len(TOPICS)]} sentence explains {TOPICS[(3 * i + 2 * k) % len(TOPICS)]}"
                         f" and {TOPICS[(5 * i + k * k) % len(TOPICS)]} in plain words." for k in range(8))
        pages.append({"url": f"{host}/p{i}.html", "html": (
            f"<!doctype html><html><head><title>Chapter {i}</title><script>var a = 1;</script></head><body>"
            f"Example documentation <script>document.title += '!'</script> version 2.1"
            f"<nav><ul>{nav}</ul></nav><div class='main'><h1>Chapter {i}</h1><p>{words}</p>"
            f"<p><a href='/p{(i + 1) % n}.html'>next</a></p></div>"
            f"Built with templatemine <!-- build 7 --> tooling"
            f"<footer><a href='/a'>About</a> <a href='/b'>Blog</a> <a href='/c'>Contact</a></footer></body></html>")})
    return pages


@pytest.fixture(scope="module")
def run_out(spark, tmp_path_factory):
    """One extract + detect (auto, as `run`) + clean + report on two sites."""
    tmp = tmp_path_factory.mktemp("report")
    warc = write_warc(str(tmp / "sites.warc.gz"), banner_site() + two_template_site())
    out = str(tmp / "out")
    run_extract(spark, expand_inputs([warc]), out, ExtractConfig(), **QUIET)
    run_detect(spark, out, DetectConfig(), **QUIET)
    run_clean(spark, out, **QUIET)
    path = write_report(spark, out, **QUIET)
    return out, path


def _viewer_data(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="viewer-data">(.*?)</script>', html, re.S)
                      .group(1))


def _template_pagelets_by_url(spark, out: str) -> dict[str, list[tuple[str, str]]]:
    """url -> [(dom_path, template_id)] from the tables."""
    rows = spark.read.parquet(f"{out}/template_pagelets").join(
        spark.read.parquet(f"{out}/pagelets").select("page_key", "ordinal", "dom_path"), ["page_key", "ordinal"]).join(
        spark.read.parquet(f"{out}/pages").select("page_key", "url"), "page_key").collect()
    got: dict[str, list[tuple[str, str]]] = {}
    for r in rows:
        got.setdefault(r["url"], []).append((r["dom_path"], str(r["template_id"])))
    return got


def test_report_is_written_atomically_with_the_runs_numbers(spark, run_out):
    out, path = run_out
    assert path == f"{out}/report.html" and os.path.isfile(path) and not os.path.exists(path + ".tmp")
    html = open(path, encoding="utf-8").read()
    manifest = json.load(open(f"{out}/manifest.json"))
    assert f"{manifest['records']['read']} records read" in html
    assert manifest["stages"]["detect"]["run_id"] in html and manifest["stages"]["clean"]["run_id"] in html
    pages = {r["site"]: r["count"] for r in spark.read.parquet(f"{out}/pages").groupBy("site").count().collect()}
    assert pages == {"example.com": 8, "example.org": 11}
    for site, n in pages.items():
        assert f'<td>{site}</td><td class="n">{n}</td>' in html
    assert "all sites (2)" in html


def test_gathered_aggregates_match_the_tables(spark, run_out):
    out, _ = run_out
    data = gather_report(spark, out)
    members = spark.read.parquet(f"{out}/template_pagelets")
    pages = spark.read.parquet(f"{out}/pages")
    clean = {r["site"]: r for r in spark.read.parquet(f"{out}/clean_pages").groupBy("site").agg(
        F.sum((F.col("n_template_pagelets") > 0).cast("int")).alias("with"),
        F.avg("template_token_fraction").alias("mean")).collect()}
    templates = {r["site"]: r["n"] for r in members.join(pages, "page_key").groupBy("site").agg(
        F.countDistinct("template_id").alias("n")).collect()}
    assert [s.site for s in data.sites] == ["example.org", "example.com"]  # by pages, descending
    for s in data.sites:
        assert s.pages_with_templates == clean[s.site]["with"]
        assert abs(s.mean_template_fraction - clean[s.site]["mean"]) < 1e-9
        assert s.templates == templates[s.site] > 0
    assert data.totals.pages == 19 and data.totals.template_pagelets == members.count()
    # the density histogram folded in Spark equals the reference over the same pagelets
    marked = spark.read.parquet(f"{out}/pagelets").join(
        members.select("page_key", "ordinal", F.lit(True).alias("t")), ["page_key", "ordinal"], "left").collect()
    assert data.density == density_histogram((r["text"], bool(r["t"])) for r in marked)
    n_templates = spark.read.parquet(f"{out}/templates").count()
    assert sum(n for _, _, n in data.pages_per_template) == n_templates
    # the viewer's sample: deterministic, a few pages per site, every page readable
    again = gather_report(spark, out)
    assert [p.url for p in data.viewer_pages] == [p.url for p in again.viewer_pages]
    assert Counter(p.site for p in data.viewer_pages) == {"example.org": 11, "example.com": 8}  # <= 12 each
    assert not data.unreadable
    by_url = _template_pagelets_by_url(spark, out)
    for p in data.viewer_pages:
        assert sorted((t["dom_path"], t["template_id"]) for t in p.template_pagelets) == sorted(by_url.get(p.url, []))
        assert "<script" not in p.html


def test_spark_density_fold_equals_the_reference(spark):
    rng = random.Random(5)
    texts = ["", "a", "x" * 95, " ".join("y" * rng.randint(1, 15) for _ in range(rng.randint(1, 60)))]
    texts += [" ".join("w" * rng.randint(1, 30) for _ in range(rng.randint(0, 120))) for _ in range(200)]
    df = spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "i int, text string")
    tokens, density = density_columns(F.col("text"))
    for r in df.select("i", tokens.alias("tokens"), density.alias("density")).collect():
        want = wrap(texts[r["i"]])
        assert r["tokens"] == want.tokens and abs(r["density"] - want.density) < 1e-9, texts[r["i"]]


def test_report_of_an_extract_only_output(spark, run_out, tmp_path):
    out, _ = run_out
    bare = str(tmp_path / "bare")
    shutil.copytree(out, bare, ignore=shutil.ignore_patterns("templates", "template_pagelets", "clean_*", "wet",
                                                             "report.html"))
    html = open(write_report(spark, bare), encoding="utf-8").read()
    assert "detect has not run" in html
    data = _viewer_data(html)
    assert data["pages"] and all(p["template_pagelets"] == [] for p in data["pages"])
    assert all(p["template_token_fraction"] is None for p in data["pages"])  # unknown, not 0.0%
    # after detect, before clean: template pagelets shaded, their share unknown (it read 0.0%)
    detected = str(tmp_path / "detected")
    shutil.copytree(out, detected, ignore=shutil.ignore_patterns("clean_*", "wet", "report.html"))
    data = _viewer_data(open(write_report(spark, detected), encoding="utf-8").read())
    assert any(p["template_pagelets"] for p in data["pages"])
    assert all(p["template_token_fraction"] is None for p in data["pages"])
    data = _viewer_data(open(f"{out}/report.html", encoding="utf-8").read())
    assert all(0 <= p["template_token_fraction"] <= 1 for p in data["pages"])


def test_the_report_leaves_no_job_running(spark, tmp_path):
    """Every job the report starts has ended when write_report returns: one still
    running is one nothing waits for, and a command's stop killed it under its
    Python worker, whose error a --quiet run printed (a CI failure, 2026-11-29:
    the sample's broadcast join of a createDataFrame of page keys, which adaptive
    execution left running when no page had a template pagelet; it was running
    at the stop in 2 of 3 runs). The job may have ended by the time it is looked
    at, so this catches that bug some of the time, and never fails without one."""
    warc = write_warc(str(tmp_path / "one.warc.gz"), [
        {"url": "https://x.example.com/a", "html": "<html><body><p>One page, no templates.</p></body></html>"}])
    out = str(tmp_path / "out")
    run_extract(spark, expand_inputs([warc]), out, ExtractConfig(), **QUIET)
    run_detect(spark, out, DetectConfig(), **QUIET)
    run_clean(spark, out, **QUIET)
    sc = spark.sparkContext
    sc.setJobGroup("report-jobs", "the report's jobs")
    try:
        write_report(spark, out, **QUIET)
    finally:
        for key in ("spark.jobGroup.id", "spark.job.description"):
            sc.setLocalProperty(key, None)
    sc._jsc.sc().listenerBus().waitUntilEmpty()  # the status tracker has heard every job end Spark posted
    tracker = sc.statusTracker()
    jobs = tracker.getJobIdsForGroup("report-jobs")
    assert jobs, "no job in the group: the test no longer sees the report's jobs"
    assert [j for j in jobs if tracker.getJobInfo(j).status == "RUNNING"] == []


# ---------------------------------------------------------------- the page viewer in a browser


class _Status(HTMLParser):
    """The attributes of #viewer-status and of each #viewer-legend item in a dumped DOM."""

    def __init__(self):
        super().__init__()
        self.status: dict = {}
        self.legend: list[dict] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id") == "viewer-status":
            self.status = a
        elif tag == "li" and "data-template-id" in a:
            self.legend.append(a)


def _chromium(*args: str) -> str:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} not found: scripts/bootstrap installs Debian's chromium package "
                    "(apt-get install chromium, as root)")
    return chromium(list(args), timeout=120)


def _viewer_state(path: str, fragment: str) -> _Status:
    parsed = _Status()
    parsed.feed(_chromium("--dump-dom", f"file://{path}#{fragment}"))
    return parsed


def test_viewer_shades_the_template_pagelets_of_a_page_in_chromium(spark, run_out):
    out, path = run_out
    pages = _viewer_data(open(path, encoding="utf-8").read())["pages"]
    by_url = _template_pagelets_by_url(spark, out)
    # a page whose template includes text runs (/html/body/text()[i]), opened by index
    index = next(i for i, p in enumerate(pages) if "/docs.example.com/" in p["url"])
    url = pages[index]["url"]
    want = by_url[url]
    assert any("/text()[" in p for p, _ in want) and any("/text()[" not in p for p, _ in want)
    got = _viewer_state(path, f"page={index}")
    s = got.status
    assert s.get("data-state") == "done", s
    assert s["data-url"] == url
    # every template pagelet the tables give this page is shaded, and holds its text
    assert int(s["data-expected"]) == int(s["data-shaded"]) == len(want)
    assert s["data-unresolved"] == "0" and int(s["data-text-matched"]) == len(want)
    assert set(s["data-template-ids"].split()) == {t for _, t in want}
    assert sum(int(li["data-shaded"]) for li in got.legend) == len(want)
    # the other site's page, opened by URL
    other = next(p["url"] for p in pages if "/two.example.org/" in p["url"] and by_url.get(p["url"]))
    s = _viewer_state(path, f"page={other}").status
    assert s["data-url"] == other and int(s["data-shaded"]) == len(by_url[other]) == int(s["data-text-matched"])
    # a URL that is not sampled is said so, not shown as another page
    assert _viewer_state(path, "page=https://nowhere.example/").status["data-state"] == "error"
    # a screenshot of the viewer alone (#...&only), kept as an artifact
    os.makedirs(ARTIFACTS, exist_ok=True)
    png = os.path.join(ARTIFACTS, "report-viewer.png")
    if os.path.exists(png):
        os.remove(png)
    _chromium("--hide-scrollbars", "--window-size=1280,1000", f"--screenshot={png}", f"file://{path}#page={index}&only")
    with open(png, "rb") as fh:
        head = fh.read(8)
    assert head == b"\x89PNG\r\n\x1a\n"
    assert os.path.getsize(png) > 15_000  # a blank 1280x1000 page compresses to ~6 KB


def test_the_report_counts_and_shades_what_clean_removed_with_the_page_level_model(spark, run_out, tmp_path):
    """With page_templateness (`--pagelevel auto`: example.com's 8 pages in page
    mode, example.org's 11 in hybrid) the report's counts, density plot and
    shading are clean's removals (templates/stage.py `removed_pagelets`), not the
    site-level templates alone beside clean's fractions; the model's own pagelets
    are shaded as "page-level model". Without clean, pages with templates still
    counts them."""
    import shutil

    from templatemine.config import PageLevelConfig
    from templatemine.pagelevel.stage import run_pagelevel
    from templatemine.report.gather import MODEL_TEMPLATE

    out = str(tmp_path / "out")
    shutil.copytree(run_out[0], out)
    judged = run_pagelevel(spark, out, PageLevelConfig(mode="auto", min_site_pages=10), **QUIET)
    assert set(judged["modes"]) == {"page", "hybrid"}
    before_clean = gather_report(spark, out)
    run_clean(spark, out, **QUIET)
    data = gather_report(spark, out)
    clean = spark.read.parquet(f"{out}/clean_pages").collect()
    for s in data.sites:
        mine = [r for r in clean if r["site"] == s.site]
        assert s.pages_with_templates == sum(r["n_template_pagelets"] > 0 for r in mine) > 0, s.site
        assert s.template_pagelets == sum(r["n_template_pagelets"] for r in mine), s.site
    assert [(s.site, s.pages_with_templates, s.template_pagelets) for s in before_clean.sites] == [
        (s.site, s.pages_with_templates, s.template_pagelets) for s in data.sites]
    removed = {r["url"]: r["n_template_pagelets"] for r in clean}
    assert data.viewer_pages and all(len(p.template_pagelets) == removed[p.url] for p in data.viewer_pages)
    page_mode = [p for p in data.viewer_pages if p.site == "example.com"]
    assert page_mode and all(t["template_id"] == MODEL_TEMPLATE for p in page_mode for t in p.template_pagelets)
