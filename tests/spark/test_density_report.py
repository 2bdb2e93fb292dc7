"""OUT/density/ (Kohlschütter 2009's Figure 1 and Table 1) from a real extract +
detect of small generated sites, checked against the pure references."""

from __future__ import annotations

import json
import os
import struct
import zlib

import pytest

from templatemine.config import DetectConfig, ExtractConfig
from templatemine.report.density import density_bin, density_histogram, text_density
from templatemine.report.density_report import FILES, run_density, write_folder_atomically
from templatemine.report.typicality import doc_freqs, typicality_table
from templatemine.tables.extract import run_extract
from templatemine.templates.stage import run_detect
from templatemine.warc.inputs import expand_inputs
from tests.warcgen import blog_site, two_template_site, write_warc

QUIET = dict(progress=lambda _m: None)


@pytest.fixture(scope="module")
def outs(spark, tmp_path_factory):
    """The same two sites extracted twice: once with detect (template_pagelets), once without."""
    tmp = tmp_path_factory.mktemp("density")
    warc = write_warc(str(tmp / "sites.warc.gz"), two_template_site() + blog_site())
    detected, extracted = str(tmp / "detected"), str(tmp / "extracted")
    for out in (detected, extracted):
        run_extract(spark, expand_inputs([warc]), out, ExtractConfig(), **QUIET)
    run_detect(spark, detected, DetectConfig(), **QUIET)
    return detected, extracted


def _blocks(spark, out: str, with_templates: bool) -> list[tuple[int, str, bool]]:
    """(page_key, text, is_template) of every pagelet, on the driver."""
    pagelets = spark.read.parquet(f"{out}/pagelets").select("page_key", "ordinal", "text").collect()
    members = set()
    if with_templates:
        members = {(r["page_key"], r["ordinal"]) for r in spark.read.parquet(f"{out}/template_pagelets").collect()}
    return [(r["page_key"], r["text"] or "", (r["page_key"], r["ordinal"]) in members) for r in pagelets]


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    (n,) = struct.unpack(">I", data[8:12])
    assert struct.unpack(">I", data[16 + n:20 + n])[0] == zlib.crc32(data[12:16 + n]) & 0xFFFFFFFF
    assert data[-12:] == b"\x00\x00\x00\x00IEND" + struct.pack(">I", zlib.crc32(b"IEND"))
    return struct.unpack(">II", data[16:24])


def test_density_report_matches_the_references(spark, outs):
    out = outs[0]
    numbers = run_density(spark, out, min_doc_freq=2, **QUIET)
    dest = os.path.join(out, "density")
    assert sorted(os.listdir(dest)) == sorted(FILES)  # nothing else: no .crc, no temporary folder
    assert not [n for n in os.listdir(out) if n.startswith("density.")]
    assert numbers["paths"] == {"html": f"{dest}/density.html", "png": f"{dest}/density.png",
                                "json": f"{dest}/density.json"}

    # Figure 1's histogram: the Spark fold equals density.py's, template tokens included
    blocks = _blocks(spark, out, with_templates=True)
    ref = density_histogram((text, is_t) for _, text, is_t in blocks)
    got = {h["bin"]: (h["other_tokens"], h["template_tokens"]) for h in numbers["histogram"]}
    assert got == ref and numbers["has_templates"]
    assert numbers["totals"]["template_tokens"] == sum(t for _, t in ref.values()) > 0
    assert 0 < numbers["totals"]["template_share"] < 1

    # Table 1: Spark's document frequencies equal the pure reference's
    with_tokens = [(p, t, density_bin(text_density(t))) for p, t, _ in blocks if t.split()]
    n_docs = len({p for p, _, _ in with_tokens})
    ref_table = typicality_table([(t, *f) for t, f in doc_freqs(with_tokens).items()], n_docs, 2).to_json()
    ty = numbers["typicality"]
    assert ty["n_docs"] == n_docs and ty["min_doc_freq"] == 2
    assert (ty["n_terms"], ty["n_c1"], ty["n_c2"]) == (ref_table["n_terms"], ref_table["n_c1"], ref_table["n_c2"])
    for side in ("top_c1", "top_c2"):
        assert [(r["term"], r["w1"], r["w2"], r["w12"]) for r in ty[side]] == \
               [(r["term"], r["w1"], r["w2"], r["w12"]) for r in ref_table[side]]
        assert [r["epsilon"] for r in ty[side]] == pytest.approx([r["epsilon"] for r in ref_table[side]])
    assert ty["top_c1"] and ty["top_c2"] and ty["top_c1"][0]["epsilon"] < 0 < ty["top_c2"][0]["epsilon"]

    # the fit is there and honest about itself
    fit = numbers["fit"]
    assert fit["model"] == "beta+beta+normal" and -1 < fit["r2"] <= 1 and fit["rmse"] >= 0
    assert numbers["fit_two_betas"]["model"] == "beta+beta"
    assert numbers["partitions"]["boundary"] == 8

    # the files
    on_disk = json.load(open(f"{dest}/density.json"))
    assert on_disk == json.loads(json.dumps({k: v for k, v in numbers.items() if k != "paths"}))
    assert _png_size(open(f"{dest}/density.png", "rb").read()) == (1520, 680)
    html = open(f"{dest}/density.html", encoding="utf-8").read()
    assert html.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in html
    assert "src=\"http" not in html and "<link" not in html  # self-contained
    assert html.count("<svg") == 1 and html.count('class="curve"') == 4 and "<rect" in html
    assert f"R\u00b2 = {fit['r2']:.4f}" in html and "\u03c01 = density \u2264 8" in html
    assert 'id="terms-c1"' in html and 'id="terms-c2"' in html
    for r in ty["top_c1"] + ty["top_c2"]:
        assert f"<td>{r['term']}</td>" in html
    assert f'{ty["top_c1"][0]["epsilon"]:+.2f}' in html


