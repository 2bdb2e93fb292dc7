"""Deep nesting flattened before parsing, so that no page costs quadratic time or memory.

HTML5 tree construction checks, for every block-level start tag (div, ul, p,
section, ...), whether a <p> is open "in button scope", walking the stack of
open elements down to a scope boundary. Unclosed or deeply nested containers
make that stack as deep as the page has tags, and parsing quadratic: Lexbor
takes 3.2-3.5 s on 40,000 nested <div>s and, by a quadratic, hours on a 10 MB
payload of them (`scripts/bench_nesting.py` measures it). Broken generators
and adversarial pages produce exactly that, and one such record would hold a
Spark task for as long.

Browsers bound it: the WebKit and Chromium parsers never nest elements deeper
than 512 (kMaximumHTMLParserDOMTreeDepth; their layout test "the HTML parser
does not allow the nesting depth of elements to exceed 512"): deeper ones
become siblings at that depth. `flatten` does much the same in the text
before Lexbor, which has no such limit, sees it: a start tag that would open an
element below `max_depth` containers, and the end tag that closes it, are
dropped. All text and every link stay; what is lost is the structure below
depth 512, which no pagelet (Bar-Yossef & Rajagopalan, Def. 2) or DOM node of
the page-level model depends on in a real page.

Most pages cost one pass in C (html/_scan.pyx: the count of '<' and a bound
on the open formatting elements, below), or one `str.count` where no C
compiler built it. Under `min_tags` '<' characters the depth is not checked,
their parse being bounded anyway (10,000 nested <div>s: 0.15 s). The others
get `bounds`, upper bounds in a few numpy passes, and only a page a bound
puts at its limit is scanned tag by tag. The scan is an approximation of the
tree builder, erring on the side of depth: elements the parser closes
implicitly (p, li, td, a, ...) and void elements do not count, nor `<x/>` in
svg or math (elsewhere HTML ignores the '/': `<div/>` opens a div); comments,
and the elements whose content Lexbor's tokenizer reads as text (script,
style, xmp, iframe, noembed, noframes; textarea and title, whose RCDATA holds
no comment either: `<title><!--</title>` is a title; plaintext, to the end of
the page; not noscript, markup with scripting off) are skipped, ending where
the tokenizer ends them (`<!-->`, `--!>`, `</script x>`, never closed: the
rest of the page; `<script-x>` is no script). In svg and math, where style,
script, textarea and title are elements like any other, the scan reads their
content as markup; the gate cannot follow foreign content and skips nothing
after the first <svg or <math (more tags counted, which is safe). And an end tag closes the
nearest open element of its name and everything above it only where HTML5
does: not across a special element (`<span><div></span>` closes nothing; a
formatting end tag, whose adoption agency moves rather than closes, is read
the same way), nor, for the block end tags that close "in scope" (</div>,
</section>, ...), across a scope boundary (table, object, svg's
foreignObject, ...). `bounds` does not follow that: an end tag the parser
ignores still lowers it (`<span><div></span></div>` repeated: bound 2, the
tree as deep as the page is long). So an unclosed <div> in a table
cell stays open to the scan, where the parser closes it with the cell: a page
of more than 512 such cells would be flattened though the parser would not
have nested them (its text and links all stay).

The other quadratic case is HTML5's "reconstruct the active formatting
elements": N unclosed formatting elements that differ in their attributes
(`<b class=cN>`; the spec's Noah's Ark clause keeps at most three identical
ones), ended by a paragraph's end and followed by N paragraphs, make N * N
elements (N = 5,000, a 124 kB page: 26 s and 9 GB). The scan caps them too:
a formatting start tag is dropped when `max_formatting` are open, so such a
page builds at most 64 per block. Pages under `min_tags` tags get that
bound from html/_scan.pyx; without it (no C compiler) they are not scanned,
and there N can still reach a few thousand (N = 2,000, 6,000 tags: 4 million
elements), since scanning them in Python costs 1.16x extract time from 2,000
tags (`scripts/bench_nesting.py`, step 3).
"""

from __future__ import annotations

import os
import re

import numpy as np
from selectolax.lexbor import LexborHTMLParser

MAX_DEPTH = 512  # the WebKit / Chromium HTML parser's limit
MAX_FORMATTING = 64  # open formatting elements (b, font, ...): each is rebuilt in every later block
MIN_TAGS = 10_000  # '<' characters below which a page is not scanned

