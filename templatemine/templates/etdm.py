"""A second detector: menu-linked complete subdigraphs and equal top-down
mapping, after Alarte, Insa, Silva & Tamarit, "Web Template Extraction Based
on Hyperlink Analysis" (../shared/seeds/alarte-et-al-template-extraction-hyperlink-analysis.txt). Pure Python; the
Spark stages around it are in templates/etdm_stages.py.

- Algorithm 1 (section 4.1): from a key page, explore the same-site pages it
  links to until n of them link each other pairwise (an n-complete subdigraph,
  n-CS; n = 4 as the paper found), else return the biggest m-CS. Here the
  topology comes from the LINKS table, so finding the CS loads no page; the
  links of the key page are explored menu first (the region of highest link
  density, the paper's section 6 future work) when `menu_first` is set.
- Definition 3.2 / Algorithm 2 (section 4.2): the template is the part of the
  key page's DOM tree that maps top-down, node for node, onto every CS page
  (equal top-down mapping, ETDM), refined one page at a time.
- Then every page of the site is mapped onto the template that covers most of
  it; its mapped text nodes are template, the rest is its clean text.

The equality relation is the paper's open parameter ("the more restrictive, the
more precision (and less recall)"); here it is `Equality`, a set of features
two nodes must share (tag, id, class, attrs, children, position, text). Among
the children of two mapped nodes, pairs keep document order: first children
that are equal and also agree in content, then equal children between those
anchors (`_pair_children`, an order-preserving greedy form of "n1 maximises ≜
with n2": without the anchors a highlighted menu item shifts every later pair).
"""

from __future__ import annotations

import json
from bisect import bisect_left
from dataclasses import dataclass
from typing import Iterable
from urllib.parse import urlsplit


from templatemine.html.nesting import parse as parse_html
from templatemine.html.pagelets import BROKEN, SEAM_END, SEAM_START, page_root, seam_kind, spaced, strip_invisible
from templatemine.html.shingles import normalize_token

TEXT = "#text"
SEAM = -2  # from_html: the parent of a frame that only marks a seam
_LEADS, _TRAILS = 1, 2  # from_html: a text node's raw text starts, ends with white space
FEATURES = ("tag", "id", "class", "attrs", "children", "position", "text")

EQUALITY_PRESETS = {
    # structure only: text nodes are equal whatever they say (maps content too)
    "structure": ("tag", "id", "class"),
    "loose": ("tag", "text"),
    "default": ("tag", "id", "class", "text"),
    "strict": ("tag", "id", "class", "children", "text"),
    "strictest": ("tag", "id", "class", "attrs", "children", "position", "text"),
}


@dataclass(frozen=True)
class Equality:
    """Which features two DOM nodes must share to be equal (≜ of Def. 3.2).

    tag: element name (always); id, class: the attributes' values (class as a
    set); attrs: the set of attribute names; children: the number of non-empty
    children; position: the index among the parent's children; text: for text
    nodes, the text after `normalize_token` (case, punctuation and digits
    folded, so a date or counter does not break a footer). Without "text", any
    two text nodes are equal. The roots are compared by tag only: <body> often
    carries per-page classes ("postid-42")."""

    features: tuple[str, ...] = EQUALITY_PRESETS["default"]

    def __post_init__(self):
        unknown = set(self.features) - set(FEATURES)
        if unknown:
            raise ValueError(f"unknown equality features {sorted(unknown)} (known: {', '.join(FEATURES)})")

    @classmethod
    def parse(cls, spec: str) -> "Equality":
        """A preset name or a comma-separated feature list ("tag,id,class,text")."""
        if spec in EQUALITY_PRESETS:
            return cls(EQUALITY_PRESETS[spec])
        return cls(tuple(f.strip() for f in spec.split(",") if f.strip()))