def test_density_report_without_templates_and_rerun(spark, outs, tmp_path):
    out = outs[1]
    dest = str(tmp_path / "dens")
    first = run_density(spark, out, dest, **QUIET)
    assert not first["has_templates"] and first["totals"]["template_tokens"] == 0
    assert all(h["template_tokens"] == 0 for h in first["histogram"])
    assert "Neither detect nor the page-level model has run" in open(f"{dest}/density.html", encoding="utf-8").read()
    assert first["typicality"]["min_doc_freq"] == 2  # 1% of few pages, at least 2
    os.remove(f"{dest}/density.png")
    again = run_density(spark, out, dest, **QUIET)  # an earlier report, a file short: replaced as a whole
    assert sorted(os.listdir(dest)) == sorted(FILES)
    assert os.listdir(tmp_path) == ["dens"]
    assert again["histogram"] == first["histogram"] and again["typicality"] == first["typicality"]
    with open(f"{dest}/stale.txt", "w") as f:  # not a report's file: the folder is not replaced
        f.write("from an older report")
    with pytest.raises(ValueError, match="holds stale.txt"):
        run_density(spark, out, dest, **QUIET)
    assert sorted(os.listdir(dest)) == sorted([*FILES, "stale.txt"]) and os.listdir(tmp_path) == ["dens"]


def _copy(src: str, dst) -> str:
    import shutil

    shutil.copytree(src, str(dst))
    return str(dst)


def test_dest_is_never_out_nor_a_folder_holding_it(spark, outs, tmp_path, capsys):
    """`templatemine density OUT --dest OUT` set OUT aside and deleted it
    (pagelets, pages, templates), `--dest .` or `~` their folders as much
    (found in review): such a DEST is refused before any Spark work, exit 2."""
    import argparse

    from templatemine.cli import _model_command
    from templatemine.progress import Progress

    run = _copy(outs[0], tmp_path / "run")
    tables = sorted(os.listdir(run))
    os.symlink(run, tmp_path / "link")
    for dest, why in ((run, "is OUT"), (str(tmp_path / "link"), "is OUT"), (f"{run}/", "is OUT"),
                      (str(tmp_path), "holds OUT"), (f"{tmp_path}/run/..", "holds OUT"),
                      (os.path.relpath(tmp_path), "holds OUT"), ("/", "holds OUT"),
                      (f"{run}/pagelets", "not a density report")):
        with pytest.raises(ValueError, match=why):
            run_density(spark, run, dest, **QUIET)
        assert sorted(os.listdir(run)) == tables, dest
    assert sorted(os.listdir(tmp_path)) == ["link", "run"]
    args = argparse.Namespace(command="density", out=run, dest=run)
    assert _model_command(spark, args, None, Progress(quiet=True, json_lines=False)) == 2
    assert capsys.readouterr().err.startswith(f"templatemine: {run}: is OUT")
    assert sorted(os.listdir(run)) == tables
    # a write that fails leaves no DEST.tmp-* behind (Hadoop's local file system)
    with pytest.raises(TypeError):
        write_folder_atomically(spark, str(tmp_path / "dens"), {"density.html": b"<p>", "density.png": None})
    assert sorted(os.listdir(tmp_path)) == ["link", "run"]


