"""One HTML page -> its row in PAGES, its LINKS and its PAGELETS (pure Python).

The three relations are the ones section 3.2 of Bar-Yossef & Rajagopalan
assumes are "stored as local database tables", built "by streaming through the
pages in the dataset, and parsing their HTML text to extract their links and
pagelets" (constant time per page). The page is parsed once, by Lexbor.

The field names of `LinkRow` and `PageletRow` are the column names of the
`links` and `pagelets` tables (templatemine/schema.py; a unit test keeps the two
in step).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


from templatemine.html.nesting import parse as parse_html
from templatemine.html.pagelets import (LINK_SELECTOR, element_text, link_counts, page_root, partition,
                                        split_elements, strip_invisible)
from templatemine.html.shingles import Shingler
from templatemine.html.urls import LinkResolver, base_directory, registered_domain, resolve_link, url_host
from templatemine.pagelevel.features import node_rows


class LinkRow(NamedTuple):
    link_ordinal: int  # position among the page's http(s) links, document order
    dst_page_key: int
    dst_url: str
    anchor_text: str
    pagelet_ordinal: int
    same_site: bool


class PageletRow(NamedTuple):
    ordinal: int
    dom_path: str
    dom_label: str
    text: str
    n_tokens: int
    n_links: int
    shingle: int


@dataclass
class ParsedPage:
    title: str
    text_length: int  # characters of visible text (all pagelets)
    n_links: int  # <a href>/<area href> elements, any scheme
    links: list[LinkRow]
    pagelets: list[PageletRow]
    dup_signature: int | None  # page-level near-duplicate fingerprint (None: no text)
    nodes: list = field(default_factory=list)  # pagelevel.features.DomNode rows (PageConfig.nodes)
    flattened: int = 0  # start tags html/nesting.py dropped (too deep, too many formatting elements open)


@dataclass(frozen=True)
class PageConfig:
    """Per-page parameters; `templatemine.config.ExtractConfig` extends it."""

    k: int = 3
    """Definition 2's k: an element with a child holding >= k links is split (paper: 3)."""
    shingle_ngram: int = 2
    """Word n-grams hashed into a pagelet's shingle (html/shingles.py)."""
    shingle_rows: int = 2
    """MinHash permutations per shingle: near-duplicates collide with p = J ** rows."""
    shingle_seed: int = 1
    """Seed of the MinHash permutations (changing it changes every shingle)."""
    dup_ngram: int = 4
    """Word n-grams of the page-level near-duplicate signature (Broder et al.)."""
    dup_rows: int = 32
    """MinHash rows of the page signature: pages collide with p = J ** dup_rows, so
    recaptures and mirrors (J ~ 1) do, and pages that merely share a template
    (J ~ 0.8) almost never do (0.8 ** 32 ~ 1e-3)."""
    strip_index: bool = True
    """Treat /dir/index.html and /dir/ as one URL."""
    nodes: bool = True
    """Emit the NODES table: DOM nodes with the page-level model's features
    (pagelevel/features.py). Measured on the nine sites, extract's read+parse
    took 9.8 s with them and 7.3 s without; false for site-level-only runs
    (`run --pagelevel site` sets it)."""


def _html_title(tree):
    """The document's <title>: the first one outside <svg> and <math> (an icon's
    <svg><title>icon-cart</title> was the title of a page without one; browsers
    take only an HTML <title>; found in review)."""
    title = tree.css_first("head > title")
    if title is not None:
        return title
    for title in tree.css("title"):
        up = title.parent
        while up is not None and up.tag not in ("svg", "math"):
            up = up.parent
        if up is None:
            return title
    return None


class PageParser:
    """Reusable per worker: holds the shinglers and the link cache."""

    def __init__(self, config: PageConfig = PageConfig()):
        self.config = config
        self.pagelet_shingler = Shingler(config.shingle_ngram, config.shingle_rows, config.shingle_seed)
        self.page_shingler = Shingler(config.dup_ngram, config.dup_rows, config.shingle_seed + 1)
        self.links = LinkResolver(config.strip_index)

    def parse(self, url: str, html: str) -> ParsedPage:
        """`url` must already be normalised (it is the page's identity)."""
        cfg = self.config
        tree, flattened = parse_html(html)
        title_node = _html_title(tree)
        title = " ".join(title_node.text().split()) if title_node is not None else ""
        base_node = tree.css_first("base[href]")
        base = url
        if base_node is not None:
            base = resolve_link(url, base_node.attributes.get("href") or "", strip_index=False) or url
        strip_invisible(tree)

        root = page_root(tree)
        if root is None:
            return ParsedPage(title, 0, 0, [], [], None, flattened=flattened)
        root_path = "/html/body" if root.tag == "body" else "/" + root.tag
        links = root.css(LINK_SELECTOR)
        count, parent_of = link_counts(root, links, cfg.k)
        split = split_elements(count, parent_of, cfg.k)
        nodes = partition(root, root_path, count, split)

        # each link -> the pagelet that holds it (nearest pagelet ancestor-or-self)
        pagelet_of_node = {p.node_id: p.ordinal for p in nodes if p.node_id is not None}
        site = registered_domain(url_host(url))
        base_dir = base_directory(base)
        resolver = self.links
        link_rows: list[LinkRow] = []
        links_per_pagelet = [0] * len(nodes)
        targets_per_pagelet: list[list[str]] = [[] for _ in nodes]
        for link in links:
            x = link.mem_id
            while x is not None and x not in pagelet_of_node:
                x = parent_of.get(x)
            ordinal = -1 if x is None else pagelet_of_node[x]
            if ordinal >= 0:
                links_per_pagelet[ordinal] += 1
            target = resolver.resolve(base, base_dir, link.attributes.get("href") or "")
            if target is None:
                continue
            dst, dst_key, dst_site = target
            if ordinal >= 0:
                targets_per_pagelet[ordinal].append(dst)
            anchor = element_text(link)
            link_rows.append(LinkRow(len(link_rows), dst_key, dst, anchor, ordinal, dst_site == site))

        # shingles of all pagelets of the page in one vectorised pass; a pagelet
        # without words (image links) is fingerprinted by its link targets, or
        # failing those by its element label
        shingles, n_tokens, token_hashes = self.pagelet_shingler.shingle_texts(
            [p.text for p in nodes], [targets or [p.dom_label] for p, targets in zip(nodes, targets_per_pagelet)]
        )
        pagelet_rows = [
            PageletRow(p.ordinal, p.dom_path, p.dom_label, p.text, n_tokens[i], links_per_pagelet[i], shingles[i])
            for i, p in enumerate(nodes)
        ]
        # page-level near-duplicate signature: Broder shingles of the whole text
        dup_signature = self.page_shingler.signature(token_hashes)
        text_length = sum(len(p.text) for p in nodes) + max(len(nodes) - 1, 0)
        dom = node_rows(root, nodes, split) if cfg.nodes else []
        return ParsedPage(title, text_length, len(links), link_rows, pagelet_rows, dup_signature, dom, flattened)
