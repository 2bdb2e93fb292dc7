"""Alarte et al.'s detector, per page and per site, without Spark."""

import random

import pytest

from templatemine.html.page import PageParser
from templatemine.html.urls import normalize_url, page_key
from templatemine.templates.etdm import (EQUALITY_PRESETS, TEXT, DomTree, Equality, _pair_children,
                                         best_template, choose_key_pages, clean_page, complete_subdigraph, etdm,
                                         explore_order, extract_template)
from tests.warcgen import two_template_site

LABELS = ["Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot"]
MENU = "".join(f"<li class='{{cls{i}}}'><a href='/p{i}'>Item {w}</a></li>" for i, w in enumerate(LABELS))


def page(active: int, content: str) -> DomTree:
    classes = {f"cls{i}": ("item active" if i == active else "item") for i in range(6)}
    return DomTree.from_html(f"<body><ul id='menu'>{MENU.format(**classes)}</ul><div id='main'>{content}</div>"
                             f"<footer><p>Footer (c) 2026</p></footer></body>")


def texts(tree: DomTree, nodes) -> list[str]:
    return [tree.text[i] for i in sorted(nodes) if tree.tag[i] == TEXT]


def test_etdm_is_an_equal_top_down_one_to_one_mapping():
    """Definition 3.2 on random pages: equal, top-down, one-to-one; a page maps onto itself whole."""
    rng = random.Random(7)
    tags = ["div", "p", "ul", "li", "span", "a"]

    def random_html(depth: int) -> str:
        if depth == 0 or rng.random() < 0.2:
            return rng.choice(["alpha", "beta", "gamma 2026", "delta"])
        tag = rng.choice(tags)
        cls = rng.choice(["", "x", "y"])
        return f"<{tag} class='{cls}'>" + "".join(random_html(depth - 1) for _ in range(rng.randint(1, 4))) + f"</{tag}>"

    for _ in range(30):
        t1 = DomTree.from_html("<body>" + random_html(5) + "</body>")
        t2 = DomTree.from_html("<body>" + random_html(5) + "</body>")
        for eq in map(Equality, EQUALITY_PRESETS.values()):
            m = etdm(t1, t2, eq)
            assert len(set(m.values())) == len(m)  # one-to-one
            s1, s2 = t1.signatures(eq), t2.signatures(eq)
            for a, b in m.items():
                if a == 0:
                    assert b == 0
                    continue
                assert s1[a] == s2[b]  # equal
                assert m[t1.parent[a]] == t2.parent[b]  # top-down
            assert len(etdm(t1, t1, eq)) == len(t1)


def test_a_highlighted_menu_item_does_not_shift_the_mapping():
    key, other = page(0, "<p>Key page text</p>"), page(3, "<p>Another page</p>")
    m = etdm(key, other, Equality(EQUALITY_PRESETS["default"]))
    mapped = texts(key, m)
    # every item but the two highlighted ones (0 on the key page, 3 on the other) maps
    assert [t for t in mapped if t.startswith("Item")] == ["Item Bravo", "Item Charlie", "Item Echo",
                                                                "Item Foxtrot"]
    assert "Footer (c) 2026" in mapped and "Key page text" not in mapped


def test_template_is_the_common_part_and_content_stays():
    eq = Equality.parse("loose")
    key = page(0, "<p>Welcome to the key page</p>")
    cs = [page(i, f"<p>Page {i} has words of its own</p><p>and a second paragraph</p>") for i in (1, 2, 3)]
    template, used = extract_template(key, cs, eq)
    assert used == 3
    assert "Footer (c) 2026" in texts(template, range(len(template)))
    assert not any("Welcome" in t for t in texts(template, range(len(template))))
    target = page(4, "<p>Fresh content of page four</p>")
    cleaned = clean_page(target, best_template(target, [template], eq)[1])
    assert "Fresh content of page four" in cleaned.clean_text
    assert "Footer" not in cleaned.clean_text and "Item Bravo" not in cleaned.clean_text
    assert 0 < cleaned.template_tokens < cleaned.n_tokens
    assert "/html/body/footer[1]" in cleaned.template_paths