class DomTree:
    """A DOM tree as parallel lists, nodes numbered in document order (pre-order),
    node 0 the root. Element nodes carry tag/id/class/attribute names; text nodes
    (tag "#text") their whitespace-collapsed text, and `glue`: the text runs on
    from the text node before it without a space (html/pagelets.py's seams, as
    pagelet and node texts join: `<b>T</b>he` is one word). `n_children` and
    `position` are those of the original page, also in a pruned template."""

    __slots__ = ("tag", "id", "cls", "attrs", "text", "parent", "children", "n_children", "position", "path",
                 "glue", "_sigs", "_keys")

    def __init__(self):
        self.tag: list[str] = []
        self.id: list[str] = []
        self.cls: list[str] = []
        self.attrs: list[str] = []
        self.text: list[str] = []
        self.parent: list[int] = []
        self.children: list[list[int]] = []
        self.n_children: list[int] = []
        self.position: list[int] = []
        self.path: list[str] = []  # pagelets.py's DOM path (text nodes: of their run, .../text()[i])
        self.glue: list[bool] = []  # a text node joined to the text node before it without a space
        self._sigs: dict = {}
        self._keys: tuple[list[int], list[str]] | None = None

    def __len__(self) -> int:
        return len(self.tag)

    def _add(self, tag, id_, cls, attrs, text, parent, position, path, glue=False) -> int:
        i = len(self.tag)
        self.glue.append(glue)
        self.tag.append(tag)
        self.id.append(id_)
        self.cls.append(cls)
        self.attrs.append(attrs)
        self.text.append(text)
        self.parent.append(parent)
        self.children.append([])
        self.n_children.append(0)
        self.position.append(position)
        self.path.append(path)
        if parent >= 0:
            self.children[parent].append(i)
        return i

    # -- building ---------------------------------------------------------------------------

    @classmethod
    def from_html(cls, html: str) -> "DomTree":
        """The visible DOM under <body> (script, style, noscript, template removed,
        as for pagelets), parsed by Lexbor."""
        tree = parse_html(html)[0]  # as extract parsed it
        strip_invisible(tree)
        root = page_root(tree)
        t = cls()
        if root is None:
            t._add("body", "", "", "", "", -1, 0, "/html/body")
            return t
        root_path = "/html/body" if root.tag == "body" else "/" + root.tag
        # pre-order walk; a frame is (lexbor node or None for text, parent index,
        # position among the parent's children, DOM path, text, seam flags); a
        # frame of parent SEAM only adds its flags to what lies between two text
        # nodes (an element's end, white space): html/pagelets._joined_text's seams
        stack = [(root, -1, 0, root_path, "", 0)]
        seam, after_text = 0, False  # since the last text node; a text node was seen
        while stack:
            node, parent, pos, path, text, flags = stack.pop()
            if node is None:
                if parent == SEAM:
                    seam |= flags
                    continue
                glue = after_text and not spaced(seam) and not flags & _LEADS
                t._add(TEXT, "", "", "", text, parent, pos, path, glue)
                seam = BROKEN if flags & _TRAILS else 0
                after_text = True
                continue
            if parent < 0:
                i = t._add(node.tag, "", "", "", "", -1, 0, path)
            else:
                attrs = node.attributes
                i = t._add(node.tag, (attrs.get("id") or "").strip(),
                           " ".join(sorted((attrs.get("class") or "").split())), " ".join(sorted(attrs)), "",
                           parent, pos, path)
                kind = seam_kind(node.tag)
                seam |= SEAM_START[kind]
                stack.append((None, SEAM, 0, "", "", SEAM_END[kind]))  # popped after the children
            frames = []
            n_kids = 0
            seen: dict[str, int] = {}
            n_runs, in_run = 0, False
            for child in node.iter(include_text=True):
                if child.is_element_node:
                    tag = child.tag
                    seen[tag] = n = seen.get(tag, 0) + 1
                    frames.append((child, i, n_kids, f"{path}/{tag}[{n}]", "", 0))
                    n_kids += 1
                    in_run = False
                elif child.is_text_node:
                    raw = child.text_content or ""
                    value = " ".join(raw.split())
                    if value:
                        if not in_run:  # runs numbered as pagelets.py numbers text() pagelets
                            n_runs, in_run = n_runs + 1, True
                        flags = (_LEADS if raw[0].isspace() else 0) | (_TRAILS if raw[-1].isspace() else 0)
                        frames.append((None, i, n_kids, f"{path}/text()[{n_runs}]", value, flags))
                        n_kids += 1
                    elif raw:  # white space: a space between the text nodes around it
                        frames.append((None, SEAM, 0, "", "", BROKEN))
            t.n_children[i] = n_kids
            stack.extend(reversed(frames))
        return t

    def subtree_of(self, keep: Iterable[int]) -> "DomTree":
        """The tree restricted to `keep` (which must be closed under parent),
        renumbered in document order; original n_children and position kept."""
        keep_set = set(keep)
        t = DomTree()
        new_id: dict[int, int] = {}
        stack = [0] if 0 in keep_set else []
        while stack:
            i = stack.pop()
            p = self.parent[i]
            j = t._add(self.tag[i], self.id[i], self.cls[i], self.attrs[i], self.text[i],
                       new_id[p] if p >= 0 else -1, self.position[i], self.path[i], self.glue[i])
            t.n_children[j] = self.n_children[i]
            new_id[i] = j
            stack.extend(c for c in reversed(self.children[i]) if c in keep_set)
        return t

    # -- equality -----------------------------------------------------------------------------

    def signatures(self, eq: Equality) -> list[tuple]:
        """Per node, the tuple of the features `eq` compares (cached per relation)."""
        sigs = self._sigs.get(eq.features)
        if sigs is not None:
            return sigs
        f = set(eq.features)
        sigs = []
        for i, tag in enumerate(self.tag):
            if tag == TEXT:
                sigs.append((TEXT, normalize_token(self.text[i]) if "text" in f else None,
                             self.position[i] if "position" in f else None))
                continue
            sigs.append((
                tag,
                self.id[i] if "id" in f else None,
                self.cls[i] if "class" in f else None,
                self.attrs[i] if "attrs" in f else None,
                self.n_children[i] if "children" in f else None,
                self.position[i] if "position" in f else None,
            ))
        self._sigs[eq.features] = sigs
        return sigs

    def content_keys(self) -> tuple[list[int], list[str]]:
        """Per node, a hash of its whole subtree's normalised text and the
        normalised text of its first text node: tie-breakers when several
        children are equal (the menu items of Fig. 2 all look alike)."""
        if self._keys is not None:
            return self._keys
        n = len(self.tag)
        first = [""] * n
        deep: list = [None] * n
        for i in range(n - 1, -1, -1):  # pre-order: children after parents
            if self.tag[i] == TEXT:
                first[i] = normalize_token(self.text[i])
                deep[i] = hash(first[i])
                continue
            kids = self.children[i]
            deep[i] = hash(tuple(deep[c] for c in kids))
            for c in kids:
                if first[c]:
                    first[i] = first[c]
                    break
        self._keys = (deep, first)
        return self._keys

    # -- text -----------------------------------------------------------------------------------

    def text_nodes(self) -> list[int]:
        return [i for i, tag in enumerate(self.tag) if tag == TEXT]

    def joined(self, nodes: Iterable[int]) -> str:
        """The text of a set of text nodes in document order: a node glued to the
        text node right before it (`glue`), when both are in the set, runs on
        from it without a space."""
        keep = set(nodes)
        out: list[str] = []
        after_kept = False  # the text node before is in the set
        for i in self.text_nodes():
            if i in keep:
                if after_kept and self.glue[i]:
                    out[-1] += self.text[i]
                else:
                    out.append(self.text[i])
            after_kept = i in keep
        return " ".join(out)

    # -- serialisation (templates travel between Spark stages as JSON) ----------------------

    def to_json(self) -> str:
        return json.dumps([self.tag, self.id, self.cls, self.attrs, self.text, self.parent, self.n_children,
                           self.position, self.path, self.glue], separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, data: str) -> "DomTree":
        t = cls()
        fields = json.loads(data)
        (t.tag, t.id, t.cls, t.attrs, t.text, t.parent, t.n_children, t.position, t.path) = fields[:9]
        t.glue = fields[9] if len(fields) > 9 else [False] * len(t.tag)  # a tree written before `glue`
        t.children = [[] for _ in t.tag]
        for i, p in enumerate(t.parent):
            if p >= 0:
                t.children[p].append(i)
        return t


