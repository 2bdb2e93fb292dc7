"""The DOM nodes of a page and their templateness cues (pure Python, no pyspark).

Chakrabarti, Kumar & Punera classify "each internal DOM node" from structural
and content cues humans use implicitly ("Cues used implicitly by humans" slide:
placement on screen, average sentence size, fraction of text outside anchors,
link density, aspect ratio, background colour). Kohlschütter (WWW 2009, section
2, Figure 1) adds the cheapest cue of all: text density, tokens per line of the
block's text wrapped at a fixed width, whose distribution has two classes, C1
(navigational, around 2) and C2 (full text, around 12), split near 8 (his
partition pi_1 = rounded density <= 8, section 3).

Which nodes. Every DOM element is not needed: inline markup (<b>, <span>,
<a> inside a paragraph) never changes what a reader sees as a block. A *node*
here is an element that is
  - a block-level element (BLOCK_TAGS), or
  - a pagelet or an element Figure 3 of Bar-Yossef & Rajagopalan splits (so
    that every pagelet is a node and labels from the site-level run map onto
    nodes exactly),
and that holds text or links. The root is <body>. Text inside inline elements
is the *own text* of the nearest node above it; the page's visible text is
made of all own texts, each exactly once, so removing a set of nodes' own text
removes exactly that text. Own text may go on after a child node
(`<div>Intro <p>para</p> more</div>`: "Intro more"), so each node carries
`text_at`, the number of its parent's own words before it, and the text is put
back in document order by `model.document_order`.

Placement on screen needs a renderer; its static stand-ins are document order
(the node's preorder rank and the share of the page's tokens before it) and
depth. Aspect ratio and background colour need CSS and are not used.

The features are plain floats in FEATURES order; a model stores the names it was
trained on and refuses other ones (pagelevel/model.py).

`page_nodes(html, arrays=True)` (page mode outside Spark) runs the link counts,
the pagelet set and this walk in C when the optional extension
pagelevel/_walk.pyx is built (setup.py; about half of judge_html's time on news
pages), with the same output bit for bit (tests/unit/test_walk.py,
scripts/check_walk.py). It checks itself against selectolax at import and, if
anything differs (or TEMPLATEMINE_PURE_PYTHON is set), this module's Python walk
is used; COMPILED_WALK_ERROR says why. The NODES rows of extract (`node_rows`)
come from the compiled walk too where it is built.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

import numpy as np

from templatemine.html.pagelets import BROKEN, SEAM_END, SEAM_START, TEXT_BREAK_TAGS, seam_kind, spaced
from templatemine.report.density import WRAP_WIDTH, wrap

BLOCK_TAGS = frozenset(
    "address article aside blockquote body center dd details dialog dir div dl dt fieldset figcaption figure "
    "footer form frameset h1 h2 h3 h4 h5 h6 header hgroup hr html legend li main menu nav noframes ol p pre "
    "section summary table tbody td tfoot th thead tr ul caption iframe select textarea button".split()
)
# Kohlschütter, section 3: partition pi_1 (navigational text) is the density bins
# <= 8, pi_2 (full text) those >= 9, a density's bin its value rounded half up
# (report.density.density_bin): full text from 8.5 on. It was density > 8, so a
# block of density 8.3 was full text here and pi_1 in the density report (found
# in review)
C2_MIN_DENSITY = 8.5

# class / id / role / tag words, grouped by what they usually mark; a word matches
# a token of the attribute split at non-letters (so "ad" never matches "header")
CUE_WORDS = {
    "nav": ("nav", "navbar", "navigation", "menu", "menubar", "breadcrumb", "breadcrumbs", "toc", "pagination",
            "pager", "tabs", "skip", "sitemap"),
    "header": ("header", "masthead", "banner", "topbar", "top", "branding", "logo"),
    "footer": ("footer", "copyright", "bottom", "legal", "colophon", "disclaimer"),
    "aside": ("aside", "sidebar", "side", "widget", "related", "recommended", "popular", "trending", "more",
              "promo", "teaser", "rail"),
    "social": ("share", "sharing", "social", "facebook", "twitter", "follow", "subscribe", "newsletter",
               "signup", "login", "print", "email"),
    "comment": ("comment", "comments", "disqus", "reply", "respond", "discussion"),
    "ad": ("ad", "ads", "advert", "advertisement", "sponsor", "sponsored", "dfp", "adsense", "outbrain", "taboola"),
    "content": ("article", "content", "main", "post", "entry", "story", "body", "text", "prose", "document",
                "markdown", "rst", "blog"),
    "meta": ("byline", "author", "date", "time", "meta", "tag", "tags", "category", "caption", "credit", "dateline"),
}
_CUE_OF = {w: i for i, group in enumerate(CUE_WORDS.values()) for w in group}

# Per-page boilerplate that Definition 4 never calls template (comment threads,
# "related stories", share bars: the seed's false negatives, which a model trained
# on site-level labels learns as content) is marked by the page's authors in the
# class and id words of its box. Mozilla Readability's rule for such boxes, taken
# as it is (Readability.js, REGEXPS.unlikelyCandidates, okMaybeItsACandidate and
# UNLIKELY_ROLES; Apache 2.0): a class or id matching UNLIKELY_CANDIDATES and not
# OK_MAYBE_CANDIDATE, or a role among UNLIKELY_ROLES, marks an unlikely candidate,
# never <body>, nor by its class or id an element with a <table> at most four
# levels up (Readability's exceptions, `_unlikely`). One
# change: headings are never candidates (their class words name what they head:
# rustdoc's h3.code-header, Doxygen's h2.groupheader, measured in docs/pagelevel.md).
# The bits come with the cue words' (`_value_bits`, which both DOM walks call), so
# each test runs over the id, class and role values alike: a role value is also
# matched against the lists, and a whole class or id value equal to a role
# ("navigation") marks its element too.
UNLIKELY_CANDIDATES = re.compile(
    r"-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|header|legends|"
    r"menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|supplemental|ad-break|agegate|"
    r"pagination|pager|popup|yom-remote")
OK_MAYBE_CANDIDATE = re.compile(r"and|article|body|column|content|main|shadow")
UNLIKELY_ROLES = frozenset({"menu", "menubar", "complementary", "navigation", "alert", "alertdialog", "dialog"})
# Which text is the page's article. Readability's content scoring (Readability.js
# _grabArticle; Apache 2.0), taken as it is where the node table allows
# (`_article`): paragraphs of at least 25 characters score 1 + the pieces their
# commas cut them into (innerText.split(commas).length: the commas + 1) + one
# per 100 characters (at most 3), given to the parent whole, the grandparent
# half and the next three ancestors a third of their level; each scored node
# starts from its tag's base (READABILITY_BASE) and class weight (+25 for a
# POSITIVE class or id, -25 for a NEGATIVE one) and is scaled by 1 - its link
# density; the top candidate moves to the ancestor of three near-equal rivals,
# up to a parent that scores more, and up through only children; its siblings
# that score enough (or read as a paragraph: over 80 characters with link
# density under 0.25, or under 80 without links and ending a sentence) join it.
# What differs, because the walk keeps bits and nodes, not strings and elements:
# class and id are weighted once together (+-25, not +-25 each); no same-class
# bonus for siblings; "only child" and "sibling" count nodes (elements with text
# or links); a sibling paragraph is any of TAG_GROUPS' paragraph tags (p,
# blockquote, pre).
POSITIVE = re.compile(r"article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story")
NEGATIVE = re.compile(
    r"-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr|masthead|media|meta|"
    r"outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|widget")
SCORED_TAGS = frozenset("section h2 h3 h4 h5 h6 p td pre div".split())  # DEFAULT_TAGS_TO_SCORE, + div (its text)
READABILITY_BASE = {**dict.fromkeys(("div",), 5), **dict.fromkeys(("pre", "td", "blockquote"), 3),
                    **dict.fromkeys("address ol ul dl dd dt li form".split(), -3),
                    **dict.fromkeys("h1 h2 h3 h4 h5 h6 th".split(), -5)}
# bits of a value or tag beyond CUE_WORDS' (not features: the model never sees them)
UNLIKELY_BIT, MAYBE_BIT, ROLE_BIT = len(CUE_WORDS), len(CUE_WORDS) + 1, len(CUE_WORDS) + 2
POSITIVE_BIT, NEGATIVE_BIT = len(CUE_WORDS) + 3, len(CUE_WORDS) + 4
TITLE_BIT, SCORED_BIT, BASE_SHIFT = len(CUE_WORDS) + 5, len(CUE_WORDS) + 6, len(CUE_WORDS) + 7  # base: 3 bits
_BASES = np.array([0, 5, 3, -3, -5], dtype=np.float64)  # the base's index in the 3 bits at BASE_SHIFT
# The <header> and <footer> tags are the page's banner and content-info only when
# no sectioning element holds them (HTML-AAM, the implicit ARIA roles of header
# and footer: "banner"/"contentinfo" when not a descendant of article, aside,
# main, nav or section, "generic" otherwise). An article's own <header> (its
# title and byline) and <footer> are not the site's header and footer. So the
# tags carry HEADER_TAG_BIT / FOOTER_TAG_BIT, sectioning tags SECTIONING_BIT,
# and `_landmarks` gives a header or footer its CUE_WORDS bit (and its
# semantic_box group) only when unscoped; an id, class or role word still sets
# the bit wherever the element is.
HEADER_TAG_BIT, FOOTER_TAG_BIT, SECTIONING_BIT = BASE_SHIFT + 3, BASE_SHIFT + 4, BASE_SHIFT + 5
SECTIONING_TAGS = frozenset("article aside main nav section".split())
_LANDMARK_TAGS = {"header": HEADER_TAG_BIT, "footer": FOOTER_TAG_BIT}
# per tag: its CUE_WORDS bit (a header's or footer's: `_landmarks`), its landmark
# bits and Readability's facts about it (both walks read this)
TAG_BITS = {tag: ((1 << _CUE_OF[tag]) if tag in _CUE_OF and tag not in _LANDMARK_TAGS else 0)
            | ((1 << _LANDMARK_TAGS[tag]) if tag in _LANDMARK_TAGS else 0)
            | ((1 << SECTIONING_BIT) if tag in SECTIONING_TAGS else 0)
            | ((1 << TITLE_BIT) if tag == "h1" else 0)
            | ((1 << SCORED_BIT) if tag in SCORED_TAGS else 0)
            | (int(np.flatnonzero(_BASES == READABILITY_BASE.get(tag, 0))[0]) << BASE_SHIFT)
            for tag in _CUE_OF.keys() | SCORED_TAGS | READABILITY_BASE.keys() | SECTIONING_TAGS}
_SPLIT = re.compile(r"[^a-z]+")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")
HEADINGS = frozenset("h1 h2 h3 h4 h5 h6".split())
TAG_GROUPS = {
    "heading": HEADINGS,
    "paragraph": frozenset({"p", "blockquote", "pre"}),
    "list_item": frozenset({"li", "dt", "dd"}),
    "list": frozenset({"ul", "ol", "dl", "menu"}),
    "table": frozenset({"table", "tbody", "thead", "tfoot", "tr", "td", "th"}),
    "form": frozenset({"form", "select", "textarea", "button", "fieldset"}),
    "semantic_box": frozenset({"nav", "header", "footer", "aside"}),
    "container": frozenset({"div", "section", "article", "main", "body", "span"}),
}

FEATURES = (
    "log_tokens", "page_token_share", "text_density", "c1_prior", "link_density", "links_per_token",
    "avg_sentence_tokens", "full_stop_share", "preorder_rank", "tokens_before_share", "depth", "log_children",
    *(f"own_{g}" for g in CUE_WORDS), *(f"inside_{g}" for g in CUE_WORDS), *(f"tag_{g}" for g in TAG_GROUPS),
    "is_pagelet", "is_split", "full_text_share", "in_main_block", "above_main_block",
)
N_FEATURES = len(FEATURES)
# Bump when a feature keeps its name but changes its meaning (the names are checked
# by PageModel.check, meanings are not): 2 since the <header>/<footer> scoping of
# 2026-11-26 (479b26e) changed own_header, inside_header and tag_semantic_box; 3
# since the main block is picked among kept nodes and pi_1 ends at density 8.5
# (2026-11-28). A model.json and an extract's manifest (`node_features`) record it.
FORMAT = 3
FORMAT_CHANGES = {1: "before 2026-11-26, when the <header>/<footer> scoping changed what own_header, "
                     "inside_header and tag_semantic_box mean",
                  2: "before 2026-11-28, when the main block came to be picked among kept nodes only and "
                     "pi_1 to end at density 8.5 (in_main_block, above_main_block, c1_prior, full_text_share)"}


def node_features_record() -> dict:
    """What an extract's manifest says about its NODES.features: the format and
    the count, which training and scoring check against this code's."""
    return {"format": FORMAT, "count": N_FEATURES}


