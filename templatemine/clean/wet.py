"""WET files: the clean text as WARC `conversion` records.

Common Crawl publishes a page's extracted text as a WET file: WARC records of
type `conversion`, `Content-Type: text/plain`, whose `WARC-Refers-To` names the
`response` record the text came from. Users already read these (warcio,
FastWARC, cc-pyspark), so templatemine writes its template-free text the same
way: OUT/wet/part-NNNNN.warc.wet.gz, one gzip member per record, a `warcinfo`
record first.

Record ids are UUID-5 of the source record (or the URL and capture time when
the source, an ARC file, has none), the text's digest and the template headers
(WARC-Template-Token-Fraction, WARC-Template-Pagelets-Removed); the
warcinfo's, of the file name and the first record's id. So the same pages give
the same bytes (a retried task, a cluster run beside a local one:
tests/cluster), and records that differ (another text of one capture, after
templates changed; the same text with other template headers, when a template
pagelet without words was removed or not; another file's warcinfo) do not
share a WARC-Record-ID.

The files are written by Python tasks, not by Spark, to the folder the driver
qualified (`wet_folder`): on an executor a path without a scheme would be its
local disk, where Spark writes the tables to fs.defaultFS (HDFS on YARN).
"""

from __future__ import annotations

import hashlib
import io
import itertools
import uuid
from typing import BinaryIO, Iterable, Iterator

from warcio.warcwriter import WARCWriter

from templatemine import __version__

_NAMESPACE = uuid.UUID("4d2b1c3e-7a8f-5e60-9b1d-2f3a4c5d6e7f")
WET_ROW_SCHEMA = "file string, records long, bytes long"
EPOCH = "1970-01-01T00:00:00Z"  # WARC-Date of a capture whose time is unknown


def _record_id(*parts: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(_NAMESPACE, chr(0).join(parts))}>"


def _template_headers(page: dict) -> dict:
    """What a conversion record says of the template text removed: part of
    its id too (_conversion_id)."""
    return {"WARC-Template-Token-Fraction": f"{page['template_token_fraction']:.4f}",
            "WARC-Template-Pagelets-Removed": str(page["n_template_pagelets"])}


def _conversion_id(page: dict, text: bytes) -> str:
    """Of the source, URL, date, text and the template headers: two records
    that differed in WARC-Template-Pagelets-Removed alone (a template pagelet
    without words, an image link, removes no text) or in the token fraction
    alone had one id."""
    template = _template_headers(page)
    return _record_id("conversion", page["warc_record_id"], page["url"], page["warc_date"],
                      hashlib.sha1(text).hexdigest(), template["WARC-Template-Token-Fraction"],
                      template["WARC-Template-Pagelets-Removed"])


def wet_folder(spark, path: str) -> str:
    """The URI the WET tasks write PATH's files under: PATH as Spark's writers
    resolve it (output.qualified: `file:/...` on local disk, fs.defaultFS for a
    path without a scheme), checked writable from Python first (an OSError
    naming it, before clean moves any table into OUT). `file:` went to
    `./file:/...` and `viewfs://` to `./viewfs:/...` on each executor, and a
    path without a scheme on YARN to the executors' disks, while clean_pages
    went to HDFS."""
    from templatemine.tables.output import qualified
    from templatemine.warc.inputs import check_output

    folder = qualified(spark, path)
    check_output(folder)
    return folder


def write_wet(fh: BinaryIO, filename: str, pages: Iterable[dict]) -> int:
    """Write a warcinfo record, then one conversion record per page (dicts
    with url, warc_date, warc_record_id ("" for none: an ARC source),
    clean_text, template_token_fraction, n_template_pagelets, and optionally
    target_uri, the URI the source record captured, which the conversion
    record's WARC-Target-URI repeats as Common Crawl's WET files do; without
    it, the normalised url); return the number of conversion records."""
    pages = iter(pages)
    first = next(pages, None)
    writer = WARCWriter(fh, gzip=True, warc_version="WARC/1.0")
    info = writer.create_warcinfo_record(filename, {
        "software": f"templatemine {__version__}",
        "description": "page text with site templates removed (Bar-Yossef & Rajagopalan 2002)",
        "format": "WARC File Format 1.0",
    })
    opening = _conversion_id(first, first["clean_text"].encode("utf-8")) if first is not None else ""
    info.rec_headers.replace_header("WARC-Record-ID", _record_id("warcinfo", filename, opening))
    info.rec_headers.replace_header("WARC-Date", EPOCH)
    writer.write_record(info)
    n = 0
    for page in itertools.chain([first] if first is not None else [], pages):
        text = page["clean_text"].encode("utf-8")
        date = page["warc_date"]
        source = page["warc_record_id"]
        headers = {
            "WARC-Date": date,
            "WARC-Record-ID": _conversion_id(page, text),
            "Content-Type": "text/plain",
            **_template_headers(page),
        }
        if source:
            headers["WARC-Refers-To"] = source
        record = writer.create_warc_record(page.get("target_uri") or page["url"], "conversion",
                                           payload=io.BytesIO(text),
                                           length=len(text), warc_content_type="text/plain",
                                           warc_headers_dict=headers)
        writer.write_record(record)
        n += 1
    return n


def wet_partitions(batches: Iterator, out_dir: str) -> Iterator:
    """mapInPandas body: write this partition's pages (sorted by URL) to
    OUT_DIR/part-<partition>.warc.wet.gz (OUT_DIR from `wet_folder`: a URI
    the task need not resolve) and yield one row (file, records,
    bytes); a partition without pages writes no file and yields no row (the
    pages are spread over the files by a hash of the URL: with few pages per
    file some get none, and a file of a warcinfo record alone is no WET file)."""
    import itertools

    import pandas as pd
    from pyspark import TaskContext

    from templatemine.warc.inputs import create_output

    rows = (row for batch in batches for row in batch.to_dict("records"))
    first = next(rows, None)
    if first is None:
        return
    name = f"part-{TaskContext.get().partitionId():05d}.warc.wet.gz"
    path = f"{out_dir.rstrip('/')}/{name}"
    with create_output(path) as fh:
        counter = _CountingWriter(fh)
        n = write_wet(counter, name, itertools.chain([first], rows))
    yield pd.DataFrame({"file": [path], "records": [n], "bytes": [counter.written]})


class _CountingWriter(io.RawIOBase):
    def __init__(self, fh: BinaryIO):
        self.fh = fh
        self.written = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.fh.write(data)
        self.written += len(data)
        return len(data)
