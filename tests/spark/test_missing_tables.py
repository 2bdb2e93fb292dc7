"""A stage pointed at the wrong OUT, or run before the stage it reads, stops
with one line that names the path, the missing table and the command that
writes it (tables/output.py `require_tables`), not Spark's PATH_NOT_FOUND
trace; and it leaves nothing behind at a mistyped path."""

import argparse
import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from templatemine.cli import _evaluate
from templatemine.config import TEST, PageLevelConfig
from templatemine.pagelevel.stage import run_pagelevel
from templatemine.pagelevel.train import train_page_model
from templatemine.report import write_report
from templatemine.report.density_report import run_density
from templatemine.tables.extract import run_extract
from templatemine.tables.output import MissingTables
from templatemine.templates.stage import run_clean, run_detect
from templatemine.warc.inputs import expand_inputs
from tests.warcgen import site_page, write_warc

QUIET = lambda _m: None  # noqa: E731


def test_every_stage_on_a_mistyped_out_says_there_is_no_such_output(spark, tmp_path):
    out = str(tmp_path / "typo")
    stages = {
        "detect": lambda: run_detect(spark, out, TEST.detect, QUIET),
        "clean": lambda: run_clean(spark, out, QUIET, TEST.clean),
        "report": lambda: write_report(spark, out, QUIET),
        "density": lambda: run_density(spark, out, progress=QUIET),
        "page-level detection": lambda: run_pagelevel(spark, out, PageLevelConfig(mode="page"), QUIET),
    }
    for stage, call in stages.items():
        with pytest.raises(MissingTables) as err:
            call()
        assert str(err.value).startswith(f"{out}: no such output; {stage} reads"), str(err.value)
        assert not os.path.exists(out), stage  # nothing written where the user did not mean
    with pytest.raises(MissingTables, match="no such output; page-level detection reads"):  # site mode too
        run_pagelevel(spark, out, PageLevelConfig(mode="site"), QUIET)


def test_a_skipped_stage_names_the_table_and_the_command_that_writes_it(spark, tmp_path):
    warc = write_warc(str(tmp_path / "one.warc.gz"), [
        {"url": "https://x.example.com/a", "html": "<html><body><p>One page, no templates.</p></body></html>"}])
    out = str(tmp_path / "out")
    run_extract(spark, expand_inputs([warc]), out, replace(TEST.extract, nodes=False), progress=QUIET)
    with pytest.raises(MissingTables, match="no nodes table for page-level detection; it comes from "
                                            "`templatemine extract --set extract.nodes=true`"):
        run_pagelevel(spark, out, PageLevelConfig(mode="page"), QUIET)
    with pytest.raises(MissingTables) as err:
        train_page_model(spark, [out], str(tmp_path / "model"), progress=QUIET)
    assert str(err.value) == (f"{out}: no nodes, template_pagelets tables for training; they come from "
                              f"`templatemine extract --set extract.nodes=true` and `templatemine detect` on {out} first")
    assert not os.path.exists(tmp_path / "model")
    with pytest.raises(MissingTables) as err:
        run_clean(spark, out, QUIET, TEST.clean)
    assert str(err.value) == (f"{out}: no template_pagelets table for clean; "
                              f"it comes from `templatemine detect` on {out} first")
    assert not os.path.exists(os.path.join(out, "clean_pages"))
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"url": "https://x.example.com/a", "gold_text": "One page, no templates."}\n')
    with pytest.raises(MissingTables, match="no clean_pages table for evaluate; it comes from `templatemine clean`"):
        _evaluate(spark, argparse.Namespace(out=out, golds=[str(gold)], peers=False, json=None))
    run_detect(spark, out, TEST.detect, QUIET)  # the stage it asked for, then clean runs
    assert run_clean(spark, out, QUIET, TEST.clean)["rows"]["clean_pages"] == 1
    # extracting again into OUT removes what described the old pages: clean asks for detect again
    # (it used to clean the new pages with the old template_pagelets, by (page_key, ordinal))
    other = write_warc(str(tmp_path / "other.warc.gz"), [
        {"url": "https://y.example.com/b", "html": "<html><body><p>Another page.</p></body></html>"}])
    lines: list[str] = []
    run_extract(spark, expand_inputs([other]), out, replace(TEST.extract, nodes=False), progress=lines.append)
    assert any(line.startswith("extract: removed the earlier detect.json, templates, template_pagelets")
               and "clean_pages" in line for line in lines), lines
    for name in ("detect.json", "template_pagelets", "clean.json", "clean_pages", "clean_links"):
        assert not os.path.exists(os.path.join(out, name)), name
    assert "stages" not in json.load(open(os.path.join(out, "manifest.json")))
    with pytest.raises(MissingTables, match="no template_pagelets table for clean"):
        run_clean(spark, out, QUIET, TEST.clean)