# -- Definition 3.2 and Algorithm 2 ----------------------------------------------------------

def etdm(t1: DomTree, t2: DomTree, eq: Equality) -> dict[int, int]:
    """An equal top-down mapping from t1 to t2 (Definition 3.2), as Algorithm 2's
    function ETDM builds it: the roots, then recursively pairs of equal children
    of mapped nodes. Returns {t1 node: t2 node}; empty if the roots differ.
    Children are paired by `_pair_children`, in O(k log k) for k children."""
    if not len(t1) or not len(t2) or t1.tag[0] != t2.tag[0]:
        return {}
    s1, s2 = t1.signatures(eq), t2.signatures(eq)
    (deep1, first1), (deep2, first2) = t1.content_keys(), t2.content_keys()
    mapping = {0: 0}
    stack = [(0, 0)]
    while stack:
        a, b = stack.pop()
        kids2 = t2.children[b]
        if not kids2:
            continue
        for x, y in _pair_children(t1.children[a], kids2, s1, s2, deep1, deep2, first1, first2):
            mapping[x] = y
            stack.append((x, y))
    return mapping


def _next_at(index: dict, key, start: int, end: int) -> int:
    """The first position in `index[key]` (ascending) in [start, end), else -1."""
    positions = index.get(key)
    if not positions:
        return -1
    k = bisect_left(positions, start)
    return positions[k] if k < len(positions) and positions[k] < end else -1


