import os

import pytest

from templatemine.config import ExtractConfig, load_config
from templatemine.html.page import LinkRow, PageletRow
from templatemine import schema as S


def test_rows_and_schema_agree():
    assert list(LinkRow._fields) == S.LINK_FIELDS.names
    assert list(PageletRow._fields) == S.PAGELET_FIELDS.names
    assert S.LINKS_SCHEMA.names[0] == "src_page_key" and S.PAGELETS_SCHEMA.names[0] == "page_key"
    assert set(S.PAGES_SCHEMA.names) - set(S.CAPTURES_SCHEMA.names) == {"dup_of"}


def test_presets_files_and_overrides(tmp_path):
    assert load_config().extract == ExtractConfig()
    f = tmp_path / "c.toml"
    f.write_text('preset = "test"\n[extract]\nk = 4\n[spark]\n"spark.sql.shuffle.partitions" = 3\n')
    cfg = load_config(None, str(f), ["extract.shingle_rows=3", "extract.fail_fast=true"])
    assert (cfg.extract.k, cfg.extract.shingle_rows, cfg.extract.fail_fast) == (4, 3, True)
    assert cfg.spark["spark.sql.shuffle.partitions"] == "3" and cfg.spark["spark.ui.enabled"] == "false"
    assert load_config("test", str(f)).extract.k == 4  # the file's own preset, named again: fine
    with pytest.raises(ValueError, match=f"--preset local but {f} says preset = 'test': drop one"):
        load_config("local", str(f))  # one of the two would be ignored
    f.write_text('preset = "clusterr"\n')
    with pytest.raises(ValueError, match=f"{f}: unknown preset 'clusterr'"):
        load_config(None, str(f))
    with pytest.raises(ValueError, match="unknown setting 'kk'"):
        load_config("local", None, ["extract.kk=1"])
    with pytest.raises(ValueError, match="unknown preset"):
        load_config("huge")


def test_repo_conf_files_load():
    for name in ("local", "cluster", "test"):
        load_config(None, os.path.join(os.path.dirname(__file__), "..", "..", "conf", f"{name}.toml"))


def test_detect_section_and_overrides(tmp_path):
    f = tmp_path / "d.toml"
    f.write_text('[detect]\nmode = "local"\nmin_site_support = 0.2\n')
    cfg = load_config(None, str(f), ["detect.enabled=false"])
    assert (cfg.detect.mode, cfg.detect.min_site_support, cfg.detect.enabled) == ("local", 0.2, False)
    with pytest.raises(ValueError, match="SECTION.NAME=VALUE"):
        load_config("local", None, ["spark.x=1"])


def test_settings_with_fixed_values_are_checked_when_the_config_loads(tmp_path):
    """A typo fails before Spark starts, naming the key: detect.mode was read only
    after extract, and an unknown cc_algorithm silently ran the slower fallback."""
    for item, words in [("detect.mode=globl", "--set: detect.mode: not one of auto, global"),
                        ("detect.cc_algorithm=two-phase", "--set: detect.cc_algorithm: not one of two_phase"),
                        ("detect.support_of=paths", "--set: detect.support_of: not one of path, template"),
                        ("pagelevel.mode=pages", "--set: pagelevel.mode: not one of auto, site, page, hybrid"),
                        ("detect.etdm_equality=tag,colour", "--set: detect.etdm_equality: unknown equality features"),
                        ("extract.fail_fast=maybe", "--set: extract.fail_fast: not a boolean: 'maybe'")]:
        with pytest.raises(ValueError) as err:
            load_config(None, None, [item])
        assert str(err.value).startswith(words), str(err.value)
    f = tmp_path / "c.toml"
    f.write_text('[pagelevel]\nmode = "hybird"\n')
    with pytest.raises(ValueError, match=f"{f}: pagelevel.mode: not one of"):
        load_config(None, str(f))
    ok = load_config(None, None, ["detect.mode=etdm+global", "detect.cc_algorithm=graphx",
                                  "detect.etdm_equality=tag,text", "pagelevel.mode=site"])
    assert (ok.detect.mode, ok.detect.cc_algorithm, ok.pagelevel.mode) == ("etdm+global", "graphx", "site")


def test_a_conf_files_values_of_the_wrong_type_or_range_are_refused_naming_the_key(tmp_path):
    """A TOML value is typed: before, `k = 3.7` ran as if k were 4, `bands = [0, 5, 50]`
    failed in train after extract and detect, and `etdm_equality = 3` was a traceback."""
    cases = [("[extract]\nk = 3.7\n", "extract.k: not an integer: 3.7"),
             ("[extract]\nfail_fast = 1\n", "extract.fail_fast: not a boolean: 1"),
             ("[pagelevel]\nthreshold = true\n", "pagelevel.threshold: not a number: True"),
             ("[pagelevel]\nbands = [0, 5, 50]\n", "pagelevel.bands: not a string: [0, 5, 50]"),
             ("[detect]\netdm_equality = 3\n", "detect.etdm_equality: not a string: 3"),
             ("[pagelevel]\nthreshold = nan\n", "pagelevel.threshold: not a finite number: nan"),
             ("[pagelevel]\nholdout = 1.0\n", "pagelevel.holdout: 1.0 is out of range"),
             ("[extract]\nk = 0\n", "extract.k: 0 is out of range"),
             ('[pagelevel]\nbands = "0;5;50"\n', "pagelevel.bands: pagelevel.bands must be integers"),
             ("[extract]\nk = = 4\n", "Invalid value")]
    for n, (text, words) in enumerate(cases):
        f = tmp_path / f"c{n}.toml"
        f.write_text(text)
        with pytest.raises(ValueError) as err:
            load_config(None, str(f))
        assert str(err.value).startswith(f"{f}: ") and words in str(err.value), str(err.value)
    f = tmp_path / "ok.toml"
    f.write_text("[pagelevel]\nsmoothing = 1\nthreshold = 0.3\n[extract]\nk = 4\n")
    ok = load_config(None, str(f), ["pagelevel.bands = 0,10", "pagelevel.holdout=0"])
    assert (ok.pagelevel.smoothing, ok.pagelevel.threshold, ok.extract.k) == (1.0, 0.3, 4)
    assert type(ok.pagelevel.smoothing) is float and (ok.pagelevel.bands, ok.pagelevel.holdout) == ("0,10", 0.0)
    for item in ("pagelevel.threshold=inf", "pagelevel.grid=-0.1", "pagelevel.grid=0", "extract.k=-3"):
        with pytest.raises(ValueError, match=f"--set: {item.split('=')[0]}: "):
            load_config(None, None, [item])