def test_the_cli_prints_one_line_and_exits_2(tmp_path):
    out = str(tmp_path / "typo")
    done = subprocess.run([sys.executable, "-m", "templatemine.cli", "detect", out, "--preset", "test", "--quiet"],
                          capture_output=True, text=True)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"templatemine: {out}: no such output; detect reads" in done.stderr
    assert "Traceback" not in done.stderr and "PATH_NOT_FOUND" not in done.stderr
    state = str(tmp_path / "no-state")
    done = subprocess.run([sys.executable, "-m", "templatemine.cli", "nightly", "--state", state, "--history",
                           "--preset", "test", "--quiet"], capture_output=True, text=True)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"templatemine: {state}: no such state (a first night creates it)" in done.stderr
    assert not os.path.exists(state)
    # a manifest that is there but cannot be read: one line naming it (before: a Python traceback)
    import pyarrow as pa
    import pyarrow.parquet as pq

    unreadable = tmp_path / "unreadable"
    for name in ("pages", "pagelets", "links"):  # tables detect finds (it reads the manifest before their rows)
        (unreadable / name).mkdir(parents=True)
        pq.write_table(pa.table({"page_key": [1]}), str(unreadable / name / "part-0.parquet"))
    (unreadable / "manifest.json").mkdir()  # a directory where the manifest should be
    done = subprocess.run([sys.executable, "-m", "templatemine.cli", "detect", str(unreadable), "--preset", "test",
                           "--quiet"], capture_output=True, text=True)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"templatemine: cannot read {unreadable}/manifest.json (java.io.FileNotFoundException: " in done.stderr
    assert "Traceback" not in done.stderr
    # ... and one cut short (a write killed half way, an edit by hand): one line too (before: json's traceback)
    (unreadable / "manifest.json").rmdir()
    (unreadable / "manifest.json").write_text('{"config": {"nodes": ')
    done = subprocess.run([sys.executable, "-m", "templatemine.cli", "detect", str(unreadable), "--preset", "test",
                           "--quiet"], capture_output=True, text=True)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"templatemine: cannot read {unreadable}/manifest.json (not JSON: Expecting value: line 1" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_output_judged_page_by_page_alone_is_cleaned_without_a_site_level_run(spark, tmp_path):
    """extract, then `pagelevel --pagelevel page` (no detect): clean takes the model's
    judgement for every page and needs no template_pagelets."""
    nav = [("/", "Home"), ("/news/", "News"), ("/sport/", "Sport"), ("/contact/", "Contact")]
    body = "<p>" + "The council met on Tuesday and agreed the new budget for the town library. " * 6 + "</p>"
    warc = write_warc(str(tmp_path / "two.warc.gz"), [
        {"url": f"https://www.alone{i}.com/story.html", "html": site_page(f"story {i}", body, nav)} for i in range(2)])
    out = str(tmp_path / "out")
    run_extract(spark, expand_inputs([warc]), out, replace(TEST.extract, nodes=True), progress=QUIET)
    lines: list[str] = []
    run_pagelevel(spark, out, PageLevelConfig(mode="page"), QUIET)
    cleaned = run_clean(spark, out, lines.append, TEST.clean)
    assert not os.path.exists(os.path.join(out, "template_pagelets"))
    assert cleaned["rows"]["clean_pages"] == 2
    assert any("2 pages judged by the page-level model" in line for line in lines), lines
    judged = {r["page_key"]: r for r in spark.read.parquet(f"{out}/page_templateness").collect()}
    clean = spark.read.parquet(f"{out}/clean_pages").collect()
    assert {r["mode"] for r in clean} == {"page"}
    for r in clean:
        assert r["clean_text"] == judged[r["page_key"]]["clean_text"]
        assert "council" in r["clean_text"] and "Contact" not in r["clean_text"], r["clean_text"]
    removed = {(k, o) for k, r in judged.items() for o in r["template_pagelets"]}
    links = spark.read.parquet(f"{out}/links").collect()
    kept = spark.read.parquet(f"{out}/clean_links").collect()
    assert removed and len(kept) == sum((r["src_page_key"], r["pagelet_ordinal"]) not in removed for r in links)
    # the graph commands read it as clean does (they refused it: no template_pagelets; found in review)
    from templatemine.graph.stage import run_distill, run_priority, run_related

    priority = {r["url"]: r for r in spark.read.parquet(f"{out}/crawl_priority").collect()} if run_priority(
        spark, out, progress=QUIET) else {}
    contact = priority["https://www.alone0.com/contact/"]
    assert (contact["content_citing_pages"], contact["template_citing_pages"]) == (0, 1), contact
    assert run_related(spark, out, "https://www.alone0.com/contact/")["related"] == []  # template links only
    assert run_distill(spark, out, "council budget", progress=QUIET)["sizes"]["root"] == 1  # (one story a near-duplicate)
    run_pagelevel(spark, out, PageLevelConfig(mode="site"), lines.append)  # site mode drops the judgement ...
    assert "removed the earlier page_templateness" in lines[-1], lines[-1]
    with pytest.raises(MissingTables, match="no template_pagelets table for clean"):  # ... and clean needs detect
        run_clean(spark, out, QUIET, TEST.clean)


