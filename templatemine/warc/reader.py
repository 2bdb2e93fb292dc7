"""Stream the records of one WARC/ARC file, surviving the damage real crawls have.

warcio parses the records (strictly: a file is WARC or ARC by its first record,
so garbage inside a WARC file is an error, not an ARC record); this module adds
what a crawl-scale reader needs:
- every record comes out as a `RawRecord` with its file and byte offset, the
  payload read only for HTML candidates and never beyond `max_payload_bytes`
  (memory per task is bounded whatever the file size);
- a record that fails to parse is reported as `malformed` (file, offset, error)
  and reading *resumes at the next record boundary* (the next gzip member that
  inflates to a record header, or the next record line in an uncompressed file
  or a gzip stream: `WARC/`, or an ARC v1 header line, by the format of the
  file's first record), so good records after a bad one are kept;
- a file compressed as one gzip stream instead of one member per record (which
  warcio refuses), and a record that gzip members split in the middle ("wrong
  chunking"), are read on as one continuous decompressed stream. A record read
  that way gets the offset of the gzip member it starts in when it starts at
  the member's first byte (seekable, like any other), else that offset plus
  its rank among the records starting inside the member times RANK_STRIDE
  (2^40, more bytes than any WARC file has): a number no other record of the
  file has, which records_at finds by reading the file (its `detail` says the
  record was read across members). After a record that fails to parse there,
  inflating restarts at the newest copy of the inflater's state taken before
  it (one every 64 KiB of stream), not at its member's first byte: a file
  gzipped as one member with many bad records is read in linear time;
- a record without a valid length (no Content-Length, which warcio reads to
  the end of the stream or its gzip member; or one that is no number, which
  warcio reads as empty) is `malformed`, and the records after it are kept;
- in stream mode, a gzip member whose first bytes start a record is a place
  to resume after a failure even when junk with no line end ends the member
  before it; an ARC line that such junk is glued to (its URL starts with no
  ARC scheme, and a member begins inside it) is `malformed`, and the record
  is read again at its member;
- in an uncompressed file or a stream, a record whose block does not end
  where its length says (warcio skips the line after it with a warning only),
  that the data ends inside of, or after which warcio fails, is looked at
  again (`_block_unended`, `check_unended` in `_records`): when a record
  starts inside its block and runs, with those after it by their lengths,
  past the block's end (`_runs_past`; a record quoted in a page does not), it
  swallowed them: it is `malformed` and they are read; a file that ends inside
  a record's headers, which warcio takes for its end, gives that record a
  `malformed` row; the record right after a block whose blank lines are
  missing (`</html>WARC/1.0`, ARC with none) is read from the block's end
  (after padding), and what lies between the block and the next record found
  (an uncompressed file) is a `malformed` row;
- a response whose URI's scheme is in capitals (`HTTP://`) has its HTTP
  headers parsed, which warcio skips;
- a payload's transfer and content coding are decoded whatever their
  spelling (`Chunked`, `GZIP`, `x-gzip`: warcio compares them as spelled),
  and `br` by this module when the `brotli` package is installed (warcio
  1.8.1 fails on brotli 1.2; `_payload`). A body not in the coding its header
  says is read as is, its detail saying so (Content-Type and sniffing then
  decide, as before), and a `br` body without brotli installed that does not
  sniff as HTML is `malformed`, its detail naming the coding;
  a compressed body cut short keeps what decoded, and its detail says so (one
  with nothing decoded, or a gzip body that does not decode at all, is
  `malformed`); bytes of the block after the coded body ends (a CRLF after the
  last chunk, padding) are no sign of a record cut short;
- damaged compressed data (a gzip member cut short or corrupt, garbage between
  members or after the last one), met in either mode, is one `malformed` row
  (the record it cuts, or the damage itself where it cuts none), and reading
  resumes at the next gzip member that starts a record: the records after a
  torn member are kept, none is counted twice (a gzip member that inflates to
  nothing or blank lines, like BGZF's EOF block, is no damage; a record that
  members split is read across them whatever its type). In stream mode, each
  record that the zlib call meeting the damage inflated (its output, which zlib does
  not return, inflated again in small pieces) is a `malformed` row too.

Nothing here imports pyspark: `iter_records` is the pure per-file function that
the Spark stage calls inside `mapInArrow`.
"""

from __future__ import annotations

import bisect
import functools
import io
import logging
import os
import re
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import BufferedReader, ChunkedDataReader
from warcio.statusandheaders import StatusAndHeadersParser

try:  # declared (pyproject.toml); a broken install without it still reads every other record
    import brotli
except ImportError:  # pragma: no cover - depends on the environment
    brotli = None
# brotli >= 1.2 bounds what one call inflates (output_buffer_limit); before it, the input is fed in 1 KiB
# pieces (which bounds ordinary bodies, not a crafted bomb: install brotli >= 1.2)
_BROTLI_BOUNDED = brotli is not None and hasattr(brotli.Decompressor, "can_accept_more_data")

log = logging.getLogger(__name__)

GZIP_MAGIC = b"\x1f\x8b\x08"
HTML_TYPES = ("text/html", "application/xhtml+xml", "application/vnd.wap.xhtml+xml")
# Content types that say nothing about the payload: decide by sniffing it.
AMBIGUOUS_TYPES = ("", "text/plain", "application/octet-stream", "unknown/unknown", "application/unknown", "*/*")
# an ARC v1 record's first line, as warcio splits it (from the right: the URL may hold spaces):
# URL IP-address Archive-date Content-type Archive-length (the scheme in any case, as warcio takes it)
_ARC_LINE = rb"(?i:https?|ftp|dns|filedesc):[^\r\n]* [^ \r\n]* \d{8,14} [^ \r\n]* \d+\r?\n"
_ARC_PREFIXES = (b"http://", b"https://", b"dns:", b"ftp://", b"filedesc:")
# a line that starts a record: where stream mode and uncompressed files resume after a failure,
# by the file's format (None: not known, its start damaged)
_RECORD_LINES = {"warc": re.compile(rb"^WARC/", re.M), "arc": re.compile(rb"^" + _ARC_LINE, re.M),
                 None: re.compile(rb"^(?:WARC/|" + _ARC_LINE + rb")", re.M)}
_LINE_NEEDLES = {"warc": re.compile(rb"\n(?=WARC/)"), "arc": re.compile(rb"\n(?=(?i:https?://|ftp://|dns:|filedesc:))"),
                 None: re.compile(rb"\n(?=WARC/|(?i:https?://|ftp://|dns:|filedesc:))")}
_SNIFF_MARKERS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<title", b"<meta", b"<div", b"<p>", b"<a ", b"<table")
_SCAN_BLOCK = 1 << 20
RANK_STRIDE = 1 << 40  # stream mode: offset = member offset + rank * RANK_STRIDE (see the module docstring)
_HTTP_PARSER = StatusAndHeadersParser(["HTTP/1.0", "HTTP/1.1"], verify=False)  # as warcio's ArchiveIterator has it


class TruncatedRecord(ValueError):
    """The record's block is shorter than its Content-Length says."""


@dataclass
class RawRecord:
    """One record read from a WARC/ARC file; `outcome` is set when the reader
    already knows the record is not a page (otherwise None: a candidate)."""

    warc_file: str
    offset: int
    record_type: str | None
    target_uri: str | None = None
    warc_date: str | None = None
    http_status: int | None = None
    content_type: str | None = None
    payload: bytes | None = None
    outcome: str | None = None
    detail: str = ""
    record_id: str | None = None  # WARC-Record-ID
    location: str | None = None  # a 3xx response's Location header, as written