def node_features_mismatch(record: dict | None) -> str | None:
    """Why NODES whose manifest says RECORD cannot be judged or trained on by
    this code; None when they can, or when the manifest says nothing (an
    output extracted before the record was kept)."""
    if not record:
        return None
    if record.get("format") == FORMAT and record.get("count") == N_FEATURES:
        return None
    found = record.get("format")
    when = f", {FORMAT_CHANGES[found]}" if isinstance(found, int) and found in FORMAT_CHANGES else ""
    return (f"its nodes hold format-{found} features ({record.get('count')}{when}); this templatemine computes "
            f"format {FORMAT} ({N_FEATURES}): extract it again")


def set_aside_message(set_aside: dict) -> str:
    """One line for the pages a nightly snapshot's check set aside
    (`{"pages": n, "formats": {format or "unknown": pages}}`, from
    `train.judgeable_nodes`), and those the page-level stage set aside for a
    NaN or infinite feature (`non_finite`, `non_finite_sample`: its URLs):
    the stage's progress and the run's summary say it in the same words."""
    formats = set_aside.get("formats") or {}
    other = (f"their nodes of other features than this templatemine's (format {FORMAT}, {N_FEATURES}): "
             + ", ".join(f"format {k}: {v}" for k, v in formats.items())) if formats else ""
    n = set_aside.get("non_finite") or 0
    sample = set_aside.get("non_finite_sample") or []
    odd = (f"{n} with a node feature that is not a finite number (NaN or infinite): {', '.join(sample)}"
           f"{' ...' if n > len(sample) else ''}") if n else ""
    if other and odd:
        other = f"{set_aside['pages'] - n} with {other[len('their '):]}"
    return (f"{set_aside['pages']} page(s) set aside, " + "; ".join(p for p in (other, odd) if p)
            + "; cleaned by the site-level templates" + (" until captured again" if formats else ""))