# a comment, or an element whose content the tokenizer reads as text: tag-like
# text in them is not tags (ASCII only, as html/_scan.pyx reads them). Where
# HTML5's tokenizer ends them: "<!-->" and "<!--->" are whole comments, and
# "--!>" ends one as "-->" does; a script starts at "<script" followed by a
# space, '/' or '>' ("<script-x>" and "<script:x>" are other elements) and ends
# at "</script" followed by one of them ("</script x>" and "</script/>" end it;
# the rest of that end tag is left to _TAG, which finds no tag in it unless it
# holds a '<'), and so do style and the other elements Lexbor reads as raw text
# (RAWTEXT: xmp, iframe, noembed, noframes; noscript is markup, scripting being
# off) or as RCDATA (textarea, title: `<title><!--</title>` is a title, no
# comment); never closed, they hold the rest of the page, and plaintext always
# does. Skipping less than the tokenizer only counts more (found in review:
# each difference hid the nesting after it to the next "-->" or "</script>", or
# the end of the page). In svg and math they are elements like any other
# (`<svg><style><div>` opens a div): _cuts reads them so there (_TAG_FOREIGN),
# and the gate skips nothing after the first <svg or <math (_gate_text)
_RAW_TEXT = ("script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes")


def _any_case(word: str) -> str:
    """`word` in any ASCII case ((?i) would also take 'ſ' for 's' and 'K' for 'k')."""
    return "".join(f"[{c.upper()}{c}]" for c in word)


_COMMENT = r"<!--(?:-?>|.*?(?:--!?>|\Z))"
_SKIPPED_AFTER_LT = (_COMMENT[1:] + "".join(
    rf"|{_any_case(w)}(?=[ \t\n\r\f/>]|\Z).*?(?:</{_any_case(w)}[ \t\n\r\f/>]|\Z)" for w in _RAW_TEXT) +
                     rf"|{_any_case('plaintext')}(?=[ \t\n\r\f/>]|\Z).*")
_SKIPPED = "<(?:" + _SKIPPED_AFTER_LT + ")"
_SKIP = re.compile(_SKIPPED, re.S)
# what is skipped (no groups), or a start or end tag: (end slash, name, the rest up to
# '>', none if a '<' comes first); the tag's name is where _TAG_NAME finds it
_TAG = re.compile(_SKIPPED + r"|<(/?)([A-Za-z][A-Za-z0-9:-]*)([^<>]*>)?", re.S)
# the same in svg and math (foreign content, not at an integration point): only
# comments are skipped
_TAG_FOREIGN = re.compile(_COMMENT + r"|<(/?)([A-Za-z][A-Za-z0-9:-]*)([^<>]*>)?", re.S)
# the gate (bounds, html/_scan.pyx) skips up to the first <svg or <math start
# tag (or what _TAG reads as one: `<svg<`), nothing after it: it cannot follow
# foreign content, and counting more is safe
_GATE_FOREIGN = re.compile("<(?:" + _SKIPPED_AFTER_LT + "|(" + _any_case("svg") + "|" + _any_case("math") +
                           ")(?![A-Za-z0-9:-]))", re.S)