def test_stricter_equality_maps_less():
    """The paper's trade-off: a stricter relation maps fewer nodes (precision up, recall down)."""
    key = page(0, "<p>x</p>")
    other = DomTree.from_html("<body><ul id='menu' data-x='1'>" + MENU.format(
        **{f"cls{i}": "item" for i in range(6)}) + "<li>extra</li></ul><footer><p>Footer (c) 1999</p></footer></body>")
    sizes = [len(etdm(key, other, Equality.parse(name))) for name in ("loose", "default", "strictest")]
    assert sizes[0] >= sizes[1] > sizes[2]


def test_dom_paths_agree_with_pagelets():
    """Node paths use pagelets.py's DOM paths, so template_pagelets can be joined on them."""
    html = two_template_site()[0]["html"]
    tree = DomTree.from_html(html)
    parsed = PageParser().parse("https://two.example.org/", html)
    paths = set(tree.path)
    assert parsed.pagelets and all(p.dom_path in paths for p in parsed.pagelets)


def _site_graph(pages):
    parser = PageParser()
    out, parsed = {}, {}
    for p in pages:
        url = normalize_url(p["url"])
        key = page_key(url)
        parsed[key] = parser.parse(url, p["html"])
        out[key] = {ln.dst_page_key for ln in parsed[key].links if ln.same_site}
    for key in out:
        out[key] &= set(out)
    return out, parsed


def test_a_site_with_two_templates_gets_both():
    pages = two_template_site()
    out, parsed = _site_graph(pages)
    keys_by_url = {page_key(normalize_url(p["url"])): p["url"] for p in pages}
    indeg = {k: sum(k in s for s in out.values()) for k in out}
    shape = {k: hash(tuple(sorted({"/".join(pl.dom_path.split("/")[:4]) for pl in parsed[k].pagelets})))
             for k in out}
    keys = choose_key_pages([(k, keys_by_url[k], shape[k], indeg[k]) for k in out], max_templates=3)
    assert keys_by_url[keys[0]] == "https://two.example.org/" and len(keys) == 2
    assert "/post/" in keys_by_url[keys[1]]
    trees = {page_key(normalize_url(p["url"])): DomTree.from_html(p["html"]) for p in pages}
    eq = Equality.parse("loose")
    templates = []
    for key in keys:
        density = {pl.ordinal: pl.n_links / (pl.n_tokens + 1) for pl in parsed[key].pagelets}
        order = explore_order([(ln.link_ordinal, ln.dst_page_key, density.get(ln.pagelet_ordinal, 0.0))
                               for ln in parsed[key].links], menu_first=True)
        cs = complete_subdigraph(key, out, 4, order)
        assert cs.complete and len(cs.pages) == 4
        templates.append(extract_template(trees[key], [trees[k] for k in cs.pages], eq)[0])
    section_text = " ".join(texts(templates[0], range(len(templates[0]))))
    post_text = " ".join(texts(templates[1], range(len(templates[1]))))
    assert "Archive" in section_text and "Section footer" in section_text
    assert "In this series" in post_text and "Share this story" in post_text
    for key, tree in trees.items():
        chosen, mapped = best_template(tree, templates, eq)
        assert chosen == (1 if "/post/" in keys_by_url[key] else 0), keys_by_url[key]
        assert mapped == set(etdm(templates[chosen], tree, eq).values())
        cleaned = clean_page(tree, mapped)
        assert "Share this story" not in cleaned.clean_text and "Section footer" not in cleaned.clean_text
        assert ("sentence 0" in cleaned.clean_text) or ("paragraph 0" in cleaned.clean_text)