def test_counts_shares_and_sections_found_in_the_eleventh_review(tmp_path):
    """Counts of 0 loaded and failed inside every Spark task (shingle rows, n-grams),
    a payload limit of 0 made every page `oversized` in a run that succeeded, a
    share given as a percentage (30) kept no template; a section that is not a
    table was an AttributeError's traceback; and `run --pagelevel site` dropped the
    nodes a config file, or `--set "extract.nodes = true"`, asked for."""
    from templatemine.cli import _load, build_parser

    for item in ("extract.shingle_rows=0", "extract.shingle_ngram=0", "extract.dup_rows=0", "extract.dup_ngram=0",
                 "extract.max_payload_bytes=0", "extract.batch_records=0", "detect.min_site_support=30",
                 "detect.min_path_share=1.5", "detect.min_resemblance=-0.1", "detect.etdm_n=1",
                 "detect.local_max_pages=-1", "pagelevel.min_site_pages=-5", "clean.wet_pages_per_file=0"):
        with pytest.raises(ValueError, match=f"--set: {item.split('=')[0]}: .* is out of range"):
            load_config(None, None, [item])
    for text in ("extract = 3\n", "spark = 'x'\n"):
        f = tmp_path / "bad.toml"
        f.write_text(text)
        with pytest.raises(ValueError, match=f"{f}: (extract|spark) must be a table"):
            load_config(None, str(f))
    f = tmp_path / "nodes.toml"
    f.write_text("[extract]\nnodes = true\n")
    for extra in (["--set", "extract.nodes = true"], ["--set", " extract.nodes=true"], ["--config", str(f)]):
        args = build_parser().parse_args(["run", "x.warc.gz", "--out", "o", "--pagelevel", "site", *extra])
        assert _load(args).extract.nodes is True, extra
    args = build_parser().parse_args(["run", "x.warc.gz", "--out", "o", "--pagelevel", "site"])
    assert _load(args).extract.nodes is False  # not asked for: no model, no nodes
    given: set[str] = set()  # from the one read of the file (a FIFO cannot be read twice)
    load_config(None, str(f), ["detect.mode = local"], given)
    assert given == {"extract.nodes", "detect.mode"}


def test_the_spark_table_takes_dotted_keys_quoted_or_not(tmp_path):
    """TOML reads an unquoted `spark.sql.shuffle.partitions = 8` as nested tables:
    before, they became one conf key `spark` that Spark ignored, and the preset's
    value stayed in force."""
    f = tmp_path / "s.toml"
    f.write_text('[spark]\nspark.sql.shuffle.partitions = 64\n"spark.executor.memory" = "6g"\n'
                 "spark.sql.adaptive.enabled = false\n")
    spark = load_config(None, str(f)).spark
    assert spark["spark.sql.shuffle.partitions"] == "64" and spark["spark.executor.memory"] == "6g"
    assert spark["spark.sql.adaptive.enabled"] == "false" and "spark" not in spark
    f.write_text('[spark]\n"spark.jars" = ["a.jar"]\n')
    with pytest.raises(ValueError, match="spark.spark.jars: a list is not a Spark conf value"):
        load_config(None, str(f))


def test_the_checked_values_are_the_stages_own():
    from templatemine.config import CHOICES
    from templatemine.pagelevel.stage import MODES
    from templatemine.templates.stage import COMBINED, ETDM
    from templatemine.templates.detect import GLOBAL, LOCAL

    assert set(CHOICES[("pagelevel", "mode")]) == set(MODES)
    assert set(CHOICES[("detect", "mode")]) == {"auto", GLOBAL, LOCAL, ETDM, COMBINED}


def test_an_extract_removes_every_later_stages_output():
    """tables/output.py DERIVED names what the stages after extract write into OUT."""
    from templatemine.graph.priority import CRAWL_PRIORITY
    from templatemine.pagelevel.stage import PAGE_TEMPLATENESS
    from templatemine.report.density_report import DENSITY_DIR
    from templatemine.report.gather import REPORT
    from templatemine.schema import REDIRECTS
    from templatemine.tables.output import DERIVED
    from templatemine.templates import stage

    # REDIRECTS: a night's snapshot's, which an extract into its folder would leave beside its own RECORDS
    written = {stage.TEMPLATES, stage.TEMPLATE_PAGELETS, stage.PAGE_TEMPLATES, stage.CLEAN_PAGES, stage.CLEAN_LINKS,
               stage.WET, PAGE_TEMPLATENESS, REPORT, DENSITY_DIR, CRAWL_PRIORITY, REDIRECTS,
               "detect.json", "pagelevel.json", "clean.json", "priority.json"}
    assert written <= set(DERIVED)