_FOREIGN_START = re.compile("<(?:" + _any_case("svg") + "|" + _any_case("math") + ")(?![A-Za-z0-9:-])")
# the rest of a tag that is cut, as a browser reads it: a quoted attribute value
# may hold '>' and '<' (`title="a>b"`: cut at its first '>', 'b">' was left as
# text; found in review); a value over 4 KiB is read as _TAG reads it (a quote
# never closed must not make the search quadratic); possessive (`*+`): a tag
# with no '>' before the next '<' fails at once, where backtracking over which
# '=' opened a quoted value took 2^k steps for k attributes (1.9 s for a
# 718-byte page; found in review)
_TAG_REST = re.compile(r"""(?:[^<>=]|=[ \t\n\r\f]*"[^"]{0,4096}"|=[ \t\n\r\f]*'[^']{0,4096}'|=)*+>""")
# never nest (void) or are closed by the parser when a sibling starts (HTML5
# "optional end tags", the <a>/<nobr>/<button>/<form> rules): not counted
_FLAT = frozenset(
    "area base br col embed hr img input keygen link meta param source track wbr "
    "p li dt dd option optgroup tr td th thead tbody tfoot colgroup caption rb rt rtc rp "
    "a nobr button form select html head body frame frameset".split()
)
# HTML5's formatting elements (less <a> and <nobr>, which do not nest): unclosed,
# they are reconstructed in every block that follows
_FORMATTING = frozenset("b big code em font i s small strike strong tt u".split())
# foreign content (HTML5 13.2.6.5): in <svg> and <math>, and only there, `<x/>`
# closes itself. These start tags (and </p>, </br>) leave it, closing the svg or
# math element and all in it; <font> only with a color, face or size attribute
_FOREIGN = frozenset(("svg", "math"))
_BREAKOUT = frozenset(
    "b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li "
    "listing menu meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var".split()
)
_FONT_BREAKOUT = re.compile(r"[ \t\n\r\f/](?:color|face|size)(?![^ \t\n\r\f/>=])", re.I)
# and these hold HTML again: svg's foreignObject, desc and title; MathML's text
# integration points and annotation-xml (when it says text/html: here always)
_INTEGRATION = frozenset("foreignobject desc title mi mo mn ms mtext annotation-xml".split())
# HTML5's special elements: "any other end tag" (</span>, </x-y>) closes nothing
# when one lies above the nearest element of its name (`<span><div></span>`
# leaves both open: 40,000 nested; found in review); in svg and math, the
# integration points are (_INTEGRATION)
_SPECIAL = frozenset(
    "address applet area article aside base basefont bgsound blockquote body br button caption center col "
    "colgroup dd details dir div dl dt embed fieldset figcaption figure footer form frame frameset h1 h2 h3 "
    "h4 h5 h6 head header hgroup hr html iframe img input keygen li link listing main marquee menu meta nav "
    "noembed noframes noscript object ol p param plaintext pre script search section select source style "
    "summary table tbody td template textarea tfoot th thead title tr track ul wbr xmp".split()
)
# end tags that close only an element "in scope": none when a scope boundary
# (_SCOPE, and in svg and math the integration points) lies above it
_IN_SCOPE = frozenset(
    "address applet article aside blockquote button center details dialog dir div dl fieldset figcaption "
    "figure footer header hgroup h1 h2 h3 h4 h5 h6 listing main marquee menu nav object ol pre search "
    "section summary ul".split()
)
_SCOPE = frozenset("applet caption html table td th marquee object template".split())
# a start tag's attributes as the tokenizer reads them, one per match: whitespace
# and '/', or a name and its value (group 1 the '=', groups 2 and 3 a closing
# quote); possessive, so that a quote never closed cannot make it backtrack
_ATTRIBUTE = re.compile(r"""[ \t\n\r\f/]++|[^ \t\n\r\f/>][^ \t\n\r\f/>=]*+"""
                        r"""(?:[ \t\n\r\f]*+(=)[ \t\n\r\f]*+(?:"[^"]*+(")|'[^']*+(')|[^ \t\n\r\f>]*+))?+""")


def _self_closing(rest: str) -> bool:
    """Whether a start tag whose text after the name is `rest` (up to its '>')
    has HTML5's self-closing flag: it ends in "/>" and that '/' is not the end
    of an unquoted attribute value (`<g class=c/>` is not self-closing)."""
    if not rest.endswith("/>"):
        return False
    last = None
    for last in _ATTRIBUTE.finditer(rest, 0, len(rest) - 2):
        pass
    return last is None or last.group(1) is None or last.group(2) is not None or last.group(3) is not None


def parse(html: str) -> tuple[LexborHTMLParser, int]:
    """Lexbor's tree of `html` after `flatten`, and the start tags it dropped:
    how templatemine parses every page (extract, page mode, ETDM, the report
    viewer), so that all of them see the same tree."""
    html, dropped = flatten(html)
    return LexborHTMLParser(html), dropped


def flatten(html: str, max_depth: int = MAX_DEPTH, min_tags: int = MIN_TAGS,
            max_formatting: int = MAX_FORMATTING) -> tuple[str, int]:
    """(html, start tags dropped): `html` itself unless some element would sit
    below `max_depth` open containers, or a formatting element would open when
    `max_formatting` are, else the text without those elements' start and end
    tags. Three passes, each only on the pages the one before lets through:
    the count of '<' (`min_tags`; with html/_scan.pyx built, with the
    formatting elements' bound, on every page), bounds on the depth and the
    open formatting elements (`bounds`), and the scan that cuts (`_cuts`).
    Bytes, which Lexbor decodes itself, are returned as they are: templatemine
    parses decoded text (html/charset.py)."""
    if not isinstance(html, str):
        return html, 0
    if _scan is not None:  # every page: the count and the formatting bound in one C pass
        tags, formatting = _scan.scan(html)
        if tags >= min_tags:
            depth, formatting = bounds(html)
        elif formatting < max_formatting:
            return html, 0
        else:
            depth = 0  # its parse is bounded (above); _cuts may still cut for depth
    elif len(html) < 3 * min_tags or html.count("<") < min_tags:
        return html, 0
    else:
        depth, formatting = bounds(html)
    if depth < max_depth and formatting < max_formatting:
        return html, 0
    cuts: list[tuple[int, int]] = []
    n_dropped = _cuts(html, max_depth, cuts, max_formatting)
    if not n_dropped:
        return html, 0
    parts, at = [], 0
    for start, end in cuts:
        parts.append(html[at:start])
        at = end
    parts.append(html[at:])
    return "".join(parts), n_dropped


