"""A stage pointed at the wrong OUT, or run before the stage it reads, stops
with one line that names the path, the missing table and the command that
writes it (tables/output.py `require_tables`), not Spark's PATH_NOT_FOUND
trace; and it leaves nothing behind at a mistyped path."""

import argparse
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
from tests.warcgen import write_warc

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
