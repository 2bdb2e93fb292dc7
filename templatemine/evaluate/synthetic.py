"""A synthetic web with ground truth: seeded, deterministic, any size.

Real corpora are small (../shared/corpora: 945 site pages); cost curves and
scale runs need 10 to 1000 times that, with known answers. This writes sharded
WARC files of many sites whose template blocks are known, so that wall time,
shuffle and the self-join can be measured against the number of pages, and
template precision and recall checked at any size.

What the web holds (the cases section 3 of Bar-Yossef & Rajagopalan and the
issues name):
- a heavy-tailed site-size distribution (Pareto, capped): a few huge sites and
  many tiny ones, one-page sites included;
- per-site templates in several layout families (different tags, classes and
  block order): a header with a date and a visitor counter that change on every
  page (digits fold in shingles), a menu whose current item is highlighted (shown
  unlinked, as mkdocs and Sphinx do), a "popular" sidebar and a footer;
- per-page "related" lists on sites of >= RELATED_MIN_PAGES pages: boilerplate,
  but not a template (three other pages drawn per page); their "Related"
  heading, the same on every page, is a template block;
- a share bar with the same text on every page of every site ("Home | Share |
  Privacy policy"): one giant shingle group across thousands of sites, the skew
  a distributed group-by must survive;
- sister sites (groups sharing a network bar that links them all, the paper's
  ITtoolbox case), mirrors (a site copied under another host, no links between
  the copies, section 3.2), and links across sites from content.

Ground truth per page (truth/truth-NNN.jsonl.gz, one file per worker, NNN the
worker): url, site, gold_text (the main content, the `gold.jsonl` format of
../shared/corpora), and the page's blocks with their text and whether each is a
template block. `gold.jsonl` alone is what `templatemine evaluate --gold` reads.

Everything is drawn from `random.Random` seeded by (seed, site), so a page does
not depend on how many workers wrote the shards: the same spec gives the same
pages, byte for byte, whatever `workers` is. Which shard holds a page depends on
`workers`; with the same spec and `workers`, every file written (WARC records
with their WARC-Record-ID, truth, gold, spec.json) is the same byte for byte.
"""

from __future__ import annotations

import bisect
import gzip
import io
import json
import os
import random
import uuid
from dataclasses import asdict, dataclass
from multiprocessing import get_context
from typing import ClassVar

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

SHARE_BAR = ("Home", "Share", "Privacy policy")  # web-wide: the giant shingle group
RELATED_MIN_PAGES = 10  # smaller sites have no "related" list: on 2 pages it would repeat, a template
TLDS = ("com", "org", "net", "io", "de", "co.uk", "fr", "info")
MAX_SHARDS = 512  # every worker keeps its shards open at once: one file handle each
MAX_VOCABULARY = 600_000  # _words makes at most 637,420 distinct words (1 to 4 of 28 syllables)
MIN_VOCABULARY = {"lean": 202, "real": 308}  # the highest word index drawn (site names; the real footer's columns), + 1