_LINEAR = 12  # _pair_children: up to this many children of t2 are scanned, more are indexed


def _pair_children(kids1, kids2, s1, s2, deep1, deep2, first1, first2, linear: int = _LINEAR):
    """Order-preserving, one-to-one pairs of equal children. First pass: anchors,
    children that also agree in content (same subtree text, else same first
    text), each paired in order with its EARLIEST agreeing partner after the
    previous anchor (not the best-scoring one further on: a header nav with a
    sub-menu would skip its in-place partner for the footer's exact copy of it,
    and leave everything between unmapped; found in review). Second pass:
    between consecutive anchors, the remaining equal children, each with its
    earliest equal partner in the gap. Without the anchors, one unequal child
    (the highlighted menu item) would shift every later pairing by one.

    No window (a footer after 70 paragraphs was never looked for; found in
    review): beyond `linear` children, partners are found through indexes of
    kids2's positions by signature, by (signature, subtree text) and by
    (signature, first text), with bisect, O(k log k); a short list is scanned,
    with the same result.

    The anchored pairs are kept only when they pair at least as many children
    as the plain in-order pairing of equal children (the second pass with no
    anchors): with no window, one anchor far ahead (a "share" bar moved from
    the top of one page to the bottom of the other) left every child before it
    unpaired, 4 nodes mapped where the in-order pairing maps 83 (found in
    review, 2026-11-28)."""
    n2 = len(kids2)
    if n2 == 1 and len(kids1) == 1:  # the common case: an only child each side
        return [(kids1[0], kids2[0])] if s1[kids1[0]] == s2[kids2[0]] else []
    indexed = n2 > linear
    by_sig: dict = {}
    by_deep: dict = {}
    by_first: dict = {}
    if indexed:
        for j, y in enumerate(kids2):  # positions appended in ascending order
            sy = s2[y]
            by_sig.setdefault(sy, []).append(j)
            by_deep.setdefault((sy, deep2[y]), []).append(j)
            if first2[y]:
                by_first.setdefault((sy, first2[y]), []).append(j)
    anchors: list[tuple[int, int]] = []  # (index in kids1, index in kids2), increasing in both
    start = 0
    for i, x in enumerate(kids1):
        sx, dx, fx = s1[x], deep1[x], first1[x]
        j = -1
        if indexed:
            if sx in by_sig:
                j = _next_at(by_deep, (sx, dx), start, n2)
                if fx:
                    jf = _next_at(by_first, (sx, fx), start, j if j >= 0 else n2)
                    if jf >= 0:
                        j = jf
        else:
            for jj in range(start, n2):
                y = kids2[jj]
                if s2[y] == sx and (deep2[y] == dx or (fx and first2[y] == fx)):
                    j = jj
                    break
        if j >= 0:
            anchors.append((i, j))
            start = j + 1
            if start >= n2:
                break
    anchored = _fill_between(anchors, kids1, kids2, s1, s2, indexed, by_sig)
    if len(anchored) == len(kids1) or not anchors:
        return anchored
    plain = _fill_between([], kids1, kids2, s1, s2, indexed, by_sig)
    return anchored if len(anchored) >= len(plain) else plain


def _fill_between(anchors, kids1, kids2, s1, s2, indexed: bool, by_sig: dict) -> list:
    """_pair_children's second pass: the anchors' pairs and, between
    consecutive anchors, each child with its earliest equal partner in the gap."""
    n2 = len(kids2)
    pairs: list[tuple[int, int]] = []
    prev_i, prev_j = -1, -1
    for i_end, j_end in anchors + [(len(kids1), n2)]:
        j = prev_j + 1
        for i in range(prev_i + 1, i_end):
            if j >= j_end:
                break
            sx = s1[kids1[i]]
            if indexed:
                jj = _next_at(by_sig, sx, j, j_end)
            else:
                jj = next((k for k in range(j, j_end) if s2[kids2[k]] == sx), -1)
            if jj >= 0:
                pairs.append((kids1[i], kids2[jj]))
                j = jj + 1
        if i_end < len(kids1):
            pairs.append((kids1[i_end], kids2[j_end]))
        prev_i, prev_j = i_end, j_end
    return pairs