def test_no_complete_subdigraph_degrades_to_the_biggest_one():
    """Algorithm 1: without an n-CS, every link is explored and the biggest m-CS returned."""
    # a hub whose pages link only back to the hub: no two of them link each other
    star = {0: {1, 2, 3, 4, 5}, **{i: {0} for i in range(1, 6)}}
    cs = complete_subdigraph(0, star, 4)
    assert not cs.complete and cs.explored == 5 and len(cs.pages) == 1
    # pages 1-2-3 link each other pairwise, 4 and 5 only one way: a 3-CS is the best
    graph = {0: {1, 2, 3, 4, 5}, 1: {2, 3, 4}, 2: {1, 3}, 3: {1, 2}, 4: {5}, 5: set()}
    cs = complete_subdigraph(0, graph, 4)
    assert not cs.complete and cs.explored == 5 and sorted(cs.pages) == [1, 2, 3]
    # with n = 3 it stops as soon as the 3-CS is complete
    cs = complete_subdigraph(0, graph, 3)
    assert cs.complete and cs.explored == 3
    # links to pages outside the crawl cannot be loaded and are not explored
    cs = complete_subdigraph(0, {0: {1, 9}, 1: {0}}, 4)
    assert cs.explored == 1


def test_menu_first_explores_the_densest_region_first():
    links = [(0, 10, 0.01), (1, 11, 0.9), (2, 12, 0.01), (3, 13, 0.9)]
    assert explore_order(links, menu_first=True) == [11, 13, 10, 12]
    assert explore_order(links, menu_first=False) == [10, 11, 12, 13]


def test_templates_round_trip_as_json():
    tree = page(2, "<p>Some text</p>")
    back = DomTree.from_json(tree.to_json())
    eq = Equality.parse("strictest")
    assert back.signatures(eq) == tree.signatures(eq) and back.children == tree.children


def test_unknown_equality_feature_is_refused():
    with pytest.raises(ValueError, match="unknown equality features"):
        Equality.parse("tag,colour")


def test_a_cs_page_with_another_layout_can_be_skipped():
    """Beyond the paper (detect.etdm_min_overlap): a home page wrapped in its own
    layout would shrink the template to a few nodes; with a minimum overlap it is
    skipped and the others refine the template."""
    eq = Equality.parse("loose")
    key = page(0, "<p>Key page</p>")
    home = DomTree.from_html("<body><div class='homepage'><p>Welcome home</p></div></body>")
    others = [page(i, f"<p>Page {i} body</p>") for i in (1, 2)]
    shrunk, used = extract_template(key, [home, *others], eq)
    assert used == 3 and len(shrunk) <= 3 and "Footer (c) 2026" not in texts(shrunk, range(len(shrunk)))
    kept, used = extract_template(key, [home, *others], eq, min_overlap=0.5)
    assert used == 2 and "Footer (c) 2026" in texts(kept, range(len(kept)))


def test_a_sites_templates_reach_the_tasks_in_one_order_whatever_the_shuffle():
    """best_template keeps the first of templates that map equally many nodes;
    collected in the shuffle's order, that order (and a page's template and clean
    text) changed with the number of shuffle partitions (found in review)."""
    from templatemine.templates.etdm_stages import templates_by_site

    rows = [("a.org", 9, "{t9}"), ("b.org", 4, "{t4}"), ("a.org", -3, "{t-3}"), ("a.org", 5, "{t5}")]
    want = {"a.org": [(-3, "{t-3}"), (5, "{t5}"), (9, "{t9}")], "b.org": [(4, "{t4}")]}
    for _ in range(5):
        random.shuffle(rows)
        assert templates_by_site(rows) == want


