import os
import shutil
import subprocess
import sys

import pytest

from templatemine.warc.inputs import InputError, expand_inputs, is_remote
from tests.warcgen import sample


def test_files_dirs_globs_and_dedup(tmp_path):
    for name in ("iana.warc.gz", "warcio-example.arc.gz", "warcio-example-trunc.warc"):
        shutil.copy(sample(name), tmp_path / name)
    (tmp_path / "notes.txt").write_text("not an archive")
    by_dir = [os.path.basename(f.path) for f in expand_inputs([str(tmp_path)])]
    assert by_dir == ["iana.warc.gz", "warcio-example-trunc.warc", "warcio-example.arc.gz"]
    by_glob = expand_inputs([str(tmp_path / "*.gz"), str(tmp_path / "iana.warc.gz")])
    assert [os.path.basename(f.path) for f in by_glob] == ["iana.warc.gz", "warcio-example.arc.gz"]
    assert all(f.size > 0 for f in by_glob)


def test_manifest_relative_absolute_and_comments(tmp_path):
    shutil.copy(sample("iana.warc.gz"), tmp_path / "a.warc.gz")
    manifest = tmp_path / "warc.paths"
    manifest.write_text(f"# crawl 1\na.warc.gz\n\nfile://{sample('warcio-example.warc.gz')}\n")
    got = expand_inputs([str(manifest)])
    assert [os.path.basename(f.path) for f in got] == ["a.warc.gz", "warcio-example.warc.gz"]


def test_warc_given_where_a_manifest_was_expected_just_works():
    assert len(expand_inputs([sample("warcio-example-bad.warc.gz.bad")])) == 1  # sniffed, not by name