class DomNode(NamedTuple):
    """One node of a page's block tree (the NODES table's per-page row)."""
    node: int  # preorder index within the page (0: the root)
    parent: int  # -1 for the root
    depth: int
    dom_label: str  # tag#id.class
    pagelet_ordinal: int  # the pagelet holding the node (-1: the node is above the pagelets)
    own_pagelets: list[int]  # pagelets its own text belongs to (text runs of a split element)
    text: str  # own text
    n_tokens: int  # tokens in the subtree
    features: list[float]
    unlikely: bool  # in the subtree of an unlikely candidate (Readability's rule, UNLIKELY_CANDIDATES)
    article: bool  # in the page's article (Readability's top candidate and the siblings it joins) or an <h1>
    text_at: int  # where its subtree's text goes in its parent's own text: the parent's own words before it


def node_rows(root, pagelets, split: set[int], width: int = WRAP_WIDTH, arrays: bool = False):
    """`dom_nodes` given the page's pagelets (html/pagelets.py `PageletNode`s),
    by the compiled walk where it is built: the same arrays or rows."""
    pagelet_of = {p.node_id: p.ordinal for p in pagelets if p.node_id is not None}
    if arrays and _compiled is not None:  # the arrays need neither labels nor text runs
        return _node_matrix(*_compiled.walk(root.mem_id, pagelet_of.keys(), split, width))
    text_runs: dict[int, list[int]] = {}
    for p in pagelets:
        if p.parent_id is not None:
            text_runs.setdefault(p.parent_id, []).append(p.ordinal)
    if _compiled is None:
        return dom_nodes(root, pagelet_of, split, text_runs, width, arrays)
    *columns, ids, tags, id_values, classes = _compiled.walk(root.mem_id, pagelet_of.keys(), split, width, True)
    labels = list(map(_label_of, tags, id_values, classes))
    parent = columns[0].tolist()
    pagelet = [pagelet_of.get(ids[0], -1)]  # as dom_nodes carries it down: a pagelet element is a node
    for i in range(1, len(ids)):
        pagelet.append(pagelet_of.get(ids[i], pagelet[parent[i]]))
    own = [([pg] if pg >= 0 else []) + text_runs.get(mid, []) for pg, mid in zip(pagelet, ids)]
    return _rows(_node_matrix(*columns), columns[1].tolist(), labels, pagelet, own)


