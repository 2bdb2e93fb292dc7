"""Remote INPUTs (s3a://, hdfs://) are judged as local ones are: a manifest on S3
or HDFS is read, not taken for a WARC, and a folder with no archives is an error.
S3 is moto's server on 127.0.0.1, read through pyarrow in this process."""

import os
import socket
import urllib.request
from urllib.parse import urlsplit

import pytest
from pyarrow import fs

from templatemine.warc import inputs
from templatemine.warc.inputs import InputError, expand_inputs
from tests.warcgen import sample

moto_server = pytest.importorskip("moto.server", reason="moto[server] is in the test extras")
boto3 = pytest.importorskip("boto3")

AWS_ENV = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1"}


@pytest.fixture(scope="module")
def s3():
    """A bucket `crawl` holding two WARCs under 2026-11/, and the S3 client."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    # moto's backends are global to the process: start empty, whatever an earlier test left
    # (tests/spark/test_s3_input.py's WARCs under the same bucket, in a whole-suite run)
    urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/moto-api/reset", method="POST"))
    env = {**AWS_ENV, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        client = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name="us-east-1")
        client.create_bucket(Bucket="crawl")
        for name in ("a.warc.gz", "b.warc.gz"):
            client.upload_file(sample("iana.warc.gz"), "crawl", f"2026-11/{name}")
        yield client
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()


def test_manifest_on_s3_lists_its_entries(s3):
    s3.put_object(Bucket="crawl", Key="warc.paths", Body=(
        "# night 1\ns3a://crawl/2026-11/a.warc.gz\n\n2026-11/b.warc.gz\n"  # relative: to the manifest's folder
        f"{sample('warcio-example.warc.gz')}\n").encode())
    got = [f.path for f in expand_inputs(["s3a://crawl/warc.paths"])]
    assert got == ["s3a://crawl/2026-11/a.warc.gz", "s3a://crawl/2026-11/b.warc.gz", sample("warcio-example.warc.gz")]


def test_warc_on_s3_named_otherwise_is_still_a_warc(s3):
    s3.upload_file(sample("warcio-example-bad.warc.gz.bad"), "crawl", "odd/segment-0001")
    assert [f.path for f in expand_inputs(["s3a://crawl/odd/segment-0001"])] == ["s3a://crawl/odd/segment-0001"]


def test_manifests_nest_no_deeper_on_s3_than_locally(s3, tmp_path):
    s3.put_object(Bucket="crawl", Key="outer.paths", Body=b"s3a://crawl/inner.paths\n")
    s3.put_object(Bucket="crawl", Key="inner.paths", Body=b"s3a://crawl/2026-11/a.warc.gz\n")
    nested = r"line 1: s3a://crawl/inner.paths \(listed in a manifest\) is not a WARC/ARC file"
    with pytest.raises(InputError, match="outer.paths, " + nested):
        expand_inputs(["s3a://crawl/outer.paths"])
    local = tmp_path / "m.txt"
    local.write_text("s3a://crawl/inner.paths\n")
    with pytest.raises(InputError, match="m.txt, " + nested):
        expand_inputs([str(local)])


def test_bad_remote_manifests_are_clear_errors(s3):
    s3.put_object(Bucket="crawl", Key="bin/blob", Body=b"\x00\xff\xfe" * 100)
    with pytest.raises(InputError, match="s3a://crawl/bin/blob is neither a WARC/ARC file nor a text manifest"):
        expand_inputs(["s3a://crawl/bin/blob"])
    s3.put_object(Bucket="crawl", Key="gone.paths", Body=b"# one file\n2026-11/nope.warc.gz\n")
    with pytest.raises(InputError, match=r"s3a://crawl/gone.paths, line 2: input not found: s3a://crawl/2026-11/nope"):
        expand_inputs(["s3a://crawl/gone.paths"])
    s3.put_object(Bucket="crawl", Key="empty.paths", Body=b"# nothing yet\n")
    with pytest.raises(InputError, match="manifest s3a://crawl/empty.paths lists no files"):
        expand_inputs(["s3a://crawl/empty.paths"])


def test_keys_that_are_no_uri_are_read_as_listed_and_a_gzipped_manifest_is_read(s3):
    """A folder's listing gives keys as they are: parsed as URIs, a space failed every
    task (ArrowInvalid) and `%41` or `#` opened another object or none."""
    import gzip

    want = open(sample("warcio-example.warc.gz"), "rb").read()
    keys = ("keys/c d.warc.gz", "keys/e%41.warc.gz", "keys/f#1.warc.gz")
    for key in keys:
        s3.put_object(Bucket="crawl", Key=key, Body=want)
    s3.put_object(Bucket="crawl", Key="keys/eA.warc.gz", Body=b"WARC/1.0\r\n\r\n")  # what %41 would open
    listed = [f.path for f in expand_inputs(["s3a://crawl/keys/"])]
    assert listed == ["s3a://crawl/keys/c d.warc.gz", "s3a://crawl/keys/e%41.warc.gz", "s3a://crawl/keys/eA.warc.gz",
                      "s3a://crawl/keys/f#1.warc.gz"]
    for key in keys:
        with inputs.open_input(f"s3a://crawl/{key}") as fh:
            assert fh.read() == want, key
    s3.put_object(Bucket="crawl", Key="cc/warc.paths.gz", Body=gzip.compress(b"s3a://crawl/keys/c d.warc.gz\n"))
    assert [f.path for f in expand_inputs(["s3a://crawl/cc/warc.paths.gz"])] == ["s3a://crawl/keys/c d.warc.gz"]


def test_a_folder_a_manifest_names_many_archives_in_is_listed_once(s3, monkeypatch):
    """Common Crawl's warc.paths.gz names about 90,000 WARCs: one request per entry
    before Spark starts (2,002 HEADs for 2,000 entries on moto) became one listing per
    folder. The files, their order and sizes, and the missing entries' errors are the same."""
    n = inputs.LIST_MIN_ENTRIES
    for i in range(n):
        s3.put_object(Bucket="crawl", Key=f"seg/warc/w{i:04d}.warc.gz", Body=b"x" * (i + 1))
    lines = [f"seg/warc/w{i:04d}.warc.gz" for i in reversed(range(n))] + ["2026-11/a.warc.gz"]
    s3.put_object(Bucket="crawl", Key="many.paths", Body="\n".join(lines).encode())
    calls = []
    remote = inputs._remote

    def counted(path):
        filesystem, inner = remote(path)
        calls.append(path)
        return filesystem, inner

    monkeypatch.setattr(inputs, "_remote", counted)
    got = expand_inputs(["s3a://crawl/many.paths"])
    assert [(f.path, f.size) for f in got] == [(f"s3a://crawl/{p}", n - i) for i, p in enumerate(lines[:-1])] + [
        ("s3a://crawl/2026-11/a.warc.gz", os.path.getsize(sample("iana.warc.gz")))]
    assert calls == ["s3a://crawl/many.paths", "s3a://crawl/seg/warc", "s3a://crawl/2026-11/a.warc.gz"]
    s3.put_object(Bucket="crawl", Key="many.paths", Body="\n".join(lines + ["seg/warc/gone.warc.gz"]).encode())
    with pytest.raises(InputError, match=rf"many.paths, line {n + 2}: input not found: s3a://crawl/seg/warc/gone"):
        expand_inputs(["s3a://crawl/many.paths"])
    missing: list[str] = []
    assert len(expand_inputs(["s3a://crawl/many.paths"], missing)) == n + 1
    assert missing == ["s3a://crawl/seg/warc/gone.warc.gz"]


