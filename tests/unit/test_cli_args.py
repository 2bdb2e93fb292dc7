"""Bad arguments and paths: ONE line `templatemine: ...` on stderr and exit 2,
before Spark starts (found in review, 2026-11-28). No Spark here: `_session` is
replaced by one that fails the test if a check let the command through."""

import json
import os

import pytest

from templatemine import cli
from tests.commands import SparkStarted, no_spark  # noqa: F401 (an autouse fixture)
from tests.fake_session import IdleSession

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "iana.warc.gz")


def _fails(capsys, argv, message):
    """main(argv) exits 2 with the one line `templatemine: MESSAGE...`."""
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"templatemine: {message}"), err
    return err[0]


@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("not a folder\n")
    return str(path)


# 1. a local OUT (--state, --model, --dest) that is a file


def test_out_that_is_a_file(capsys, a_file, tmp_path):
    _fails(capsys, ["run", SAMPLE, "--out", a_file], f"--out {a_file}: is a file, not a folder")
    _fails(capsys, ["extract", SAMPLE, "--out", f"file://{a_file}"], f"--out file://{a_file}: is a file")
    for command in ("detect", "clean", "report", "pagelevel", "priority", "density"):
        _fails(capsys, [command, a_file], f"{a_file}: is a file, not a folder")
    _fails(capsys, ["related", "http://example.com/", a_file], f"{a_file}: is a file, not a folder")
    _fails(capsys, ["distill", a_file, "--query", "x"], f"{a_file}: is a file, not a folder")
    _fails(capsys, ["train", a_file, "--model", str(tmp_path / "m")], f"{a_file}: is a file, not a folder")
    _fails(capsys, ["train", str(tmp_path), "--model", a_file], f"--model {a_file}: is a file, not a folder")
    _fails(capsys, ["nightly", "--state", a_file, "--history"], f"--state {a_file}: is a file, not a folder")
    _fails(capsys, ["density", str(tmp_path), "--dest", a_file], f"--dest {a_file}: is a file, not a folder")


def test_a_folder_or_a_remote_out_passes_the_check(tmp_path):
    with pytest.raises(SparkStarted):
        cli.main(["report", str(tmp_path)])
    with pytest.raises(SparkStarted):
        cli.main(["report", "hdfs://nn/out"])


# 2. an empty OUT, --state or --model (an unset $OUT)


@pytest.mark.parametrize("empty", ["", "  "])
def test_empty_out_state_model(capsys, empty, tmp_path):
    _fails(capsys, ["run", SAMPLE, "--out", empty], "--out is empty")
    _fails(capsys, ["report", empty], "OUT is empty")
    _fails(capsys, ["nightly", "--state", empty, "--history"], "--state is empty")
    _fails(capsys, ["train", str(tmp_path), "--model", empty], "--model is empty")
    _fails(capsys, ["evaluate", "--pred", empty, "--gold", SAMPLE], "OUT is empty" if empty else "evaluate needs")


# 3. --conf


@pytest.mark.parametrize("item", ["foo", "=x", " =x"])
def test_conf_that_is_not_key_value(capsys, item, tmp_path):
    _fails(capsys, ["report", str(tmp_path), "--conf", item], f"--conf {item!r} is not KEY=VALUE")


# 4. extract.nodes=false with a page-level mode


def test_no_nodes_needs_pagelevel_site(capsys, tmp_path):
    out = str(tmp_path / "o")
    line = _fails(capsys, ["run", SAMPLE, "--out", out, "--set", "extract.nodes=false"], "extract.nodes=false")
    assert "--pagelevel site" in line
    _fails(capsys, ["run", SAMPLE, "--out", out, "--set", "extract.nodes=false", "--pagelevel", "hybrid"],
           "extract.nodes=false needs --pagelevel site")
    with pytest.raises(SparkStarted):  # site mode needs no nodes
        cli.main(["run", SAMPLE, "--out", out, "--set", "extract.nodes=false", "--pagelevel", "site"])


# 5. an empty --preset, a file's preset = "" or [], an empty --config


def test_empty_preset_and_config(capsys, tmp_path):
    out = str(tmp_path)
    _fails(capsys, ["report", out, "--preset", ""], "--preset '': not a preset name")
    _fails(capsys, ["report", out, "--config", ""], "--config '': empty file name")
    conf = tmp_path / "c.toml"
    for value in ('""', "[]", '" "'):
        conf.write_text(f"preset = {value}\n")
        _fails(capsys, ["report", out, "--config", str(conf)], f"--config {conf}: preset = ")


def test_empty_preset_in_load_config(tmp_path):
    from templatemine.config import load_config

    with pytest.raises(ValueError, match="not a preset name"):
        load_config("")
    with pytest.raises(ValueError, match="empty file name"):
        load_config(None, "")


