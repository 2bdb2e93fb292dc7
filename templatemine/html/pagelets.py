"""Page partitioning into pagelets: Bar-Yossef & Rajagopalan, Definition 2 and
Figure 3 (section 3.1).

Definition 2: an HTML element is a pagelet if (1) none of its children contains
at least k hyperlinks, and (2) none of its ancestors is a pagelet. Figure 3
walks the tree from the root: an element with a child holding >= k links is
split (its children are examined in turn), any other element is a pagelet.

Two details the paper leaves open, decided here so that pagelets *tile* the
page (every visible text node in exactly one pagelet):
- text that sits directly inside a split element (between its children) forms
  pagelets of its own, one per maximal run of adjacent text nodes, with DOM path
  `<parent>/text()[i]`;
- children of a split element with neither visible text nor links (`<img>`,
  `<br>`, empty `<div>`) carry nothing and are not pagelets.
Invisible content is removed before partitioning (`strip_invisible`): script,
style, noscript and template elements, select/datalist option lists, the
fallbacks a browser with frames and plugins never shows (iframe, noframes and
noembed content, which the parser keeps as raw markup), and
elements a browser does not display: the `hidden` attribute, inline
`display:none` / `visibility:hidden`, and the `hidden` class of the CSS
frameworks (unless a responsive variant shows it again). "Links" are
`<a href>` and `<area href>` elements.

Cost: link counts per element come from walking up from each link once
(memoised parent pointers), so the Python work is proportional to the links and
the children of split elements, not to the size of the DOM; text is collected
by Lexbor in C.
"""

from __future__ import annotations

import re
from typing import NamedTuple

LINK_SELECTOR = "a[href], area[href]"
# elements whose content is never displayed as text: code, styles, inert
# templates, and option lists (a <select> shows one option; a <datalist> none)
INVISIBLE_TAGS = ["script", "style", "noscript", "template", "select", "datalist",
                  # raw text to the parser: their fallback markup came out as words ("<p>Your
                  # browser does not support <b>iframes</b></p>"; found in review)
                  "iframe", "noframes", "noembed"]
# elements hidden by the HTML `hidden` attribute or by inline CSS
HIDDEN_SELECTOR = ('[hidden]:not([hidden="until-found" i]), [style*="display:none" i], '
                   '[style*="display: none" i], [style*="visibility:hidden" i], [style*="visibility: hidden" i]')
# the `hidden` / `d-none` classes of Bootstrap and Tailwind are display:none ...
HIDDEN_CLASSES = ("hidden", "d-none")
HIDDEN_CLASS_SELECTOR = ", ".join(f'[class~="{c}"]' for c in HIDDEN_CLASSES)


# Tailwind's display values: what a variant must set to show a `hidden` element
# again, important (`!`) before (v3) or after (v4), or as an arbitrary property
_DISPLAY = (r"(?:block|inline|inline-block|inline-table|flex|inline-flex|grid|inline-grid|table|table-(?:caption|cell"
            r"|column|column-group|footer-group|header-group|row-group|row)|contents|flow-root|list-item)")
_DISPLAY_UTILITIES = re.compile(rf"!?{_DISPLAY}!?|\[display:{_DISPLAY}\]")
_IMPORTANT_DISPLAY = re.compile(rf"!{_DISPLAY}|{_DISPLAY}!")  # (with no variant: it beats a plain `hidden`)
_PSEUDO_ELEMENTS = frozenset("before after placeholder marker file first-letter first-line backdrop selection".split())
_COMBINATOR = re.compile(r"[>_+~]|::")  # (in an arbitrary variant '_' is a space: a descendant)


def _other_target(variant: str) -> bool:
    """A Tailwind variant that styles something other than the element: a
    pseudo-element, its children (`*:`), an arbitrary selector that reaches
    past it after its `&` (`[&>li]`, `[&_p]`, `[&::before]`; not `[.open_&]`, a
    state of an ancestor, nor `[&:has(>input)]`), or a print medium. Linear
    (a regex with two `.*` took 7 s on an 80 kB class; found in review)."""
    if variant in _PSEUDO_ELEMENTS or variant.startswith("*"):
        return True
    if variant[:1] == "[" and variant[-1:] == "]":
        inner = variant[1:-1]
        if inner.startswith("@"):
            return "print" in inner
        return _COMBINATOR.search(_outside_groups(inner.rpartition("&")[2])) is not None
    return False