def sniff_html(head: bytes) -> bool:
    """True if the first bytes of a payload look like HTML (WHATWG-style markers)."""
    start = head[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return any(marker in start for marker in _SNIFF_MARKERS)


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def _candidate(rec, path: str, offset: int, max_payload_bytes: int) -> RawRecord:
    rec_type = rec.rec_type
    headers = rec.rec_headers
    raw = RawRecord(
        path,
        offset,
        rec_type,
        headers.get_header("WARC-Target-URI") or headers.get_header("uri"),  # WARC, or ARC
        headers.get_header("WARC-Date") or headers.get_header("archive-date"),
        record_id=headers.get_header("WARC-Record-ID"),
    )
    if rec_type != "response":
        raw.outcome = "non_response"
        return raw
    http = rec.http_headers
    uri = raw.target_uri or ""
    if http is None and uri[:6].lower() in ("http:/", "https:") and not uri.startswith(("http:", "https:")):
        # warcio parses HTTP headers only under a lower-case scheme (`HTTP://...` is a URI too)
        try:
            http = rec.http_headers = _HTTP_PARSER.parse(rec.raw_stream)
        except Exception:  # no HTTP message there after all: a response without HTTP headers
            http = None
    if http is None:
        raw.outcome = "non_response"
        raw.detail = "response record without HTTP headers"
        return raw
    try:
        raw.http_status = int(http.get_statuscode() or 0)
    except ValueError:
        raw.http_status = 0
    if not 0 <= raw.http_status <= 999:  # "99999999999" would not fit the tables' int column
        raw.http_status = 0
    raw.content_type = http.get_header("Content-Type")
    if not 200 <= raw.http_status < 300:
        raw.outcome = "non_2xx"
        if 300 <= raw.http_status < 400:  # where the URL redirects (tables/targets.py)
            raw.location = http.get_header("Location")
        return raw
    media = _media_type(raw.content_type)
    if media not in HTML_TYPES and media not in AMBIGUOUS_TYPES:
        raw.outcome = "non_html"
        raw.detail = media
        return raw
    payload, coding_note, undecoded = _payload(rec.raw_stream, http, max_payload_bytes)
    if len(payload) > max_payload_bytes:
        raw.outcome = "oversized"
        raw.detail = f"payload over {max_payload_bytes} bytes"
        return raw
    missing = _unread(rec.raw_stream)
    if missing:  # the record ends before its Content-Length: truncated or split
        raise TruncatedRecord(f"record ends {missing} bytes before its declared Content-Length")
    if undecoded:  # a body in a content coding that does not decode, and no HTML as it is
        log.warning("malformed record in %s at offset %d: %s", path, offset, coding_note)
        raw.outcome = "malformed"
        raw.detail = coding_note
        return raw
    raw.detail = coding_note
    if not payload.strip():
        raw.outcome = "empty"
        return raw
    if not sniff_html(payload):
        if media in AMBIGUOUS_TYPES or payload[:4] in (b"%PDF", b"\x89PNG", b"GIF8") or b"\x00" in payload[:512]:
            raw.outcome = "non_html"
            raw.detail = f"{media or 'no content type'}, payload does not sniff as HTML" + \
                (f"; {coding_note}" if coding_note else "")
            return raw
    raw.payload = payload
    return raw


def _unread(raw_stream) -> int:
    """How many bytes of the block are missing: its length's rest that the
    data does not hold. A decoder stops at the end of what it decodes (a
    chunked body's last chunk, a gzip body's first member) with bytes of the
    block left (a CRLF after the last chunk, padding, another member): those
    are read first, and only a block the data ends inside is missing bytes."""
    while getattr(raw_stream, "limit", 0) and raw_stream.read(1 << 16):
        pass
    return getattr(raw_stream, "limit", 0)


def _coding(value: str | None) -> str:
    """A Content-Encoding or Transfer-Encoding value as warcio expects it:
    lower case, trimmed, `x-gzip` as `gzip` (RFC 9110, 8.4.1.3). warcio
    compares both as spelled: `Chunked` stayed chunked, `x-gzip` compressed."""
    value = (value or "").strip().lower()
    return "gzip" if value == "x-gzip" else value


def _payload(raw_stream, http, max_payload_bytes: int) -> tuple[bytes, str, bool]:
    """Up to `max_payload_bytes` + 1 bytes of the payload, its transfer and
    content coding decoded (warcio's `content_stream()`, but with the header
    values normalised by `_coding`, and `br` decoded here: warcio 1.8.1 sets
    an attribute brotli 1.2's decompressor does not have). Returns (payload,
    note, undecoded): a note for the record's detail when the body is not in
    the coding its header says (read as is) or its compressed data ends early
    (what decoded is kept); `undecoded` when it does not decode from its first
    byte and is no HTML as it is either (the caller reports it `malformed`)."""
    encoding = _coding(http.get_header("Content-Encoding"))
    chunked = _coding(http.get_header("Transfer-Encoding")).rsplit(",", 1)[-1].strip() == "chunked"
    if encoding not in ("gzip", "deflate", "br"):
        encoding = ""  # identity, or a coding warcio does not decode: the body as it is
    # compressed bytes there to decode: an empty body (`0\r\n\r\n` chunked, a stray CRLF after it) is none
    has_body = getattr(raw_stream, "limit", 1) > (7 if chunked else 0)
    if chunked:
        stream = ChunkedDataReader(raw_stream, decomp_type=encoding if encoding in ("gzip", "deflate") else None)
    elif encoding in ("gzip", "deflate"):
        stream = BufferedReader(raw_stream, decomp_type=encoding)
    else:
        stream = raw_stream
    notes = []
    if encoding == "br":
        payload, note, undecoded = _unbrotli(stream, max_payload_bytes)
        if note:
            notes.append(note)
    else:
        payload, undecoded = stream.read(max_payload_bytes + 1), False
    if getattr(stream, "not_chunked", False):
        notes.insert(0, "Transfer-Encoding chunked, but the body is not chunked: read as is")
    if encoding in ("", "br"):
        return payload, "; ".join(notes), undecoded
    if stream.decompressor is None and encoding == "gzip" and payload.startswith(GZIP_MAGIC[:2]):
        # gzip data after all (a small body inflates in one call, so damage anywhere in it fails the
        # first): it does not decode, and as it is it is no page
        notes.append("Content-Encoding gzip: the compressed body is corrupt (it does not decode)")
        return payload, "; ".join(notes), True
    if stream.decompressor is None:  # warcio: it failed on its first bytes; read as is, as before
        # (Content-Type and sniffing decide then: a crawl that stored bodies decoded and kept the
        # header has text/html pages opening with a long script, no HTML marker in the first KiB;
        # they were called malformed for a day, found in review)
        notes.append(f"Content-Encoding {encoding}, but the body is not {encoding}-compressed: read as is")
    elif payload and len(payload) <= max_payload_bytes and not getattr(stream.decompressor, "eof", True):
        notes.append(f"Content-Encoding {encoding}: the compressed body is truncated or corrupt "
                     f"(the {len(payload)} bytes decoded kept)")
    elif not payload and has_body and not getattr(stream.decompressor, "eof", True):
        # cut (or damaged) before its first decoded byte: not an empty page
        notes.append(f"Content-Encoding {encoding}: the compressed body is truncated or corrupt (nothing decoded)")
        return payload, "; ".join(notes), True
    return payload, "; ".join(notes), False


def _unbrotli(stream, max_payload_bytes: int) -> tuple[bytes, str, bool]:
    """`_payload` for `Content-Encoding: br`: the compressed body read in
    blocks, never inflated much past `max_payload_bytes` (a small body can
    inflate to gigabytes), and read to its end (its record's length checked
    after). A body that is not brotli from its first byte is read as is, with
    a note (warcio's way with gzip); without the brotli module, a body that
    does not sniff as HTML does not decode (`undecoded`)."""
    limit = max_payload_bytes + 1
    if brotli is None:
        body = stream.read(limit)
        if sniff_html(body):
            return body, "Content-Encoding br, the brotli module is not installed: read as is", False
        return body, "Content-Encoding br: the body could not be decoded: the brotli module is not installed", True
    decompressor = brotli.Decompressor()
    finished = getattr(decompressor, "is_finished", lambda: False)
    out: list[bytes] = []
    size = 0
    read: list[bytes] = []  # the body as it is, while nothing has decoded (for reading it as is)
    error = None
    while size < limit:
        block = stream.read(1 << 16)
        if not block:
            break
        if not size and sum(map(len, read)) < limit:
            read.append(block)
        if error is not None or finished():
            continue  # (read to the end of the body: bytes after the brotli data are ignored)
        try:
            if _BROTLI_BOUNDED:
                piece = decompressor.process(block, output_buffer_limit=limit - size)
                while True:
                    out.append(piece)
                    size += len(piece)
                    if size >= limit or decompressor.can_accept_more_data() or not piece:
                        break
                    piece = decompressor.process(b"", output_buffer_limit=limit - size)
            else:
                for i in range(0, len(block), 1024):
                    piece = decompressor.process(block[i:i + 1024])
                    out.append(piece)
                    size += len(piece)
                    if size >= limit:
                        break
        except brotli.error as exc:
            error = exc
    payload = b"".join(out)
    if size >= limit:
        return payload, "", False  # oversized: the caller says so
    if error is not None and not size:  # not brotli from its first byte: read as is
        return b"".join(read)[:limit], "Content-Encoding br, but the body is not br-compressed: read as is", False
    if not payload and any(read) and not finished():  # cut before its first decoded byte: not an empty page
        return payload, "Content-Encoding br: the compressed body is truncated or corrupt (nothing decoded)", True
    if error is not None or (payload and not finished()):
        return payload, (f"Content-Encoding br: the compressed body is truncated or corrupt "
                         f"(the {size} bytes decoded kept)"), False
    return payload, "", False


def _is_record_start(head: bytes, fmt: str | None = None) -> bool:
    """`head` (a record's first bytes) starts a WARC record, or an ARC record
    whose first line has ARC's five fields (when `head` holds the whole line);
    with `fmt` ("warc", "arc": the file's format), only a record of that format."""
    if head.startswith(b"WARC/"):
        return fmt != "arc"
    if fmt == "warc" or not head[:9].lower().startswith(_ARC_PREFIXES):
        return False
    return b"\n" not in head or _RECORD_LINES["arc"].match(head) is not None


def _file_format(fh: BinaryIO, gzipped: bool) -> str | None:
    """"warc" or "arc" by the file's first record, as warcio decides it (None:
    the start is damaged). Resyncing looks for records of that format only: a
    WARC payload that quotes an ARC header line is no place to resume."""
    head = _head(fh, 0, gzipped, 64)
    if head is None:
        return None
    head = head.lstrip(b"\r\n")
    return "warc" if head.startswith(b"WARC/") else "arc" if head[:9].lower().startswith(_ARC_PREFIXES) else None


def find_next_record(fh: BinaryIO, start: int, gzipped: bool, fmt: str | None = None) -> int | None:
    """Offset of the next plausible record start (of format `fmt`, if given)
    after byte `start`: a gzip member that inflates to one, or a record's line
    (`_starts_within`) whose line end before it lies at or after `start`."""
    if not gzipped:
        return next(_starts_within(fh, start + 1, None, fmt), None)
    fh.seek(start)
    base = start
    tail = b""
    needle = re.compile(re.escape(GZIP_MAGIC))
    while True:
        block = fh.read(_SCAN_BLOCK)
        if not block:
            return None
        data = tail + block
        data_base = base - len(tail)
        for found in needle.finditer(data):
            if data_base + found.start() >= start and _plausible_at(fh, data_base + found.start(), True, fmt):
                return data_base + found.start()
        tail = data[-15:]  # longer than the needle
        base += len(block)
        fh.seek(base)


def _peek(fh: BinaryIO, pos: int, n: int) -> bytes:
    """`n` bytes at `pos`, the stream left where it was (warcio may be reading it)."""
    here = fh.tell()
    try:
        fh.seek(pos)
        return fh.read(n)
    finally:
        fh.seek(here)


def _head(fh: BinaryIO, pos: int, gzipped: bool, n: int) -> bytes | None:
    """The first bytes of what starts at byte `pos`: up to 4 KiB, or the first
    `n` a gzip member there inflates to (None: no member inflates there)."""
    chunk = _peek(fh, pos, 4096)
    if not gzipped:
        return chunk
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(chunk, n)
    except zlib.error:
        return None


def _plausible_at(fh: BinaryIO, pos: int, gzipped: bool, fmt: str | None = None) -> bool:
    head = _head(fh, pos, gzipped, 1024)  # an ARC line, mostly
    return head is not None and _is_record_start(head, fmt)


class _Reading:
    """Book-keeping of one file's reading: what has been reported."""

    def __init__(self, fmt: str | None = None):
        self.fmt = fmt  # the file's format ("warc", "arc"; None: not known): where to resync
        self.yielded = 0
        self.last_offset = -1
        self.last_malformed = False  # the last row handed out is `malformed`
        self.broken_member = -1  # offset of a record reported as malformed for its damaged member
        self.checked: tuple[int, int | None] = (-1, None)  # the last member _records inflated, and its end
        self.record_end = -1  # stream mode: where the last WARC record begun ends, by its header
        self.stopped = -1  # where the last run that ended quietly would have read its next record
        self.resync_from = -1  # after a record whose length is wrong: where to look for the next record ...
        self.block_end = -1  # ... and where its block ends by its length


def _malformed(path: str, offset: int, rec_type: str | None, exc_or_text, note: str = "") -> RawRecord:
    text = exc_or_text if isinstance(exc_or_text, str) else f"{type(exc_or_text).__name__}: {exc_or_text}"
    detail = " ".join(text.split())[:500] + (f"; {note}" if note else "")
    log.warning("malformed record in %s at offset %d: %s", path, offset, detail)
    return RawRecord(path, offset, rec_type, outcome="malformed", detail=detail)


_SPLIT = "record continues past its gzip member"
_NO_LENGTH = "record without a valid length"
_GLUED = "record line glued to junk before it"
_ARC_SCHEMES = tuple(p.decode() for p in _ARC_PREFIXES)


def _header_unusable(rec, position: int = -1, starts: list[int] | None = None) -> tuple[str, str]:
    """What is wrong with a record's header ("", "": nothing): its length; or,
    in stream mode (`position`: the record's stream position, `starts`: where
    gzip members begin), an ARC line glued to junk with no line end at the end
    of the member before. warcio splits an ARC line from the right (the URL may
    hold spaces), so the junk becomes the start of the URL: a URL that starts
    with no ARC scheme and inside which a gzip member begins is that, and the
    record is read again at its member."""
    name = "Content-Length" if rec.format == "warc" else "length"
    value = rec.rec_headers.get_header(name)
    if value is None:
        return _NO_LENGTH, f"no {name} header"
    if not value.strip().isdigit():
        return _NO_LENGTH, f"{name}: {value[:40]!r}"
    if starts and rec.format.startswith("arc"):
        uri = rec.rec_headers.get_header("uri") or ""
        k = bisect.bisect_right(starts, position)
        if not uri.lower().startswith(_ARC_SCHEMES) and k < len(starts) and \
                starts[k] <= position + len(uri.encode("utf-8", "surrogateescape")):
            return _GLUED, f"a gzip member starts {starts[k] - position} bytes into its URL {uri[:60]!r}"
    return "", ""


_CUT = "the data ends inside the record's block"
_UNENDED = "record not followed by the blank lines that end one"
_SWALLOWED = "record whose length runs into the records after it"


def _blank_line(head: bytes) -> tuple[int, int] | None:
    """Where a header ends in `head`, as warcio reads one (the first line that
    is blank): the index of the line end before it and the index after it."""
    found = [(i, i + k) for i, k in ((head.find(b"\n\n"), 2), (head.find(b"\n\r\n"), 3)) if i != -1]
    return min(found) if found else None


def _record_stop(get, p: int) -> int | None:
    """Where the record at `p` ends by the length its header gives (`get(p,
    n)`: n bytes at p; a header of at most 16 KiB); None: no record header
    there with a length."""
    head = get(p, 1 << 14)
    if head.startswith(b"WARC/"):
        blank = _blank_line(head)
        found = _WARC_LENGTH.search(head, 0, blank[0] + 1) if blank else None  # in the header only
        return p + blank[1] + int(found.group(1)) if found else None
    line = head.find(b"\n")
    length = head[:line].rsplit(b" ", 1)[-1].strip() if line != -1 else b""
    return p + line + 1 + int(length) if length.isdigit() else None


def _runs_past(get, p: int, end: int, fmt: str | None = None, to_end: bool = False,
               lands: bool = False) -> tuple[bool, int]:
    """Whether the record at `p`, and those after it by their lengths (blank
    lines between), reach past `end` with one of them: a block that ends at
    `end` cut it, so that block's length ran into them. A chain that stops
    before `end` (no record where one ends: a record quoted in a page) does
    not; with `to_end` (that block's length is known to be wrong), one that
    ends where it ends (blank lines apart) does too; with `lands` (`get` reads
    past `end`), the record that runs past it must end on a record or the end
    of the data (a quoted header's length lands anywhere). And the start of
    the chain's last record (no record before it starts a new chain)."""
    for _ in range(1 << 16):
        stop = _record_stop(get, p)
        if stop is None:  # no header with a length: cut by the end of the data (a payload) when it ends there
            head = get(p, 1 << 14)
            return len(head) < 1 << 14 and p + len(head) >= end and _blank_line(head) is None and (
                head.startswith(b"WARC/") or b"\n" not in head), p
        gap = get(stop, 64)
        after = stop + len(gap) - len(gap.lstrip(b"\r\n"))
        if stop > end:  # (with `lands`: it ends inside the data, on a record or the data's end)
            return not lands or bool(get(stop - 1, 1)) and (
                not get(after, 1) or _is_record_start(get(after, 4096), fmt)), p
        if after >= end:
            return to_end, p
        if _cut_record_line(get(after, min(end - after, 4096)), fmt):
            return True, p  # a record's first line that `end` cuts
        if not _is_record_start(get(after, 4096), fmt):
            return False, p
        p = after
    return False, p


def _payload_record(data: bytes, fmt: str | None, to_end: bool = False) -> int | None:
    """Where a record starts in a payload (a line after its first) whose chain
    of records runs past its end (`_runs_past`), or the first bytes of a
    record's first line end it; None: none does. Linear: a start inside a
    chain already walked starts none."""
    starts = (m.start() + 1 for m in _LINE_NEEDLES[fmt].finditer(data)
              if _is_record_start(data[m.start() + 1:m.start() + 4097], fmt))
    found = _first_running_past(starts, lambda p, n: data[p:p + n], len(data), fmt, to_end)
    if found is not None:
        return found
    last = data.rfind(b"\n") + 1
    return last if 0 < last < len(data) and _cut_record_line(data[last:], fmt) else None


def _first_running_past(starts: Iterator[int], get, end: int, fmt: str | None, to_end: bool,
                        lands: bool = False) -> int | None:
    """The first of `starts` (record starts, in order) whose chain of records
    runs past `end` (`_runs_past`); None: none. Linear: a start inside a chain
    already walked starts none."""
    walked = -1
    for at in starts:
        if at > walked:
            hit, walked = _runs_past(get, at, end, fmt, to_end, lands)
            if hit:
                return at
    return None


_BLOCK_IN_MEMORY = 64 << 20  # a block searched for swallowed records is read into memory up to this size


def _block_reader(fh: BinaryIO, start: int, end: int):
    """`get(p, n)`: n bytes at byte p of the file; bytes [start, end + 64 KiB)
    read once into memory when that is at most _BLOCK_IN_MEMORY (the search
    of a block reads many small pieces of it)."""
    if end - start > _BLOCK_IN_MEMORY:
        return functools.partial(_peek, fh)
    data = _peek(fh, start, end - start + (1 << 16))
    full = len(data) < end - start + (1 << 16)  # the file ends inside it: nothing is read past `data`

    def get(p: int, n: int) -> bytes:
        i = p - start
        if 0 <= i and (i + n <= len(data) or full):
            return data[i:i + n]
        return _peek(fh, p, n)
    return get


def _starts_within(fh: BinaryIO, start: int, end: int | None, fmt: str | None) -> Iterator[int]:
    """The record starts in bytes [start, end) of an uncompressed file (`end`
    None: to its end), in order, each block read once: a line that starts a
    record (`_RECORD_LINES`, or one that goes on past 4 KiB), its head
    plausible (`_is_record_start`). What find_next_record finds."""
    needle, line = _LINE_NEEDLES[fmt], _RECORD_LINES[fmt]
    at = max(start - 1, 0)  # (the line end before a start at `start`)
    while end is None or at < end:
        want = _SCAN_BLOCK if end is None else min(_SCAN_BLOCK, end - at)
        data = _peek(fh, at, want + 4096)
        stop = min(len(data), want)  # starts in this block only
        for found in needle.finditer(data, 0, stop + 16):  # (its lookahead reads past `stop`)
            i = found.start() + 1
            if at + i < start or i >= stop:
                continue
            head = data[i:i + 4096] if i + 4096 <= len(data) else _peek(fh, at + i, 4096)
            if line.match(head) is not None or b"\n" not in head[:4096]:
                if _is_record_start(head, fmt):
                    yield at + i
        if len(data) <= stop or end is not None and at + stop >= end:
            return  # (the file ends in this block, or `end` does)
        at += stop - 1  # (its last byte again: a line end there starts the next block's first line)


def _cut_record_line(tail: bytes, fmt: str | None) -> bool:
    """`tail` (the last bytes of some data, after a line end) is the start of a
    record's first line that the end of the data cuts: too short for
    `_is_record_start` to tell (`WAR`, `htt`)."""
    if not tail or b"\n" in tail or len(tail) >= 9:
        return False
    lower = tail.lower()
    return (fmt != "arc" and b"WARC/".startswith(tail)) or (
        fmt != "warc" and any(prefix.startswith(lower) for prefix in _ARC_PREFIXES))


def _payload_is_block_tail(rec) -> bool:
    """The payload read is the block's last bytes as they are (no chunked
    transfer or content encoding decoded), so a position in it is one in the
    stream."""
    http = rec.http_headers
    return http is None or not (http.get_header("Transfer-Encoding") or http.get_header("Content-Encoding"))


def _block_unended(rec, it, errors_before: int) -> tuple[str, str]:
    """Whether the block of `rec` (a record warcio has read on past, in an
    uncompressed file or stream mode) ends where its length says: ("", "")
    if it does; (_CUT, why) if the data ends first; (_UNENDED, why) if the
    line after it is not blank. warcio reads a block to its length, then
    skips that line with no more than a warning (`it.err_count`): a length
    too large has swallowed what follows (records too), one too small leaves
    the block's rest to be skipped or read as junk."""
    name = "Content-Length" if rec.format == "warc" else "length"
    missing = getattr(rec.raw_stream, "limit", 0)
    if missing:
        return _CUT, f"{_CUT}: {missing} bytes before its {name} ({rec.length}) ends it"
    if it.err_count > errors_before:
        return _UNENDED, f"{_UNENDED}: its {name} ({rec.length}) does not end its block"
    return "", ""


def _records(path, it, state: _Reading, max_payload_bytes: int, base: int = 0, note: str = "",
             members: BinaryIO | None = None, where=None, starts: list[int] | None = None,
             plain: BinaryIO | None = None):
    """Yield the records of one ArchiveIterator run;
    return None at a clean end or (position, error) where the iterator failed
    (position: `base` + the iterator's offset). A record's offset is its
    position, or `where(position)` when given (stream mode; `starts`: the
    stream positions where gzip members begin).

    With `members` (the file, read gzip member by member), a truncated record
    is not yielded but returned as (offset, _SPLIT): it may go on in the next
    member. And each record is handed out only once warcio has read past it:
    warcio does not check a member's CRC, and inflates a member cut short on
    into the next members' bytes, so when the reading ends or fails right
    after a record, that record's member is inflated to its end first, and a
    record whose member does not inflate is `malformed`, not a page of
    garbage (state.broken_member says which).

    Without `members` (`plain`: an uncompressed file; neither: stream mode), a
    record whose block does not end where its length says (`_block_unended`),
    or after which warcio fails, is checked (`check_unended`): when its length
    swallowed records (the data ends inside its block; or a record starts in
    it, searched in the file or in its payload, and runs past its end) it is
    `malformed` and the reading resumes where they start; when its length is
    only wrong, its row says so and the reading resumes at its block's end;
    either way the run returns its position as the failure (no second row)
    and `state.resync_from` where to look for the next record. A run that
    ends quietly leaves `state.stopped` (where warcio would have read the next
    record; a record begins there if data does)."""
    pending: RawRecord | None = None
    pending_rec = None  # warcio's record behind `pending`
    pending_previous = state.last_offset
    failure = None
    run_last = -1
    unended = None  # without members: warcio's record behind `pending`, its stream position, err_count
    # before it and where its block ends by its length

    def check_unended(failed: bool = False):  # once per record, when warcio has read on past it
        """Whether the pending record's block ends where its length says; or,
        `failed` (warcio failed to read what follows it), whether its length
        swallowed a record: one that starts inside its block and, with the
        records after it by their lengths, runs past its end (a record quoted
        in a page ends inside it). True when the run stops there (`failure`
        set; `state.resync_from`: where to look for the next record)."""
        nonlocal pending, failure, unended
        if unended is None or pending is None:
            return False
        rec, position, errors, end = unended
        kind, why = _block_unended(rec, it, errors)
        if not kind and not failed:
            return False  # (kept: the next record may still be one warcio cannot use, `failed` then)
        unended = None
        swallowed, resume = kind == _CUT, position + 1
        if kind != _CUT and plain is not None:
            at = _first_running_past(_starts_within(plain, position + 1, end, state.fmt),
                                     _block_reader(plain, position, end), end, state.fmt, bool(kind), lands=True)
            if at is not None:
                swallowed, resume = True, at
                why = f"{why or _SWALLOWED}; a record starts inside it, at byte {at}"
            else:
                resume = end  # (past any record its block quotes)
                why += "; nothing after it lost" if kind and not _after_block(plain, end, state.fmt)[1] else ""
        elif kind != _CUT and pending.payload is not None and _payload_is_block_tail(rec):
            inside = _payload_record(pending.payload, state.fmt, to_end=bool(kind))
            if inside is not None:  # stream mode: a page whose payload holds a record's header
                swallowed, resume = True, end - (len(pending.payload) - inside)
                why = f"{why or _SWALLOWED}; a record starts inside its payload"
            else:
                resume = end  # (past any record its payload quotes)
        # else (stream mode, a block not searched: no page, or a payload decoded) from one byte
        # past its start: what the length swallowed is read, a record the block quotes as well
        if not swallowed and not kind:
            return False  # warcio failed on what follows a record whose length is right
        if swallowed:
            if pending.outcome != "malformed":  # (a candidate cut short is reported so already)
                pending = _malformed(path, pending.offset, pending.record_type, why, note)
        else:
            log.warning("%s: record at offset %d: %s", path, pending.offset, why)
            pending.detail = f"{pending.detail}; {why}" if pending.detail else why
        failure = (position, why)
        state.resync_from, state.block_end = resume, end
        return True

    def split_off():  # read member by member, when warcio failed on what follows the pending record
        """Whether the pending record ends before its length with its gzip
        member, which inflates whole, and warcio fails on the next member: its
        second half (a record whose length is only wrong is followed by one
        warcio reads). A page read whole raises TruncatedRecord; a record whose
        payload is not read (a request, a 404, an image, an oversized page) is
        checked here, else its second half became a `malformed` row of its own.
        Not handed out then: the run fails with _SPLIT at it, and stream mode
        reads it."""
        nonlocal pending, failure
        if members is None or pending is None or pending.outcome == "malformed" or \
                not getattr(pending_rec.raw_stream, "limit", 0):
            return False
        end = _member_end(members, pending.offset)
        state.checked = (pending.offset, end)
        if end is None:  # a member cut short or corrupt: reported as such
            return False
        failure = (pending.offset, _SPLIT)
        state.yielded -= 1
        state.last_offset = pending_previous
        pending = None
        return True

    try:
        for rec in it:
            if check_unended():
                break
            offset = base + it.offset if where is None else where(base + it.offset)
            if members is not None and not (offset > run_last and _member_start(members, offset)):
                if offset > run_last and not _junk_between(members, offset, None):
                    break  # blank lines or zeros after the last member, which warcio reads as a record: the end
                # warcio reads ahead in a member that holds more than one record and hands
                # them out with offsets it makes up (negative, or inside other members)
                # before it raises: read them as one stream instead
                failure = (offset, f"non-chunked gzip: a record at no gzip member start ({offset})")
                break
            kind, wrong = _header_unusable(rec, base + it.offset, starts)
            if kind and members is not None and _past_empty_members(members, offset) > offset:
                break  # a gzip member of blank lines only, which warcio reads as a record: none (the
                # reading goes on after it, _after_quiet_end)
            if kind:
                # warcio reads a WARC record without its (mandatory) length to the end of the
                # stream (or of its gzip member, records after it in the member with it), and
                # one whose length is no number as empty, its block as the next record: it
                # fails here, and the reading resumes at the next record after its first line
                # (read member by member: stream mode from its member reports it and resumes)
                failure = (offset if members is not None else base + it.offset,
                           f"{rec.format.upper()} {kind} ({wrong})")
                break
            if where is not None and rec.format == "warc":
                state.record_end = base + it.offset + rec.rec_headers.total_len + int(rec.length or 0)
            if members is None:  # where its block ends by its length (its headers read, its block not yet)
                block_end = base + it.fh.tell() - it.reader.rem_length() + getattr(rec.raw_stream, "limit", 0)
            run_last = offset
            previous, state.last_offset = state.last_offset, offset
            state.yielded += 1
            try:
                raw = _candidate(rec, path, offset, max_payload_bytes)
                if note:
                    raw.detail = f"{raw.detail}; {note}" if raw.detail else note
            except TruncatedRecord as exc:
                if members is not None:  # not reported: stream mode reads it (or reports it)
                    state.yielded -= 1
                    state.last_offset = previous
                    failure = (offset, _SPLIT)
                    break
                raw = _malformed(path, offset, getattr(rec, "rec_type", None), exc, note)
            except Exception as exc:  # damaged payload: bad chunking, truncated gzip...
                raw = _malformed(path, offset, getattr(rec, "rec_type", None), exc, note)
            if pending is not None:
                state.last_malformed = pending.outcome == "malformed"
                yield pending
            pending, pending_previous, pending_rec = raw, previous, rec
            if members is None:
                unended = (rec, base + it.offset, it.err_count, block_end)
    except Exception as exc:
        offset = it.offset if isinstance(it.offset, int) else 0
        failure = base + offset, f"{type(exc).__name__}: {exc}"
        check_unended(failed=True)  # (a length too large makes warcio fail in what it swallowed)
        if split_off():
            pass  # (warcio failed on the split record's second half)
        elif members is not None and "non-chunked gzip" not in failure[1] and \
                _inside_last_member(members, failure[0], run_last, pending, base, state):
            # warcio failed inside a member that holds more than one record, before it
            # handed out a record at no member start, at an offset it made up (negative,
            # behind the records it read, or inside the last record's member): read the
            # member as one stream
            failure = (failure[0], f"non-chunked gzip: {failure[1]}")
    # the run ended (quietly, failing, or at a header it cannot use) after a record whose
    # length is wrong or swallowed records: that record is the failure (check_unended)
    if not check_unended(failed=failure is not None) and failure is None and members is None:
        state.stopped = base + it.offset
    elif failure is None and pending is not None and getattr(it, "next_line", None):
        # warcio ended quietly after reading the first line of a record in the same
        # member: the data ends inside that record's headers (warcio takes it for the
        # end of the file); the member holds more than one record: read it as a stream
        failure = (pending.offset, "non-chunked gzip: the data ends inside a record's headers")
    non_chunked = members is not None and failure is not None and "non-chunked gzip" in failure[1]
    if non_chunked:
        # the member of the last record read (which starts it) holds more: stream mode
        # reads on from that member (-1: from the run's start, no record read), the record
        # again, numbered as the records after it; not from the run's start, skipping
        # the records read: damage before the member makes warcio count records otherwise
        # read as one stream than member by member
        failure = (-1 if pending is None else pending.offset, failure[1])
        if pending is not None:
            state.yielded -= 1
            state.last_offset = pending_previous
            pending = None
    check = members is not None and not non_chunked
    if pending is not None:
        if check and pending.outcome != "malformed":
            end = state.checked[1] if state.checked[0] == pending.offset else _member_end(members, pending.offset)
            state.checked = (pending.offset, end)
            if end is None:
                pending = _malformed(path, pending.offset, pending.record_type,
                                     "its gzip member is cut short or corrupt (it does not inflate to its end)", note)
                state.broken_member = pending.offset
        state.last_malformed = pending.outcome == "malformed"
        yield pending
    return failure


def _inside_last_member(fh: BinaryIO, bad: int, run_last: int, pending: RawRecord | None, base: int,
                        state: _Reading) -> bool:
    """warcio's failure at `bad` lies in the member of the last record it read
    (pending), which holds more: behind that record (a made-up offset, even a
    negative one), or between its start and the member's end when the member
    inflates whole (a member cut short shows as a failure inside it too, and
    is reported as such)."""
    if bad <= max(run_last, base - 1):
        return True
    if pending is None or pending.outcome == "malformed" or _member_start(fh, bad):
        return False
    end = _member_end(fh, pending.offset)
    state.checked = (pending.offset, end)  # the run's end checks this member: once
    return end is not None and pending.offset < bad < end


def iter_records(path: str, fh: BinaryIO, max_payload_bytes: int = 10 << 20) -> Iterator[RawRecord]:
    """Every record of the WARC/ARC file open in `fh` (seekable), in order.

    Never raises for bad data: damage becomes `malformed` records. Offsets are
    byte offsets in the file (gzip member starts for .gz), unique in it;
    records read across gzip members (their `detail` says so) have their
    member's offset, plus their rank in it times RANK_STRIDE unless they start it."""
    gzipped = _gzipped(path, fh)
    state = _Reading(_file_format(fh, gzipped))
    pos = 0
    while True:
        fh.seek(pos)
        it = ArchiveIterator(fh)
        failure = yield from _records(path, it, state, max_payload_bytes, members=fh if gzipped else None,
                                      plain=None if gzipped else fh)
        resumed = yield from _after_run(path, fh, pos, state, failure, gzipped, max_payload_bytes)
        if resumed is None:
            return
        if resumed <= pos:  # never happens by construction; a loop would re-count records
            log.warning("%s: reading would resume at byte %d, not after %d: stopped", path, resumed, pos)
            return
        pos = resumed


def _member_start(fh: BinaryIO, offset: int) -> bool:
    """A gzip member starts at byte `offset` of the file warcio is reading,
    read without moving it (pread where there is a file descriptor)."""
    if offset < 0:
        return False
    try:
        return os.pread(fh.fileno(), 3, offset) == GZIP_MAGIC
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):  # no descriptor: a remote stream
        return _peek(fh, offset, 3) == GZIP_MAGIC


