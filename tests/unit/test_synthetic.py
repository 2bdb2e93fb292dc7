"""The synthetic web: deterministic, exactly sized, and holding the cases it promises."""

import gzip
import json

from warcio.archiveiterator import ArchiveIterator

from templatemine.evaluate.synthetic import (FAMILIES, RELATED_MIN_PAGES, SHARE_BAR, Vocabulary, WebSpec, generate,
                                              page_profile, plan_sites)


def _pages(out):
    pages = {}
    for entry in json.load(open(out / "spec.json"))["warc_files"]:
        with open(out / entry["path"], "rb") as fh:
            for rec in ArchiveIterator(fh):
                pages[rec.rec_headers.get_header("WARC-Target-URI")] = rec.content_stream().read().decode()
    return pages


def test_same_spec_same_pages_whatever_the_workers(tmp_path):
    spec = WebSpec(pages=400, seed=7, shards=4, mirror_share=0.5)
    a, b = tmp_path / "a", tmp_path / "b"
    summary = generate(spec, str(a), workers=1)
    generate(spec, str(b), workers=2)
    pa, pb = _pages(a), _pages(b)
    assert pa == pb and len(pa) == summary["pages"] == 400
    assert sum(e["records"] for e in summary["warc_files"]) == 400
    gold = [json.loads(line) for line in open(a / "gold.jsonl")]
    assert len(gold) == 400 and {g["url"] for g in gold} == set(pa)


def test_web_holds_its_cases(tmp_path):
    spec = WebSpec(pages=600, seed=3, mirror_share=0.5, sister_share=0.3)
    summary = generate(spec, str(tmp_path), workers=1)
    pages = _pages(tmp_path)
    # the web-wide share bar: one giant group over every page of every site
    bar = ">Home</a> | <a href='?share=1'>Share</a> | <a href='/privacy.html'>Privacy policy</a>"
    assert all(bar in html for html in pages.values()) and SHARE_BAR[0] == "Home"
    assert summary["one_page_sites"] > 0 and summary["sister_sites"] > 0 and summary["mirror_sites"] > 0
    truth = [json.loads(line) for f in sorted((tmp_path / "truth").glob("*.jsonl.gz"))
             for line in gzip.open(f, "rt")]
    # a mirror copies its original page for page, under another host: the same
    # gold, blocks and HTML once the host is replaced
    mirrors = [t for t in truth if t["mirror_of"]]
    by_url = {t["url"]: t for t in truth}
    assert mirrors
    for t in mirrors:
        original_url = t["url"].replace("://mirror.", "://www.")
        original = by_url[original_url]
        assert t["mirror_of"] == original["site"]
        assert original["gold_text"] == t["gold_text"] and original["blocks"] == t["blocks"]
        assert pages[t["url"]].replace(t["site"], original["site"]) == pages[original_url], t["url"]
    # every line of the gold text is in the page's visible body text
    for t in truth:
        visible = _visible_text(pages[t["url"]])
        for line in t["gold_text"].splitlines():
            assert "".join(line.split()) in visible, (t["url"], line)
    # template blocks are marked
    t = next(t for t in truth if not t["mirror_of"] and any(b["block"] == "related" for b in t["blocks"]))
    assert {b["block"] for b in t["blocks"] if b["template"]} >= {"header", "menu", "footer", "share", "related-heading"}
    assert {b["block"] for b in t["blocks"] if not b["template"]} == {"related"}


def test_site_sizes_are_heavy_tailed_and_exact():
    spec = WebSpec(pages=20_000, seed=1)
    sites = plan_sites(spec, Vocabulary(spec.seed, spec.vocabulary))
    sizes = sorted((s.n_pages for s in sites), reverse=True)
    assert sum(sizes) == 20_000
    assert sizes[0] == int(20_000 * spec.site_max_share)  # the cap: a few huge sites
    assert sum(1 for n in sizes if n == 1) > len(sizes) / 3  # many tiny ones
    assert {s.family for s in sites} == set(range(len(FAMILIES)))