def test_remote_folder_without_archives_is_an_error(s3):
    s3.put_object(Bucket="crawl", Key="notes/readme.txt", Body=b"no WARCs here")
    for path in ("s3a://crawl/notes", "s3a://crawl/notes/"):
        with pytest.raises(InputError, match=f"no .warc/.warc.gz/.arc/.arc.gz files under {path}"):
            expand_inputs([path])
    assert len(expand_inputs(["s3a://crawl/2026-11/"])) == 2


def _hdfs_on(root, monkeypatch, filesystem=None):
    """hdfs:///x served from root/x by a local pyarrow file system (no Hadoop needed)."""
    local = filesystem or fs.LocalFileSystem()
    monkeypatch.setattr(inputs, "_remote", lambda path: (local, str(root) + urlsplit(path).path))


def test_manifest_on_hdfs_as_nightly_cron_gives_it(tmp_path, monkeypatch):
    _hdfs_on(tmp_path, monkeypatch)
    (tmp_path / "crawl").mkdir()
    (tmp_path / "crawl" / "a.warc.gz").write_bytes(open(sample("iana.warc.gz"), "rb").read())
    (tmp_path / "crawl" / "NEW_WARCS.txt").write_text("hdfs:///crawl/a.warc.gz\n")
    assert [f.path for f in expand_inputs(["hdfs:///crawl/NEW_WARCS.txt"])] == ["hdfs:///crawl/a.warc.gz"]


def test_unreadable_remote_file_is_an_error_naming_it(tmp_path, monkeypatch):
    class Denied:
        """A file system that lists the file but refuses to open it (as S3 without s3:GetObject)."""

        def get_file_info(self, inner):
            return fs.FileInfo(inner, fs.FileType.File, size=10)

        def open_input_file(self, inner):
            raise OSError("AWS Error ACCESS_DENIED during GetObject operation")

    _hdfs_on(tmp_path, monkeypatch, Denied())
    with pytest.raises(InputError, match="cannot read hdfs:///crawl/NEW_WARCS.txt: .*ACCESS_DENIED"):
        expand_inputs(["hdfs:///crawl/NEW_WARCS.txt"])


def test_an_hdfs_client_that_cannot_start_says_what_it_needs(monkeypatch):
    """pyarrow's own error ("Unable to load libjvm", seen with a run's WET files on
    a MiniDFSCluster) named no remedy; a task's error now says what every executor
    needs for hdfs:// paths."""
    from templatemine.warc.inputs import create_output, open_input

    class Refusing:  # pyarrow's FileSystem where libhdfs or the JVM is missing
        @staticmethod
        def from_uri(uri):
            raise OSError("Unable to load libjvm")

    monkeypatch.setattr(fs, "FileSystem", Refusing)
    for call in (open_input, create_output):
        with pytest.raises(OSError, match=r"hdfs://nn:8020/crawl/a.warc.gz: pyarrow's HDFS client did not start "
                                          r"\(Unable to load libjvm\); .*libhdfs.so.*hadoop classpath --glob"):
            call("hdfs://nn:8020/crawl/a.warc.gz")


def test_a_manifest_that_is_not_a_json_object_is_one_line_naming_it():
    """OUT's manifests (manifest.json, detect.json, pagelevel.json) cut short or
    edited by hand gave json's traceback (found in review, 2026-11-28)."""
    from templatemine.tables.output import UnreadableFile, parse_json

    assert parse_json(None, "o/manifest.json") is None and parse_json('{"a": 1}', "o/manifest.json") == {"a": 1}
    for text, why in (('{"a": ', "not JSON: Expecting value: line 1 column 7"), ("[1]", "not a JSON object")):
        with pytest.raises(UnreadableFile) as err:
            parse_json(text, "o/detect.json")
        assert str(err.value).startswith(f"cannot read o/detect.json ({why}")