def _gzipped(path: str, fh: BinaryIO) -> bool:
    """The file is gzip: by its first bytes, or by its name when they are
    damaged (a .gz whose first member is broken is read on from its next
    member); a file named .gz that starts like a record is plain (a client
    that un-gzipped it on download kept the name)."""
    fh.seek(0)
    head = fh.read(16)
    fh.seek(0)
    return head.startswith(GZIP_MAGIC) or (path.lower().endswith(".gz") and not _is_record_start(head))


def _after_run(path, fh, pos: int, state: _Reading, failure, gzipped: bool, max_payload_bytes: int):
    """After one ArchiveIterator run from byte `pos` ended with `failure`
    (None: quietly): what to report, and the byte
    to read on from member by member (None: the end of the file)."""
    if failure is None:
        if not gzipped:
            if state.stopped >= 0 and _junk_between(fh, state.stopped, None):
                # warcio takes data ending inside a record's header (its WARC or HTTP
                # headers) for the end of the file: the file is cut inside that record
                yield _malformed(path, state.stopped, None, "file ends inside the record's headers (truncated)")
                state.last_offset, state.last_malformed = state.stopped, True
            return None
        # warcio ends quietly at a gzip member it cannot inflate (it prints
        # the zlib error): a torn member looks like the end of the file
        return (yield from _after_quiet_end(path, fh, pos, state, max_payload_bytes))
    bad, message = failure
    if message == _SPLIT:
        # members split mid-record ("wrong chunking"): decompress across them
        log.warning("%s: %s at offset %d: reading on as one stream", path, _SPLIT, bad)
        return (yield from _stream_mode(path, fh, bad, state, max_payload_bytes))
    if _NO_LENGTH in message and gzipped:
        log.warning("%s: %s at offset %d: reading on as one stream", path, _NO_LENGTH, bad)
        return (yield from _stream_mode(path, fh, bad, state, max_payload_bytes))
    if "non-chunked gzip" in message:
        # a member holding more than one record (the whole file, gzipped as one
        # stream, or one such member among others): from that member on, as one stream
        start = bad if bad >= pos else pos
        log.warning("%s: a gzip member holds more than one record: reading on from byte %d as one stream",
                    path, start)
        return (yield from _stream_mode(path, fh, start, state, max_payload_bytes))
    last = state.last_offset if state.last_offset >= pos else None
    if gzipped and last is not None and last < bad and state.broken_member == last:
        # the last record's member does not inflate to its end (cut short),
        # reported with it: warcio read on into the next members as if they
        # were its data, so `bad` may lie past records never read
        bad = last
    junk = False
    if not gzipped and state.resync_from > pos and state.resync_from == state.block_end:  # after a record
        # whose length is wrong, at its block's end (check_unended): a record may follow it with no line end
        start, state.resync_from = state.resync_from, -1
        nxt, junk = _after_block(fh, start, state.fmt)
    else:  # (or from where check_unended says)
        start, state.resync_from = (max(state.resync_from - 1, pos + 1) if state.resync_from >= 0
                                    else max(bad, pos) + 1), -1
        nxt = find_next_record(fh, start, gzipped, state.fmt)
    if gzipped and bad != last and not _junk_between(fh, _past_empty_members(fh, bad), nxt):
        return nxt  # zero padding between members or after the last (gzip.GzipFile skips it too)
    if bad != state.last_offset:  # not already reported as a damaged payload
        yield _malformed(path, bad, None, message)
        state.last_offset = bad
        state.last_malformed = True
    if junk:  # what lies between that block and the next record is not lost without a row
        yield _malformed(path, start, None, f"{(nxt if nxt is not None else fh.seek(0, io.SEEK_END)) - start} "
                         f"bytes after the block of the record at byte {bad} start no record")
        state.last_offset = start
        state.last_malformed = True
    if gzipped and (nxt is None or _member_start(fh, bad) and _member_holds_more(fh, bad, state.fmt)):
        # no later gzip member starts a record: members split mid-record ("wrong
        # chunking"); or the member of the failed record holds more records (member
        # by member they were lost with it): decompress on across member boundaries
        return (yield from _stream_mode(path, fh, bad, state, max_payload_bytes, resync=True))
    return nxt