def extract_template(key: DomTree, pages: list[DomTree], eq: Equality,
                     min_overlap: float = 0.0) -> tuple[DomTree, int]:
    """Algorithm 2: the key page refined by an ETDM with each page in turn; a page
    whose root is not equal to the key page's is skipped. Beyond the paper, a
    page whose mapping keeps less than `min_overlap` of the template's nodes is
    taken to use another layout and skipped too (0: every page refines, as in
    the paper; a home page with its own layout in a CS otherwise shrinks the
    template to a few nodes). Returns the template and the pages that refined it."""
    template, used = key, 0
    for page in pages:
        if not len(page) or page.tag[0] != key.tag[0]:
            continue
        mapping = etdm(template, page, eq)
        if len(mapping) < min_overlap * len(template):
            continue
        template = template.subtree_of(mapping.keys())
        used += 1
    return template, used


@dataclass
class Cleaned:
    """One page mapped onto a template: what is left and why."""

    clean_text: str
    n_tokens: int
    template_tokens: int
    n_template_nodes: int  # page nodes mapped onto the template
    template_paths: list[str]  # DOM paths of the maximal elements (and text runs) that are template whole


def clean_page(page: DomTree, mapped: set[int], removed_paths: frozenset[str] | set[str] = frozenset()) -> Cleaned:
    """Remove the nodes `mapped` of `page` (its side of an ETDM with its template,
    from `best_template`), and the text under any element or text run whose DOM
    path is in `removed_paths` (template pagelets found by another detector:
    the combined mode)."""
    n = len(page)
    removed = [False] * n  # under (or at) a path in removed_paths
    template_node = [False] * n
    for i in range(n):  # pre-order: parents first
        p = page.parent[i]
        removed[i] = (p >= 0 and removed[p]) or (bool(removed_paths) and page.path[i] in removed_paths)
        template_node[i] = removed[i] or i in mapped
    texts = page.text_nodes()
    kept = [i for i in texts if not template_node[i]]
    n_tokens = len(page.joined(texts).split())
    clean_text = page.joined(kept)
    # (a word glued from three text nodes whose middle one is template is two words kept of one)
    kept_tokens = min(len(clean_text.split()), n_tokens)
    # maximal fully-template elements: template, and every descendant template
    full = [False] * n
    for i in range(n - 1, -1, -1):  # children come after parents in pre-order
        full[i] = template_node[i] and all(full[c] for c in page.children[i])
    paths = [page.path[i] for i in range(n) if full[i] and (page.parent[i] < 0 or not full[page.parent[i]])]
    partial_runs = {page.path[i] for i in texts if not template_node[i]}  # a text run is template only whole
    paths = list(dict.fromkeys(p for p in paths if p not in partial_runs))
    return Cleaned(clean_text, n_tokens, n_tokens - kept_tokens,
                   sum(template_node), paths)


def best_template(page: DomTree, templates: list[DomTree], eq: Equality) -> tuple[int | None, set[int]]:
    """The template that maps onto most of the page's nodes (None: none maps
    more than the root) and the page nodes it maps."""
    best, best_mapped = None, set()
    for k, template in enumerate(templates):
        mapped = set(etdm(template, page, eq).values())
        if len(mapped) > max(len(best_mapped), 1):  # a root alone is not a match
            best, best_mapped = k, mapped
    return best, best_mapped


# -- Algorithm 1 ------------------------------------------------------------------------------

@dataclass
class CompleteSubdigraph:
    pages: list[int]  # the CS (key page excluded), in the order they were explored
    explored: int  # links of the key page processed: pages Algorithm 1 would have loaded
    complete: bool  # an n-CS (True) or the best m-CS found (False)


