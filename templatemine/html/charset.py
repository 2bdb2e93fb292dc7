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
WHATWG way, all 227 of the Encoding Standard (`_WHATWG_LABELS`): ISO-8859-1,
Latin-1 and US-ASCII mean windows-1252 (the xmlsoft-era pages labelled
ISO-8859-1 use its 0x80-0x9F punctuation), GB2312/GBK mean GB18030, Shift_JIS
means its Windows superset cp932, EUC-KR cp949; windows-1252 is read as WHATWG
reads it, its five bytes Python leaves undefined as the C1 controls of the same
number (`_WINDOWS_1252`); the labels of WHATWG's "replacement" (ISO-2022-KR,
HZ, ISO-2022-CN) and UTF-7 declare nothing. Beyond WHATWG, a label Python
knows is read as Python reads it (UTF-32, cp437; its other names of the
charsets above as those, latin-1 as windows-1252), where a browser would
ignore it; x-user-defined is windows-1252 (as the `<meta>` prescan has
it) also in the header; Big5 is Python's big5 (big5-hkscs its big5hkscs), which
lacks the HKSCS and Microsoft additions of WHATWG's Big5.

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
import encodings.cp1252
import re

MAX_BAD_FRACTION = 0.005
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
# The labels of the WHATWG Encoding Standard (its encodings.json, 227 labels), by
# the Python codec each encoding is read in: windows-1252 (`_WINDOWS_1252`) for
# ISO-8859-1 and ASCII, gb18030 for GBK (WHATWG decodes both alike), cp932 for
# Shift_JIS, cp949 (UHC) for EUC-KR, iso8859-8 for ISO-8859-8-I, Python's
# big5hkscs for the label big5-hkscs (its other labels Python's big5, as before).
# x-user-defined is windows-1252, as the HTML <meta> prescan makes it. Labels of
# "replacement" (None) declare nothing, as UTF-7 and HZ (`_NOT_CHARSETS`). Only
# 173 of these were known before (koi8, x-euc-jp, iso885915, visual, ucs-2 were
# not: a page so labelled went to detection; found in review, 2026-11-28).
_WHATWG_LABELS = {
    "utf-8": "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8",
    "cp866": "866 cp866 csibm866 ibm866",
    "iso8859-2": "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 latin2",
    "iso8859-3": "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 l3 latin3",
    "iso8859-4": "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 l4 latin4",
    "iso8859-5": "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5 iso_8859-5:1988",
    "iso8859-6": "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 iso-8859-6-e "
                 "iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 iso_8859-6:1987",
    "iso8859-7": "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 iso88597 "
                 "iso_8859-7 iso_8859-7:1987 sun_eu_greek",
    "iso8859-8": "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 iso88598 "
                 "iso_8859-8 iso_8859-8:1988 visual csiso88598i iso-8859-8-i logical",
    "iso8859-10": "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6",
    "iso8859-13": "iso-8859-13 iso8859-13 iso885913",
    "iso8859-14": "iso-8859-14 iso8859-14 iso885914",
    "iso8859-15": "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9",
    "iso8859-16": "iso-8859-16",
    "koi8-r": "cskoi8r koi koi8 koi8-r koi8_r",
    "koi8-u": "koi8-ru koi8-u",
    "mac-roman": "csmacintosh mac macintosh x-mac-roman",
    "cp874": "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874",
    "cp1250": "cp1250 windows-1250 x-cp1250",
    "cp1251": "cp1251 windows-1251 x-cp1251",
    "cp1252": "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 iso88591 "
              "iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252 x-user-defined",
    "cp1253": "cp1253 windows-1253 x-cp1253",
    "cp1254": "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 iso_8859-9:1989 l5 latin5 "
              "windows-1254 x-cp1254",
    "cp1255": "cp1255 windows-1255 x-cp1255",
    "cp1256": "cp1256 windows-1256 x-cp1256",
    "cp1257": "cp1257 windows-1257 x-cp1257",
    "cp1258": "cp1258 windows-1258 x-cp1258",
    "mac-cyrillic": "x-mac-cyrillic x-mac-ukrainian",
    "gb18030": "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk gb18030",
    "big5": "big5 cn-big5 csbig5 x-x-big5",
    "big5hkscs": "big5-hkscs",
    "euc_jp": "cseucpkdfmtjapanese euc-jp x-euc-jp",
    "iso2022_jp": "csiso2022jp iso-2022-jp",
    "cp932": "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis",
    "cp949": "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 ksc5601 ksc_5601 "
             "windows-949",
    None: "csiso2022kr hz-gb-2312 iso-2022-cn iso-2022-cn-ext iso-2022-kr",  # "replacement"
    "utf-16-be": "unicodefffe utf-16be",
    "utf-16-le": "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le",
}
_ALIASES = {label: codec for codec, labels in _WHATWG_LABELS.items() for label in labels.split()}
# windows-1252 as WHATWG reads it: Python's cp1252 leaves 0x81, 0x8D, 0x8F, 0x90 and
# 0x9D undefined, WHATWG reads them as U+0081, U+008D ... (one in a short page was
# over `MAX_BAD_FRACTION`: its label was refused and detection read a French page
# as windows-1250, "trčs"; found in review, 2026-11-28). Every byte is defined.
_WINDOWS_1252 = "".join(chr(byte) if char == "\ufffe" else char
                        for byte, char in enumerate(encodings.cp1252.decoding_table))
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
# not have (UTF-7, HZ and ISO-2022-KR it maps to "replacement": a page's script could
# hide in them), whatever Python name a label gives them
_NOT_CHARSETS = frozenset({"idna", "punycode", "undefined", "unicode-escape", "raw-unicode-escape", "utf-7", "hz",
                           "iso2022_kr"})