@dataclass(frozen=True)
class WebSpec:
    GENERATOR: ClassVar[int] = 2
    """Version of what `generate` makes of a spec, recorded in spec.json (2: the
    WARC-Record-IDs are derived from seed and URL, exactly `shards` files)."""
    pages: int = 10_000
    """Pages in all (mirrors included)."""
    seed: int = 1
    shards: int = 8
    """WARC files written (1 to MAX_SHARDS), spread over the workers in
    contiguous runs; a site's pages are spread over its worker's shards."""
    site_alpha: float = 1.2
    """Pareto shape of site sizes (smaller: heavier tail)."""
    site_min: int = 1
    site_max_share: float = 0.02
    """No site holds more than this share of the pages (at least 50 pages)."""
    sister_share: float = 0.1
    """Share of sites in sister groups (3 to 8 sites sharing a network bar)."""
    mirror_share: float = 0.05
    """Chance that a site of >= 5 pages is copied whole under a second host."""
    cross_link_rate: float = 0.3
    """Chance that a content page links a page of another site."""
    paragraphs: tuple = (2, 7)
    vocabulary: int = 8000
    markup: str = "lean"
    """"lean": the minimal page (about 4 kB, 50 body elements, 19 links);
    "real": the same content inside the markup of a real site's page (`Chrome`:
    a head of meta, CSS and scripts, wrapper divs with utility classes, a menu
    with submenus, footer columns, a tag cloud, inline SVG icons), sized on
    ../shared/corpora/sites (median 17 kB, 285 body elements, 75 links)."""

    def __post_init__(self):
        def need(ok: bool, what: str) -> None:
            if not ok:
                raise ValueError(f"WebSpec: {what}")

        need(self.pages >= 0, f"pages must be >= 0, not {self.pages}")
        need(1 <= self.shards <= MAX_SHARDS, f"shards must be 1 to {MAX_SHARDS} (every shard of a worker is an "
                                              f"open file while it writes), not {self.shards}")
        need(self.site_alpha > 0, f"site_alpha (the Pareto shape) must be > 0, not {self.site_alpha}")
        need(self.site_min >= 1, f"site_min must be >= 1 (a site of 0 pages never ends the plan), not {self.site_min}")
        need(0 < self.site_max_share <= 1, f"site_max_share must be in (0, 1], not {self.site_max_share}")
        for name in ("sister_share", "mirror_share", "cross_link_rate"):
            value = getattr(self, name)
            need(0 <= value <= 1, f"{name} must be in [0, 1], not {value}")
        need(len(self.paragraphs) == 2 and 0 <= self.paragraphs[0] <= self.paragraphs[1],
             f"paragraphs must be (low, high) with 0 <= low <= high, not {self.paragraphs!r}")
        need(self.markup in MIN_VOCABULARY, f"markup must be one of {tuple(MIN_VOCABULARY)}, not {self.markup!r}")
        low = MIN_VOCABULARY[self.markup]
        need(low <= self.vocabulary <= MAX_VOCABULARY,
             f"vocabulary must be {low} to {MAX_VOCABULARY} words with markup {self.markup!r} (the generator draws "
             f"words up to index {low - 1}; at most {MAX_VOCABULARY} distinct words can be made), "
             f"not {self.vocabulary}")


def recorded_spec(folder: str) -> dict | str:
    """The spec the web in FOLDER was made from, as its spec.json records it,
    with the generator's version (`generator`, None when not recorded); else
    why there is none ("no spec.json", "no spec in spec.json")."""
    try:
        with open(os.path.join(folder, "spec.json"), encoding="utf-8") as fh:
            summary = json.load(fh)
    except (OSError, ValueError):
        return "no spec.json"
    if not isinstance(summary, dict) or not isinstance(summary.get("spec"), dict):
        return "no spec in spec.json"
    return {**summary["spec"], "generator": summary.get("generator")}


def web_differences(folder: str, spec) -> list[str]:
    """How the web in FOLDER differs from what this generator makes of SPEC (a
    WebSpec or a TopicWebSpec): the spec fields whose values differ, "generator"
    when it was made by another version of the generator, or why it records no
    spec (recorded_spec). Empty: FOLDER holds exactly that web."""
    got = recorded_spec(folder)
    if isinstance(got, str):
        return [got]
    want = json.loads(json.dumps(asdict(spec)))  # tuples as lists, as spec.json holds them
    fields = sorted((want.keys() | got.keys()) - {"generator"})
    return ([k for k in fields if want.get(k) != got.get(k)]
            + (["generator"] if got["generator"] != type(spec).GENERATOR else []))


def reuse_web(folder: str, spec, make, who: str, derived: tuple = ()) -> bool:
    """Keep the web in FOLDER if it was made from SPEC, else (re)make it with
    `make(spec, folder)`, first removing FOLDER and the DERIVED folders computed
    from it (a run's output), with one progress line saying why. Returns whether
    the web was reused."""
    import shutil

    diff = web_differences(folder, spec)
    if not diff:
        return True
    if os.path.exists(folder):
        print(f"{who}: {folder} holds a web made from another spec (differs in {', '.join(diff)}): "
              "regenerating it", flush=True)
    else:
        print(f"{who}: generating a synthetic web into {folder}", flush=True)
    for path in (folder, *derived):
        shutil.rmtree(path, ignore_errors=True)
    make(spec, folder)
    return False


@dataclass(frozen=True)
class Site:
    index: int
    host: str
    name: str
    n_pages: int
    family: int
    sections: tuple
    sisters: tuple = ()  # hosts of its sister group, itself included
    mirror_of: str = ""  # host this site copies


FAMILIES = (
    # (header tag, menu tag, main tag, sidebar first?, class prefix)
    ("header", "nav", "main", False, "site"),
    ("div", "div", "div", True, "tpl"),
    ("header", "nav", "article", True, "md"),
    ("div", "nav", "section", False, "wrap"),
    ("header", "div", "main", False, "theme"),
    ("div", "ul", "div", True, "layout"),
)