def test_evaluate_says_when_no_gold_page_is_in_out_and_speaks_json(spark, tmp_path):
    warc = write_warc(str(tmp_path / "one.warc.gz"), [
        {"url": "https://x.example.com/a", "html": "<html><body><p>One page, no templates.</p></body></html>"}])
    out = str(tmp_path / "out")
    cli = [sys.executable, "-m", "templatemine.cli"]
    ran = subprocess.run([*cli, "run", warc, "--out", out, "--preset", "test", "--quiet", "--pagelevel", "site"],
                         capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr[-2000:]
    # --quiet: no line from Spark's start-up either (templatemine/log4j2.properties), but the JVM's own
    # "WARNING: Using incubator modules", which no logger prints
    noise = [line for line in ran.stderr.splitlines()
             if line.strip() and not line.startswith("WARNING: Using incubator")]
    assert noise == [], ran.stderr[-2000:]
    other = tmp_path / "other.jsonl"
    other.write_text('{"url": "https://elsewhere.example.com/", "gold_text": "x"}\n')
    done = subprocess.run([*cli, "evaluate", "--pred", out, "--gold", str(other), "--preset", "test", "--quiet"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and f"templatemine: none of the 1 gold URL(s) of {other} is among {out}'s " \
                                   f"clean_pages" in done.stderr, done.stderr[-2000:]
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"url": "https://x.example.com/a", "gold_text": "One page, no templates."}\n'
                    '{"url": "https://x.example.com/never-crawled", "gold_text": "Lost words."}\n')
    done = subprocess.run([*cli, "evaluate", "--pred", out, "--gold", str(gold), "--preset", "test", "--quiet"],
                          capture_output=True, text=True)
    assert done.returncode == 0 and f"1 of 2 gold pages are not in {out}'s clean_pages" in done.stdout, done.stdout
    scores = tmp_path / "scores.json"
    done = subprocess.run([*cli, "evaluate", "--pred", out, "--gold", str(gold), "--log-json", "--preset", "test",
                           "--json", str(scores)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    summary = [e for e in events if e.get("event") == "summary"]
    assert len(summary) == 1 and summary[0]["evaluate"]["templatemine"]["mean_f1"] == 0.5  # one site: (1 + 0) / 2
    assert (summary[0]["evaluate"]["gold_pages"], summary[0]["evaluate"]["gold_pages_in_out"]) == (2, 1)
    # the --json file names the page that lost: the one never crawled, scored as empty text
    ours = json.loads(scores.read_text())["templatemine"]
    assert [(p["url"], p["f1"], p["found"]) for p in ours["per_page"]] == [
        ("https://x.example.com/never-crawled", 0.0, False), ("https://x.example.com/a", 1.0, True)]
    (sites,) = ours["per_site"].values()  # one gold file
    assert {site: s["f1"] for site, s in sites.items()} == {"example.com": 0.5}