def _judge(spark, out: str, detect_run_id) -> tuple[set, set]:
    """A page-level judgement written by hand (as pagelevel.py writes it): the
    first page in page mode, the model removing its first pagelet no site-level
    template holds; the second in hybrid, the model removing one more. Returns
    (pages judged in page mode, pagelets the model removed)."""
    pagelets = spark.read.parquet(f"{out}/pagelets").where("size(split(trim(text), ' ')) > 2") \
        .select("page_key", "ordinal").collect()  # pagelets with words
    site = set()
    if os.path.exists(f"{out}/template_pagelets"):
        site = {(r["page_key"], r["ordinal"]) for r in spark.read.parquet(f"{out}/template_pagelets").collect()}
    by_page: dict[int, list[int]] = {}
    for r in pagelets:
        by_page.setdefault(r["page_key"], []).append(r["ordinal"])
    pages = sorted(k for k, ords in by_page.items() if any((k, o) in site for o in ords)) or sorted(by_page)
    rows = []
    for key, mode in zip(pages[:2], ("page", "hybrid")):
        free = sorted(o for o in by_page[key] if (key, o) not in site)
        rows.append((key, mode, free[:1]))
    spark.createDataFrame(rows, "page_key long, mode string, template_pagelets array<int>") \
        .write.parquet(f"{out}/page_templateness")
    with open(f"{out}/pagelevel.json", "w") as fh:
        json.dump({"detect_run_id": detect_run_id, "rows": {"page_templateness": len(rows)}, "model": "m"}, fh)
    return {rows[0][0]}, {(k, o) for k, _, ords in rows for o in ords}


def test_template_tokens_are_what_clean_removes(spark, outs, tmp_path):
    """The density report counted OUT/template_pagelets alone, where report.html
    and clean use templates/stage.removed_pagelets: site-level templates on
    pages judged in page mode are kept, the model's removals added (the demo:
    18.3% template tokens against clean's 22.5%); after extract + `pagelevel
    --pagelevel page` it said "detect has not run" (found in review)."""
    from templatemine.report.gather import gather_report

    judged = _copy(outs[0], tmp_path / "judged")
    page_mode, model = _judge(spark, judged, json.load(open(f"{judged}/detect.json"))["run_id"])
    numbers = run_density(spark, judged, str(tmp_path / "d1"), min_doc_freq=2, **QUIET)
    got = {h["bin"]: (h["other_tokens"], h["template_tokens"]) for h in numbers["histogram"]}
    assert got == gather_report(spark, judged, max_pages=0).density  # report.html's density plot
    site_only = density_histogram((text, is_t) for _, text, is_t in _blocks(spark, judged, with_templates=True))
    assert got != site_only and numbers["has_templates"]
    html = open(f"{tmp_path}/d1/density.html", encoding="utf-8").read()
    assert "the pagelets clean removes" in html

    alone = _copy(outs[1], tmp_path / "alone")  # extract, then the model alone: no template_pagelets
    assert not os.path.exists(f"{alone}/template_pagelets") and not os.path.exists(f"{alone}/detect.json")
    _judge(spark, alone, None)
    numbers = run_density(spark, alone, str(tmp_path / "d2"), min_doc_freq=2, **QUIET)
    assert numbers["has_templates"] and numbers["totals"]["template_tokens"] > 0
    assert numbers["histogram"] and {h["bin"]: (h["other_tokens"], h["template_tokens"])
                                     for h in numbers["histogram"]} == gather_report(spark, alone, max_pages=0).density
    assert "has run" not in open(f"{tmp_path}/d2/density.html", encoding="utf-8").read()


def test_spark_finds_the_terms_python_finds_in_any_script(spark):
    """Table 1's terms are counted in Spark (SPARK_TERM_PATTERN) and checked
    against typicality.terms in Python: the two patterns must split the same
    words, combining marks, other digits and underscores included."""
    import re

    from pyspark.sql import functions as F

    from templatemine.report.density_report import SPARK_TERM_PATTERN
    from templatemine.report.typicality import TERM_PATTERN

    texts = ["हिन्दी भाषा", "cafe\u0301 re\u0301sume\u0301", "x² and ½ cup", "snake_case, CamelCase; 2026-11-26",
             "北京 下雨", "مرحبا بالعالم", "Ⅻ chapters", "tab\tand\u00a0nbsp"]
    got = [r["t"] for r in spark.createDataFrame([(t,) for t in texts], "text string").select(
        F.regexp_extract_all(F.lower("text"), F.lit(SPARK_TERM_PATTERN), 0).alias("t")).collect()]
    assert got == [re.findall(TERM_PATTERN, t.lower()) for t in texts]