def page_profile(html: list[str]) -> dict:
    """What pages are like (medians): HTML bytes, elements in the body (<body>
    itself counted), links (`<a href>`). The lean synthetic page is about 4 kB, 50 elements, 19 links;
    ../shared/corpora/sites' median page 17 kB, 285, 75. `scripts/bench`
    records it for the pages it measured."""
    from statistics import median

    from selectolax.lexbor import LexborHTMLParser

    rows = []
    for doc in html:
        tree = LexborHTMLParser(doc)
        body = tree.body
        rows.append((len(doc.encode("utf-8")), sum(1 for _ in body.traverse()) if body else 0,
                     len(tree.css("a[href]"))))
    if not rows:
        return {}
    return {"pages": len(rows), "median_bytes": median(r[0] for r in rows),
            "median_body_elements": median(r[1] for r in rows), "median_links": median(r[2] for r in rows)}


UTILITY = ("flex", "grid", "block", "items-center", "justify-between", "gap-2", "gap-4", "px-2", "px-4",
           "py-1", "py-2", "py-4", "mx-auto", "my-2", "mt-4", "mb-2", "text-sm", "text-base", "text-lg", "font-bold",
           "font-medium", "rounded", "rounded-lg", "shadow", "shadow-sm", "border", "border-b", "bg-white",
           "bg-gray-50", "text-gray-700", "text-gray-900", "hover:underline", "hover:text-blue-700", "w-full",
           "max-w-7xl", "md:flex", "md:block", "lg:grid-cols-3", "leading-relaxed", "tracking-tight", "truncate",
           "container", "row", "col", "col-md-8", "col-md-4", "d-flex", "nav-link", "nav-item", "dropdown-menu")
# no "hidden" / "d-none": extract drops what they hide (html/pagelets.strip_invisible), as a browser would
SOCIAL = ("twitter", "facebook", "linkedin", "github", "youtube", "instagram")