def test_missing_inputs_are_clear_errors(tmp_path):
    with pytest.raises(InputError, match="input not found: .*nope.warc.gz"):
        expand_inputs([str(tmp_path / "nope.warc.gz")])
    manifest = tmp_path / "m.txt"
    manifest.write_text("missing.warc.gz\n")
    with pytest.raises(InputError, match=r"m.txt, line 1: input not found"):
        expand_inputs([str(manifest)])
    with pytest.raises(InputError, match="no file matches"):
        expand_inputs([str(tmp_path / "*.warc")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no .warc"):
        expand_inputs([str(tmp_path / "empty")])


def test_a_gzipped_manifest_or_one_of_urls_is_a_manifest_not_an_archive(tmp_path):
    """Common Crawl ships `warc.paths.gz`: its gzip magic made it an archive, read as
    one malformed record (and a nightly run recorded it as ingested, never reading
    its entries); a manifest whose first line starts with `http` was an ARC file."""
    import gzip

    shutil.copy(sample("iana.warc.gz"), tmp_path / "a.warc.gz")
    paths = tmp_path / "warc.paths.gz"
    paths.write_bytes(gzip.compress(b"a.warc.gz\n" + f"{sample('warcio-example.arc.gz')}\n".encode()))
    assert [os.path.basename(f.path) for f in expand_inputs([str(paths)])] == ["a.warc.gz", "warcio-example.arc.gz"]
    urls = tmp_path / "urls.txt"
    urls.write_text("https://data.commoncrawl.org/crawl-data/x/a.warc.gz\n")
    with pytest.raises(InputError, match=r"urls.txt, line 1: .*https:// is not read"):
        expand_inputs([str(urls)])
    # archives not named as such are still sniffed as archives, gzipped (WARC, ARC) or not
    for name in ("iana.warc.gz", "warcio-example.arc.gz", "warcio-example-trunc.warc", "warcio-example-bad.warc.gz.bad"):
        shutil.copy(sample(name), tmp_path / "blob")
        assert [f.path for f in expand_inputs([str(tmp_path / "blob")])] == [str(tmp_path / "blob")], name
    (tmp_path / "binary.gz").write_bytes(gzip.compress(bytes(range(256)) * 4))
    assert len(expand_inputs([str(tmp_path / "binary.gz")])) == 1  # not text: the reader says what it holds


def test_a_nightly_manifests_gone_entries_are_listed_not_fatal(tmp_path):
    """A nightly manifest keeps growing; a file an earlier night ingested may be gone
    (rotated away): that was "input not found" every night after."""
    shutil.copy(sample("iana.warc.gz"), tmp_path / "a.warc.gz")
    manifest = tmp_path / "nightly.paths"
    manifest.write_text("gone-1.warc.gz\na.warc.gz\ngone-1.warc.gz\ns/gone-2.warc.gz\n")
    missing: list[str] = []
    got = expand_inputs([str(manifest)], missing)
    assert [os.path.basename(f.path) for f in got] == ["a.warc.gz"]
    assert missing == [str(tmp_path / "gone-1.warc.gz"), str(tmp_path / "s" / "gone-2.warc.gz")]
    with pytest.raises(InputError, match=r"nightly.paths, line 1: input not found"):
        expand_inputs([str(manifest)])  # elsewhere it stays an error
    with pytest.raises(InputError, match="input not found"):
        expand_inputs([str(tmp_path / "gone-3.warc.gz")], [])  # and so does a missing INPUT itself
    manifest.write_text("gone-1.warc.gz\n")
    missing = []
    assert expand_inputs([str(manifest)], missing) == [] and len(missing) == 1


def test_remote_schemes_are_recognised():
    assert is_remote("s3a://bucket/crawl/x.warc.gz") and is_remote("hdfs://nn:8020/x.warc.gz")
    assert not is_remote("file:///tmp/x.warc.gz") and not is_remote("/tmp/x.warc.gz")


def test_cli_rejects_a_missing_path_before_spark_starts(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "templatemine.cli", "extract", str(tmp_path / "missing.warc.gz"),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "input not found" in proc.stderr and "missing.warc.gz" in proc.stderr
    assert "SparkContext" not in proc.stderr and not (tmp_path / "out").exists()


def test_odd_but_real_inputs_found_in_review(tmp_path):
    """A cut-short (empty) .warc.gz matched by a glob is an archive, not a
    manifest that lists nothing (which refused the whole run); a manifest
    saved with a byte-order mark reads from its first line; one file named
    twice (a symlink, s3:// beside s3a://) is read once."""
    from templatemine.warc.inputs import same_file

    crawl = tmp_path / "crawl"
    crawl.mkdir()
    shutil.copy(sample("iana.warc.gz"), crawl / "a.warc.gz")
    (crawl / "b.warc.gz").write_bytes(b"")
    got = expand_inputs([str(crawl / "*.warc*")])
    assert [(os.path.basename(f.path), f.size > 0) for f in got] == [("a.warc.gz", True), ("b.warc.gz", False)]
    manifest = tmp_path / "bom.txt"
    manifest.write_text("# a comment on line 1\ncrawl/a.warc.gz\n", encoding="utf-8-sig")
    assert [os.path.basename(f.path) for f in expand_inputs([str(manifest)])] == ["a.warc.gz"]
    (tmp_path / "link.warc.gz").symlink_to(crawl / "a.warc.gz")
    assert len(expand_inputs([str(crawl / "a.warc.gz"), str(tmp_path / "link.warc.gz")])) == 1
    assert same_file("s3a://bucket/x.warc.gz") == same_file("s3://bucket/x.warc.gz") != same_file("hdfs://b/x")


def test_folders_globs_and_manifests_found_in_the_eleventh_review(tmp_path):
    """A folder's symlinked subfolders are walked, as a glob walks them (a crawl's
    monthly folders linked from other disks were skipped without a word), each
    real folder once (a link back up ends); `X.WARC.GZ` in a folder is read as it
    is when named; a glob of nightly manifests keeps their gone entries no error;
    a manifest whose first entry is `WARC/...` (a folder named WARC) is a manifest."""
    top, elsewhere = tmp_path / "top", tmp_path / "elsewhere" / "2024"
    top.mkdir()
    elsewhere.mkdir(parents=True)
    shutil.copy(sample("iana.warc.gz"), top / "a.warc.gz")
    shutil.copy(sample("warcio-example.warc.gz"), elsewhere / "B.WARC.GZ")
    (top / "2024").symlink_to(elsewhere)
    (elsewhere / "up").symlink_to(top)  # a loop
    got = [os.path.relpath(f.path, top) for f in expand_inputs([str(top)])]
    assert got == ["2024/B.WARC.GZ", "a.warc.gz"]

    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "n1.txt").write_text(f"{top / 'a.warc.gz'}\n{tmp_path / 'gone.warc.gz'}\n")
    missing: list[str] = []
    assert [os.path.basename(f.path) for f in expand_inputs([str(lists / "*.txt")], missing)] == ["a.warc.gz"]
    assert missing == [str(tmp_path / "gone.warc.gz")]

    (tmp_path / "WARC").mkdir()
    shutil.copy(sample("iana.warc.gz"), tmp_path / "WARC" / "CC-a.warc.gz")
    todo = tmp_path / "todo.txt"
    todo.write_text("WARC/CC-a.warc.gz\n")
    assert [os.path.basename(f.path) for f in expand_inputs([str(todo)])] == ["CC-a.warc.gz"]


def test_cli_rejects_an_out_python_cannot_write_wet_to_before_spark_starts(tmp_path):
    """`run` to wasb:// would have read and detected the whole crawl before
    clean's WET files failed, with a traceback; now one line, exit 2, no Spark.
    Without WET (clean.wet=false) there is nothing Python writes there."""
    out = "wasb://c@acct.blob.core.windows.net/crawl/out"
    warc = tmp_path / "one.warc.gz"
    warc.write_bytes(b"")
    for argv in (["clean", out], ["run", str(warc), "--out", out]):
        proc = subprocess.run([sys.executable, "-m", "templatemine.cli", *argv], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(f"templatemine: {out}/wet: cannot write files from Python tasks to wasb://")
        assert "Traceback" not in proc.stderr and "SparkContext" not in proc.stderr
