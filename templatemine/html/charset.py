"""Decode an HTML payload to text with the right character set.

Order, as browsers do it (WHATWG "encoding sniffing"): byte-order mark, then the
HTTP Content-Type charset, then a `<meta>` declaration in the first 4 KiB (its
`charset`, or `content` with `http-equiv="content-type"`), then
detection (UTF-8 first, strict or with a few bad bytes among more good ones
beyond ASCII, then charset-normalizer on up to the first 64 KiB, ended at a
safe byte (`_sample`), its guesses limited to the WHATWG encodings (windows-1252
where it offers none of them) and its near ties between Latin code pages going
to windows-1252 (`_detected`); where the guess could be several charsets and
the page is longer, the lines they read otherwise decide among them:
`_whole_page`).
Labels are mapped the
WHATWG way: ISO-8859-1, Latin-1 and US-ASCII mean windows-1252 (the xmlsoft-era
pages labelled ISO-8859-1 use its 0x80-0x9F punctuation), GB2312/GBK mean
GB18030, Shift_JIS means its Windows superset cp932.

A declared charset that does not fit the bytes (more than `MAX_BAD_FRACTION` of
characters undecodable, text mostly control characters, or UTF-16/32 declared
in the header for bytes without a NUL in their first KiB; in a `<meta>`, which
UTF-16 markup could not be read to find, never) is not trusted: the next
source is tried; nor is a detected UTF-16/32 for such bytes. A payload is
*undecodable* when no source yields text with few enough bad characters, or the
text is mostly control characters (binary served as HTML).
"""

from __future__ import annotations

import codecs
import re

MAX_BAD_FRACTION = 0.005
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_ALIASES = {
    "iso-8859-1": "cp1252", "iso8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "l1": "cp1252",
    "us-ascii": "cp1252", "ascii": "cp1252", "ansi_x3.4-1968": "cp1252", "windows-1252": "cp1252",
    "iso-8859-9": "cp1254", "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030",
    "shift_jis": "cp932", "shift-jis": "cp932", "sjis": "cp932", "x-sjis": "cp932", "windows-31j": "cp932",
    "euc-kr": "cp949", "ks_c_5601-1987": "cp949", "tis-620": "cp874", "iso-8859-11": "cp874",
    "x-user-defined": "cp1252", "unicode": "utf-16-le", "utf-16": "utf-16-le",
    "utf8": "utf-8", "unicode-1-1-utf-8": "utf-8",
    # WHATWG labels that Python does not know
    "iso88591": "cp1252", "x-cp1252": "cp1252", "windows-874": "cp874", "x-cp1250": "cp1250",
    "x-cp1251": "cp1251", "iso-8859-8-i": "iso8859-8", "csiso88598i": "iso8859-8", "logical": "iso8859-8",
    "x-mac-cyrillic": "mac-cyrillic", "x-mac-ukrainian": "mac-cyrillic", "x-mac-roman": "mac-roman",
    "csgb2312": "gb18030", "windows-949": "cp949", "iso88599": "cp1254",
}
# ...and by the codec Python resolves a label to, for the labels Python knows under
# other names (cp819, csisolatin1, iso_8859-1, iso-ir-100 are all its latin-1)
_CODEC_AS = {"latin-1": "cp1252", "iso8859-1": "cp1252", "ascii": "cp1252", "iso8859-9": "cp1254",
             "gb2312": "gb18030", "gbk": "gb18030", "shift_jis": "cp932", "euc_kr": "cp949",
             "tis-620": "cp874", "iso8859-11": "cp874"}
# the charsets of the WHATWG Encoding Standard, as codec_for names them (cp950:
# Microsoft's Big5, whose additions, the euro sign among them, WHATWG's Big5 has)
_WEB_CODECS = frozenset(
    ["utf-8", "utf-16-le", "utf-16-be", "cp866", "koi8-r", "koi8-u", "mac-roman", "mac-cyrillic", "cp874",
     "gb18030", "big5", "big5hkscs", "cp950", "euc_jp", "iso2022_jp", "cp932", "cp949"]
    + [f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)] + [f"cp{n}" for n in range(1250, 1259)])
