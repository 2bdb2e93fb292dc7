"""One WARC record -> one capture: a page, or the reason it is not one.

Every record read is accounted for by exactly one outcome (OUTCOMES); the
Spark stage writes them all to the `records` table and the manifest's counts
are computed from it, so they add up to the records read.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone

from templatemine.html.charset import UndecodableError, decode_html
from templatemine.html.nesting import MAX_DEPTH, MAX_FORMATTING
from templatemine.html.page import LinkRow, PageletRow, PageParser
from templatemine.html.urls import normalize_url, page_key, registered_domain, resolve_link, url_host
from templatemine.warc.reader import RawRecord

log = logging.getLogger(__name__)

PAGE = "page"
# the detail of a page whose nesting html/nesting.py flattened (the manifest counts them)
FLATTENED = f"nesting flattened (over {MAX_DEPTH} elements deep or {MAX_FORMATTING} formatting elements open)"
# Why a record is not a page. `superseded` is decided later, across records:
# an older capture of a URL captured again (the newest capture wins).
OUTCOMES = {
    PAGE: "kept as a page",
    "superseded": "an older capture of a URL that was captured again",
    "non_response": "not a response record (request, metadata, warcinfo, revisit, resource...)",
    "non_html": "response whose payload is not HTML (by Content-Type, then sniffing)",
    "non_2xx": "HTTP status outside 200-299 (redirects, errors)",
    "empty": "HTML response with an empty payload",
    "undecodable": "no character set turns the payload into text",
    "oversized": "payload larger than max_payload_bytes (not read)",
    "bad_url": "WARC-Target-URI missing or not an http(s) URL",
    "malformed": "the record could not be parsed (damaged file, bad chunking, truncation)",
}


@dataclass
class Capture:
    """A record's outcome and, for pages, everything PAGES/LINKS/PAGELETS need."""

    raw: RawRecord
    outcome: str
    detail: str = ""
    url: str | None = None
    page_key: int | None = None
    host: str | None = None
    site: str | None = None
    fetch_time: datetime | None = None
    charset: str | None = None
    charset_source: str | None = None
    title: str | None = None
    text_length: int | None = None
    n_links: int | None = None
    n_pagelets: int | None = None
    dup_signature: int | None = None
    links: list[LinkRow] = field(default_factory=list)
    pagelets: list[PageletRow] = field(default_factory=list)
    nodes: list = field(default_factory=list)  # pagelevel.features.DomNode rows
    redirect_url: str | None = None  # a 3xx response's Location, resolved and normalised (tables/targets.py)
    redirect_page_key: int | None = None  # its key, where it is on the URL's site (links are followed through it)