def page_nodes(html: str, k: int = 3, width: int = WRAP_WIDTH, arrays: bool = False, c_pagelets: bool = True):
    """An HTML page's nodes, parsed here: what `templatemine.html.page` computes
    for the NODES table (or, with `arrays`, a PageArrays for scoring a page
    outside Spark). With the compiled walk, `c_pagelets=False` takes the
    pagelets from html/pagelets.py instead of C (`_walk.walk`, for the checks)."""
    from templatemine.html.nesting import parse as parse_html
    from templatemine.html.pagelets import (LINK_SELECTOR, link_counts, page_root, partition, split_elements,
                                            strip_invisible)

    tree = parse_html(html)[0]
    strip_invisible(tree)
    root = page_root(tree)
    if root is None:
        return PageArrays(np.zeros(0, np.int64), np.zeros((0, N_FEATURES)), np.zeros(0, np.int64), [],
                          np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0, bool),
                          np.zeros(0, np.int64)) if arrays else []
    links = root.css(LINK_SELECTOR)
    if arrays and c_pagelets and _compiled is not None:  # pagelets, split elements and nodes in C (_walk.pyx)
        return _node_matrix(*_compiled.page(root.mem_id, [link.mem_id for link in links], k, width))
    count, parent_of = link_counts(root, links, k)
    split = split_elements(count, parent_of, k)
    root_path = "/html/body" if root.tag == "body" else "/" + root.tag
    return node_rows(root, partition(root, root_path, count, split), split, width, arrays)


def cue_bits(tag: str, attrs) -> int:
    """Bit i set when a word of group i of CUE_WORDS is in the tag, id, class or
    role; then the bits of TAG_BITS and `_value_bits` beyond those."""
    bits = TAG_BITS.get(tag, 0)
    for name in ("id", "class", "role"):
        value = attrs.get(name)
        if value:
            bits |= _value_bits(value)
    return bits


_VALUE_BITS: dict[str, int] = {}  # class strings repeat across a site's pages: split each once per process


def _value_bits(value: str) -> int:
    bits = _VALUE_BITS.get(value)
    if bits is None:
        bits = 0
        low = value.lower()
        for word in _SPLIT.split(low):
            i = _CUE_OF.get(word)
            if i is not None:
                bits |= 1 << i
        if UNLIKELY_CANDIDATES.search(low):
            bits |= 1 << UNLIKELY_BIT
        if OK_MAYBE_CANDIDATE.search(low):
            bits |= 1 << MAYBE_BIT
        if low.strip() in UNLIKELY_ROLES:
            bits |= 1 << ROLE_BIT
        if POSITIVE.search(low):
            bits |= 1 << POSITIVE_BIT
        if NEGATIVE.search(low):
            bits |= 1 << NEGATIVE_BIT
        if len(_VALUE_BITS) < 100_000:  # bounded: unique ids would grow it without end
            _VALUE_BITS[value] = bits
    return bits


def _label(tag: str, attrs) -> str:
    return _label_of(tag, attrs.get("id"), attrs.get("class"))


def _label_of(tag: str, id_value: str | None, class_value: str | None) -> str:
    """tag#id.class (both walks' NODES.dom_label)."""
    label = tag
    if id_value:
        label += "#" + id_value.strip()
    if class_value:
        label += "." + ".".join(class_value.split())
    return label


class _Acc:
    """What a node accumulates while the DOM is walked."""
    __slots__ = ("parent", "depth", "tag", "label", "pagelet", "own_pagelets", "parts", "anchor_tokens", "links",
                 "cues", "inside", "is_pagelet", "is_split", "seam", "at", "counted", "words")

    def __init__(self, parent, depth, tag, label, pagelet, cues, inside, is_pagelet, is_split):
        self.parent, self.depth, self.tag, self.label = parent, depth, tag, label
        self.pagelet, self.cues, self.inside = pagelet, cues, inside
        self.is_pagelet, self.is_split = is_pagelet, is_split
        self.own_pagelets: list[int] = [] if pagelet < 0 else [pagelet]
        self.parts: list[str] = []  # own text nodes; one joined across a seam without space
        self.anchor_tokens = 0
        self.links = 0
        # what lies between its last own text node and the next (html/pagelets.spaced), where a
        # child node and white space are breaks too
        self.seam = 0
        self.at = 0  # its parent's own words before it (`text_at`)
        self.counted = self.words = 0  # its own parts counted so far, and their words

    def words_so_far(self) -> int:
        """Own words up to here: a child node starts after them. Every part
        is closed by then (a child node is a break), so parts are counted once."""
        for part in self.parts[self.counted:]:
            self.words += len(part.split())
        self.counted = len(self.parts)
        return self.words