class _Code(dict):
    """(end slash, name) -> 2 * the name's number + 1 for an end tag; -1 for a
    _FLAT element, which neither opens nor closes a container."""

    def __missing__(self, key: tuple[str, str]) -> int:
        end, name = key
        name = name.lower()
        if name in _FLAT:
            value = -1
        else:
            if name not in _NAMES:
                _NAMES[name] = len(_NAMES)
                _IS_FORMATTING.append(name in _FORMATTING)
            value = 2 * _NAMES[name] + (1 if end else 0)
        self[key] = value
        return value


_NAMES: dict[str, int] = {}
_IS_FORMATTING: list[bool] = []  # by the name's number
_CODE = _Code()
_TAG_NAME = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:-]*)")


def _gate_text(html: str) -> str:
    """`html` with what the gate skips left out: comments and raw text up to
    the first <svg or <math start tag (_GATE_FOREIGN), nothing after it."""
    if _FOREIGN_START.search(html) is None:  # most pages: one pass
        return _SKIP.sub(" ", html)
    for m in _GATE_FOREIGN.finditer(html):
        if m.group(1) is not None:
            at = m.start()
            return _SKIP.sub(" ", html[:at]) + html[at:]
    return _SKIP.sub(" ", html)


def bounds(html: str) -> tuple[int, int]:
    """The most containers open at once when a start tag opens one and an end
    tag closes one of its name if one is open, comments and raw text left out
    up to the first <svg or <math (_gate_text): at least the depth `_cuts` finds unless an end tag there is
    ignored (under a special element or a scope boundary: a known gap, see
    the module's docstring); there an end tag may close more, and <x/> in svg
    or math opens nothing, in numpy rather than a Python step per tag. Per name, in
    document order, the open count is the running sum P of +1 / -1 less the
    running minimum of P where negative (an end tag with none open closes
    nothing); the depth is the running sum of all names' changes of count.
    Second, the same over the formatting elements only: at least the most
    that `_cuts` finds open at once."""
    if len(_CODE) > 100_000:  # a crawl of made-up tag names: memory stays bounded
        _CODE.clear()
        _NAMES.clear()
        _IS_FORMATTING.clear()
    code = np.fromiter(map(_CODE.__getitem__, _TAG_NAME.findall(_gate_text(html))), dtype=np.int64)
    code = code[code >= 0]
    n = len(code)
    if not n:
        return 0, 0
    name, step = code >> 1, 1 - 2 * (code & 1)
    order = np.argsort(name, kind="stable")  # each name's tags together, in document order
    name, step = name[order], step[order]
    first = np.r_[True, name[1:] != name[:-1]]
    total = np.cumsum(step)
    start = np.maximum.accumulate(np.where(first, np.arange(n), 0))  # each tag's segment start
    p = total - (total - step)[start]  # per-name running sum
    segment = np.cumsum(first)
    shift = 2 * n + 2  # more than P can span: each segment's values sit below the last one's
    p_min = np.minimum.accumulate(p - shift * segment) + shift * segment
    count = p - np.minimum(p_min, 0)
    before = np.r_[0, count[:-1]]
    before[first] = 0
    change = np.empty(n, dtype=np.int64)
    change[order] = count - before
    formatting = np.asarray(_IS_FORMATTING, dtype=bool)[code >> 1]
    return max(int(np.cumsum(change).max()), 0), max(int(np.cumsum(np.where(formatting, change, 0)).max()), 0)


