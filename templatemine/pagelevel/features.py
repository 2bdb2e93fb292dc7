"""The DOM nodes of a page and their templateness cues (pure Python, no pyspark).

Chakrabarti, Kumar & Punera classify "each internal DOM node" from structural
and content cues humans use implicitly ("Cues used implicitly by humans" slide:
placement on screen, average sentence size, fraction of text outside anchors,
link density, aspect ratio, background colour). Kohlschütter (WWW 2009, section
2, Figure 1) adds the cheapest cue of all: text density, tokens per line of the
block's text wrapped at a fixed width, whose distribution has two classes, C1
(navigational, around 2) and C2 (full text, around 12), split near 8 (his
partition pi_1 = density <= 8, section 3).

Which nodes. Every DOM element is not needed: inline markup (<b>, <span>,
<a> inside a paragraph) never changes what a reader sees as a block. A *node*
here is an element that is
  - a block-level element (BLOCK_TAGS), or
  - a pagelet or an element Figure 3 of Bar-Yossef & Rajagopalan splits (so
    that every pagelet is a node and labels from the site-level run map onto
    nodes exactly),
and that holds text or links. The root is <body>. Text inside inline elements
is the *own text* of the nearest node above it; the page's visible text is the
concatenation of all own texts in document order, each exactly once, so
removing a set of nodes' own text removes exactly that text.

Placement on screen needs a renderer; its static stand-ins are document order
(the node's preorder rank and the share of the page's tokens before it) and
depth. Aspect ratio and background colour need CSS and are not used.

The features are plain floats in FEATURES order; a model stores the names it was
trained on and refuses other ones (pagelevel/model.py).
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from templatemine.report.density import WRAP_WIDTH, wrap

BLOCK_TAGS = frozenset(
    "address article aside blockquote body center dd details dialog dir div dl dt fieldset figcaption figure "
    "footer form frameset h1 h2 h3 h4 h5 h6 header hgroup hr html legend li main menu nav noframes ol p pre "
    "section summary table tbody td tfoot th thead tr ul caption iframe select textarea button".split()
)
C1_MAX_DENSITY = 8.0  # Kohlschütter, section 3: partition pi_1 (navigational text) is density <= 8

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


def node_rows(root, pagelets, split: set[int], width: int = WRAP_WIDTH) -> list[DomNode]:
    """`dom_nodes` given the page's pagelets (html/pagelets.py `PageletNode`s)."""
    pagelet_of = {p.node_id: p.ordinal for p in pagelets if p.node_id is not None}
    text_runs: dict[int, list[int]] = {}
    for p in pagelets:
        if p.parent_id is not None:
            text_runs.setdefault(p.parent_id, []).append(p.ordinal)
    return dom_nodes(root, pagelet_of, split, text_runs, width)


def page_nodes(html: str, k: int = 3, width: int = WRAP_WIDTH) -> list[DomNode]:
    """An HTML page's nodes, parsed here (what `templatemine.html.page` computes
    for the NODES table, for scoring a page outside Spark)."""
    from selectolax.lexbor import LexborHTMLParser

    from templatemine.html.pagelets import INVISIBLE_TAGS, LINK_SELECTOR, link_counts, partition, split_elements

    tree = LexborHTMLParser(html)
    tree.strip_tags(INVISIBLE_TAGS)
    root = tree.body or tree.root
    if root is None:
        return []
    count, parent_of = link_counts(root, root.css(LINK_SELECTOR), k)
    split = split_elements(count, parent_of, k)
    root_path = "/html/body" if root.tag == "body" else "/" + root.tag
    return node_rows(root, partition(root, root_path, count, split), split, width)


def cue_bits(tag: str, attrs) -> int:
    """Bit i set when a word of group i of CUE_WORDS is in the tag, id, class or role."""
    bits = 0
    if tag in _CUE_OF:
        bits |= 1 << _CUE_OF[tag]
    for name in ("id", "class", "role"):
        value = attrs.get(name)
        if value:
            for word in _SPLIT.split(value.lower()):
                i = _CUE_OF.get(word)
                if i is not None:
                    bits |= 1 << i
    return bits