def test_text_nodes_join_as_pagelet_text_does():
    """A word split by inline markup is one word in the clean text, as in
    pagelet and node texts (html/pagelets.element_text): no space across an
    inline element's edge; a space across a block, white space, or two inline
    elements that meet. A removed text node between two kept ones is a break."""
    import json

    from templatemine.html.pagelets import element_text
    from templatemine.html.nesting import parse as parse_html

    html = ("<html><body><p><span class=dropcap>T</span>he story, <a href='/h'>Times Haiku</a>, and <b>x</b> "
            "<i>y</i> <em>a</em><em>b</em> 2019<span class=divider></span>4:29 hy<wbr>phen<br>next</p>"
            "<div>block</div>after <!-- c --> word<b>s</b></body></html>")
    tree = DomTree.from_html(html)
    texts = tree.text_nodes()
    want = "The story, Times Haiku, and x y a b 2019 4:29 hyphen next block after words"
    assert tree.joined(texts) == want == " ".join(element_text(parse_html(html)[0].body).split())
    assert clean_page(tree, set()).clean_text == want and clean_page(tree, set()).n_tokens == len(want.split())
    he = next(i for i in texts if tree.text[i].startswith("he story"))
    drop_cap = next(i for i in texts if tree.text[i] == "T")
    assert clean_page(tree, {drop_cap}).clean_text.startswith("he story,")
    cleaned = clean_page(tree, {i for i in texts if tree.text[i] == "x"})
    assert " and y a b " in cleaned.clean_text and cleaned.template_tokens == 1
    assert tree.joined([i for i in texts if i != he]).startswith("T Times Haiku,")  # no glue across a gap
    split_word = DomTree.from_html("<body><p>a<b>b</b>c</p></body>")
    middle = next(i for i in split_word.text_nodes() if split_word.text[i] == "b")
    cleaned = clean_page(split_word, {middle})
    assert cleaned.clean_text == "a c" and (cleaned.n_tokens, cleaned.template_tokens) == (1, 0)
    back = DomTree.from_json(tree.to_json())
    assert back.glue == tree.glue and back.joined(texts) == want
    old = json.dumps(json.loads(tree.to_json())[:9])  # a tree written before `glue`
    assert DomTree.from_json(old).joined(texts) == " ".join(tree.text[i] for i in texts)


# -- found in review (/tmp/revE): r1 anchor jump, r2 window gap, r6 root, r7 duplicates in the CS ----------

SITE_NAV = "<a href='/'>Home</a> <a href='/docs'>Docs</a> <a href='/blog'>Blog</a>"


def _nav_page(sub: str, body: str) -> DomTree:
    """A header nav with a per-section sub-menu (Fig. 2) and a footer repeating the plain nav."""
    return DomTree.from_html(f"<body><nav>{SITE_NAV}{sub}</nav><main><h1>{body}</h1><p>{body} text</p></main>"
                             f"<nav>{SITE_NAV}</nav><footer>Copyright ACME</footer></body>")


def test_an_in_place_partner_is_not_skipped_for_an_exact_copy_further_on():
    """The anchor of a child is its earliest partner that agrees in content: the
    header nav (same first text, not the same subtree) must not anchor onto the
    footer's exact copy of it, which left main and the second nav unmapped."""
    eq = Equality.parse("loose")
    key = _nav_page("", "Welcome")
    other = _nav_page("<ul><li>Docs one</li><li>Docs two</li></ul>", "Section Docs")
    m = etdm(key, other, eq)
    pairs = [(key.path[a], other.path[m[a]]) for a in key.children[0] if a in m]
    assert pairs == [("/html/body/nav[1]", "/html/body/nav[1]"), ("/html/body/main[1]", "/html/body/main[1]"),
                     ("/html/body/nav[2]", "/html/body/nav[2]"), ("/html/body/footer[1]", "/html/body/footer[1]")]
    cs = [_nav_page(f"<ul><li>{s} one</li><li>{s} two</li></ul>", f"Section {s}")
          for s in ("Docs", "Blog", "News", "Shop")]
    template, used = extract_template(key, cs, eq)
    assert used == 4
    target = _nav_page("<ul><li>Jobs one</li></ul>", "Fresh article")
    cleaned = clean_page(target, best_template(target, [template], eq)[1])
    assert cleaned.clean_text == "Jobs one Fresh article Fresh article text"