def _cuts(html: str, max_depth: int, cuts: list[tuple[int, int]], max_formatting: int = MAX_FORMATTING) -> int:
    """Start tags dropped below `max_depth` open containers, or of formatting
    elements when `max_formatting` are open; the spans of those tags and of the
    end tags that close them appended to `cuts`. `<x/>` opens an element (the
    '/' is ignored) but in svg or math, which the scan follows as the tree
    builder's foreign content: a start tag of _BREAKOUT, </p> or </br> closes
    them (unless that tag is dropped), the integration points (_INTEGRATION)
    hold HTML; in it only comments are skipped (_TAG_FOREIGN: `<svg><style>`
    holds markup). An end tag closes what HTML5 closes, or less: the elements above
    its target when no special element (_SPECIAL) lies between ("any other end
    tag"; formatting end tags too, whose adoption agency moves, not closes, what
    is above them), no scope boundary (_SCOPE) for _IN_SCOPE's end tags; in svg
    or math, the foreign elements above the nearest one of its name."""
    stack: list[str] = []  # open containers, innermost last
    in_foreign: list[bool] = []  # by stack entry: whether its children are foreign content
    foreign = False  # in_foreign[-1], False when nothing is open
    # by stack entry: the index where the run of entries with foreign children
    # it ends starts; the last special element, scope boundary, template and
    # HTML element at or below it (-1: none); formatting elements at or below it
    run: list[int] = []
    last_special: list[int] = []
    last_scope: list[int] = []
    last_template: list[int] = []
    last_html: list[int] = []
    formatting_below: list[int] = []
    where: dict[str, list[int]] = {}  # HTML elements open, by name: their indices
    where_foreign: dict[str, list[int]] = {}  # svg and math elements open, by lower-case name
    open_formatting = 0
    dropped: dict[str, int] = {}  # start tags dropped and not yet closed, by name
    n_dropped = 0
    after_cut = 0  # where the last tag cut ends: a tag before it is inside that tag's attribute value

    def pop_to(index: int) -> None:
        nonlocal open_formatting
        while len(stack) > index:
            top = stack.pop()
            in_foreign.pop()
            run.pop()
            last_special.pop()
            last_scope.pop()
            last_template.pop()
            is_html = last_html.pop() == len(stack)
            formatting_below.pop()
            (where if is_html else where_foreign)[top].pop()
            open_formatting -= top in _FORMATTING and is_html

    at = 0
    while True:
        m = (_TAG_FOREIGN if foreign else _TAG).search(html, at)
        if m is None:
            break
        at = m.end()
        end, name, rest = m.group(1, 2, 3)
        if name is None or m.start() < after_cut:  # a comment or raw text (_SKIPPED); or not a tag
            continue
        name = name.lower()
        breakout = foreign and (name in _BREAKOUT if not end else name in ("p", "br")) or (
            foreign and name == "font" and not end and rest and _FONT_BREAKOUT.search(rest))
        if breakout:
            depth = run[-1]  # what stays open when the svg or math closes
            formatting_open = formatting_below[depth - 1] if depth else 0
        else:
            depth, formatting_open = len(stack), open_formatting
        if name in _FLAT:
            if breakout:
                pop_to(depth)
                foreign = bool(in_foreign) and in_foreign[-1]
                dropped.clear()
            continue
        if not end:  # a start tag
            if not breakout and rest and (foreign or name in _FOREIGN) and _self_closing(rest):
                continue  # <path/> (and <svg/>) close
            formatting = name in _FORMATTING
            if depth >= max_depth or (formatting and formatting_open >= max_formatting):
                dropped[name] = dropped.get(name, 0) + 1  # Lexbor never sees it: no breakout
                n_dropped += 1
                after_cut = _cut_end(html, m)
                cuts.append((m.start(), after_cut))
                continue
            if breakout:
                pop_to(depth)
                dropped.clear()
                foreign = bool(in_foreign) and in_foreign[-1]
            index = len(stack)
            is_foreign = foreign or name in _FOREIGN  # the element's own namespace
            below = index - 1
            stack.append(name)
            children_foreign = name in _FOREIGN or (foreign and name not in _INTEGRATION)
            run.append((run[below] if index and in_foreign[below] else index) if children_foreign else index + 1)
            in_foreign.append(children_foreign)
            foreign = children_foreign
            special = name in _INTEGRATION if is_foreign else name in _SPECIAL
            scope = name in _INTEGRATION if is_foreign else name in _SCOPE
            last_special.append(index if special else last_special[below] if index else -1)
            last_scope.append(index if scope else last_scope[below] if index else -1)
            last_template.append(index if name == "template" and not is_foreign else
                                 last_template[below] if index else -1)
            last_html.append(last_html[below] if is_foreign and index else -1 if is_foreign else index)
            formatting = formatting and not is_foreign
            formatting_below.append((formatting_below[below] if index else 0) + formatting)
            (where_foreign if is_foreign else where).setdefault(name, []).append(index)
            open_formatting += formatting
            continue
        if dropped.get(name):  # closes a dropped element: dropped too
            dropped[name] -= 1
            after_cut = _cut_end(html, m)
            cuts.append((m.start(), after_cut))
            continue
        if breakout:  # </p>, </br> (_FLAT): not here
            pop_to(depth)
            dropped.clear()
            foreign = bool(in_foreign) and in_foreign[-1]
        target = -1
        if stack and last_html[-1] != len(stack) - 1:  # in svg or math: the nearest foreign one of its name
            found = where_foreign.get(name)
            if found and found[-1] > last_html[-1]:
                target = found[-1]
        if target < 0:  # HTML's rules
            found = where.get(name)
            if not found:
                continue
            target = found[-1]
            if name == "template":
                pass
            elif name == "table":
                if last_template[-1] > target:
                    continue
            elif name in _IN_SCOPE:
                if last_scope[-1] > target:
                    continue
            elif last_special[-1] > target:  # any other end tag, and (conservatively) formatting ones
                continue
        pop_to(target)
        foreign = bool(in_foreign) and in_foreign[-1]
        dropped.clear()  # the dropped elements were all inside what closed
    return n_dropped


