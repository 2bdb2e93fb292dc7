"""WET output: WARC conversion records that refer to their source records."""

import io
import re

import pytest
from warcio.archiveiterator import ArchiveIterator

from templatemine.clean.wet import EPOCH, write_wet

PAGES = [
    {"url": "https://a.org/", "warc_date": "2026-11-01T00:00:00Z",
     "warc_record_id": "<urn:uuid:11111111-2222-3333-4444-555555555555>", "clean_text": "Main text, é.",
     "template_token_fraction": 0.25, "n_template_pagelets": 3},
    {"url": "https://a.org/arc", "warc_date": EPOCH, "warc_record_id": "", "clean_text": "",
     "template_token_fraction": 0.0, "n_template_pagelets": 0},
]


def _write() -> bytes:
    buf = io.BytesIO()
    assert write_wet(buf, "part-00000.warc.wet.gz", PAGES) == 2
    return buf.getvalue()


def test_conversion_records_refer_to_their_source():
    records = [(r.rec_type, r.rec_headers, r.content_stream().read().decode("utf-8"))
               for r in ArchiveIterator(io.BytesIO(_write()))]
    assert [r[0] for r in records] == ["warcinfo", "conversion", "conversion"]
    (_, h, text), (_, arc, arc_text) = records[1], records[2]
    assert h.get_header("WARC-Target-URI") == "https://a.org/"
    assert h.get_header("WARC-Refers-To") == PAGES[0]["warc_record_id"]
    assert h.get_header("WARC-Date") == "2026-11-01T00:00:00Z"
    assert h.get_header("Content-Type") == "text/plain"
    assert h.get_header("WARC-Template-Token-Fraction") == "0.2500"
    assert h.get_header("WARC-Block-Digest").startswith("sha1:")
    assert text == "Main text, é." and arc_text == ""
    assert arc.get_header("WARC-Refers-To") is None  # an ARC source has no record id


def test_unknown_time_and_source_as_spark_sends_them():
    """clean's Spark side turns a null capture time into the epoch and a null
    record id into "" (tests/spark: an undated capture); nothing null reaches here."""
    buf = io.BytesIO()
    write_wet(buf, "x", [PAGES[1]])
    records = [r.rec_headers for r in ArchiveIterator(io.BytesIO(buf.getvalue()))]
    assert [h.get_header("WARC-Date") for h in records] == ["1970-01-01T00:00:00Z"] * 2
    assert records[1].get_header("WARC-Refers-To") is None


def test_retried_task_writes_the_same_bytes():
    assert _write() == _write()


def test_record_ids_differ_with_the_text_and_the_files_first_page():
    """Found in review: ids came from the source record, URL and date alone (a
    re-run after templates changed wrote another text under the same id), and
    every part-00000's warcinfo had the same id. The same pages still give the
    same bytes (a cluster run beside a local one, tests/cluster)."""
    def ids(pages):
        buf = io.BytesIO()
        write_wet(buf, "part-00000.warc.wet.gz", pages)
        return [r.rec_headers.get_header("WARC-Record-ID") for r in ArchiveIterator(io.BytesIO(buf.getvalue()))]

    other_text = [{**PAGES[0], "clean_text": "Other text."}]
    assert ids(other_text)[1] != ids(PAGES[:1])[1]
    assert ids(PAGES[1:])[0] != ids(PAGES)[0]  # another first page: another warcinfo id
    assert ids(PAGES) == ids(PAGES) and len(set(ids(PAGES))) == 3
    assert ids([])[0] != ids(PAGES)[0]


def test_target_uri_is_the_uri_captured():
    """Found in review (2026-11-26): a conversion record named the page's
    normalised URL, so tools pairing WET and WARC records by WARC-Target-URI, as
    Common Crawl's files allow, found no pair. The URI as captured comes with the
    page where it differs from the url (and "" or missing: the url)."""
    page = {**PAGES[0], "url": "http://www.example.com/Docs/", "target_uri": "HTTP://WWW.Example.com:80/Docs/"}
    buf = io.BytesIO()
    write_wet(buf, "x", [page, {**PAGES[0], "target_uri": ""}, PAGES[1]])
    uris = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(io.BytesIO(buf.getvalue()))
            if r.rec_type == "conversion"]
    assert uris == ["HTTP://WWW.Example.com:80/Docs/", "https://a.org/", "https://a.org/arc"]