class Chrome:
    """The markup a real site wraps around the same blocks (`WebSpec.markup =
    "real"`): what a parser and a page walk pay for on a real page but what
    carries no text of its own, plus the bigger templates real sites have (a
    menu with submenus, footer columns, a tag cloud). Drawn from its own random
    stream, seeded by the site, so that the content, the gold and the lean
    blocks' text are the same draws as in the lean web.

    Sized on ../shared/corpora/sites (945 pages; medians: 17 kB of HTML, 285
    elements in the body, 75 links). Its pages' medians: 17.4 kB, 235 elements,
    74 links; its head is a larger share of the bytes (23%, against 5% on the
    sites and 16-20% on the news pages). `scripts/bench` prints the first three
    for the pages it measured."""

    def __init__(self, seed: int, source: str, name: str, p: str, vocab: "Vocabulary", menu_targets, paths):
        rng = random.Random(f"markup:{seed}:{source}")

        def cls(k: int) -> str:
            return " ".join(rng.sample(UTILITY, k))

        self.cls = {role: cls(rng.randint(2, 6)) for role in (
            "wrapper", "container", "header", "inner", "nav", "item", "link", "sub", "subitem", "main", "para",
            "figure", "aside", "footer", "col", "social", "tags", "form")}
        self.icons = {n: self._svg(rng, n) for n in (*SOCIAL, "logo", "search")}
        words = vocab.words
        # a submenu under each section: site-constant names, linking the section's articles
        articles: dict[int, list[str]] = {}
        for q, sec in paths:
            if q.endswith(".html"):
                articles.setdefault(sec, []).append(q)
        self.submenus = []
        for s, (href, _sec) in enumerate(menu_targets):
            n = rng.randint(4, 8)
            targets = articles.get(s) or [href]
            self.submenus.append([(targets[j % len(targets)], " ".join(rng.sample(words[300:4000], 2)).capitalize())
                                  for j in range(n)])
        self.columns = [(" ".join(rng.sample(words[100:1500], 1)).capitalize(),
                         [(f"/{w.lower()}.html", w.capitalize()) for w in rng.sample(words[300:4000], rng.randint(4, 8))])
                        for _ in range(rng.randint(3, 4))]
        self.tags = [w for w in rng.sample(words[200:5000], rng.randint(10, 20))]
        self.social = rng.sample(SOCIAL, rng.randint(3, 5))
        self.handle = name.lower()
        rules = []
        for i in range(rng.randint(25, 45)):
            sel = rng.choice((f".{p}-", ".", "#")) + "-".join(rng.sample(words[:600], 2))
            rules.append(f"{sel}{{margin:{i % 17}px {i % 5}px;padding:{i % 9}px;color:#{rng.randrange(16**6):06x}}}")
        self.css = "".join(rules)
        self.analytics = ("(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'start':new Date().getTime(),event:'load'});"
                          "var f=d.getElementsByTagName(s)[0],j=d.createElement(s);j.async=true;j.src='/assets/"
                          f"{rng.randrange(16**12):012x}.js?id='+i;f.parentNode.insertBefore(j,f);}})(window,document,"
                          f"'script','dataLayer','{name[:6].upper()}-{rng.randrange(10**6)}');"
                          + "".join(f"window.cfg{i}={{theme:'{p}',v:{rng.randrange(1000)},flags:[{','.join(str(rng.randrange(99)) for _ in range(12))}]}};"
                                    for i in range(rng.randint(4, 10))))
        self.asset = f"{rng.randrange(16**10):010x}"

    @staticmethod
    def _svg(rng: random.Random, name: str) -> str:
        d = "M" + " ".join(f"{rng.randrange(24)}.{rng.randrange(100):02d} {rng.randrange(24)}.{rng.randrange(100):02d}"
                           + rng.choice(("L", "C", "Q", "l", "c", "")) for _ in range(rng.randint(6, 14))) + "Z"
        return (f"<svg class='icon icon-{name}' viewBox='0 0 24 24' width='20' height='20' aria-hidden='true' "
                f"focusable='false'><path fill='currentColor' d='{d}'></path></svg>")

    def head(self, url: str, title: str, description: str, idx: int) -> str:
        ld = json.dumps({"@context": "https://schema.org", "@type": "Article", "headline": title, "url": url,
                         "datePublished": f"2026-{1 + idx % 12:02d}-{1 + idx % 28:02d}",
                         "publisher": {"@type": "Organization", "name": self.handle}})
        return (f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
                f"<meta name='description' content='{_esc(description)}'>"
                f"<meta property='og:title' content='{_esc(title)}'><meta property='og:url' content='{url}'>"
                f"<meta property='og:type' content='article'><link rel='canonical' href='{url}'>"
                f"<link rel='icon' href='/favicon.ico'><link rel='stylesheet' href='/assets/theme.{self.asset}.css'>"
                f"<link rel='preload' href='/assets/font.{self.asset}.woff2' as='font' crossorigin>"
                f"<style>{self.css}</style><script>{self.analytics}</script>"
                f"<script type='application/ld+json'>{ld}</script>")

    def header(self, p: str, inner: str) -> str:
        """`inner`: the lean header's content (logo link, tagline, date, About, Contact)."""
        c = self.cls
        return (f"<div class='{p}-topbar {c['inner']}'>{inner}"
                f"<form role='search' action='/search' class='{c['form']}'><input type='search' name='q' "
                f"aria-label='Search' class='{c['link']}'><button type='submit' aria-label='Search' "
                f"class='{c['link']}'>{self.icons['search']}</button></form></div>")

    def menu(self, menu_targets, section: int) -> tuple[str, str]:
        """(the menu's <ul>, its text): each section with its submenu."""
        c = self.cls
        items, text = [], []
        for s, (href, name) in enumerate(menu_targets):
            top = f"<span>{name}</span>" if section == s else \
                f"<a href='{href}' class='{c['link']}'><i class='icon'></i><span>{name}</span></a>"
            sub = "".join(f"<li class='{c['subitem']}'><a href='{h}' class='{c['link']}'><span>{t}</span></a></li>"
                          for h, t in self.submenus[s])
            cur = " active" if section == s else ""
            items.append(f"<li class='{c['item']}{cur}'>{top}<ul class='{c['sub']}'>{sub}</ul></li>")
            text.append(name + " " + " ".join(t for _, t in self.submenus[s]))
        return f"<ul class='{c['nav']}'>{''.join(items)}</ul>", " ".join(text)

    def tag_cloud(self) -> tuple[str, str]:
        c = self.cls
        links = "".join(f"<li><a href='/tag/{w}/' class='{c['link']}' data-count='{len(w) * 7}'>{w}</a></li>"
                        for w in self.tags)
        return f"<div class='tags {c['tags']}'><h3>Tags</h3><ul>{links}</ul></div>", "Tags " + " ".join(self.tags)

    def figure(self, idx: int) -> str:
        c = self.cls
        stem = f"/media/{self.asset}/{idx}"
        return (f"<figure class='{c['figure']}'><img src='{stem}-800.jpg' srcset='{stem}-400.jpg 400w, "
                f"{stem}-800.jpg 800w, {stem}-1600.jpg 1600w' sizes='(max-width: 768px) 100vw, 800px' alt='' "
                f"loading='lazy' width='800' height='450' decoding='async'></figure>")

    def footer(self, p: str, legal: str) -> tuple[str, str]:
        """(the footer's content: columns, social icons, the lean footer's `legal` line; the columns' text)."""
        c = self.cls
        cols = "".join(
            f"<div class='{c['col']}'><h4>{head}</h4><ul>"
            + "".join(f"<li><a href='{h}' class='{c['link']}'><span>{t}</span></a></li>" for h, t in links)
            + "</ul></div>"
            for head, links in self.columns)
        social = "".join(f"<a href='https://{s}.com/{self.handle}' aria-label='{s}' class='{c['link']}'>"
                         f"{self.icons[s]}</a>" for s in self.social)
        text = " ".join(head + " " + " ".join(t for _, t in links) for head, links in self.columns)
        return (f"<div class='{p}-columns {c['footer']}'>{cols}</div><div class='social {c['social']}'>{social}</div>"
                f"<div class='legal {c['container']}'>{legal}</div>", text)

    def scripts(self) -> str:
        return (f"<script src='/assets/app.{self.asset}.js' defer></script>"
                f"<script>document.documentElement.className+=' js';</script>")