@pytest.mark.parametrize("n", [10, 70, 200])
def test_a_template_child_far_after_the_last_pair_is_found(n):
    """No window: a footer after n sibling paragraphs (n > 64 was never looked at)
    is template, and leaves the clean text of a long page."""
    def article(title: str, n: int) -> DomTree:
        paras = "".join(f"<p>{title} paragraph {i} {'xyz' * (i % 3)} words</p>" for i in range(n))
        return DomTree.from_html(f"<body><div class='hdr'>ACME docs</div><h1>{title}</h1>{paras}"
                                 f"<div class='ftr'>Copyright ACME, all rights reserved</div></body>")

    eq = Equality.parse("loose")
    template, used = extract_template(article("Alpha", 5), [article(t, n) for t in ("Bravo", "Charlie", "Delta")], eq)
    assert texts(template, range(len(template))) == ["ACME docs", "Copyright ACME, all rights reserved"]
    target = article("Zulu", n)
    cleaned = clean_page(target, best_template(target, [template], eq)[1])
    assert "Copyright" not in cleaned.clean_text and "ACME docs" not in cleaned.clean_text
    assert "Zulu paragraph 0" in cleaned.clean_text and f"Zulu paragraph {n - 1}" in cleaned.clean_text


def test_one_anchor_far_ahead_does_not_leave_every_child_before_it_unpaired():
    """A share bar at the top of one page and the bottom of the other: with no
    window, anchoring on it paired nothing before it (4 nodes mapped); the
    in-order pairing of equal children is kept when it pairs more (83)."""
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda".split()
    body = [f"paragraph about topic {w}" for w in words] * 8

    def page(items, first, last=""):
        return DomTree.from_html("<html><body><div id=main>" + first + "".join(f"<p>{w}</p>" for w in items)
                                 + last + "</div></body></html>")

    t1 = page(body[:80], "<p>Share this post</p>")
    t2 = page([b.replace("topic", "subject") for b in body[:80]], "<p>Intro text here</p>",
              "<p>Share this post</p>")
    for equality in ("loose", "structure"):
        eq = Equality.parse(equality)
        m = etdm(t1, t2, eq)
        assert len(m) >= 83, (equality, len(m))
        main1, main2 = t1.children[t1.children[0][0]], t2.children[t2.children[0][0]]
        assert [m.get(a) for a in main1[1:4]] == list(main2[1:4])  # paragraph i with paragraph i


def test_children_pair_one_to_one_and_in_order_without_a_window():
    """Long sibling lists with repeats: the pairs stay one-to-one, in document
    order on both sides, equal, and the same from run to run."""
    rng = random.Random(11)
    eq = Equality.parse("loose")
    words = ["home", "news", "a", "b", "c"]

    def flat(k: int) -> DomTree:
        tags = [rng.choice(["p", "div", "span"]) for _ in range(k)]
        kids = "".join(f"<{tag}>{rng.choice(words)}</{tag}>" for tag in tags)
        return DomTree.from_html(f"<body>{kids}</body>")

    for _ in range(20):
        t1, t2 = flat(rng.randint(0, 150)), flat(rng.randint(0, 150))
        m = etdm(t1, t2, eq)
        assert m == etdm(t1, t2, eq)
        s1, s2 = t1.signatures(eq), t2.signatures(eq)
        body_pairs = sorted((a, b) for a, b in m.items() if t1.parent[a] == 0)
        assert [b for _a, b in body_pairs] == sorted(b for _a, b in body_pairs)  # order-preserving
        assert len(set(m.values())) == len(m) and all(s1[a] == s2[b] for a, b in m.items() if a)
        assert len(etdm(t1, t1, eq)) == len(t1)
        # a short list is scanned, a long one indexed: the same pairs either way
        kids1, kids2 = t1.children[0], t2.children[0]
        (deep1, first1), (deep2, first2) = t1.content_keys(), t2.content_keys()
        args = (kids1, kids2, s1, s2, deep1, deep2, first1, first2)
        assert _pair_children(*args, linear=0) == _pair_children(*args, linear=10 ** 9)