_PADDING = b"\0\r\n\t "  # what may lie between records: zeros, blank lines a writer left


def _after_block(fh: BinaryIO, end: int, fmt: str | None) -> tuple[int | None, bool]:
    """Where the next record starts after a block that ends at byte `end` of an
    uncompressed file, and whether anything but padding lies before it. A
    record line needs a line end before it (`find_next_record`), but the one
    after a block whose blank lines are missing or damaged (`</html>WARC/1.0`,
    a lone CR; ARC may have none) starts at `end`, after padding at most."""
    head = _peek(fh, end, 4096)
    at = end + len(head) - len(head.lstrip(_PADDING))
    if at < end + len(head) and _plausible_at(fh, at, False, fmt):
        return at, False
    nxt = find_next_record(fh, end - 1, False, fmt)
    return nxt, _junk_between(fh, end, nxt)


def _member_holds_more(fh: BinaryIO, at: int, fmt: str | None) -> bool:
    """The gzip member at byte `at` inflates to a record line (of format
    `fmt`) after its first byte: it holds more than one record."""
    needle = _LINE_NEEDLES[fmt]
    tail = b""
    for out in _inflate_member(fh, at):
        out = tail + out
        if needle.search(out):
            return True
        tail = out[-15:]
    return False


def _inflate_member(fh: BinaryIO, at: int):
    """Yield what the gzip member starting at byte `at` inflates to, in pieces of
    at most _SCAN_BLOCK (a small member may inflate to gigabytes); return where
    it ends (None: it does not inflate to its end: cut short, corrupt, or the
    file ends inside it)."""
    fh.seek(at)
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    pos = at
    while not d.eof:
        block = fh.read(_SCAN_BLOCK)
        if not block:
            return None
        pos += len(block)
        data = block
        while data and not d.eof:
            before = d.copy()
            try:
                out = d.decompress(data, _SCAN_BLOCK)
            except zlib.error:  # what the failing call inflated, which zlib does not return
                yield _inflate_until_error(before, data[:_INFLATE_CHUNK])
                return None
            yield out
            data = d.unconsumed_tail
    return pos - len(d.unused_data)