def _words(rng: random.Random, n: int) -> list[str]:
    syllables = ["ka", "lo", "mi", "ne", "ra", "to", "su", "vi", "pe", "da", "gon", "tur", "bel", "sar", "qui",
                 "lex", "mon", "ti", "ar", "en", "ol", "us", "ix", "em", "or", "an", "il", "ur"]
    out, seen = [], set()
    while len(out) < n:
        w = "".join(rng.choice(syllables) for _ in range(rng.choice((1, 2, 2, 3, 3, 4))))
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out


class Vocabulary:
    """Zipf-distributed words, as text is."""

    def __init__(self, seed: int, size: int):
        self.words = _words(random.Random(f"vocab:{seed}"), size)
        acc, self.cum = 0.0, []
        for rank in range(1, size + 1):
            acc += 1.0 / rank
            self.cum.append(acc)

    def sample(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum, k=k)


def plan_sites(spec: WebSpec, vocab: Vocabulary) -> list[Site]:
    """The sites of the web: Pareto sizes (capped) summing to exactly
    `spec.pages`, mirrors counted; hosts, families, sister groups."""
    rng = random.Random(f"plan:{spec.seed}")
    cap = max(50, int(spec.pages * spec.site_max_share))
    sites: list[Site] = []
    total = 0
    while total < spec.pages:
        n = min(cap, int(spec.site_min * rng.paretovariate(spec.site_alpha)), spec.pages - total)
        name = "".join(w.capitalize() for w in rng.sample(vocab.words[200:3000], 2))
        host = f"www.{name.lower()}{len(sites)}.{rng.choice(TLDS)}"
        n_sections = max(2, min(9, 2 + n // 20))
        sections = tuple(w.capitalize() for w in rng.sample(vocab.words[100:2000], n_sections))
        site = Site(len(sites), host, name, n, rng.randrange(len(FAMILIES)), sections)
        sites.append(site)
        total += n
        if n >= 5 and total + n <= spec.pages and rng.random() < spec.mirror_share:
            sites.append(Site(len(sites), f"mirror.{host.removeprefix('www.')}", name, n, site.family,
                              sections, mirror_of=host))
            total += n
    # sister groups: random groups of 3 to 8 sites, none a mirror or mirrored
    mirrored = {s.mirror_of for s in sites if s.mirror_of}
    eligible = [s for s in sites if not s.mirror_of and s.host not in mirrored]
    rng.shuffle(eligible)
    n_grouped = int(len(eligible) * spec.sister_share)
    groups, j = [], 0
    while j < n_grouped:
        size = rng.randint(3, 8)
        groups.append(eligible[j:j + size])
        j += size
    by_index = {s.index: s for s in sites}
    for group in groups:
        if len(group) < 2:
            continue
        hosts = tuple(s.host for s in group)
        family = group[0].family
        for s in group:
            by_index[s.index] = Site(s.index, s.host, s.name, s.n_pages, family, s.sections, sisters=hosts)
    return [by_index[k] for k in range(len(sites))]


def page_paths(site: Site) -> list[tuple[str, int]]:
    """(path, section) of the site's pages: the home page, one index per
    section (while pages last), then articles."""
    paths = [("/", -1)]
    n_sec = len(site.sections)
    for s in range(n_sec):
        if len(paths) >= site.n_pages:
            break
        paths.append((f"/{site.sections[s].lower()}/", s))
    j = 0
    while len(paths) < site.n_pages:
        s = j % n_sec
        paths.append((f"/{site.sections[s].lower()}/{j // n_sec}-{j}.html", s))
        j += 1
    return paths


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;")


def render_site(site: Site, spec: WebSpec, vocab: Vocabulary, all_urls: "UrlIndex"):
    """Yield (url, html, truth) for every page of `site`."""
    source = site.mirror_of or site.host
    rng = random.Random(f"site:{spec.seed}:{source}")  # a mirror draws exactly its original's pages
    header_tag, menu_tag, main_tag, sidebar_first, p = FAMILIES[site.family]
    paths = page_paths(site)
    topic = vocab.sample(rng, 60)
    tagline = " ".join(vocab.sample(rng, 6))
    popular = [paths[rng.randrange(len(paths))][0] for _ in range(min(5, len(paths)))]
    popular_titles = [" ".join(vocab.sample(rng, 3)).capitalize() for _ in popular]
    menu_targets = [(f"/{sec.lower()}/", sec) for sec in site.sections]
    style = "body{font:16px serif}" + "".join(f".{p}-{w}{{margin:{i}px}}" for i, w in enumerate(topic[:30]))
    titles = [" ".join(vocab.sample(rng, rng.randint(2, 6))).capitalize() for _ in paths]
    host = site.host
    # the real markup draws from its own stream: the content below is the same draws either way
    chrome = Chrome(spec.seed, source, site.name, p, vocab, menu_targets, paths) if spec.markup == "real" else None
    for idx, (path, section) in enumerate(paths):
        url = f"https://{host}{path}"
        blocks = []
        # header: the date and the counter change on every page
        updated = f"Updated 2026-{1 + idx % 12:02d}-{1 + idx % 28:02d}, {rng.randint(1000, 99999)} visitors"
        header_text = f"{site.name} {tagline} {updated} About Contact"
        header_inner = (f"<a href='/' class='logo'>{chrome.icons['logo'] if chrome else ''}{site.name}</a>"
                        f"<span class='tagline'>{tagline}</span><span class='updated'>{updated}</span>"
                        f" <a href='/about.html'>About</a> <a href='/contact.html'>Contact</a>")
        if chrome:
            header_inner = chrome.header(p, header_inner)
        header = f"<{header_tag} class='{p}-header'>{header_inner}</{header_tag}>"
        blocks.append(("header", header_text, True))
        network = ""
        if site.sisters:
            items = " ".join(f"<a href='https://{h}/'>{h.split('.')[1].rstrip('0123456789').capitalize()}</a>"
                             for h in site.sisters)
            network = f"<div class='network'>Our network: {items}</div>"
            blocks.append(("network", "Our network: " + " ".join(h.split('.')[1].rstrip('0123456789').capitalize()
                                                                  for h in site.sisters), True))
        if chrome:
            menu_list, menu_text = chrome.menu(menu_targets, section)
            box = "nav" if menu_tag == "ul" else menu_tag  # the submenus' <ul> goes inside a box
            menu = f"<{box} class='{p}-menu'>{menu_list}</{box}>"
        else:
            menu_items = "".join(
                f"<li class='active'><span>{name}</span></li>" if section == s else f"<li><a href='{href}'>{name}</a></li>"
                for s, (href, name) in enumerate(menu_targets))
            menu = f"<{menu_tag} class='{p}-menu'><ul>{menu_items}</ul></{menu_tag}>" if menu_tag != "ul" else \
                f"<ul class='{p}-menu'>{menu_items}</ul>"
            menu_text = " ".join(name for _, name in menu_targets)
        blocks.append(("menu", menu_text, True))
        cloud = ""
        if chrome:
            cloud, cloud_text = chrome.tag_cloud()
        sidebar = (f"<aside class='{p}-sidebar'><h3>Popular</h3><ul>"
                   + "".join(f"<li><a href='{h}'>{t}</a></li>" for h, t in zip(popular, popular_titles))
                   + f"</ul>{cloud}</aside>")
        blocks.append(("sidebar", "Popular " + " ".join(popular_titles), True))
        if chrome:
            blocks.append(("tags", cloud_text, True))
        # main content: the gold
        title = titles[idx]
        paras, gold = [], [title]
        for _ in range(rng.randint(*spec.paragraphs)):
            words = [rng.choice(topic) if rng.random() < 0.2 else w
                     for w in vocab.sample(rng, rng.randint(25, 90))]
            words[0] = words[0].capitalize()
            gold.append(" ".join(words) + ".")
            if rng.random() < 0.3:  # an inline link to another page of the site
                k = rng.randrange(len(words))
                words[k] = f"<a href='{paths[rng.randrange(len(paths))][0]}'>{words[k]}</a>"
            paras.append(f"<p>{' '.join(words)}.</p>")
        if section == -1 or path.endswith("/"):
            # the home page and section indexes list their articles
            listed = [(q, titles[j]) for j, (q, s) in enumerate(paths)
                      if q.endswith(".html") and (section == -1 or s == section)][:12]
            if listed:
                paras.append("<ul class='listing'>" + "".join(f"<li><a href='{q}'>{t}</a></li>" for q, t in listed)
                             + "</ul>")
                gold.extend(t for _, t in listed)
        if rng.random() < spec.cross_link_rate:
            # a mirror copies its original's links to other sites too
            other = all_urls.random_url(rng, exclude=source)
            if other:
                anchor = " ".join(vocab.sample(rng, 3))
                paras.append(f"<p>See also <a href='{other}'>{anchor}</a>.</p>")
                gold.append(f"See also {anchor}.")
        figure = chrome.figure(idx) if chrome else ""
        main = f"<{main_tag} class='{p}-content'><h1>{_esc(title)}</h1>{figure}{''.join(paras)}</{main_tag}>"
        related = ""
        if len(paths) >= RELATED_MIN_PAGES:
            # three other pages of the site: on a site this large two pages share
            # a list rarely, far from the site support a template needs
            related_idx: list[int] = []
            while len(related_idx) < 3:  # rejection, not a list of the site's pages: O(1) per page
                j = rng.randrange(len(paths))
                if j != idx and j not in related_idx:
                    related_idx.append(j)
            related = ("<div class='related'><h3>Related</h3><ul>"
                       + "".join(f"<li><a href='{paths[j][0]}'>{titles[j]}</a></li>" for j in related_idx)
                       + "</ul></div>")
            # the heading is the same on every page (a template pagelet); the list is not
            blocks.append(("related-heading", "Related", True))
            blocks.append(("related", " ".join(titles[j] for j in related_idx), False))
        share = ("<div class='share'><a href='/'>Home</a> | <a href='?share=1'>Share</a> | "
                 "<a href='/privacy.html'>Privacy policy</a></div>")
        blocks.append(("share", " | ".join(SHARE_BAR), True))
        legal = (f"<p>&copy; 2026 {site.name}. All rights reserved.</p>"
                 "<a href='/privacy.html'>Privacy</a> <a href='/terms.html'>Terms</a> "
                 "<a href='/contact.html'>Contact</a>")
        if chrome:
            footer_inner, columns_text = chrome.footer(p, legal)
            footer = f"<footer class='{p}-footer'>{footer_inner}</footer>"
            blocks.append(("footer-columns", columns_text, True))
        else:
            footer = f"<footer class='{p}-footer'>{legal}</footer>"
        blocks.append(("footer", f"© 2026 {site.name}. All rights reserved. Privacy Terms Contact", True))
        body = (sidebar + main + related) if sidebar_first else (main + related + sidebar)
        if chrome:
            c = chrome.cls
            head = chrome.head(url, title, tagline, idx)
            page = (f"<div id='app' class='{p}-page {c['wrapper']}'><div class='{c['container']}'>"
                    f"{header}{network}{menu}<div class='{p}-wrap {c['main']}'>{body}</div>{share}{footer}"
                    f"</div></div>{chrome.scripts()}")
        else:
            head = f"<style>{style}</style><script>var page={idx};</script>"
            page = f"{header}{network}{menu}<div class='{p}-wrap'>{body}</div>{share}{footer}"
        html = (f"<!doctype html><html><head><meta charset='utf-8'><title>{_esc(title)} - {site.name}</title>"
                f"{head}</head><body class='{p}'>{page}</body></html>")
        truth = {"url": url, "site": host, "gold_text": "\n".join(gold), "mirror_of": site.mirror_of,
                 "sisters": len(site.sisters), "blocks": [{"block": b, "text": x, "template": t} for b, x, t in blocks]}
        yield url, html, truth


class UrlIndex:
    """Draws a random page URL of another site, weighted by site size (a big
    site gets more links), without materialising every URL."""

    def __init__(self, sites: list[Site]):
        self.sites = [s for s in sites if not s.mirror_of]
        self.paths = [None] * len(self.sites)
        acc, self.cum = 0, []
        for s in self.sites:
            acc += s.n_pages
            self.cum.append(acc)

    def random_url(self, rng: random.Random, exclude: str) -> str:
        if not self.sites:
            return ""
        i = bisect.bisect_right(self.cum, rng.randrange(self.cum[-1]))
        site = self.sites[i]
        if site.host == exclude:
            return ""
        if self.paths[i] is None:
            self.paths[i] = page_paths(site)
        return f"https://{site.host}{self.paths[i][rng.randrange(len(self.paths[i]))][0]}"


def shard_range(shards: int, workers: int, worker: int) -> range:
    """The shards `worker` writes: `shards` split into `workers` contiguous runs
    whose sizes differ by at most one (so 8 shards on 2 workers are 0-3 and 4-7)."""
    base, extra = divmod(shards, workers)
    start = worker * base + min(worker, extra)
    return range(start, start + base + (1 if worker < extra else 0))


def _record_id(seed: int, url: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'templatemine-synthetic:{seed}:{url}')}>"


def _write_shards(args) -> list[tuple[str, int]]:
    spec, sites, worker, workers, out = args
    vocab = Vocabulary(spec.seed, spec.vocabulary)
    index = UrlIndex(sites)
    mine = shard_range(spec.shards, workers, worker)
    names = [os.path.join(out, "warc", f"synth-{k:05d}.warc.gz") for k in mine]
    handles = [open(n, "wb") for n in names]
    writers = [WARCWriter(h, gzip=True) for h in handles]
    # mtime 0 and no file name in the gzip header: the same spec gives the same bytes
    raw = open(os.path.join(out, "truth", f"truth-{worker:03d}.jsonl.gz"), "wb")
    truth = io.TextIOWrapper(gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0), encoding="utf-8")
    counts = [0] * len(names)
    try:
        for site in sites[worker::workers]:
            for j, (url, html, t) in enumerate(render_site(site, spec, vocab, index)):
                shard = (site.index + j) % len(names)
                headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")],
                                           protocol="HTTP/1.1")
                record = writers[shard].create_warc_record(
                    url, "response", payload=io.BytesIO(html.encode("utf-8")), http_headers=headers,
                    warc_headers_dict={"WARC-Date": "2026-11-01T00:00:00Z",
                                       "WARC-Record-ID": _record_id(spec.seed, url)})
                writers[shard].write_record(record)
                truth.write(json.dumps(t) + "\n")
                counts[shard] += 1
    finally:
        truth.close()
        raw.close()
        for h in handles:
            h.close()
    return list(zip(names, counts))