# a <meta> tag, and its attributes (name, value), as the WHATWG prescan reads them
_META_TAG = re.compile(rb"<meta[\t\n\f\r /]((?:[^>\"']|\"[^\"]*\"|'[^']*')*)", re.IGNORECASE)
_ATTRIBUTE = re.compile(rb"""([^\t\n\f\r /=>][^\t\n\f\r /=>]*)"""
                        rb"""(?:[\t\n\f\r ]*=[\t\n\f\r ]*("[^"]*"|'[^']*'|[^\t\n\f\r >]+))?""")
_LABEL = re.compile(rb"([a-zA-Z0-9_:.\-]+)")
_CHARSET_LABEL = re.compile(rb"""charset[\t\n\f\r ]*=[\t\n\f\r ]*["']?[\t\n\f\r ]*([a-zA-Z0-9_:.\-]+)""", re.IGNORECASE)
_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?([^"';\s,]+)""", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f]")
# Python codecs that are no web charset: rot13, base64, zlib ... (not text
# encodings), and these text codecs, which the WHATWG Encoding Standard does
# not have (UTF-7 and HZ it maps to "replacement": a page's script could hide in them)
_NOT_CHARSETS = frozenset({"idna", "punycode", "undefined", "unicode-escape", "raw-unicode-escape", "utf-7", "hz"})


class UndecodableError(ValueError):
    """No charset turns the payload into text."""


def codec_for(label: str | None) -> str | None:
    """Python codec name for a charset label, or None if unknown."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _ALIASES.get(label, label)
    try:
        info = codecs.lookup(label)
    except (LookupError, ValueError):  # ValueError: a label holding NUL
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_CHARSETS:
        return None
    return _CODEC_AS.get(info.name, info.name)


def charset_from_content_type(content_type: str | None) -> str | None:
    if not content_type:
        return None
    match = _HEADER_CHARSET.search(content_type)
    return match.group(1) if match else None


_COMMENT = re.compile(rb"<!--.*?(?:-->|$)", re.DOTALL)


def charset_from_meta(head: bytes) -> str | None:
    """The charset of the first `<meta>` declaring one, outside comments (the
    WHATWG prescan skips them: a commented-out `<meta charset>` won before):
    its `charset` attribute, or a `content` attribute's `charset=` when the
    tag has `http-equiv="content-type"` (a "charset=" in any attribute was
    taken, so a description quoting one decided a page's charset; found in
    review)."""
    for tag in _META_TAG.finditer(_COMMENT.sub(b"", head) if b"<!--" in head else head):
        attributes: dict[bytes, bytes] = {}
        for name, value in _ATTRIBUTE.findall(tag.group(1)):
            attributes.setdefault(name.lower(), value.strip(b"\"'"))
        found = _LABEL.match(attributes.get(b"charset", b"").strip())  # (`charset=utf-8/>`: "utf-8")
        if not found and attributes.get(b"http-equiv", b"").strip().lower() == b"content-type":
            found = _CHARSET_LABEL.search(attributes.get(b"content", b""))
        if found:
            return found.group(1).decode("ascii")
    return None


def _try(payload: bytes, codec: str) -> str | None:
    """The payload in `codec`, or None when it does not fit (or the codec
    cannot decode at all: "undefined", "idna" and "punycode" raise other
    errors than UnicodeDecodeError, even with "replace")."""
    try:
        return payload.decode(codec)
    except UnicodeDecodeError:
        pass
    except (LookupError, UnicodeError, ValueError, TypeError):
        return None
    try:
        text = payload.decode(codec, "replace")
    except (LookupError, UnicodeError, ValueError, TypeError):
        return None
    bad = text.count("\ufffd")
    return text if bad <= MAX_BAD_FRACTION * max(len(text), 1) else None


def _utf8_guess(payload: bytes) -> str | None:
    """The payload as UTF-8 when nothing declares a charset: strict, or with a few
    bad bytes (MAX_BAD_FRACTION) among more characters UTF-8 did decode beyond ASCII
    (a UTF-8 page with a stray byte). A payload whose only bytes beyond ASCII are bad
    ones is a legacy code page, for detection: taken as UTF-8 with up to 0.5% bad,
    an undeclared windows-1252 page lost its accents and quotes to U+FFFD (3
    washingtonpost.com pages of news/cleanportaleval; found in review)."""
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError:
        pass
    text = _try(payload, "utf-8")
    if text is None:
        return None
    bad = text.count("\ufffd")
    beyond_ascii = len(text) - len(text.encode("ascii", "ignore")) - bad
    return text if beyond_ascii > bad else None


def _no_wide_markup(payload: bytes) -> bool:
    """No NUL byte in the first KiB: markup in UTF-16 or UTF-32 has one beside
    each ASCII character (`<` is 3C 00), so these bytes are not in either. A
    browser obeys an HTTP header saying UTF-16 even then and shows CJK-looking
    garbage (ASCII pairs read as one code unit); a crawl cleaner keeps the page
    readable instead, trying the next source (README Known gaps until 2026-11-27)."""
    return b"\x00" not in payload[:1024]


def decode_html(payload: bytes, content_type: str | None = None) -> tuple[str, str, str]:
    """(text, codec, source) where source is bom|header|meta|utf-8|detected.

    Raises UndecodableError when nothing fits (see module docstring)."""
    for bom, codec in _BOMS:
        if payload.startswith(bom):
            return _checked(payload[len(bom):].decode(codec, "replace"), codec, "bom")
    candidates = (
        (codec_for(charset_from_content_type(content_type)), "header"),
        (codec_for(charset_from_meta(payload[:4096])), "meta"),
        ("utf-8", "utf-8"),
    )
    for codec, source in candidates:
        if codec is None or codec.startswith(("utf-16", "utf-32")) and (source == "meta" or _no_wide_markup(payload)):
            continue
        text = _try(payload, codec) if source != "utf-8" else _utf8_guess(payload)
        if text is not None:
            try:
                return _checked(text, codec, source)
            except UndecodableError:  # a wrong label (cp037 on an ASCII page reads as controls): the next source
                continue
    codec, names = _detected(payload)
    if codec is not None:
        if len(payload) > _SAMPLE and len(names) > 1:
            codec = _whole_page(payload, names, codec)
        text = _try(payload, codec)
        if text is not None:
            return _checked(text, codec, "detected")
    raise UndecodableError("no charset decodes the payload (header, meta, utf-8 and detection failed)")


_SAMPLE = 65536  # the bytes detection reads


def _detected(payload: bytes) -> tuple[str | None, list[str]]:
    """charset-normalizer's guess for the payload's sample (`_sample`), as a
    web charset, and the web charsets that guess could be (the sample reads
    alike in all of them). Only charsets a browser has, by any name a guess
    could be: charset-normalizer also offers DOS and other code pages no page
    is served in (a windows-1252 page came out as cp775), and names EUC-JP
    euc_jis_2004 (taken by its own name alone, an EUC-JP page was read as
    gb18030). Among those names windows-1252 first, and near ties go to it
    (`_with_cp1252_ties`). No UTF-16/32 for bytes without a NUL in their first
    KiB, as for a label (a Shift_JIS page with NEC symbols, ①, was guessed
    utf_16_be alone and read as CJK-looking junk: undecodable now). Where
    every guess is some other charset, windows-1252, the WHATWG default (Johab,
    guessed for a short French page, swallowed its '<'s). Found in review."""
    from charset_normalizer import from_bytes  # imported lazily: the slow path

    wide = not _no_wide_markup(payload)
    sample, safe = _sample(payload)

    def read(part: bytes) -> tuple[list, bool]:
        guesses, other = [], False
        for m in from_bytes(part):
            names = [c for c in dict.fromkeys(map(codec_for, [m.encoding, *m.could_be_from_charset]))
                     if c in _WEB_CODECS and (wide or not c.startswith(("utf-16", "utf-32")))]
            if names:
                guesses.append((m, ["cp1252", *(n for n in names if n != "cp1252")] if "cp1252" in names else names))
            other = other or not (codec_for(m.encoding) or "").startswith(("utf-16", "utf-32"))
        return guesses, other

    if safe:
        guesses, other = read(sample)
    else:  # no safe end (rare: 32 KiB with no space, '/' or line end): cut at 0 to 3 bytes less, one of which
        # ends a character in a two-, three- or four-byte charset, and keep the cut that reads with least chaos
        tries = [read(sample[:len(sample) - k]) for k in range(4)]
        guesses, other = min(tries, key=lambda t: t[0][0][0].chaos if t[0] else 2.0)
        other = other or any(t[1] for t in tries)
    if not guesses:
        return ("cp1252", ["cp1252"]) if other else (None, [])
    names = _with_cp1252_ties(guesses)
    return names[0], names


def _with_cp1252_ties(guesses: list) -> list[str]:
    """The charsets of the first of `guesses` ((match, web names) pairs, best
    first), or windows-1252's where a guess in it ties with the first: ties
    are common between single-byte Latin code pages, and windows-1252 is the
    web's most used legacy encoding and the WHATWG default. A tie: no more
    chaos than the first's but for 0.02 (French in windows-1252 reads with none
    as cp1257 and 0.016 as itself; the window was 0.005, found in review), a
    language no less coherent but for 0.01."""
    (best, names), *rest = guesses
    for m, other in rest:
        if other[0] == "cp1252" and m.chaos <= best.chaos + 0.02 and m.coherence >= best.coherence - 0.01:
            return other
    return names


def _sample(payload: bytes) -> tuple[bytes, bool]:
    """The first 64 KiB, for detection, ended after a line end (or another byte
    below 0x30) in its second half where the payload goes on: cut inside a
    multi-byte character, an undeclared EUC-KR, GB18030, Shift_JIS, EUC-JP or
    Big5 page longer than that was undecodable (their lead and trail bytes are
    all 0x30 or above), and a cut in its first half (a short first line, then
    one long one) made a sample of seven bytes; found in review. Wide
    (UTF-16/32) bytes are cut as they come. And whether the end is safe
    (False: no such byte in its second half)."""
    head = payload[:_SAMPLE]
    if len(payload) <= _SAMPLE or b"\x00" in head[:1024]:
        return head, True
    end = head.rfind(b"\n", _SAMPLE // 2) + 1
    if not end:
        below = _LAST_LOW_BYTE.search(head, _SAMPLE // 2)
        if below is None:
            return head, False
        end = below.start() + 1
    return head[:end], True


_LAST_LOW_BYTE = re.compile(rb"[\x00-\x2f][\x30-\xff]*\Z")
_SCAN_LIMIT = 1 << 20  # bytes of a page `_whole_page` looks through for lines the charsets read otherwise


def _whole_page(payload: bytes, names: list[str], codec: str) -> str:
    """Which of `names` (charsets the detection sample reads alike in) the whole
    page is in: detection again, among them only, over the lines they read
    otherwise (whole lines up to 64 KiB, in the page's first MiB; the first
    cut short if it alone is longer); `codec` where there are none or that
    says nothing. Its first guess, not the windows-1252 tie rule (there
    windows-1250 and -1252 tie on Hungarian's ő and ű), except that a tie does
    not go to a rarely served Latin code page (`_RARELY_SERVED`). (A Polish
    windows-1250 page whose first 64 KiB held only letters windows-1252
    shares, é and ó, was read as windows-1252 to its end; found in review.)"""
    from charset_normalizer import from_bytes

    differing, size = [], 0
    for line in payload[:_SCAN_LIMIT].split(b"\n"):
        if not line.isascii() and len({line.decode(name, "replace") for name in names}) > 1:
            if size + len(line) >= _SAMPLE:  # (whole lines: a line cut short made detection say nothing)
                if not differing:
                    differing.append(line[:_SAMPLE])
                break
            differing.append(line)
            size += len(line) + 1
    if not differing:
        return codec
    # (a lenient chaos threshold: every one of `names` read the sample, and only their order is asked)
    again = list(from_bytes(b"\n".join(differing), cp_isolation=names, threshold=0.5))
    if again and codec_for(again[0].encoding) in _RARELY_SERVED:  # (it tied with the right one for Polish
        # in ISO-8859-2 and French in -15, found in review): a more common one as good but for 0.02 of chaos
        again = [m for m in again if codec_for(m.encoding) not in _RARELY_SERVED
                 and m.chaos <= again[0].chaos + 0.02] or again
    found = codec_for(again[0].encoding) if again else None
    return found if found in names else codec


# Latin code pages that few pages are in: in `_whole_page`, a tie does not go to them
_RARELY_SERVED = frozenset({"iso8859-3", "iso8859-4", "iso8859-10", "iso8859-14", "iso8859-16"})


def _checked(text: str, codec: str, source: str) -> tuple[str, str, str]:
    sample = text[:8192]
    if sample and len(_CONTROL.findall(sample)) > 0.05 * len(sample):
        raise UndecodableError(f"payload decoded as {codec} is mostly control characters (binary?)")
    return text, codec, source