def _label(tag: str, attrs) -> str:
    label = tag
    if attrs.get("id"):
        label += "#" + attrs["id"].strip()
    if attrs.get("class"):
        label += "." + ".".join(attrs["class"].split())
    return label


class _Acc:
    """What a node accumulates while the DOM is walked."""
    __slots__ = ("parent", "depth", "tag", "label", "pagelet", "own_pagelets", "parts", "anchor_tokens", "links",
                 "cues", "inside", "is_pagelet", "is_split")

    def __init__(self, parent, depth, tag, label, pagelet, cues, inside, is_pagelet, is_split):
        self.parent, self.depth, self.tag, self.label = parent, depth, tag, label
        self.pagelet, self.cues, self.inside = pagelet, cues, inside
        self.is_pagelet, self.is_split = is_pagelet, is_split
        self.own_pagelets: list[int] = [] if pagelet < 0 else [pagelet]
        self.parts: list[str] = []
        self.anchor_tokens = 0
        self.links = 0


def dom_nodes(root, pagelet_of: dict[int, int], split: set[int], text_runs: dict[int, list[int]],
              width: int = WRAP_WIDTH) -> list[DomNode]:
    """The page's nodes in preorder, with features.

    root: the <body> (Lexbor node) after invisible elements were stripped;
    pagelet_of: pagelet element mem_id -> pagelet ordinal; split: mem_ids of the
    elements Figure 3 split; text_runs: split element mem_id -> ordinals of the
    text-run pagelets directly inside it (html/pagelets.py)."""
    accs: list[_Acc] = []
    owner: dict[int, int] = {}  # element mem_id -> index of the node its text belongs to
    in_anchor: dict[int, bool] = {}
    pagelet_at: dict[int, int] = {}
    root_id = root.mem_id
    attrs = root.attributes
    accs.append(_Acc(-1, 0, root.tag, _label(root.tag, attrs), pagelet_of.get(root_id, -1),
                     cue_bits(root.tag, attrs), 0, root_id in pagelet_of, root_id in split))
    accs[0].own_pagelets.extend(text_runs.get(root_id, ()))
    owner[root_id], in_anchor[root_id], pagelet_at[root_id] = 0, False, accs[0].pagelet
    for item in root.traverse(include_text=True):
        mid = item.mem_id
        if mid == root_id:
            continue
        parent = item.parent
        if parent is None:
            continue
        pid = parent.mem_id
        if pid not in owner:  # below something we skipped (should not happen)
            continue
        if item.is_text_node:
            text = item.text_content
            if text and not text.isspace():
                acc = accs[owner[pid]]
                acc.parts.append(text)
                if in_anchor[pid]:
                    acc.anchor_tokens += len(text.split())
            continue
        if not item.is_element_node:
            continue
        tag = item.tag
        up = owner[pid]
        anchor = in_anchor[pid] or tag == "a"
        in_anchor[mid] = anchor
        pg = pagelet_of.get(mid, pagelet_at[pid])
        pagelet_at[mid] = pg
        if tag in ("a", "area") and "href" in item.attributes:
            accs[up].links += 1
        if tag in BLOCK_TAGS or mid in pagelet_of or mid in split:
            a = item.attributes
            acc = _Acc(up, accs[up].depth + 1, tag, _label(tag, a), pg, cue_bits(tag, a),
                       accs[up].inside | accs[up].cues, mid in pagelet_of, mid in split)
            acc.own_pagelets.extend(text_runs.get(mid, ()))
            owner[mid] = len(accs)
            accs.append(acc)
        else:
            owner[mid] = up
    return _features(accs, width)