def _outside_groups(selector: str) -> str:
    """`selector` without what sits inside (...) and [...] at any depth (an
    argument, `:has(:not(.a)>b)`, or an attribute's value, `[data-x=a_b]`:
    no combinator of the element's own), in one pass."""
    kept, depth = [], 0
    for ch in selector:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(depth - 1, 0)
        elif not depth:
            kept.append(ch)
    return "".join(kept)
# Bootstrap's display classes (all !important), at a breakpoint or not; `d-none`
# comes last in its CSS, so beside it only the breakpoint ones show anything
_BOOTSTRAP_DISPLAY = re.compile(r"d-(?:(sm|md|lg|xl|xxl)-)?(?:inline|inline-block|block|grid|inline-grid|table"
                                r"|table-row|table-cell|flex|inline-flex)")


def _variant_parts(c: str) -> list[str]:
    """A Tailwind class split at its variants' colons (not those in brackets:
    `[&.open]:block`, `md:[display:block]`)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(c):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(depth - 1, 0)
        elif ch == ":" and not depth:
            parts.append(c[start:i])
            start = i + 1
    parts.append(c[start:])
    return parts


def _shown_again(classes: str) -> bool:
    """... unless a variant displays the element again: at some width (Tailwind's
    `md:block`, Bootstrap's `d-lg-flex`) or in a state a reader reaches (a
    dropdown's `group-hover:block`, `dark:block`): a class with a variant prefix
    whose utility is a display value (`dark:bg-gray-700` shows nothing again:
    any variant counted before; found in review), not of something else
    (`*:block`, `before:block`, `[&>li]:block`); an important display class
    with no variant (`!flex`); Bootstrap's d-<breakpoint>-<display>, or any
    d-<display> beside Tailwind's `hidden` (d-none wins beside its own);
    never the print ones (`print:block`, `d-print-block`: on paper, never on
    screen; found in review)."""
    names = classes.split()
    for c in names:
        if ":" in c:
            *variants, utility = _variant_parts(c)
            if variants and "print" not in variants and not any(map(_other_target, variants)) \
                    and _DISPLAY_UTILITIES.fullmatch(utility):
                return True
        elif _IMPORTANT_DISPLAY.fullmatch(c):
            return True
        else:
            bootstrap = _BOOTSTRAP_DISPLAY.fullmatch(c)
            if bootstrap and (bootstrap.group(1) or "d-none" not in names):
                return True
    return False


def _visible_chars(node) -> int:
    """The characters of `node`'s text that are not white space."""
    return sum(map(len, node.text(deep=True, separator=" ").split()))


def page_root(tree):
    """Where a page's visible text and links are: <body>, or a frameset page's
    <frameset> (its frames are other documents: no text of its own), else the
    document (a fragment). A frameset page was read from <html>, its <title>
    and its <noframes> markup as words (found in review)."""
    return tree.body or tree.css_first("frameset") or tree.root


def strip_invisible(tree) -> None:
    """Remove from a parsed page (Lexbor tree) everything a browser would not
    show as text, in place (never <body> itself, nor a hidden element holding
    over half of the page's text). Text a reader never sees is neither content nor a
    template's visible part (on news pages: error messages, hidden menus and
    forms, measured in docs/pagelevel.md); links inside it are dropped too
    (hidden links are a link-spam device, not a vote)."""
    tree.strip_tags(INVISIBLE_TAGS)
    root = tree.root
    if root is None:
        return
    hidden = root.css(HIDDEN_SELECTOR)
    hidden += [n for n in root.css(HIDDEN_CLASS_SELECTOR) if not _shown_again(n.attributes.get("class") or "")]
    hidden = [n for n in hidden if n.tag not in ("html", "head", "body")]
    if not hidden:
        return
    # a page that hides most of its text until a script runs (anti-flicker
    # wrappers, client-side apps) keeps it: what a reader finally sees
    # (text counted without its white space: indentation is no text, and a
    # page's minified copy must lose what the indented one does; found in review)
    body = tree.body
    half = _visible_chars(body) / 2 if body is not None else 0
    hidden = [n for n in hidden if _visible_chars(n) <= half]
    # only the outermost: destroying an element frees its subtree, so a nested
    # match must not be touched afterwards
    ids = {n.mem_id for n in hidden}
    outer = {}
    for n in hidden:
        up = n.parent
        while up is not None and up.mem_id not in ids:
            up = up.parent
        if up is None:
            outer[n.mem_id] = n
    for n in outer.values():
        n.decompose()


class PageletNode(NamedTuple):
    """One pagelet before shingling: where it is and what it holds."""

    ordinal: int
    dom_path: str
    dom_label: str  # tag#id.class of the pagelet element ("#text" for a text run)
    text: str
    node_id: int | None  # Lexbor mem_id of the element (None for a text run)
    parent_id: int | None = None  # a text run's split element (mem_id); None for elements


def _label(node) -> str:
    attrs = node.attributes
    label = node.tag
    if attrs.get("id"):
        label += "#" + attrs["id"].strip()
    if attrs.get("class"):
        label += "." + ".".join(attrs["class"].split())
    return label


def _clean(text: str) -> str:
    return " ".join(text.split())


# Where a browser's innerText breaks the line: elements HTML's default style sheet
# lays out as blocks, list items and table parts (HTML, "Rendering", 15.3), <br>,
# and the form controls and embedded content that sit as boxes of their own
TEXT_BREAK_TAGS = frozenset(
    "address article aside blockquote body center dd details dialog dir div dl dt fieldset figcaption figure "
    "footer form frameset h1 h2 h3 h4 h5 h6 header hgroup hr html legend li listing main menu nav noframes ol p "
    "plaintext pre search section summary table caption colgroup col tbody td tfoot th thead tr ul xmp "
    "optgroup option br button select textarea input iframe video audio object embed canvas img svg".split()
)


def element_text(node) -> str:
    """An element's visible text as a reader sees it, white space collapsed.

    Text nodes join as innerText joins them: with nothing between them across
    an inline element's edge (`<span class=dropcap>T</span>he` is "The",
    `<a>Times Haiku</a>,` is "Times Haiku,", `un<em>believ</em>able` one word),
    with a space across a block's edge, a `<br>` or an embedded box such as
    `<img>` or `<svg>` (TEXT_BREAK_TAGS). One departure, since the CSS is not
    read: where an inline element ends and another starts
    (`<a>Home</a><a>About</a>`), or an empty one sits between two words, a
    space, because menus, tag lists and datelines set such elements apart with
    margins and generated content innerText does not see (cnbc.com's
    `2019<span class=ArticleHeader-datetimeDivider></span>4:29`; the price is
    `Hel<span></span>lo`, rare). `<wbr>` is no seam at all.

    With the compiled DOM walk built, `_walk.joined_text` walks the element in
    C (faster than selectolax's own `text()`: 0.39 s against 0.50 s for the
    corpora's 67,575 pagelets and their links); without it, `_joined_text` in
    Python (1.49 s)."""
    walk = _compiled_walk()
    if walk is not None:
        joined = walk.joined_text(node.mem_id)
        if joined is not None:  # (None: bad UTF-8, which selectolax decodes per text node)
            return _clean(joined)
    return _clean(_joined_text(node))


_features = None


def _compiled_walk():
    """The compiled DOM walk (pagelevel/_walk.pyx, whose `joined_text` is
    `_joined_text` in C) when it passed its check at import
    (pagelevel/features.py), else None."""
    global _features
    if _features is None:
        from templatemine.pagelevel import features  # (features imports this module)

        _features = features
    return _features._compiled


def _joined_text(node) -> str:
    """`element_text`'s walk: text nodes in document order, a space put
    between two of them when a break tag starts or ends between them, or an
    inline element starts and one ends (two that meet, or an empty one)."""
    parts: list[str] = []
    seam = 0
    stack: list = []  # open elements below `node`: (element, the seam its end leaves)
    cur = node.child
    while True:
        while cur is None:
            if not stack:
                return "".join(parts)
            element, end = stack.pop()
            seam |= end
            cur = element.next
        if cur.is_text_node:
            text = cur.text_content
            if text:
                if parts and spaced(seam):
                    parts.append(" ")
                parts.append(text)
                seam = 0
            cur = cur.next
        elif cur.is_element_node:
            kind = seam_kind(cur.tag)
            seam |= SEAM_START[kind]
            stack.append((cur, SEAM_END[kind]))
            cur = cur.child
        else:  # comments
            cur = cur.next


_INLINE, _BREAK, _NO_SEAM = 0, 1, 2  # a tag's seam kind (the compiled walk's SEAM_*)
# what lies between two text nodes (the compiled walk's OPENED / CLOSED / BROKEN): an inline
# element started, one ended, a break; and what a tag's start and end add of it, by seam kind
OPENED, CLOSED, BROKEN = 1, 2, 4
SEAM_START = (OPENED, BROKEN, 0)
SEAM_END = (CLOSED, BROKEN, 0)


def spaced(seam: int) -> bool:
    """Two text nodes with `seam` between them are set apart by a space: a break,
    or an inline element's start and an end (two that meet, or an empty one)."""
    return bool(seam & BROKEN) or seam == OPENED | CLOSED


def seam_kind(tag: str) -> int:
    """What a tag's edges are in running text: a break (TEXT_BREAK_TAGS), no
    seam at all (<wbr>, a word-break opportunity), or inline (any other tag)."""
    return _BREAK if tag in TEXT_BREAK_TAGS else _NO_SEAM if tag == "wbr" else _INLINE


def link_counts(root, links, k: int) -> tuple[dict[int, int], dict[int, int]]:
    """Links in the subtree of every element that holds any, *saturated at k*
    (Definition 2 only asks "at least k"), and the parent of each such element,
    both keyed by Lexbor mem_id.

    Invariant: count[a] >= min(count[x], k) for every ancestor a of x, so
    `count[x] >= k` is exact; saturation lets a link stop climbing at the first
    ancestor that already holds k links (a menu's <ul> after its third item)."""
    root_id = root.mem_id
    parent_of: dict[int, int] = {}
    count: dict[int, int] = {}
    for link in links:
        node, nid = link, link.mem_id
        while nid != root_id and nid not in parent_of:
            parent = node.parent
            if parent is None:
                break
            parent_of[nid] = parent.mem_id
            node, nid = parent, parent.mem_id
        x = link.mem_id
        while x is not None:
            c = count.get(x, 0)
            if c >= k:
                break
            count[x] = c + 1
            x = parent_of.get(x)
    return count, parent_of


def split_elements(count: dict[int, int], parent_of: dict[int, int], k: int) -> set[int]:
    """Elements that Figure 3 splits: those with a child holding >= k links."""
    return {parent_of[x] for x, c in count.items() if c >= k and x in parent_of}


def partition(root, root_path: str, count: dict[int, int], split: set[int]) -> list[PageletNode]:
    """Figure 3, emitting pagelets in document order.

    `count` and `split` are from `link_counts` and `split_elements`."""
    pagelets: list[PageletNode] = []
    # stack of (node, path); children pushed in reverse so they pop in document order
    stack: list = [(root, root_path)]
    while stack:
        node, path = stack.pop()
        if isinstance(node, tuple):  # a run of text directly inside a split element
            text, parent_id = node
            pagelets.append(PageletNode(len(pagelets), path, "#text", text, None, parent_id))
            continue
        node_id = node.mem_id
        if node_id not in split:  # Definition 2: a pagelet
            text = element_text(node)
            if text or node_id in count:
                pagelets.append(PageletNode(len(pagelets), path, _label(node), text, node_id))
            continue
        pending: list = []
        run: list[str] = []
        n_runs = 0
        seen: dict[str, int] = {}
        for child in node.iter(include_text=True):
            if child.is_element_node:  # (a <wbr> too: etdm and the report number runs the same way)
                if run:
                    text = _clean("".join(run))
                    run = []
                    if text:
                        n_runs += 1
                        pending.append(((text, node_id), f"{path}/text()[{n_runs}]"))
                tag = child.tag
                seen[tag] = n = seen.get(tag, 0) + 1
                pending.append((child, f"{path}/{tag}[{n}]"))
            elif child.is_text_node:  # white space too: it parts the words around it
                run.append(child.text_content or "")
        if run:
            text = _clean("".join(run))
            if text:
                n_runs += 1
                pending.append(((text, node_id), f"{path}/text()[{n_runs}]"))
        pending.reverse()
        stack.extend(pending)
    return pagelets