def test_related_lists_only_on_sites_large_enough_to_vary(tmp_path):
    """A related list on a two-page site would repeat on both pages: a template
    in all but name. The generator gives lists only to sites of RELATED_MIN_PAGES
    pages or more, drawn from the page's other pages."""
    generate(WebSpec(pages=600, seed=5), str(tmp_path), workers=1)
    truth = [json.loads(line) for f in sorted((tmp_path / "truth").glob("*.jsonl.gz"))
             for line in gzip.open(f, "rt")]
    site_pages = {}
    for t in truth:
        site_pages[t["site"]] = site_pages.get(t["site"], 0) + 1
    with_list = [t for t in truth if any(b["block"] == "related" for b in t["blocks"])]
    assert with_list and all(site_pages[t["site"]] >= RELATED_MIN_PAGES for t in with_list)
    assert all(not any(b["block"] == "related" for b in t["blocks"])
               for t in truth if site_pages[t["site"]] < RELATED_MIN_PAGES)
    # the list links three other pages of the page's own site, each under that page's title
    from selectolax.lexbor import LexborHTMLParser

    pages = _pages(tmp_path)
    titles = {url: LexborHTMLParser(html).css_first("h1").text() for url, html in pages.items()}
    for t in with_list:
        links = LexborHTMLParser(pages[t["url"]]).css("div.related li a")
        targets = [f"https://{t['site']}{a.attributes['href']}" for a in links]
        assert len(set(targets)) == 3 and t["url"] not in targets, t["url"]
        assert all(u in pages for u in targets), targets  # pages of this site (the host is the page's)
        assert [a.text() for a in links] == [titles[u] for u in targets]
        related = next(b for b in t["blocks"] if b["block"] == "related")
        assert related["text"] == " ".join(titles[u] for u in targets)


def _visible_text(html):
    """The text extract sees: what a browser would not show is stripped first."""
    from selectolax.lexbor import LexborHTMLParser

    from templatemine.html.pagelets import strip_invisible

    tree = LexborHTMLParser(html)
    strip_invisible(tree)
    return "".join(tree.body.text(separator=" ").split())


def test_real_markup_keeps_the_content_and_weighs_like_a_real_page(tmp_path):
    """`markup = "real"` puts the same content (same draws, same gold) inside a
    real site's markup: every lean block is still there with the same text, and
    the added templates (submenus, footer columns, tag cloud) are truth blocks
    whose text the page shows. Its pages are sized like a real site's median
    page (17 kB, 285 body elements, 75 links, measured in docs/scaling.md),
    not the lean 4 kB / 50 / 19; those sizes are constants here, the test reads
    nothing outside the repository."""
    lean_dir, real_dir = tmp_path / "lean", tmp_path / "real"
    generate(WebSpec(pages=300, seed=4), str(lean_dir), workers=1)
    generate(WebSpec(pages=300, seed=4, markup="real"), str(real_dir), workers=1)
    lean, real = _pages(lean_dir), _pages(real_dir)
    assert set(lean) == set(real)

    def truth(d):
        return {json.loads(line)["url"]: json.loads(line) for f in sorted((d / "truth").glob("*.jsonl.gz"))
                for line in gzip.open(f, "rt")}

    tl, tr = truth(lean_dir), truth(real_dir)
    added = set()
    for url, t in tr.items():
        assert t["gold_text"] == tl[url]["gold_text"]
        lean_blocks = {b["block"]: b for b in tl[url]["blocks"]}
        visible = _visible_text(real[url])
        for b in t["blocks"]:
            assert "".join(b["text"].split()) in visible, (url, b["block"])
            if b["block"] in lean_blocks and b["block"] != "menu":  # the menu gains its submenus
                assert b == lean_blocks[b["block"]]
            elif b["block"] not in lean_blocks:
                added.add(b["block"])
        assert set(lean_blocks) <= {b["block"] for b in t["blocks"]}
    assert added == {"tags", "footer-columns"}

    keys = ("median_bytes", "median_body_elements", "median_links")
    lean_profile, real_profile = page_profile(list(lean.values())), page_profile(list(real.values()))
    lean_bytes, lean_elements, lean_links = (lean_profile[k] for k in keys)
    real_bytes, real_elements, real_links = (real_profile[k] for k in keys)
    assert lean_bytes < 6_000 and lean_elements < 80 and lean_links < 30
    assert 12_000 <= real_bytes <= 40_000 and 180 <= real_elements <= 600 and 50 <= real_links <= 150