def _main_block(accs: list[_Acc], full: list[int], other: list[int]) -> list[int]:
    """Per node: 1 inside the page's main block, 2 above it (an ancestor), 0
    elsewhere. The main block is the node whose subtree gains most full text
    (class C2 tokens) over other tokens, F - O, the deepest on ties: where a
    reader's eye settles, the static stand-in for "placement on screen"."""
    n = len(accs)
    best, best_gain = 0, None
    for i in range(n):
        gain = full[i] - other[i]
        if best_gain is None or gain >= best_gain:
            best, best_gain = i, gain
    where = [0] * n
    where[best] = 1
    for i in range(best + 1, n):  # preorder: a subtree is contiguous after its root
        if where[accs[i].parent] == 1:
            where[i] = 1
        elif accs[i].parent < best:
            break
    i = accs[best].parent
    while i >= 0:
        where[i] = 2
        i = accs[i].parent
    return where


def _features(accs: list[_Acc], width: int) -> list[DomNode]:
    """Subtree aggregates (children after parents in `accs`, so one reverse pass)
    -> feature vectors; nodes without text or links are dropped."""
    n = len(accs)
    tokens = [0] * n
    anchor = [0] * n
    links = [0] * n
    sentences = [0] * n
    stop_tokens = [0] * n
    density_mass = [0.0] * n  # sum over own-text blocks of tokens x density
    children = [0] * n
    own_tokens = [0] * n
    full = [0] * n  # tokens of own texts in Kohlschütter's class C2 (density > 8, mostly outside anchors)
    other = [0] * n
    texts = [""] * n
    for i, acc in enumerate(accs):
        if acc.parts:
            text = " ".join(" ".join(acc.parts).split())
            texts[i] = text
            w = wrap(text, width)
            own_tokens[i] = w.tokens
            tokens[i] = w.tokens
            density_mass[i] = w.tokens * w.density
            s = len(_SENTENCE_END.findall(text))
            sentences[i] = s
            stop_tokens[i] = w.tokens if s else 0
            if w.density > C1_MAX_DENSITY and 2 * acc.anchor_tokens < w.tokens:
                full[i] = w.tokens
            else:
                other[i] = w.tokens
        anchor[i] = acc.anchor_tokens
        links[i] = acc.links
    for i in range(n - 1, 0, -1):
        p = accs[i].parent
        tokens[p] += tokens[i]
        anchor[p] += anchor[i]
        links[p] += links[i]
        sentences[p] += sentences[i]
        stop_tokens[p] += stop_tokens[i]
        density_mass[p] += density_mass[i]
        full[p] += full[i]
        other[p] += other[i]
        if tokens[i] or links[i]:
            children[p] += 1
    main = _main_block(accs, full, other)
    keep = [i for i in range(n) if tokens[i] or links[i] or i == 0]
    index = {old: new for new, old in enumerate(keep)}
    page_tokens = max(tokens[0], 1)
    max_rank = max(len(keep) - 1, 1)
    before = 0
    out: list[DomNode] = []
    groups = list(TAG_GROUPS.values())
    n_cues = len(CUE_WORDS)
    for new, i in enumerate(keep):
        acc = accs[i]
        t = tokens[i]
        density = density_mass[i] / t if t else 0.0
        f = [
            math.log1p(t), t / page_tokens, density, 1.0 if density <= C1_MAX_DENSITY else 0.0,
            anchor[i] / t if t else 1.0, min(links[i] / t, 1.0) if t else 1.0,
            min(t / sentences[i], 100.0) if sentences[i] else float(min(t, 100)),
            stop_tokens[i] / t if t else 0.0, new / max_rank, before / page_tokens, float(min(acc.depth, 40)),
            math.log1p(children[i]),
        ]
        f.extend(float(acc.cues >> g & 1) for g in range(n_cues))
        f.extend(float(acc.inside >> g & 1) for g in range(n_cues))
        f.extend(1.0 if acc.tag in g else 0.0 for g in groups)
        f.append(1.0 if acc.is_pagelet else 0.0)
        f.append(1.0 if acc.is_split else 0.0)
        f.append(full[i] / full[0] if full[0] else 0.0)
        f.append(1.0 if main[i] == 1 else 0.0)
        f.append(1.0 if main[i] == 2 else 0.0)
        before += own_tokens[i]
        out.append(DomNode(new, index[acc.parent] if acc.parent >= 0 else -1, acc.depth, acc.label, acc.pagelet,
                           acc.own_pagelets if own_tokens[i] else [], texts[i], t, f))
    return out
