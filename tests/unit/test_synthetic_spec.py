"""The synthetic web's spec: validated, written to exactly `shards` files, the
same bytes for the same spec, and reused by the scripts only when it matches."""

import ast
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from templatemine.evaluate.synthetic import (MAX_SHARDS, WebSpec, generate, page_profile, recorded_spec, reuse_web,
                                              web_differences)
from templatemine.evaluate.synthetic_topics import TopicWebSpec, generate_topics

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("shards,workers", [(5, 2), (3, 2), (8, 3), (5, 1), (1, 1), (2, 4)])
def test_exactly_shards_files(tmp_path, shards, workers):
    summary = generate(WebSpec(pages=60, seed=1, shards=shards), str(tmp_path), workers=workers)
    names = [f"warc/synth-{k:05d}.warc.gz" for k in range(shards)]
    assert sorted(e["path"] for e in summary["warc_files"]) == names
    assert sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "warc").iterdir()) == names
    assert sum(e["records"] for e in summary["warc_files"]) == 60


def _digests(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_same_spec_same_bytes_in_every_file(tmp_path):
    """WARC-Record-IDs derive from seed and URL and the truth files' gzip
    headers carry no time: two processes (other hash seeds) write the same files."""
    code = ("import sys; from templatemine.evaluate.synthetic import WebSpec, generate; "
            "generate(WebSpec(pages=200, seed=5, shards=3, markup='real', mirror_share=0.5, sister_share=0.3), "
            "sys.argv[1], workers=1)")
    for name, hash_seed in (("a", "1"), ("b", "2")):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        subprocess.run([sys.executable, "-c", code, str(tmp_path / name)], check=True, env=env, cwd=str(ROOT))
    a, b = _digests(tmp_path / "a"), _digests(tmp_path / "b")
    assert len(a) == 3 + 1 + 2 and a == b  # 3 WARC files, a truth file, gold.jsonl, spec.json


def test_spec_is_validated():
    bad = [dict(site_min=0), dict(site_min=-1), dict(site_alpha=0), dict(site_alpha=-1.0), dict(markup="Real"),
           dict(markup="full"), dict(vocabulary=201), dict(vocabulary=307, markup="real"), dict(vocabulary=600_001),
           dict(shards=0), dict(shards=-1), dict(shards=MAX_SHARDS + 1), dict(pages=-1), dict(paragraphs=(3, 2)),
           dict(mirror_share=1.5), dict(site_max_share=0)]
    for kw in bad:
        with pytest.raises(ValueError, match=f"WebSpec: {next(iter(kw))}"):
            WebSpec(**kw)
    WebSpec(vocabulary=600_000, shards=MAX_SHARDS)  # the bounds themselves are valid


@pytest.mark.parametrize("markup,vocabulary", [("lean", 202), ("real", 308)])
def test_the_smallest_valid_vocabulary_generates(tmp_path, markup, vocabulary):
    summary = generate(WebSpec(pages=300, seed=2, markup=markup, vocabulary=vocabulary, mirror_share=0.3,
                               sister_share=0.3), str(tmp_path), workers=1)
    assert summary["pages"] == 300


def test_web_differences_compares_the_spec(tmp_path):
    spec = WebSpec(pages=40, seed=2, shards=2)
    web = tmp_path / "web"
    assert web_differences(str(web), spec) == ["no spec.json"]  # nothing there
    generate(spec, str(web), workers=1)
    assert web_differences(str(web), spec) == [] == web_differences(str(web), WebSpec(pages=40, seed=2, shards=2))
    for other, field in ((WebSpec(pages=41, seed=2, shards=2), "pages"), (WebSpec(pages=40, seed=3, shards=2), "seed"),
                         (WebSpec(pages=40, seed=2, shards=2, markup="real"), "markup"),
                         (WebSpec(pages=40, seed=2, shards=3), "shards")):
        assert web_differences(str(web), other) == [field], other
    # a web written by an earlier generator (no version recorded) is not reused
    summary = json.loads((web / "spec.json").read_text())
    summary.pop("generator")
    (web / "spec.json").write_text(json.dumps(summary))
    assert web_differences(str(web), spec) == ["generator"]

    topics = TopicWebSpec(topics=("rock climbing", "java"), authorities=4, hubs=2, portals=2, portal_pages=2)
    generate_topics(topics, str(tmp_path / "topics"))
    assert web_differences(str(tmp_path / "topics"), topics) == []
    other = TopicWebSpec(query_topic="java", topics=("rock climbing", "java"), authorities=4, hubs=2, portals=2,
                         portal_pages=2)
    assert web_differences(str(tmp_path / "topics"), other) == ["query_topic"]


def test_reuse_web_regenerates_another_spec_and_what_was_derived(tmp_path, capsys):
    web, out = tmp_path / "web", tmp_path / "out"
    made = []

    def make(spec, folder):
        made.append(spec)
        generate(spec, folder, workers=1)

    assert not reuse_web(str(web), WebSpec(pages=30, seed=1, shards=2), make, "bench")
    assert "generating a synthetic web" in capsys.readouterr().out
    out.mkdir()
    (out / "manifest.json").write_text("{}")
    assert reuse_web(str(web), WebSpec(pages=30, seed=1, shards=2), make, "bench", derived=(str(out),))
    assert len(made) == 1 and out.exists() and capsys.readouterr().out == ""
    assert not reuse_web(str(web), WebSpec(pages=30, seed=4, shards=2), make, "bench", derived=(str(out),))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and "differs in seed" in lines[0] and "regenerating" in lines[0]
    assert len(made) == 2 and not out.exists()
    assert json.loads((web / "spec.json").read_text())["spec"]["seed"] == 4


def _calls(path: Path) -> set:
    tree = ast.parse(path.read_text())
    return {n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", "")
            for n in ast.walk(tree) if isinstance(n, ast.Call)}


@pytest.mark.parametrize("script", ["eval_distill.py", "bench.py", "detect_cost.py"])
def test_scripts_reuse_a_web_only_through_the_spec_check(script):
    """The three scripts that keep a generated web between runs decide through
    `reuse_web` (the spec comparison), never on a spec.json merely existing."""
    path = ROOT / "scripts" / script
    assert "reuse_web" in _calls(path)
    assert 'os.path.exists(os.path.join(web, "spec.json"))' not in path.read_text()


def test_bench_records_the_web_spec(tmp_path):
    assert "recorded_spec" in _calls(ROOT / "scripts" / "bench.py")  # bench.json's web_spec
    generate(WebSpec(pages=20, seed=9, shards=1, markup="real"), str(tmp_path), workers=1)
    recorded = recorded_spec(str(tmp_path))
    assert recorded["seed"] == 9 and recorded["markup"] == "real" and recorded["pages"] == 20
    assert recorded["generator"] == WebSpec.GENERATOR
    assert recorded_spec(str(tmp_path / "none")) == "no spec.json"


def test_page_profile_counts_the_body_element_itself():
    """As its docstring says: the body's elements, <body> included."""
    assert page_profile(["<html><body><p>a <a href='/x'>b</a></p></body></html>"])["median_body_elements"] == 3