def _member_end(fh: BinaryIO, at: int) -> int | None:
    """Where the gzip member starting at byte `at` ends (None: it does not inflate to its end)."""
    pieces = _inflate_member(fh, at)
    while True:
        try:
            next(pieces)
        except StopIteration as end:
            return end.value


def _after_quiet_end(path: str, fh: BinaryIO, pos: int, state: _Reading, max_payload_bytes: int):
    """After warcio ended quietly reading gzip members from byte `pos` (it
    does so at a member it cannot inflate, printing the zlib error): report
    the damaged data after the last good member as one `malformed` row, unless
    the last record was reported for it, and return the next member that
    starts a record to read on from; None at the end of the file (where only
    zero padding may follow the last member)."""
    last = state.last_offset if state.last_offset >= pos else None
    if last is not None and state.broken_member == last and _member_holds_more(fh, last, state.fmt):
        # the damage is that record's member, reported with it; the member's other records
        # (a file gzipped as one stream whose CRC does not match) are read as one stream
        return (yield from _stream_mode(path, fh, last, state, max_payload_bytes, resync=True))
    nxt = find_next_record(fh, (pos if last is None else last) + 1, True, state.fmt)
    if last is not None and state.broken_member == last:
        return nxt  # the damage is that record's member, reported with it
    if last is None:
        at = pos
    else:  # the last record's member is whole (_records checked it): the damage starts where it ends
        end = state.checked[1] if state.checked[0] == last else _member_end(fh, last)
        at = end if end is not None else last + 1
    at = _past_empty_members(fh, at)
    if not _junk_between(fh, at, nxt):  # nothing lost: the end of the file, or zero padding before nxt
        return nxt
    yield _malformed(path, at, None, f"damaged gzip data from byte {at} (a gzip member cut short or corrupt, "
                     f"or garbage)", f"reading resumes at the next record, byte {nxt}" if nxt is not None else "")
    state.last_offset = at
    return nxt