def _cut_end(html: str, m) -> int:
    """Where the tag `m` (a _TAG match) ends, its quoted attribute values read
    whole (_TAG_REST); `m`'s own end when an unquoted '<' comes before its '>'."""
    rest = _TAG_REST.match(html, m.end(2))
    return rest.end() if rest else m.end()


# html/_scan.pyx's probes: each must give (count of '<', bounds()[1]) as Python does
_PROBES = (
    "",
    "<p>plain <b>bold</b> <i>it<b>x</i> </b></b>",
    "<B class=a><font><Font x=1></FONT><u/><s></S></s><tt><em><strong><strike><small><big><code>",
    "<!-- <b><i> --><b><!-- unterminated <u><u>",
    "<script>var s = '<b><i>'; </SCRIPT ><b><style>i{}</style\n><i><scripts><u><Style><b>",
    "</b></i><b ></b ><b\n><bb><b-x><b:y>< b><<b></ b><script x='</b>'></script\t\f>",
    "\u00e9<b>\u00e9</b>\u2019<i class='\u00fc'>\U0001f600<u>\u017fcript<scriptx><u></u></u>",
    "<script-x><b><SCRIPT:y><i><style-z><u><script_w><s></script><b><STYLE\f><i></style/><b><script/><i>",
    "<!--><b><!---><i><!-- <u> --!><b><!-- <s> ---!><i><!--- <b> --!-><u>--><em><!---->",
    "<script></script x><b><script>1</script\t><i><style></style\r><u><script></SCRIPT/><b></script",
    "<textarea><b></textarea><i><TITLE><u></title/><s><xmp><b></xmp x><iframe><i></IFRAME\n><noembed><u></noembed>"
    "<noframes><b></noframes><em><noscript><b></noscript>",
    "<title><!--</title><b><textarea><script></textarea\t><i><textareax><u><title-x><s><Xmp/><b></xMp>",
    "<b><plaintext-x><i><PLAINTEXT><u></plaintext><s><b>",
    "<!--<svg>--><style><b></style><script><svg></script><b><svgx><style><i></style></svg><style><u></style>"
    "<sVg><style><s></style><!--<b>--><textarea><em><plaintext><i>",
    "<b><math\t><script><i></script><u>",
    "<b><svg<style><i>",
)


def _setup_scan():
    """The compiled scan, checked against Python on _PROBES; None (Python's
    gate) when it is not built or differs."""
    if os.environ.get("TEMPLATEMINE_PURE_PYTHON"):
        return None, "disabled by TEMPLATEMINE_PURE_PYTHON"
    try:
        from templatemine.html import _scan as compiled
    except ImportError as e:
        return None, f"not built ({e})"
    if set(compiled.FORMATTING) != _FORMATTING:
        return None, "disabled: its formatting elements differ from nesting._FORMATTING"
    for probe in _PROBES:
        if compiled.scan(probe) != (probe.count("<"), bounds(probe)[1]):
            return None, f"disabled: it differs from Python on {probe!r}"
    return compiled, ""


# the compiled scan, or None; COMPILED_SCAN_ERROR says why not
_scan, COMPILED_SCAN_ERROR = _setup_scan()