class UndecodableError(ValueError):
    """No charset turns the payload into text."""


def codec_for(label: str | None) -> str | None:
    """Python codec name for a charset label, or None if unknown."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    if label in _ALIASES:
        label = _ALIASES[label]
        if label is None:  # WHATWG "replacement"
            return None
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


def _decode(payload: bytes, codec: str, errors: str = "strict") -> str:
    """`payload` in `codec`, windows-1252 (cp1252) as WHATWG reads it (`_WINDOWS_1252`)."""
    if codec == "cp1252":
        return codecs.charmap_decode(payload, errors, _WINDOWS_1252)[0]
    return payload.decode(codec, errors)


def _try(payload: bytes, codec: str) -> str | None:
    """The payload in `codec`, or None when it does not fit (or the codec
    cannot decode at all: "undefined", "idna" and "punycode" raise other
    errors than UnicodeDecodeError, even with "replace")."""
    try:
        return _decode(payload, codec)
    except UnicodeDecodeError:
        pass
    except (LookupError, UnicodeError, ValueError, TypeError):
        return None
    try:
        text = _decode(payload, codec, "replace")
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
            return _checked(_decode(payload[len(bom):], codec, "replace"), codec, "bom")
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

    wide = not _no_wide_markup(payload)
    sample, safe = _sample(payload)

    def read(part: bytes) -> tuple[list, bool]:
        guesses, other = [], False
        for m in _normalizer_matches(part):
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


_FIVE = b"\x81\x8d\x8f\x90\x9d"  # the bytes Python's cp1252 leaves undefined (_WINDOWS_1252)
_FIVE_AS_SPACES = bytes.maketrans(_FIVE, b"     ")
_SINGLE_BYTE = frozenset(c for c in _WEB_CODECS if c.startswith(("cp8", "cp12", "iso8859", "koi8", "mac")))


def _normalizer_matches(part: bytes, cp_isolation: list[str] | None = None, **kw) -> list:
    """charset-normalizer's matches for `part`, best first, with windows-1252
    among them where one of its five bytes Python leaves undefined kept it
    out: charset-normalizer decodes with Python's cp1252, so an undeclared
    French page with one stray 0x9D came out as windows-1250 ("trčs"; found
    in review). Only where some match is a single-byte charset (the page
    could be one): a Shift_JIS page, whose lead bytes include 0x81, guessed
    UTF-16 alone is no windows-1252 page. windows-1252 is then judged on the
    page with those bytes as spaces, and all the matches ordered by chaos,
    then coherence."""
    from charset_normalizer import from_bytes

    matches = list(from_bytes(part, cp_isolation=cp_isolation, **kw))
    allowed = cp_isolation is None or "cp1252" in map(codec_for, cp_isolation)
    codecs_found = [codec_for(m.encoding) for m in matches]
    if (allowed and "cp1252" not in codecs_found and any(c in _SINGLE_BYTE for c in codecs_found)
            and any(b in part for b in _FIVE)):
        matches += list(from_bytes(part.translate(_FIVE_AS_SPACES), cp_isolation=["cp1252"], **kw))
        matches.sort(key=lambda m: (m.chaos, -m.coherence))
    return matches


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

    differing, size = [], 0
    for line in payload[:_SCAN_LIMIT].split(b"\n"):
        if not line.isascii() and len({_decode(line, name, "replace") for name in names}) > 1:
            if size + len(line) >= _SAMPLE:  # (whole lines: a line cut short made detection say nothing)
                if not differing:
                    differing.append(line[:_SAMPLE])
                break
            differing.append(line)
            size += len(line) + 1
    if not differing:
        return codec
    # (a lenient chaos threshold: every one of `names` read the sample, and only their order is asked)
    again = _normalizer_matches(b"\n".join(differing), cp_isolation=names, threshold=0.5)
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