def generate(spec: WebSpec, out: str, workers: int = 1) -> dict:
    """Write OUT/warc/*.warc.gz, OUT/truth/*.jsonl.gz, OUT/gold.jsonl and
    OUT/spec.json; return the summary written to spec.json."""
    os.makedirs(os.path.join(out, "warc"), exist_ok=True)
    os.makedirs(os.path.join(out, "truth"), exist_ok=True)
    vocab = Vocabulary(spec.seed, spec.vocabulary)
    sites = plan_sites(spec, vocab)
    workers = max(1, min(workers, spec.shards))
    jobs = [(spec, sites, w, workers, out) for w in range(workers)]
    if workers == 1:
        shards = [_write_shards(jobs[0])]
    else:
        with get_context("spawn").Pool(workers) as pool:
            shards = pool.map(_write_shards, jobs)
    with open(os.path.join(out, "gold.jsonl"), "w", encoding="utf-8") as gold:
        for w in range(workers):
            with gzip.open(os.path.join(out, "truth", f"truth-{w:03d}.jsonl.gz"), "rt", encoding="utf-8") as fh:
                for line in fh:
                    t = json.loads(line)
                    gold.write(json.dumps({"url": t["url"], "gold_text": t["gold_text"]}) + "\n")
    sizes = sorted((s.n_pages for s in sites), reverse=True)
    summary = {
        "spec": asdict(spec),
        "generator": spec.GENERATOR,
        "pages": sum(sizes),
        "sites": len(sites),
        "largest_sites": sizes[:5],
        "one_page_sites": sum(1 for n in sizes if n == 1),
        "sister_sites": sum(1 for s in sites if s.sisters),
        "mirror_sites": sum(1 for s in sites if s.mirror_of),
        "warc_files": [{"path": os.path.relpath(p, out), "records": n} for ws in shards for p, n in ws],
    }
    with open(os.path.join(out, "spec.json"), "w") as fh:
        json.dump(summary, fh, indent=1)
    return summary