def test_a_partition_without_pages_writes_no_file(tmp_path):
    """Found in review (2026-11-28): pages reach the WET files by a hash of the
    URL, so with few pages per file some partitions get none, and each wrote a
    file holding a warcinfo record alone, counted in clean.json's files. (No
    Spark here: an empty partition returns before it asks for its number.)"""
    import pandas as pd

    from templatemine.clean.wet import wet_partitions

    assert list(wet_partitions(iter([]), str(tmp_path))) == []
    assert list(wet_partitions(iter([pd.DataFrame(columns=list(PAGES[0]))]), str(tmp_path))) == []
    assert not list(tmp_path.iterdir())


def test_record_ids_differ_with_the_template_headers():
    """Found in review: the id hashed the source, URL, date and text, not
    WARC-Template-Pagelets-Removed nor WARC-Template-Token-Fraction, so one page
    cleaned with and without a template pagelet that holds no words (an image
    link: the same text) gave two different records under one WARC-Record-ID."""
    def conversion_id(page):
        buf = io.BytesIO()
        write_wet(buf, "x", [page])
        return [r.rec_headers.get_header("WARC-Record-ID") for r in ArchiveIterator(io.BytesIO(buf.getvalue()))
                if r.rec_type == "conversion"][0]

    base = conversion_id(PAGES[0])
    assert conversion_id({**PAGES[0], "n_template_pagelets": 4}) != base
    assert conversion_id({**PAGES[0], "template_token_fraction": 0.5}) != base
    assert conversion_id({**PAGES[0], "template_token_fraction": 0.25000001}) == base  # as the header says it


def test_create_output_writes_hadoops_local_uri_to_that_path(tmp_path, monkeypatch):
    """Found in review: the WET tasks are given the folder as Hadoop qualifies it
    (`file:/abs/path`, one slash), which create_output took for a relative path
    and wrote to ./file:/abs/path in the task's working folder."""
    from templatemine.warc.inputs import create_output

    monkeypatch.chdir(tmp_path)
    for uri, name in ((f"file:{tmp_path}/one/a.gz", "one"), (f"file://{tmp_path}/two/b.gz", "two"),
                      (f"file://localhost{tmp_path}/three/c.gz", "three")):
        with create_output(uri) as fh:
            fh.write(b"x")
        assert (tmp_path / name).is_dir() and [p.read_bytes() for p in (tmp_path / name).iterdir()] == [b"x"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one", "three", "two"]  # no ./file:


def test_create_output_writes_other_schemes_through_pyarrow_or_names_the_path(tmp_path, monkeypatch):
    """Found in review: any scheme but those listed in REMOTE_SCHEMES was written
    as a local path (viewfs://cluster/out/wet/x to ./viewfs:/cluster/out/wet/x on
    each executor). viewfs goes to pyarrow's HDFS client as hdfs does; a scheme
    pyarrow has no file system for is an error naming the path, and no file."""
    from pyarrow import fs

    from templatemine.warc import inputs

    opened = []

    class Recording:
        @staticmethod
        def from_uri(uri):
            opened.append(uri)
            return Recording(), uri.split("://", 1)[1].split("/", 1)[1]

        def open_output_stream(self, inner):
            opened.append(inner)
            return io.BytesIO()

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(fs, "FileSystem", Recording)
    inputs.create_output("viewfs://cluster/out/wet/part-00000.warc.wet.gz").write(b"x")
    assert opened == ["viewfs://cluster/out/wet/part-00000.warc.wet.gz", "out/wet/part-00000.warc.wet.gz"]
    for uri in ("wasb://c@acct.blob.core.windows.net/out/wet/p.gz", "alluxio://m:19998/out/wet/p.gz"):
        for call in (inputs.create_output, inputs.check_output):
            with pytest.raises(OSError, match=f"^{re.escape(uri)}: cannot write files from Python tasks to "
                                              r"\w+:// \(local paths, file:, hdfs://.*viewfs://"):
                call(uri)
    inputs.check_output(f"file:{tmp_path}/x")
    inputs.check_output("s3a://bucket/out/wet")
    assert opened[2:] == [] and not list(tmp_path.iterdir())