def _past_empty_members(fh: BinaryIO, at: int) -> int:
    """The first byte from `at` on that is not in a whole gzip member that
    inflates to nothing or padding only (or in padding between such members):
    an empty member is valid gzip (`cat a.warc.gz empty.gz`, BGZF's EOF block),
    no damage, but warcio ends quietly at it as at one it cannot inflate, or
    reads one after zero padding as a record."""
    while True:
        head = _peek(fh, at, 4096)
        member = at + len(head) - len(head.lstrip(_PADDING))  # (padding before it, up to 4 KiB)
        if _peek(fh, member, 3) != GZIP_MAGIC:
            return at
        pieces = _inflate_member(fh, member)
        try:
            while not next(pieces).strip(_PADDING):
                pass
            return at  # it inflates to something
        except StopIteration as end:
            if end.value is None:
                return at  # cut short or corrupt
            at = end.value


def _junk_between(fh: BinaryIO, at: int, until: int | None) -> bool:
    """Anything but padding (zeros, blank lines) from byte `at` to `until` (None: the end of the file)."""
    fh.seek(at)
    while until is None or at < until:
        block = fh.read(_SCAN_BLOCK if until is None else min(_SCAN_BLOCK, until - at))
        if not block:
            return False
        if block.strip(b"\0\r\n\t "):  # zero padding, or blank lines a writer left
            return True
        at += len(block)
    return False


