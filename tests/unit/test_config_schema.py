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
    cfg = load_config("local", str(f), ["extract.shingle_rows=3", "extract.fail_fast=true"])
    assert (cfg.extract.k, cfg.extract.shingle_rows, cfg.extract.fail_fast) == (4, 3, True)
    assert cfg.spark["spark.sql.shuffle.partitions"] == "3" and cfg.spark["spark.ui.enabled"] == "false"
    with pytest.raises(ValueError, match="unknown setting 'kk'"):
        load_config("local", None, ["extract.kk=1"])
    with pytest.raises(ValueError, match="unknown preset"):
        load_config("huge")


def test_repo_conf_files_load():
    for name in ("local", "cluster", "test"):
        load_config("local", os.path.join(os.path.dirname(__file__), "..", "..", "conf", f"{name}.toml"))


def test_detect_section_and_overrides(tmp_path):
    f = tmp_path / "d.toml"
    f.write_text('[detect]\nmode = "local"\nmin_site_support = 0.2\n')
    cfg = load_config("local", str(f), ["detect.enabled=false"])
    assert (cfg.detect.mode, cfg.detect.min_site_support, cfg.detect.enabled) == ("local", 0.2, False)
    with pytest.raises(ValueError, match="SECTION.NAME=VALUE"):
        load_config("local", None, ["spark.x=1"])