def _largest_clique_with(v: int, processed: list[int], mutual, limit: int) -> list[int]:
    """Largest set of processed pages containing v, pairwise mutually linked,
    of at most `limit` pages (small n: a depth-first search with pruning)."""
    cands = [u for u in processed if u != v and mutual(u, v)]
    best: list[int] = [v]

    def grow(clique: list[int], pool: list[int]) -> bool:
        nonlocal best
        if len(clique) > len(best):
            best = list(clique)
            if len(best) >= limit:
                return True
        if len(clique) + len(pool) <= len(best):
            return False
        for k, u in enumerate(pool):
            if grow(clique + [u], [w for w in pool[k + 1:] if mutual(u, w)]):
                return True
        return False

    grow([v], cands)
    return best


def complete_subdigraph(key: int, out_links: dict[int, set[int]], n: int = 4,
                        order: list[int] | None = None) -> CompleteSubdigraph:
    """Algorithm 1 over the link table. `out_links`: crawled page -> the crawled
    same-site pages it links to; `order`: the key page's links in the order to
    explore them (default: as in out_links[key]). Self-links are ignored; links
    to pages outside the crawl cannot be loaded and are not explored."""
    reachable = [u for u in (order if order is not None else sorted(out_links.get(key, ())))
                 if u != key and u in out_links]
    reachable = list(dict.fromkeys(reachable))
    reachable_set = set(reachable)
    connections: dict[int, set[int]] = {}
    processed: list[int] = []
    best: list[int] = []

    def mutual(u: int, w: int) -> bool:
        return w in connections.get(u, ()) and u in connections.get(w, ())

    for explored, link in enumerate(reachable, start=1):
        connections[link] = (out_links.get(link, set()) & reachable_set) - {link}
        processed.append(link)
        clique = _largest_clique_with(link, processed, mutual, n)
        if len(clique) >= n:
            return CompleteSubdigraph(sorted(clique, key=processed.index), explored, True)
        if len(clique) > len(best):
            best = clique
    return CompleteSubdigraph(sorted(best, key=processed.index), len(reachable), False)


def explore_order(links: list[tuple[int, int, float]], menu_first: bool = True) -> list[int]:
    """The key page's link targets in the order Algorithm 1 explores them.

    `links`: (link_ordinal, dst_page_key, link density of the pagelet holding
    the link). Document order, or with `menu_first` the links of the densest
    link region first (the paper's section 6: "the menu has probably one of the
    higher densities of links in a webpage"), document order among equals."""
    if menu_first:
        links = sorted(links, key=lambda r: (-r[2], r[0]))
    else:
        links = sorted(links)
    return list(dict.fromkeys(dst for _o, dst, _d in links))


def _path_depth(url: str) -> int:
    """The number of non-empty segments of the URL's path: 0 for a host's home
    page (https://example.org/, /?lang=en), 1 for /faq and /docs/, 2 for /docs/a."""
    return sum(1 for part in urlsplit(url).path.split("/") if part)


def choose_key_pages(pages: list[tuple[int, str, int, int]], max_templates: int = 3,
                     min_shape_share: float = 0.1) -> list[int]:
    """Key pages of one site, the rule of section 4 made explicit.

    `pages`: (page_key, url, shape, in_degree), shape a hash of the page's
    layout (its pagelets' DOM paths cut at a fixed depth), in_degree its
    same-site in-links. First the root, since the site's menu is on it: the
    page of shallowest URL path (`_path_depth`: / before /faq), then the most
    linked-to, then the shortest URL, then the URL (the shortest URL across
    the hosts of a registered domain was a bare-host page nothing links to,
    not www.'s home page; found in review); then, for each page shape not yet
    represented, most common first, its most linked-to page (ties: shortest
    URL), while the shape has at least max(2, min_shape_share * pages) pages
    and fewer than `max_templates` keys are chosen. A blog's listing and its
    posts have different shapes, so both templates get a key page."""
    if not pages:
        return []
    root = min(pages, key=lambda p: (_path_depth(p[1]), -p[3], len(p[1]), p[1]))
    keys = [root[0]]
    shapes_seen = {root[2]}
    by_shape: dict[int, list] = {}
    for p in pages:
        by_shape.setdefault(p[2], []).append(p)
    floor = max(2, min_shape_share * len(pages))
    for shape, members in sorted(by_shape.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        if len(keys) >= max_templates or len(members) < floor:
            break
        if shape in shapes_seen:
            continue
        shapes_seen.add(shape)
        keys.append(min(members, key=lambda p: (-p[3], len(p[1]), p[1]))[0])
    return keys