# 6. config file errors name the file; a UTF-8 BOM is fine


def test_config_file_errors_name_the_file(capsys, tmp_path):
    out = str(tmp_path)
    missing = tmp_path / "missing.toml"
    _fails(capsys, ["report", out, "--config", str(missing)], f"--config {missing}: No such file")
    utf16 = tmp_path / "utf16.toml"
    utf16.write_text('preset = "test"\n', encoding="utf-16")
    _fails(capsys, ["report", out, "--config", str(utf16)], f"--config {utf16}: not UTF-8 text")
    bad = tmp_path / "bad.toml"
    bad.write_text("preset = \n")
    _fails(capsys, ["report", out, "--config", str(bad)], f"{bad}: Invalid value (at line 1")
    _fails(capsys, ["report", out, "--config", out], f"--config {out}: ")  # a folder


def test_config_with_a_utf8_bom(tmp_path):
    from templatemine.config import TEST, load_config

    conf = tmp_path / "bom.toml"
    conf.write_bytes(b"\xef\xbb\xbf" + b'preset = "test"\n[extract]\nk = 4\n')
    config = load_config(None, str(conf))
    assert config.spark == TEST.spark and config.extract.k == 4
    with pytest.raises(SparkStarted):
        cli.main(["report", str(tmp_path), "--config", str(conf)])


# 8. help text


def _help(capsys, argv) -> str:
    with pytest.raises(SystemExit) as exit:
        cli.main(argv)
    assert exit.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_help_says_what_the_code_does(capsys):
    text = _help(capsys, ["run", "--help"])
    for words in ("[pagelevel]", "[distill]", "SECTION.NAME=VALUE", "stop at the first malformed record",
                  "output folder", "WARC/ARC files"):
        assert words in text, words
    assert "extract.NAME=VALUE" not in text
    top = _help(capsys, ["--help"])
    assert "report.html" in top and "page-level" in top
    assert "+ the page-level model: --pagelevel)" not in cli.__doc__
    assert "auto by" in cli.__doc__


# 9. --json into a folder that does not exist


def test_json_folder_must_exist(capsys, tmp_path):
    out = str(tmp_path)
    target = tmp_path / "nope" / "r.json"
    _fails(capsys, ["related", "http://example.com/", out, "--json", str(target)],
           f"--json {target}: no such folder {tmp_path / 'nope'}")
    _fails(capsys, ["distill", out, "--query", "x", "--json", str(target)], f"--json {target}: no such folder")
    gold = tmp_path / "gold.jsonl"
    gold.write_text("{}\n")
    _fails(capsys, ["evaluate", out, str(gold), "--json", str(target)], f"--json {target}: no such folder")
    _fails(capsys, ["related", "http://example.com/", out, "--json", out], f"--json {out}: is a folder")


def test_the_summary_comes_before_the_json_file(capsys, monkeypatch, tmp_path):
    from templatemine.graph import stage

    monkeypatch.setattr(cli, "_session", lambda *a, **k: IdleSession())
    monkeypatch.setattr(stage, "run_related", lambda *a, **k: {"related": []})
    monkeypatch.setattr(stage, "related_lines", lambda result: ["related: none"])
    seen = []
    monkeypatch.setattr(stage, "write_json", lambda path, doc: seen.append(capsys.readouterr().out))
    assert cli.main(["related", "http://example.com/", str(tmp_path), "--json", str(tmp_path / "r.json")]) == 0
    assert seen == ["related: none\n"]


# 10. pagelevel --pagelevel site says what it did


def test_pagelevel_site_prints_a_summary(capsys, monkeypatch, tmp_path):
    from templatemine.pagelevel import stage

    monkeypatch.setattr(cli, "_session", lambda *a, **k: IdleSession())
    monkeypatch.setattr(stage, "run_pagelevel", lambda *a, **k: None)
    out = str(tmp_path)
    assert cli.main(["pagelevel", out, "--pagelevel", "site", "--quiet"]) == 0
    assert capsys.readouterr().out == f"pagelevel: site mode: no page-level judgement in {out}\n"
    assert cli.main(["pagelevel", out, "--pagelevel", "site", "--log-json"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert events[-1]["event"] == "summary" and events[-1]["pagelevel"]["mode"] == "site"


# 11. related -n


def test_related_n_is_not_negative(capsys, tmp_path):
    with pytest.raises(SystemExit) as exit:
        cli.main(["related", "http://example.com/", str(tmp_path), "-n", "-1"])
    assert exit.value.code == 2
    assert "argument -n: must be 0 or more, not -1" in capsys.readouterr().err.splitlines()[-1]
    with pytest.raises(SparkStarted):
        cli.main(["related", "http://example.com/", str(tmp_path), "-n", "0"])
