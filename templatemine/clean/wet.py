"""WET files: the clean text as WARC `conversion` records.

Common Crawl publishes a page's extracted text as a WET file: WARC records of
type `conversion`, `Content-Type: text/plain`, whose `WARC-Refers-To` names the
`response` record the text came from. Users already read these (warcio,
FastWARC, cc-pyspark), so templatemine writes its template-free text the same
way: OUT/wet/part-NNNNN.warc.wet.gz, one gzip member per record, a `warcinfo`
record first.

Record ids are UUID-5 of the source record (or the URL and capture time when
the source, an ARC file, has none), so a retried task writes the same bytes.
"""

from __future__ import annotations

import io
import uuid
from datetime import datetime, timezone
from typing import BinaryIO, Iterable, Iterator

from warcio.warcwriter import WARCWriter

from templatemine import __version__

_NAMESPACE = uuid.UUID("4d2b1c3e-7a8f-5e60-9b1d-2f3a4c5d6e7f")
WET_ROW_SCHEMA = "file string, records long, bytes long"


def _record_id(*parts: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(_NAMESPACE, chr(0).join(parts))}>"


def _warc_date(value) -> str:
    if value is None or value != value:  # null, or pandas' NaT (not equal to itself)
        return "1970-01-01T00:00:00Z"
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


def _str(value) -> str:
    """A string column's value: pandas gives None, or NaN when a batch's column is all null."""
    return value if isinstance(value, str) else ""


def write_wet(fh: BinaryIO, filename: str, pages: Iterable[dict]) -> int:
    """Write a warcinfo record, then one conversion record per page (dicts
    with url, fetch_time, warc_record_id, clean_text, template_token_fraction,
    n_template_pagelets); return the number of conversion records."""
    writer = WARCWriter(fh, gzip=True, warc_version="WARC/1.0")
    info = writer.create_warcinfo_record(filename, {
        "software": f"templatemine {__version__}",
        "description": "page text with site templates removed (Bar-Yossef & Rajagopalan 2002)",
        "format": "WARC File Format 1.0",
    })
    info.rec_headers.replace_header("WARC-Record-ID", _record_id("warcinfo", filename))
    info.rec_headers.replace_header("WARC-Date", "1970-01-01T00:00:00Z")
    writer.write_record(info)
    n = 0
    for page in pages:
        text = _str(page["clean_text"]).encode("utf-8")
        date = _warc_date(page["fetch_time"])
        source = _str(page.get("warc_record_id"))
        headers = {
            "WARC-Date": date,
            "WARC-Record-ID": _record_id("conversion", source or "", page["url"], date),
            "Content-Type": "text/plain",
            "WARC-Template-Token-Fraction": f"{page['template_token_fraction']:.4f}",
            "WARC-Template-Pagelets-Removed": str(page["n_template_pagelets"]),
        }
        if source:
            headers["WARC-Refers-To"] = source
        record = writer.create_warc_record(page["url"], "conversion", payload=io.BytesIO(text),
                                           length=len(text), warc_content_type="text/plain",
                                           warc_headers_dict=headers)
        writer.write_record(record)
        n += 1
    return n


def wet_partitions(batches: Iterator, out_dir: str) -> Iterator:
    """mapInPandas body: write this partition's pages (sorted by URL) to
    OUT_DIR/part-<partition>.warc.wet.gz and yield one row (file, records, bytes)."""
    import pandas as pd
    from pyspark import TaskContext

    from templatemine.warc.inputs import create_output

    name = f"part-{TaskContext.get().partitionId():05d}.warc.wet.gz"
    path = f"{out_dir.rstrip('/')}/{name}"

    def rows():
        for batch in batches:
            yield from batch.to_dict("records")

    with create_output(path) as fh:
        counter = _CountingWriter(fh)
        n = write_wet(counter, name, rows())
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