def dom_nodes(root, pagelet_of: dict[int, int], split: set[int], text_runs: dict[int, list[int]],
              width: int = WRAP_WIDTH, arrays: bool = False):
    """The page's nodes in preorder, with features.

    root: the <body> (Lexbor node) after invisible elements were stripped;
    pagelet_of: pagelet element mem_id -> pagelet ordinal; split: mem_ids of the
    elements Figure 3 split; text_runs: split element mem_id -> ordinals of the
    text-run pagelets directly inside it (html/pagelets.py). With `arrays`, a
    PageArrays instead of the rows."""
    accs: list[_Acc] = []
    root_id = root.mem_id
    attrs = root.attributes
    accs.append(_Acc(-1, 0, root.tag, _label(root.tag, attrs), pagelet_of.get(root_id, -1),
                     cue_bits(root.tag, attrs), 0, root_id in pagelet_of, root_id in split))
    accs[0].own_pagelets.extend(text_runs.get(root_id, ()))
    # depth-first over siblings (`child` / `next`): each stack entry is the next
    # sibling to visit and its context (owning node, inside an <a>, pagelet), and
    # the seam its parent element leaves when it ends (node, flag)
    stack = [(root.child, 0, False, accs[0].pagelet, 0, 0)]
    while stack:
        item, up, anchor, pg, seam_of, seam = stack[-1]
        if item is None:
            stack.pop()
            accs[seam_of].seam |= seam
            continue
        stack[-1] = (item.next, up, anchor, pg, seam_of, seam)
        if item.is_text_node:
            text = item.text_content
            if text and not text.isspace():
                acc = accs[up]
                if acc.parts and not spaced(acc.seam):
                    acc.parts[-1] += text
                else:
                    acc.parts.append(text)
                acc.seam = 0
                if anchor:
                    acc.anchor_tokens += len(text.split())
            elif text:
                accs[up].seam |= BROKEN
            continue
        if not item.is_element_node:
            continue
        tag = item.tag
        mid = item.mem_id
        if tag == "a" or tag == "area":
            anchor = anchor or tag == "a"
            if "href" in item.attributes:
                accs[up].links += 1
        pg = pagelet_of.get(mid, pg)
        seam_of = up
        if tag in BLOCK_TAGS or mid in pagelet_of or mid in split:
            a = item.attributes
            parent = accs[up]
            acc = _Acc(up, parent.depth + 1, tag, _label(tag, a), pg, cue_bits(tag, a),
                       parent.inside | parent.cues, mid in pagelet_of, mid in split)
            acc.own_pagelets.extend(text_runs.get(mid, ()))
            acc.at = parent.words_so_far()
            up = len(accs)
            accs.append(acc)
            seam = end = BROKEN  # a child node's text is not its parent's: a break in the parent's
        else:
            kind = seam_kind(tag)
            seam, end = SEAM_START[kind], SEAM_END[kind]
        accs[seam_of].seam |= seam
        stack.append((item.child, up, anchor, pg, seam_of, end))
    return _feature_matrix(accs, width) if arrays else _features(accs, width)