def parse_warc_date(value: str | None) -> datetime | None:
    """WARC-Date (ISO 8601, also the WARC/0.18 and ARC 14-digit forms) in UTC."""
    if not value:
        return None
    value = value.strip()
    try:
        if value.isdigit() and len(value) >= 14:
            return datetime.strptime(value[:14], "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc)
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        return parsed.astimezone(timezone.utc)
    except (ValueError, OverflowError):  # OverflowError: year 1 or 9999 shifted out of range by its offset
        return None


def extract_capture(raw: RawRecord, parser: PageParser) -> Capture:
    """Decide the record's outcome; for an HTML page, parse it once into its
    page row, links and pagelets. Never raises: a record that fails in a way
    no rule below foresaw is `malformed`, with the error, so that it costs
    its own row and not the file's task (and so the run)."""
    try:
        return _capture(raw, parser)
    except Exception as exc:
        log.warning("record in %s at offset %s could not be processed: %s: %s", raw.warc_file, raw.offset,
                    type(exc).__name__, exc)
        return Capture(raw, "malformed", f"record could not be processed: {type(exc).__name__}: {exc}"[:500])


def _redirect(url: str, location: str, strip_index: bool) -> str | None:
    """Where a 3xx response of `url` sends its client: `location` resolved
    against it like a link (RFC 9110 section 10.2.2 allows it relative); None
    where it names the URL itself or nothing a link could. Never raises: a
    Location no rule foresaw costs the record its redirect, not its outcome."""
    try:
        redirect = resolve_link(url, location, strip_index)
    except Exception:  # noqa: BLE001
        return None
    return redirect if redirect != url else None


def _capture(raw: RawRecord, parser: PageParser) -> Capture:
    if raw.outcome == "non_2xx":
        # kept with its URL key and date: a 404/410 is how a nightly run learns
        # that a page it holds was removed (nightly/night.py)
        url = normalize_url(raw.target_uri or "", parser.config.strip_index)
        # the status first, whatever the reader noted after it (a stream-mode offset):
        # nightly reads "HTTP 404"/"HTTP 410" at the start as the page removed
        detail = f"HTTP {raw.http_status}" + (f"; {raw.detail}" if raw.detail else "")
        redirect = _redirect(url, raw.location, parser.config.strip_index) if url and raw.location else None
        # links are followed only through redirects within the URL's site: LINKS' same_site stays true
        followed = redirect and registered_domain(url_host(redirect)) == registered_domain(url_host(url))
        return Capture(raw, raw.outcome, detail, url=url,
                       page_key=page_key(url) if url else None, fetch_time=parse_warc_date(raw.warc_date),
                       redirect_url=redirect, redirect_page_key=page_key(redirect) if followed else None)
    if raw.outcome is not None:
        return Capture(raw, raw.outcome, raw.detail)
    url = normalize_url(raw.target_uri or "", parser.config.strip_index)
    if url is None:
        return Capture(raw, "bad_url", f"WARC-Target-URI {raw.target_uri!r}"[:300])
    try:
        html, charset, source = decode_html(raw.payload or b"", raw.content_type)
    except UndecodableError as exc:
        return Capture(raw, "undecodable", str(exc))
    try:
        page = parser.parse(url, html)
    except Exception as exc:  # Lexbor is robust; this is the last line of defence
        return Capture(raw, "malformed", f"HTML parse failed: {type(exc).__name__}: {exc}"[:500])
    host = url_host(url)
    detail = raw.detail
    if page.flattened:  # said per record, so a page whose pagelets look odd can be traced
        note = f"{FLATTENED} ({page.flattened} start tags dropped)"
        detail = f"{detail}; {note}" if detail else note
    return Capture(
        raw,
        PAGE,
        detail,
        url=url,
        page_key=page_key(url),
        host=host,
        site=registered_domain(host),
        fetch_time=parse_warc_date(raw.warc_date),
        charset=charset,
        charset_source=source,
        title=page.title,
        text_length=page.text_length,
        n_links=page.n_links,
        n_pagelets=len(page.pagelets),
        dup_signature=page.dup_signature,
        links=page.links,
        pagelets=page.pagelets,
        nodes=page.nodes,
    )


def html_at(warc_file: str, offsets: list[int]) -> tuple[dict[int, str], dict[int, str]]:
    """({offset: decoded HTML}, {offset: why not}) for the records at `offsets`
    of one WARC file: how stages after extract read back the few pages they
    need (`records_at`: a seek per record), decoded as extract decoded them."""
    from templatemine.warc.inputs import open_input
    from templatemine.warc.reader import records_at

    try:
        with open_input(warc_file) as fh:
            raws = records_at(warc_file, fh, offsets)
    except OSError as exc:
        return {}, {o: f"{warc_file}: {exc}" for o in offsets}
    html, errors = {}, {}
    for offset in offsets:
        raw = raws.get(offset)
        if raw is None or raw.payload is None:
            errors[offset] = f"{warc_file} offset {offset}: record not found or not HTML"
            continue
        try:
            html[offset] = decode_html(raw.payload, raw.content_type)[0]
        except UndecodableError as exc:
            errors[offset] = f"{warc_file} offset {offset}: {type(exc).__name__}: {exc}"[:300]
    return html, errors