class _Prefixed(io.RawIOBase):
    """A stream that first replays `prefix`, then continues with `stream`."""

    def __init__(self, prefix: bytes, stream):
        self._prefix = prefix
        self._stream = stream

    def readable(self):
        return True

    def readinto(self, buffer):
        if self._prefix:
            n = min(len(buffer), len(self._prefix))
            buffer[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _skip_to_record(stream, fmt: str | None = None, starts: list[int] | None = None, base: int = 0,
                    line_start: bool = True, block_end: int | None = None) -> tuple[io.BufferedReader | None, int]:
    """Consume `stream` up to the next line that starts a WARC record (`WARC/`)
    or an ARC record (its five fields), of format `fmt` if given; return a
    stream positioned there and the number of bytes skipped (None at EOF).

    With `starts` (the stream positions where gzip members begin, growing as
    `stream` is read) and `base` (the stream position of `stream`'s first
    byte), a member whose first bytes start a record is a place to resume as
    well, as `find_next_record` takes it: junk with no line end at the end of
    the member before glues itself to that record's first line. `line_start`:
    a line starts at `base` (the byte before it is a line end: else, after a
    failure at base - 1, the failed record would be read again from its second
    byte on); `block_end`: the stream position where the block of a record
    whose blank lines are missing ends, a place to resume after padding."""
    line = _RECORD_LINES[fmt]
    skipped = 0
    tail = b""
    from_ = 0 if line_start else 1  # where a line may start in `data` (1: not at 0, which goes on a line)
    while True:
        block = stream.read(1 << 16)
        data = tail + block
        member, cut = _member_record(data, base + skipped, starts, fmt, final=not block)
        after, after_cut = _record_after(data, base + skipped, block_end, fmt, final=not block)
        cut = min((x for x in (cut, after_cut) if x is not None), default=None)
        found = line.search(data, from_)  # (at the end, in what a cut kept back)
        i = min((x for x in (found.start() if found else None, member, after) if x is not None), default=None)
        if i is not None and (cut is None or i < cut):
            return io.BufferedReader(_Prefixed(data[i:], stream), 1 << 16), skipped + i
        if not block:
            return None, skipped
        # the last line may go on in the next block (a line longer than that is no ARC header) ...
        newline = data.rfind(b"\n", len(data) - (1 << 12))
        keep, from_ = (len(data) - newline - 1, 0) if newline != -1 else (4, 1)
        if cut is not None and len(data) - cut > keep:  # ... and a member's first bytes: look again then
            keep, from_ = len(data) - cut, 1
        skipped += len(data) - keep
        tail = data[len(data) - keep:]


def _record_after(data: bytes, at: int, block_end: int | None, fmt: str | None,
                  final: bool) -> tuple[int | None, int | None]:
    """The index of `data` (stream position `at` on) where a record starts
    right after the padding that follows stream position `block_end` (None:
    none), and the index of `block_end` when the 4 KiB after the padding are
    not all there yet (unless `final`), as `_member_record` has them."""
    i = -1 if block_end is None else block_end - at
    if not 0 <= i < len(data):
        return None, None
    j = len(data) - len(data[i:].lstrip(_PADDING))
    if j + 4096 > len(data) and not final and j - i < 4096:
        return None, i
    return (j, None) if _is_record_start(data[j:j + 4096], fmt) else (None, None)


def _member_record(data: bytes, at: int, starts: list[int] | None, fmt: str | None,
                   final: bool, i: int = 0) -> tuple[int | None, int | None]:
    """The first index of `data` (stream position `at` on), from `i` on, where
    a gzip member begins that starts a record (by its first 4 KiB, as
    `_plausible_at` judges a member), and the first member start before the
    end of `data` whose 4 KiB are not all there yet (unless `final`: the
    stream ends with `data`)."""
    if not starts:
        return None, None
    for start in starts[bisect.bisect_left(starts, at + i):]:
        i = start - at
        if i >= len(data):
            break
        if i + 4096 > len(data) and not final:
            return None, i
        if _is_record_start(data[i:i + 4096], fmt):
            return i, None
    return None, None


def _discard(stream, n: int) -> None:
    while n > 0:
        block = stream.read(min(n, _SCAN_BLOCK))
        if not block:
            return
        n -= len(block)


class GzipDamage(OSError):
    """The gzip data is damaged from byte `at` of the file on."""

    def __init__(self, at: int, what: str):
        super().__init__(f"damaged gzip data at byte {at}: {what}")
        self.at = at
        # zlib's words for a gzip trailer that does not match: the member's data all inflated
        self.trailer = what.endswith(("incorrect data check", "incorrect length check"))


_NON_ZERO = re.compile(b"[^\\0\\r\\n\\t ]")  # what is not padding between members
_INFLATE_CHUNK = 1 << 14  # compressed bytes per zlib call: what it leaves over is copied each call, and a
# call that fails loses its output (damage loses the records inflated in it: 16 KiB, not 64, costs 3%)
_CHECKPOINT_EVERY = 1 << 16  # stream mode: stream bytes between two copies of the inflater's state ...
_CHECKPOINTS_KEPT = 32  # ... and how many of the newest are kept (a pass fails about where it read to,
#                          at most _STREAM_BUFFER and a few small buffers before)
_STREAM_BUFFER = _SCAN_BLOCK  # stream bytes read ahead of warcio (larger reads faster, restarts cost more)


@dataclass
class _Checkpoint:
    """The inflater of a `_Members` stream at stream position `out`: its zlib
    state (`zlib.Decompress.copy`), the file offset of the next compressed byte
    and the member it is inside."""

    out: int
    at: int
    member: int
    d: object


class _Members(io.RawIOBase):
    """The gzip members of `fh` from byte `start` on, inflated as one stream
    (what gzip.GzipFile reads), knowing where each member starts both in the
    file and in the stream; damage raises GzipDamage at the byte it starts."""

    def __init__(self, fh: BinaryIO, start: int, out: int = 0, checkpoints: list[_Checkpoint] | None = None):
        self._fh = fh
        self._checkpoints = checkpoints  # where to keep copies of the inflater's state (None: none kept)
        fh.seek(start)
        self._buf = b""  # compressed bytes read; self._buf[self._i:] not inflated yet
        self._i = 0
        self._at = start  # file offset of self._buf[self._i]
        self._d = None  # the member being inflated
        self._member = start
        self._out = out  # stream bytes produced (`out`: the stream position of the member at `start`)
        self.starts: list[int] = []  # per member: its first byte in the stream ...
        self.offsets: list[int] = []  # ... and in the file
        self.damage: GzipDamage | None = None
        self.good = 0  # with damage: the stream position where its good bytes end ...
        self.lost = b""  # ... and what inflates after them before the damage, not handed out
        self._last = b"\n"  # the last stream byte handed out (does `lost` start a line?)
        self.noted = 0  # members _stream_mode has taken into its lists
        self.resumed = False  # began inside a member, at a checkpoint

    @classmethod
    def resume(cls, fh: BinaryIO, cp: _Checkpoint, checkpoints: list[_Checkpoint] | None = None) -> "_Members":
        """The stream from stream position cp.out on, inflating from the checkpoint's state."""
        members = cls(fh, cp.at, cp.out, checkpoints)
        members._d = cp.d.copy()  # a copy: the checkpoint may serve the next pass too
        members._member = cp.member
        members.resumed = True
        return members

    def readable(self):
        return True

    @property
    def produced(self) -> int:
        """The stream position after the last byte inflated."""
        return self._out

    def _more(self) -> bool:
        block = self._fh.read(_SCAN_BLOCK)
        if block:
            self._buf = self._buf[self._i:] + block
            self._i = 0
        return bool(block)

    def _left(self) -> int:
        return len(self._buf) - self._i

    def readinto(self, buffer) -> int:
        """Inflated bytes; at damage, the end of the stream (0) from then on,
        and `damage` says where. Not an exception: the buffered readers above
        would drop the good bytes they already hold with it."""
        if self.damage is not None:
            return 0
        try:
            return self._inflate(buffer)
        except GzipDamage as exc:
            self.damage = exc
            self.good = self._out  # the stream's good bytes end here
            return 0

    def _next_member(self) -> bool:
        """Start the member at the read position (False: the end of the data)."""
        while True:
            while self._left() < 3 and self._more():
                pass
            found = _NON_ZERO.search(self._buf, self._i)  # zero padding, as gzip.GzipFile skips it
            if found is None:
                self._at += self._left()
                self._i = len(self._buf)
                if self._more():
                    continue
                return False
            self._at += found.start() - self._i
            self._i = found.start()
            if self._left() < 3 and not self._more():
                raise GzipDamage(self._at, "not a gzip member")
            if self._buf[self._i:self._i + 3] != GZIP_MAGIC:
                raise GzipDamage(self._at, "not a gzip member")
            self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            self._member = self._at
            self.starts.append(self._out)
            self.offsets.append(self._at)
            return True

    def _inflate(self, buffer) -> int:
        while True:
            if self._d is None and not self._next_member():
                return 0
            if not self._left() and not self._more():
                raise GzipDamage(self._member, "the file ends inside this gzip member")
            chunk = memoryview(self._buf)[self._i:self._i + _INFLATE_CHUNK]
            before = self._d.copy()  # (its cost does not show in scripts/bench_reader.py)
            try:
                out = self._d.decompress(chunk, len(buffer))
            except zlib.error as exc:
                self.lost = _inflate_until_error(before, chunk)
                raise GzipDamage(self._member, str(exc)) from None
            used = len(chunk) - len(self._d.unused_data if self._d.eof else self._d.unconsumed_tail)
            self._i += used
            self._at += used
            if self._d.eof:
                self._d = None
            if out:
                buffer[: len(out)] = out
                self._out += len(out)
                self._last = out[-1:]
                self._checkpoint()
                return len(out)

    def lost_records(self, fmt: str | None, after: int = -1) -> list[int]:
        """With damage: the stream positions of the records that start in `lost`
        (at or after stream position `after`, where the record the damage cut
        ends by its header, when a record or the end of `lost` is there)."""
        data = self._last + self.lost
        i = 1 + max(0, after - self.good)
        j = i
        while data[j:j + 1] in (b"\r", b"\n"):
            j += 1
        if i > 1 and j < len(data) and not _is_record_start(data[j:j + 4096], fmt):
            i = 1  # that length is wrong: search from the damage on
        return [self.good + k - 1 for k in _record_starts(data, i, fmt, self.good - 1, self.starts)]

    def _checkpoint(self) -> None:
        cps = self._checkpoints
        if cps is None or self._d is None or (cps and self._out < cps[-1].out + _CHECKPOINT_EVERY):
            return
        cps.append(_Checkpoint(self._out, self._at, self._member, self._d.copy()))
        del cps[:-_CHECKPOINTS_KEPT]


def _inflate_until_error(d, chunk, step: int = 256) -> bytes:
    """What `d` inflates from `chunk` before it fails: the output of the zlib
    call that met damage, which the call itself does not return. Fed `step`
    bytes at a time, and the piece that fails once more a byte at a time."""
    out = []
    for i in range(0, len(chunk), step):
        before = d.copy()
        try:
            out.append(d.decompress(chunk[i:i + step]))
        except zlib.error:
            for j in range(i, min(i + step, len(chunk))):
                try:
                    out.append(before.decompress(chunk[j:j + 1]))
                except zlib.error:
                    break
            break
    return b"".join(out)


_WARC_LENGTH = re.compile(rb"\r?\ncontent-length:[ \t]*(\d+)[ \t]*\r?\n", re.I)


def _record_starts(data: bytes, i: int, fmt: str | None, at: int = 0,
                   starts: list[int] | None = None) -> Iterator[int]:
    """Where records start in `data` from index `i` on: the first record line
    (or gzip member that starts a record: `at`, the stream position of
    `data[0]`, and `starts`, as `_skip_to_record` takes them), then each record
    after it by the length its header gives (so a record line quoted in a
    payload is no record), a search again where that lands on no record. Ends
    where a record's header or block runs past `data`. Linear in `data`: the
    WARC header ends and lengths are found once, then looked up."""
    line = _RECORD_LINES[fmt]
    ends = _Lengths(data)
    while True:
        found = line.search(data, i)
        member = _member_record(data, at, starts, fmt, True, i)[0] if starts else None
        candidates = [x for x in (found.start() if found else None, member) if x is not None]
        if not candidates:
            return
        i = min(candidates)
        while True:
            yield i
            end = ends.record_end(i)
            if end is None:  # no length: the next record line after this one
                i += 1
                break
            if end > len(data):  # a header or block that goes on past the data
                return
            while data[end:end + 1] in (b"\r", b"\n"):
                end += 1
            if end >= len(data):
                return
            if not _is_record_start(data[end:end + 4096], fmt):
                i = end
                break
            i = end


class _Lengths:
    """The records' ends in `data` by their headers' lengths (`record_end`)."""

    def __init__(self, data: bytes):
        self.data = data
        self.heads = [m.start() for m in re.finditer(b"\r\n\r\n", data)]  # where WARC headers may end
        found = list(_WARC_LENGTH.finditer(data))
        self.at = [m.start() for m in found]
        self.length = [int(m.group(1)) for m in found]

    def record_end(self, i: int) -> int | None:
        """The index after the record at `i` (past the end of the data where
        its header or block goes on; None: no length)."""
        data = self.data
        if data.startswith(b"WARC/", i):
            k = bisect.bisect_left(self.heads, i)
            if k == len(self.heads):
                return len(data) + 1
            head_end = self.heads[k]
            j = bisect.bisect_left(self.at, i)
            return head_end + 4 + self.length[j] if j < len(self.at) and self.at[j] < head_end + 2 else None
        line_end = data.find(b"\n", i)
        if line_end == -1:
            return len(data) + 1
        length = data[i:line_end].rsplit(b" ", 1)[-1].strip()
        return line_end + 1 + int(length) if length.isdigit() else None


class _Numbering:
    """The offsets stream mode gives: a record starting a gzip member has the
    member's offset; any other, the offset of the member it starts in plus its
    rank there times RANK_STRIDE. Kept across the passes of one stream mode
    read (a pass restarts at the member holding its first stream position)."""

    def __init__(self, start: int):
        self.starts, self.offsets = [0], [start]  # every member met: its stream position and file offset
        self.ranks: dict[int, int] = {}  # member offset -> records ranked inside it
        self.given: dict[int, int] = {}  # stream position -> offset
        self.used: set[int] = set()
        self.checkpoints: list[_Checkpoint] = []  # the newest copies of the inflater's state, by stream position

    def restart(self, fh: BinaryIO, position: int) -> tuple["_Members", int]:
        """The stream from the latest point before `position` where inflating
        can begin (the member holding it, or a checkpoint inside that member
        or later), and that point's stream position. Without checkpoints, a
        file gzipped as one member with many bad records would be inflated
        from its first byte after each (time quadratic in them)."""
        m = bisect.bisect_right(self.starts, position) - 1
        member, at = self.offsets[m], self.starts[m]
        k = bisect.bisect_right([cp.out for cp in self.checkpoints], position) - 1
        if k >= 0 and self.checkpoints[k].out > at:
            return _Members.resume(fh, self.checkpoints[k], self.checkpoints), self.checkpoints[k].out
        return _Members(fh, member, at, self.checkpoints), at

    def ranked(self, member: int) -> int:
        self.ranks[member] = self.ranks.get(member, 0) + 1
        return member + self.ranks[member] * RANK_STRIDE

    def offset(self, members: "_Members", position: int) -> int:
        if position not in self.given:
            while members.noted < len(members.starts):  # the members this pass met, each noted once
                at, off = members.starts[members.noted], members.offsets[members.noted]
                if at > self.starts[-1]:
                    self.starts.append(at)
                    self.offsets.append(off)
                elif at == self.starts[-1]:  # where the pass began: padding may put the member past it
                    self.offsets[-1] = off
                members.noted += 1
            k = bisect.bisect_right(self.starts, position) - 1
            given = self.offsets[k] if position == self.starts[k] else self.ranked(self.offsets[k])
            self.given[position] = given
            self.used.add(given)
        return self.given[position]


def _stream_mode(path, fh, start: int, state: _Reading, max_payload_bytes: int, resync: bool = False):
    """Read the gzip data from byte `start` on as one continuous decompressed
    stream (gzip members concatenate). A record's offset is that of the member
    it starts in, plus its rank among the records starting inside the member
    times RANK_STRIDE unless it starts at the member's first byte. After a
    failure to parse, decompression restarts at the newest checkpoint before
    the failed record (or the start of its member) and the search for the
    next record resumes one byte past it; after damaged gzip data, return the
    offset of the next member that starts a record, for reading on member by
    member (None: the end of the file)."""
    note = f"read across gzip members from byte {start}"
    expect_record = not resync  # a record is known to start at `start`
    resume_at = 1 if resync else 0  # stream position to look for the next record from (resync: the record
    # at `start` was reported; from its first byte the search would find it again)
    numbering = _Numbering(start)
    if state.last_offset >= start:  # reported before this read began (a damage row must not take it again)
        numbering.used.add(state.last_offset)
    block_end = None  # after a record whose length is wrong: where its block ends (a record may follow it
    # there, with no line end before it)
    while True:
        members, at = numbering.restart(fh, resume_at - 1 if resync else resume_at)
        where = functools.partial(numbering.offset, members)
        gz = io.BufferedReader(members, _STREAM_BUFFER)
        if resync:  # the byte before `resume_at`: does a line start there? (not a byte past a record's start)
            _discard(gz, resume_at - 1 - at)
            line_start = gz.read(1) == b"\n"
            stream, skipped = _skip_to_record(gz, state.fmt, members.starts, resume_at, line_start, block_end)
        else:
            stream, skipped = io.BufferedReader(_Prefixed(b"", gz), 1 << 16), 0
        failure = None
        state.record_end = -1
        if stream is not None:
            it = ArchiveIterator(stream)
            before = state.yielded
            failure = yield from _records(path, it, state, max_payload_bytes, base=resume_at + skipped, note=note,
                                          where=where, starts=members.starts)
            if failure is None and members.damage is None and state.yielded == before and expect_record:
                # we came here for a record at `start`, and warcio ended quietly
                # (it takes EOF for the end of the file): the file is cut inside it
                yield _malformed(path, start, None, "file ends inside the record (truncated)", note)
                return None
            stopped = resume_at + skipped + it.offset  # where warcio would have read the next record
            if failure is None and members.damage is not None and stopped < members.good:
                # it ended quietly inside a record's header that the damage cut: that record's row
                failure = (stopped, f"the record's header is cut by the damage ({members.damage})")
            elif failure is None and members.damage is None and stopped < members.produced:
                # it ended quietly before the end of the stream (blank lines it reads past): inside
                # a record's headers, which the end of the file cuts (warcio takes that for the end)
                failure = (stopped, "file ends inside the record's headers (truncated)")
        if failure is not None:
            position, message = failure
            bad = where(position) if members.starts or members.resumed else start
            if bad != state.last_offset:
                yield _malformed(path, bad, None, message, note)
                state.last_offset = bad
                state.last_malformed = True
        if members.damage is not None and (failure is None or position + 1 >= members.good):
            # (a parse failure before the damage, which the buffers read ahead to, resumes as any other)
            # the record the damage cut was just reported malformed; else the damage is its own row
            at = None if state.last_malformed else members.damage.at
            if at in numbering.used:  # a record read here starts that member
                at = numbering.ranked(at)
            trailer = members.damage.trailer  # the member inflated whole: only its check failed
            lost = _lost(path, members, numbering, state.fmt, note, None if trailer else at, state.record_end)
            if trailer and lost:  # nothing after the damage is unreadable: those rows say all
                # (without them the damage keeps its row, the only one to say the data is damaged,
                # even where the record it cut has a row of its own: a record more than there are)
                at = None
            nxt = yield from _damaged(path, fh, members.damage, state, note, at=at)
            for row in lost:
                yield row
                state.last_offset, state.last_malformed = row.offset, True
            return nxt
        if failure is None:
            return None
        # (after a record whose length is wrong, from where _records' check_unended says)
        resume_at = state.resync_from if state.resync_from > position else position + 1
        block_end = state.block_end if state.resync_from > position else None
        resync, expect_record, state.resync_from = True, False, -1


def _damaged(path, fh, exc: GzipDamage, state: _Reading, note: str, at: int | None = None):
    """Damaged gzip data at byte exc.at: report it as a record at offset `at`
    (None: the record it cut was reported) and return the next member that
    starts a record."""
    nxt = find_next_record(fh, exc.at + 1, True, state.fmt)
    if at is not None and at != state.last_offset:
        yield _malformed(path, at, None, exc, note if nxt is None else
                         f"{note}; reading resumes at the next record, byte {nxt}")
        state.last_offset = at
        state.last_malformed = True
    return nxt


def _lost(path, members: _Members, numbering: _Numbering, fmt: str | None, note: str,
          damage_row: int | None, after: int = -1) -> list[RawRecord]:
    """A `malformed` row for each record that starts in what the zlib call
    that met damage inflated: past the stream's good bytes, never handed out
    (the data is damaged: a CRC that does not match says so only at the member's
    end, and handing such bytes out made pages of garbage), but not lost
    without a row either. `damage_row`: the offset of the damage's own row;
    `after`: where the record the damage cut ends, by its header (a record line
    quoted in the rest of its payload is no record)."""
    rows = []
    for position in members.lost_records(fmt, after):
        k = bisect.bisect_left(members.starts, position)
        if k < len(members.starts) and members.starts[k] == position:
            # it starts the damaged member: a row at the member's offset is its own
            if members.offsets[k] == damage_row or members.offsets[k] in numbering.used:
                continue
        rows.append(_malformed(path, numbering.offset(members, position), None,
                               f"a record inflated just before the damage ({members.damage}): "
                               "not read, its gzip member's data is damaged", note))
    return rows


def records_at(path: str, fh: BinaryIO, offsets: list[int], max_payload_bytes: int = 10 << 20) -> dict[int, RawRecord]:
    """The records that start at `offsets` (as `iter_records` numbered them):
    the way detectors that need only a few pages of a file "load" them.

    Each offset is read by seeking to it (one gzip member or one record) when
    a record starts there; otherwise, or when that fails (records read in
    stream mode, damage), the file is read through `iter_records` for the
    rest. Offsets not found are missing from the result."""
    wanted = sorted(set(offsets))
    found: dict[int, RawRecord] = {}
    rest: list[int] = []
    size = fh.seek(0, io.SEEK_END)
    gzipped = _gzipped(path, fh)
    fmt = _file_format(fh, gzipped)
    for offset in wanted:
        # outside the file (stream mode's ranks), inside a member, or damage: no record starts there
        if not 0 <= offset < size or not _plausible_at(fh, offset, gzipped, fmt):
            rest.append(offset)  # warcio would parse whatever bytes are there as a record
            continue
        try:
            fh.seek(offset)
            rec = next(iter(ArchiveIterator(fh)))
            found[offset] = _candidate(rec, path, offset, max_payload_bytes)
        except Exception:  # not a record boundary here: fall back to a full read
            rest.append(offset)
    if rest:
        fh.seek(0)
        rest_set = set(rest)
        for raw in iter_records(path, fh, max_payload_bytes):
            if raw.offset in rest_set:
                found[raw.offset] = raw
                rest_set.discard(raw.offset)
                if not rest_set:
                    break
    return found