def test_the_root_key_page_is_the_sites_home_page_not_the_shortest_url():
    """Shortest URL across the hosts of a registered domain picked a bare-host page
    nothing links to; the root is the shallowest path, most linked-to first."""
    pages = [(1, "https://www.example.org/", 11, 40),
             (2, "https://example.org/faq", 12, 0),
             (3, "https://www.example.org/docs/", 11, 30)]
    assert choose_key_pages(pages, max_templates=1) == [1]
    assert choose_key_pages([(1, "https://blog.example.org/", 11, 40), (2, "https://example.org/a", 12, 0)],
                            max_templates=1) == [1]
    # two home pages: the most linked-to; then the shorter URL, then the URL (deterministic)
    assert choose_key_pages([(5, "https://example.org/", 1, 2), (6, "https://www.example.org/", 1, 9)], 1) == [6]
    assert choose_key_pages([(7, "https://www.example.org/", 1, 3), (8, "https://example.org/", 1, 3)], 1) == [8]
    assert choose_key_pages([(9, "https://b.example.org/", 1, 3), (4, "https://a.example.org/", 1, 3)], 1) == [4]


def test_a_near_duplicate_never_enters_the_complete_subdigraph():
    """/index.html, a near-duplicate of the key page /, linked from it: it was
    explored as a CS page (a CS of the key page's own copy, a template of the
    whole key page). Links are taken from original pages only, and a link to a
    near-duplicate counts as a link to its original (dup_of)."""
    from templatemine.templates.etdm_stages import site_subdigraphs

    # (page_key, url, shape, original = coalesce(dup_of, page_key))
    pages = [(0, "https://x.org/", 1, 0), (1, "https://x.org/index.html", 1, 0),
             (2, "https://x.org/a/", 1, 2), (3, "https://x.org/b/", 1, 3), (4, "https://x.org/a/index.html", 1, 2)]
    # (src, dst, link_ordinal, density): the key links its own copy first; b links a through a's copy
    edges = [(0, 1, 0, 0.5), (0, 4, 1, 0.5), (0, 3, 2, 0.5), (1, 2, 0, 0.5), (1, 3, 1, 0.5),
             (2, 3, 0, 0.5), (2, 0, 1, 0.5), (3, 4, 0, 0.5), (3, 0, 1, 0.5), (4, 1, 0, 0.5)]
    for n in (2, 4):
        result = site_subdigraphs(pages, edges, n=n, max_templates=3, min_shape_share=0.1, menu_first=True)
        assert [key for key, *_ in result] == [0]
        _key, rank, cs, reachable = result[0]
        assert rank == 0 and sorted(cs.pages) == [2, 3] and cs.complete == (n == 2) and reachable == 2
        # as the Spark stage passes them: one-shot iterators
        assert site_subdigraphs(iter(pages), iter(edges), n, 3, 0.1, True) == result
    # the reviewer's graph (r7_dup_cs.py): the duplicate was the whole CS
    r7 = [(s, d, i, 0.5) for i, (s, d) in enumerate([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 0), (3, 0)])]
    (_key, _rank, cs, _reachable), = site_subdigraphs(pages[:4], r7, n=4, max_templates=1, min_shape_share=0.1,
                                                       menu_first=True)
    assert 1 not in cs.pages and set(cs.pages) <= {2, 3}
    # a duplicate is never a key page, and a link to it is a link to its original: x.org/ is linked to
    # four times through its copy /index.html, www.x.org/ once
    many = [(k, f"https://x.org/p{k}", 1, k) for k in range(10, 14)]
    homes = [(0, "https://x.org/", 1, 0), (1, "https://x.org/index.html", 1, 0), (5, "https://www.x.org/", 1, 5)]
    links = [(k, 1, 0, 0.1) for k in range(10, 14)] + [(10, 5, 1, 0.1)]
    keys = site_subdigraphs(homes + many, links, n=4, max_templates=1, min_shape_share=0.1, menu_first=True)
    assert [key for key, *_ in keys] == [0]
