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

Ground truth per page (truth.jsonl): url, site, gold_text (the main content, the
`gold.jsonl` format of ../shared/corpora), and the page's blocks with their text
and whether each is a template block. `gold.jsonl` alone is what
`templatemine evaluate --gold` reads.

Everything is drawn from `random.Random` seeded by (seed, site), so a page does
not depend on how many workers wrote the shards: the same spec gives the same
pages, byte for byte, whatever `workers` is.
"""

from __future__ import annotations

import bisect
import gzip
import io
import json
import os
import random
from dataclasses import asdict, dataclass
from multiprocessing import get_context

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

SHARE_BAR = ("Home", "Share", "Privacy policy")  # web-wide: the giant shingle group
RELATED_MIN_PAGES = 10  # smaller sites have no "related" list: on 2 pages it would repeat, a template
TLDS = ("com", "org", "net", "io", "de", "co.uk", "fr", "info")


@dataclass(frozen=True)
class WebSpec:
    pages: int = 10_000
    """Pages in all (mirrors included)."""
    seed: int = 1
    shards: int = 8
    """WARC files written; a site's pages are spread over its worker's shards."""
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
    for idx, (path, section) in enumerate(paths):
        url = f"https://{host}{path}"
        blocks = []
        # header: the date and the counter change on every page
        updated = f"Updated 2026-{1 + idx % 12:02d}-{1 + idx % 28:02d}, {rng.randint(1000, 99999)} visitors"
        header_text = f"{site.name} {tagline} {updated} About Contact"
        header = (f"<{header_tag} class='{p}-header'><a href='/' class='logo'>{site.name}</a>"
                  f"<span class='tagline'>{tagline}</span><span class='updated'>{updated}</span>"
                  f" <a href='/about.html'>About</a> <a href='/contact.html'>Contact</a></{header_tag}>")
        blocks.append(("header", header_text, True))
        network = ""
        if site.sisters:
            items = " ".join(f"<a href='https://{h}/'>{h.split('.')[1].rstrip('0123456789').capitalize()}</a>"
                             for h in site.sisters)
            network = f"<div class='network'>Our network: {items}</div>"
            blocks.append(("network", "Our network: " + " ".join(h.split('.')[1].rstrip('0123456789').capitalize()
                                                                  for h in site.sisters), True))
        menu_items = "".join(
            f"<li class='active'><span>{name}</span></li>" if section == s else f"<li><a href='{href}'>{name}</a></li>"
            for s, (href, name) in enumerate(menu_targets))
        menu = f"<{menu_tag} class='{p}-menu'><ul>{menu_items}</ul></{menu_tag}>" if menu_tag != "ul" else \
            f"<ul class='{p}-menu'>{menu_items}</ul>"
        blocks.append(("menu", " ".join(name for _, name in menu_targets), True))
        sidebar = (f"<aside class='{p}-sidebar'><h3>Popular</h3><ul>"
                   + "".join(f"<li><a href='{h}'>{t}</a></li>" for h, t in zip(popular, popular_titles))
                   + "</ul></aside>")
        blocks.append(("sidebar", "Popular " + " ".join(popular_titles), True))
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
        main = f"<{main_tag} class='{p}-content'><h1>{_esc(title)}</h1>{''.join(paras)}</{main_tag}>"
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
        footer = (f"<footer class='{p}-footer'><p>&copy; 2026 {site.name}. All rights reserved.</p>"
                  "<a href='/privacy.html'>Privacy</a> <a href='/terms.html'>Terms</a> "
                  "<a href='/contact.html'>Contact</a></footer>")
        blocks.append(("footer", f"© 2026 {site.name}. All rights reserved. Privacy Terms Contact", True))
        body = (sidebar + main + related) if sidebar_first else (main + related + sidebar)
        html = (f"<!doctype html><html><head><meta charset='utf-8'><title>{_esc(title)} - {site.name}</title>"
                f"<style>{style}</style><script>var page={idx};</script></head><body class='{p}'>"
                f"{header}{network}{menu}<div class='{p}-wrap'>{body}</div>{share}{footer}</body></html>")
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


def _write_shards(args) -> list[tuple[str, int]]:
    spec, sites, worker, workers, out = args
    vocab = Vocabulary(spec.seed, spec.vocabulary)
    index = UrlIndex(sites)
    per_worker = max(1, spec.shards // workers)
    names = [os.path.join(out, "warc", f"synth-{worker * per_worker + j:05d}.warc.gz") for j in range(per_worker)]
    handles = [open(n, "wb") for n in names]
    writers = [WARCWriter(h, gzip=True) for h in handles]
    truth = gzip.open(os.path.join(out, "truth", f"truth-{worker:03d}.jsonl.gz"), "wt", encoding="utf-8")
    counts = [0] * per_worker
    try:
        for site in sites[worker::workers]:
            for j, (url, html, t) in enumerate(render_site(site, spec, vocab, index)):
                shard = (site.index + j) % per_worker
                headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")],
                                           protocol="HTTP/1.1")
                record = writers[shard].create_warc_record(
                    url, "response", payload=io.BytesIO(html.encode("utf-8")), http_headers=headers,
                    warc_headers_dict={"WARC-Date": "2026-11-01T00:00:00Z"})
                writers[shard].write_record(record)
                truth.write(json.dumps(t) + "\n")
                counts[shard] += 1
    finally:
        truth.close()
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