def _main_block(parent: np.ndarray, gain: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """Per node: 1 inside the page's main block, 2 above it (an ancestor), 0
    elsewhere. The main block is the kept node (`kept`: with text or links, and
    the root) whose subtree gains most full text (class C2 tokens) over other
    tokens, F - O, the deepest on ties: where a reader's eye settles, the static
    stand-in for "placement on screen". A page where no node gains (no full
    text) has none. The argmax ran over every element: on a page without full
    text an empty <div> (gain 0) won, so no node was in the main block and its
    ancestors were "above" it, and one empty element changed a menu's score from
    0.38 to 0.86 (found in review: 95 of the 1,197 corpus pages)."""
    n = len(parent)
    where = np.zeros(n, dtype=np.int8)
    candidates = np.where(kept, gain, -np.inf)
    if not n or candidates.max() <= 0:
        return where
    best = int(n - 1 - np.argmax(candidates[::-1]))  # the last maximum in preorder: deepest on ties along a path
    where[best] = 1
    for i in range(best + 1, n):  # preorder: a subtree is contiguous after its root
        if where[parent[i]] == 1:
            where[i] = 1
        elif parent[i] < best:
            break
    i = parent[best]
    while i >= 0:
        where[i] = 2
        i = parent[i]
    return where


def _levels(depth: np.ndarray) -> list[np.ndarray]:
    """The nodes at each depth 0, 1, ..., in preorder within a level: one numpy
    step per level for the walks up (`_subtree_sums`) and down (`_unlikely`)."""
    return [np.flatnonzero(depth == d) for d in range(int(depth.max(initial=0)) + 1)]


def _subtree_sums(parent: np.ndarray, levels: list[np.ndarray], values: np.ndarray) -> np.ndarray:
    """Column sums over each node's subtree, one numpy step per depth level."""
    out = values.copy()
    for level in levels[:0:-1]:
        np.add.at(out, parent[level], out[level])
    return out


_GROUP_OF = {tag: i for i, group in enumerate(TAG_GROUPS.values()) for tag in group}


class PageArrays(NamedTuple):
    """A page's kept nodes as arrays: what the scorer needs, without the rows."""
    parent: np.ndarray  # int64, -1 for the root
    features: np.ndarray  # float64, nodes x FEATURES
    n_tokens: np.ndarray  # int64, subtree tokens
    texts: list[str]  # own text
    keep: np.ndarray  # index into the walk's nodes
    unlikely: np.ndarray  # bool: in the subtree of an unlikely candidate
    article: np.ndarray  # bool: in the page's article or an <h1> (`_article`; all True: no article found)
    at: np.ndarray  # int64: the parent's own words before the node (DomNode.text_at; model.document_order)


def _features(accs: list[_Acc], width: int) -> list[DomNode]:
    """The page's DomNode rows (the NODES table), from the Python walk."""
    return _rows(_feature_matrix(accs, width), [a.depth for a in accs], [a.label for a in accs],
                 [a.pagelet for a in accs], [a.own_pagelets for a in accs])


def _rows(a: PageArrays, depth: list[int], labels: list[str], pagelet: list[int],
          own_pagelets: list[list[int]]) -> list[DomNode]:
    """DomNode rows of the kept nodes of `a`; the lists are per walked node
    (either walk's), indexed as `a.keep`."""
    rows = a.features.tolist()
    parent = a.parent.tolist()
    t_int = a.n_tokens.tolist()
    unlikely, article = a.unlikely.tolist(), a.article.tolist()
    at = a.at.tolist()
    out: list[DomNode] = []
    for new, i in enumerate(a.keep.tolist()):
        text = a.texts[new]
        out.append(DomNode(new, parent[new], depth[i], labels[i], pagelet[i], own_pagelets[i] if text else [],
                           text, t_int[new], rows[new], unlikely[new], article[new], at[new]))
    return out


def _feature_matrix(accs: list[_Acc], width: int) -> PageArrays:
    """Subtree aggregates -> feature vectors (numpy, a column per cue); nodes
    without text or links are dropped."""
    n = len(accs)
    texts = [""] * n
    # per node: own tokens, anchor tokens, links, sentences, tokens with a full stop,
    # tokens x density, full-text (C2) tokens, other tokens
    own = np.zeros((n, 8))
    for i, acc in enumerate(accs):
        own[i, 2] = acc.links
        if acc.parts:
            text = " ".join(" ".join(acc.parts).split())
            texts[i] = text
            w = wrap(text, width)
            s = len(_SENTENCE_END.findall(text))
            # anchor words count per text node: a word joined across an <a>'s edge counts once per side
            own[i, 1] = anchor = min(acc.anchor_tokens, w.tokens)
            full = w.density >= C2_MIN_DENSITY and 2 * anchor < w.tokens
            own[i, 0], own[i, 3], own[i, 4], own[i, 5] = w.tokens, s, w.tokens if s else 0, w.tokens * w.density
            own[i, 6 if full else 7] = w.tokens
    return _node_matrix(np.array([a.parent for a in accs], dtype=np.int64),
                        np.array([a.depth for a in accs], dtype=np.int64), own, texts,
                        np.array([a.cues for a in accs], dtype=np.int64),
                        np.array([a.inside for a in accs], dtype=np.int64),
                        np.array([_GROUP_OF.get(a.tag, -1) for a in accs], dtype=np.int64),
                        np.array([a.is_pagelet for a in accs], dtype=bool),
                        np.array([a.is_split for a in accs], dtype=bool),
                        np.array([a.at for a in accs], dtype=np.int64))


def _node_matrix(parent: np.ndarray, depth: np.ndarray, own: np.ndarray, texts: list[str], cues: np.ndarray,
                 inside: np.ndarray, group: np.ndarray, is_pagelet: np.ndarray, is_split: np.ndarray,
                 at: np.ndarray) -> PageArrays:
    """`_feature_matrix` from per-node columns (the Python walk's or the
    compiled one's, pagelevel/_walk.pyx): parent, depth, the own matrix, own
    texts, cue / inside bits, TAG_GROUPS index (-1 none), pagelet / split flags,
    the parent's own words before the node. A dropped node holds no words, so
    a kept node's `at` still counts its (kept) parent's words."""
    n = len(parent)
    levels = _levels(depth)
    sub = _subtree_sums(parent, levels, own)
    tokens, anchor, links, sentences, stop, mass, full, other = sub.T
    nonempty = (tokens > 0) | (links > 0)
    children = np.zeros(n)
    np.add.at(children, parent[1:], nonempty[1:])
    nonempty[0] = True
    main = _main_block(parent, full - other, nonempty)
    keep = np.flatnonzero(nonempty)
    m = len(keep)
    t = tokens[keep]
    safe = np.maximum(t, 1)
    has = t > 0
    density = np.where(has, mass[keep] / safe, 0.0)
    sent = sentences[keep]
    own_tok = own[keep, 0]
    page_tokens = max(tokens[0], 1)
    cues_all, group_all = cues, group
    cues, inside, group = _landmarks(parent, levels, cues, inside, group)
    cues, inside, group = cues[keep], inside[keep], group[keep]
    bits = np.arange(len(CUE_WORDS))
    f = np.column_stack([
        np.log1p(t), t / page_tokens, density, (density < C2_MIN_DENSITY).astype(float),
        np.where(has, anchor[keep] / safe, 1.0), np.where(has, np.minimum(links[keep] / safe, 1.0), 1.0),
        np.where(sent > 0, np.minimum(t / np.maximum(sent, 1), 100.0), np.minimum(t, 100.0)),
        np.where(has, stop[keep] / safe, 0.0), np.arange(m) / max(m - 1, 1),
        (np.cumsum(own_tok) - own_tok) / page_tokens, np.minimum(depth[keep], 40).astype(float),
        np.log1p(children[keep]),
        (cues[:, None] >> bits & 1).astype(float), (inside[:, None] >> bits & 1).astype(float),
        (group[:, None] == np.arange(len(TAG_GROUPS))).astype(float),
        is_pagelet[keep].astype(float), is_split[keep].astype(float),
        full[keep] / full[0] if full[0] else np.zeros(m), (main[keep] == 1).astype(float),
        (main[keep] == 2).astype(float),
    ])
    index = np.full(n, -1, dtype=np.int64)
    index[keep] = np.arange(m)
    new_parent = np.where(parent[keep] >= 0, index[np.maximum(parent[keep], 0)], -1)
    unlikely = _unlikely(parent, levels, cues_all, group_all)
    article = _article(parent, levels, cues_all, group_all, texts, unlikely,
                       np.where(tokens > 0, anchor / np.maximum(tokens, 1), 0.0), children)
    return PageArrays(new_parent, f, t.astype(np.int64), [texts[i] for i in keep.tolist()], keep, unlikely[keep],
                      article[keep], at[keep])


_TABLE, _HEADING = list(TAG_GROUPS).index("table"), list(TAG_GROUPS).index("heading")
_CONTAINER = list(TAG_GROUPS).index("container")


def _landmarks(parent: np.ndarray, levels: list[np.ndarray], cues: np.ndarray, inside: np.ndarray,
               group: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """cues, inside and group with the <header> and <footer> tags scoped
    (HEADER_TAG_BIT above): an unscoped one gets the "header" / "footer"
    CUE_WORDS bit, and its descendants the inside bit; a scoped one (below an
    article, aside, main, nav or section) is a container, like a <div>."""
    tag_header = (cues >> HEADER_TAG_BIT) & 1
    tag_footer = (cues >> FOOTER_TAG_BIT) & 1
    landmark = (tag_header | tag_footer).astype(bool)  # both tags are in the semantic_box group
    if not landmark.any():
        return cues, inside, group
    scoped = ((inside >> SECTIONING_BIT) & 1).astype(bool)
    added = np.where(scoped, 0, (tag_header << _CUE_OF["header"]) | (tag_footer << _CUE_OF["footer"]))
    inherited = np.zeros_like(added)
    if added.any():  # every header and footer scoped (an article's own): nothing to carry down
        for level in levels[1:]:
            up = parent[level]
            inherited[level] = inherited[up] | added[up]
    return cues | added, inside | inherited, np.where(scoped & landmark, _CONTAINER, group)


def _unlikely(parent: np.ndarray, levels: list[np.ndarray], cues: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Per node: it or an ancestor is an unlikely candidate (UNLIKELY_CANDIDATES:
    Readability's rule over the class, id and role bits of `_value_bits`), one
    numpy step per depth level, as `_subtree_sums` goes the other way. An <h1>
    is not, nor are its ancestors up to the candidate holding it: Readability
    returns the title apart from the article (`_article` keeps the <h1> for the
    same reason), and WordPress's `<header class="entry-header"><h1>` would
    otherwise take it with the byline. The ancestors too, or the smoothing,
    which makes a node template when its parent is, would take the title
    anyway. The candidate's other nodes stay unlikely.

    Readability's table exception, as it is: a class or id candidate with a
    <table> at most four levels up (`_hasAncestorTag`'s maxDepth 3) is none,
    which in the tree is a node whose parent is a table's own (a row, a cell, a
    table in a cell, a cell's child); deeper, or by its role, it is a candidate
    (until 2026-11-27 any table above exempted both, so a page laid out in one
    table had none; until 2026-11-28 a <table> was exempt by itself, so
    `<table id="footer">` was none: `_hasAncestorTag` starts at the parent)."""
    by_words = (((cues >> UNLIKELY_BIT) & ~(cues >> MAYBE_BIT)) & 1).astype(bool)
    by_role = ((cues >> ROLE_BIT) & 1).astype(bool)
    own = (by_words | by_role) & (group != _HEADING)
    if len(own):
        own[0] = False  # <body>
    if not own.any():
        return own
    table = group == _TABLE
    near_table = np.zeros_like(table)  # a table above it (its parent's group), not the node's own
    near_table[1:] = table[parent[1:]]
    own &= by_role | ~near_table
    title = ((cues >> TITLE_BIT) & 1).astype(bool)
    for level in levels[1:]:
        own[level] |= own[parent[level]]
    for i in np.flatnonzero(title & own).tolist():  # up to the candidate
        while i > 0 and own[i]:
            own[i] = False
            i = int(parent[i])
    return own


_PARAGRAPH = list(TAG_GROUPS).index("paragraph")
_COMMAS = re.compile("[\u002C\u060C\uFE50\uFE10\uFE11\u2E41\u2E34\u2E32\uFF0C]")  # Readability's REGEXPS.commas
N_TOP_CANDIDATES = 5  # Readability's DEFAULT_N_TOP_CANDIDATES
_FULL_STOP = re.compile(r"\.( |$)")  # a short sibling paragraph ending a sentence joins (Readability)


def _article(parent: np.ndarray, levels: list[np.ndarray], cues: np.ndarray, group: np.ndarray, texts: list[str],
             unlikely: np.ndarray, link_density: np.ndarray, children: np.ndarray) -> np.ndarray:
    """Per node: in the page's article, Readability's top candidate and the
    siblings it joins (the comment at POSITIVE says what is taken and how), or
    an <h1> (the article's title, which Readability returns apart). Paragraphs
    in unlikely candidates do not score (Readability removes those first).
    All True when no candidate stands out (the top one is <body>)."""
    n = len(parent)
    everything = np.ones(n, dtype=bool)
    chars = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    scored = np.flatnonzero(((cues >> SCORED_BIT) & 1).astype(bool) & (chars >= 25) & ~unlikely)
    if n < 2 or not len(scored):
        return everything
    # 1 for the paragraph, then innerText.split(commas).length: the pieces, one more than the commas
    gain = 2.0 + np.array([len(_COMMAS.findall(texts[i])) for i in scored]) + np.minimum(chars[scored] // 100, 3)
    score = np.zeros(n)
    candidate = np.zeros(n, dtype=bool)
    up = parent[scored]
    for level in range(5):  # parent, grandparent, then ancestors at level * 3
        on = up >= 0
        np.add.at(score, up[on], gain[on] / (1, 2)[level] if level < 2 else gain[on] / (level * 3))
        candidate[up[on]] = True
        up = parent[np.maximum(up, 0)]  # parent[0] is -1: a finished walk stays finished
    base = (_BASES[(cues >> BASE_SHIFT) & 7] + 25.0 * ((cues >> POSITIVE_BIT) & 1)
            - 25.0 * ((cues >> NEGATIVE_BIT) & 1))
    final = np.where(candidate, (base + score) * (1.0 - link_density), -np.inf)
    order = np.argsort(-final, kind="stable")[:N_TOP_CANDIDATES]
    top = int(order[0])

    def ancestors(i: int) -> list[int]:
        out = []
        while parent[i] >= 0:
            i = int(parent[i])
            out.append(i)
        return out

    # three of the next four candidates within 75% of the top share an ancestor: that is the article
    rivals = [set(ancestors(int(c))) for c in order[1:] if candidate[c] and final[c] >= 0.75 * final[top]]
    if len(rivals) >= 3:
        for a in ancestors(top)[:-1]:  # not <body>
            if sum(a in r for r in rivals) >= 3:
                top = a
                break
    if not candidate[top]:
        final[top] = base[top]
    # up to a parent scoring more than the path so far, while scores stay above a third
    last, floor = final[top], final[top] / 3
    for a in ancestors(top)[:-1]:
        if not candidate[a]:
            continue
        if final[a] < floor:
            break
        if final[a] > last:
            top = a
            break
        last = final[a]
    while top > 0 and parent[top] > 0 and children[parent[top]] == 1:  # an only child: its parent
        top = int(parent[top])
    if top == 0:
        return everything
    # the siblings that join: enough score, or a paragraph that reads as one
    threshold = max(10.0, final[top] * 0.2)
    siblings = np.flatnonzero(parent == parent[top])
    joins = (final[siblings] >= threshold) | (siblings == top)
    para = np.flatnonzero((group[siblings] == _PARAGRAPH) & ~joins)  # positions among the siblings
    ld, size = link_density[siblings[para]], chars[siblings[para]]
    prose = (size > 80) & (ld < 0.25)
    short = np.flatnonzero((size > 0) & (size < 80) & (ld == 0))
    prose[short] = [bool(_FULL_STOP.search(texts[i])) for i in siblings[para[short]].tolist()]
    joins[para[prose]] = True
    article = np.zeros(n, dtype=bool)
    article[siblings[joins]] = True
    for level in levels[1:]:
        article[level] |= article[parent[level]]
    return article | ((cues >> TITLE_BIT) & 1).astype(bool)


def _walk_names() -> dict:
    """What the compiled walk needs to know of each tag any table here names
    (`_walk.setup`): block, anchor kind, group, cue bits, seam kind."""
    tags = BLOCK_TAGS | TEXT_BREAK_TAGS | {"a", "area", "wbr"} | TAG_BITS.keys() | _GROUP_OF.keys()
    return {t: (t in BLOCK_TAGS, 1 if t == "a" else 2 if t == "area" else 0, _GROUP_OF.get(t, -1),
                TAG_BITS.get(t, 0), seam_kind(t)) for t in tags}


def _setup_compiled():
    """The compiled walk (pagelevel/_walk.pyx), checked against selectolax at
    import; None (the Python walk) when it is not built or the check fails."""
    if os.environ.get("TEMPLATEMINE_PURE_PYTHON"):
        return None, "disabled by TEMPLATEMINE_PURE_PYTHON"
    try:
        from templatemine.pagelevel import _walk
    except ImportError as e:
        return None, f"not built ({e})"
    names = _walk_names()
    global _compiled
    before = _compiled
    try:
        _walk.setup(names, _VALUE_BITS, _value_bits)
        # the whole output once more, both entry points, on the probe page
        _compiled = None
        want = page_nodes(_walk.PROBE_HTML, arrays=True)
        _compiled = _walk
        if not _same_arrays(want, page_nodes(_walk.PROBE_HTML, arrays=True)):
            raise RuntimeError("_walk.page's output differs from the Python walk's on the probe page")
        if not _same_arrays(want, page_nodes(_walk.PROBE_HTML, arrays=True, c_pagelets=False)):
            raise RuntimeError("_walk.walk's output differs from the Python walk's on the probe page")
        _compiled = None
        want_rows = page_nodes(_walk.PROBE_HTML)
        _compiled = _walk
        if page_nodes(_walk.PROBE_HTML) != want_rows:
            raise RuntimeError("_walk.walk's NODES rows differ from the Python walk's on the probe page")
        _check_joined_text(_walk)
    except Exception as e:  # a selectolax / Lexbor whose layout differs: keep the Python walk
        return None, f"disabled: {type(e).__name__}: {e}"
    finally:
        _compiled = before
    return _walk, ""


def _check_joined_text(walk) -> None:
    """`_walk.joined_text` == html/pagelets._joined_text on every element of
    the probe page (the text of pagelets and anchors, html/pagelets.element_text)."""
    from selectolax.lexbor import LexborHTMLParser

    from templatemine.html.pagelets import _joined_text

    for element in LexborHTMLParser(walk.PROBE_HTML).root.traverse():
        got = walk.joined_text(element.mem_id)
        if got is not None and got != _joined_text(element):
            raise RuntimeError(f"_walk.joined_text of {element.tag!r} differs from Python's: {got!r}")


def _same_arrays(a: PageArrays, b: PageArrays) -> bool:
    """Bit for bit."""
    return (all(x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
                for x, y in ((a.parent, b.parent), (a.features, b.features), (a.n_tokens, b.n_tokens),
                             (a.keep, b.keep), (a.at, b.at)))
            and a.unlikely.tobytes() == b.unlikely.tobytes() and a.article.tobytes() == b.article.tobytes()
            and a.texts == b.texts)


# the compiled walk, or None (the Python walk); COMPILED_WALK_ERROR says why not
_compiled = None
_compiled, COMPILED_WALK_ERROR = _setup_compiled()
