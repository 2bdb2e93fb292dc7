"""A small web of topics with known relevance, for link analysis (graph/).

Section 5 of Bar-Yossef & Rajagopalan judged six Clever configurations by hand
on the ARC queries; their TKC example is ITtoolbox, a network of sister sites
whose shared navigation bar links them all, so that any query touching one of
them drags the whole dense community into the base set. This writes that
situation with the answers known:

- topics (the query topic among them), each with *authorities* (pages about
  the topic, two or three per site, sites with their own menu template; a
  topic's last site has one page when one authority is left over) and *hubs*
  (link pages listing authorities of their topic); a share of hubs are *mixed*:
  a second list about another topic, the case Chakrabarti (2001) segments by
  MDL (no mixed hubs when there is one topic);
- a *sister network*: one portal site per topic (`<topic>.toolboxnet.com`) for
  the first `portals` topics, the query topic first, every page of every portal
  carrying the network bar that links all portals' home pages, with generic
  portal text (Zipf draws from the vocabulary alone, no topic's words favoured:
  never relevant); the portal of the query topic names the topic on its home
  page, so it enters the root set, and the bar names every portal's topic, the
  query's among them, so under page FNM every portal page "matches";
- links to pages never crawled: held-out authorities from hubs' lists, and
  network and footer links to service pages (/jobs, /privacy.html), for the
  crawl-priority table.

Truth (truth.jsonl): url, host, topic, kind (authority | hub | mixed_hub |
portal), crawled, and `relevant` to the query topic: an authority or a hub
(pure or mixed) whose own topic is the query's.
Portals are never relevant: their text only names the topic. Co-citation truth
is the topic: two pages are related iff they share it.

Everything is drawn from `random.Random` seeded by the spec, so one spec gives
the same WARC byte for byte.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import uuid
from dataclasses import asdict, dataclass, field
from typing import ClassVar

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from templatemine.evaluate.synthetic import MAX_VOCABULARY, Vocabulary

TOPICS = ("rock climbing", "java", "oracle", "networking", "data warehousing", "knowledge management",
          "sushi", "gardening", "blues", "cheese", "telecommuting", "volcanoes")
NETWORK = "toolboxnet.com"
NETWORK_SERVICES = ("/jobs/", "/advertise/", "/events/")  # linked from the bar, never crawled


@dataclass(frozen=True)
class TopicWebSpec:
    GENERATOR: ClassVar[int] = 2
    """Version of what `generate_topics` makes of a spec, recorded in spec.json
    (2: generic portal text from the vocabulary alone, the query topic's portal first)."""
    query_topic: str = "rock climbing"
    topics: tuple = TOPICS
    authorities: int = 20
    """Authorities per topic (the query topic gets `query_scale` times more)."""
    hubs: int = 10
    """Hubs per topic (the query topic gets `query_scale` times more)."""
    query_scale: int = 2
    mixed_hub_share: float = 0.4
    """Share of hubs with a second list about another topic."""
    portals: int = 10
    """Topics with a portal in the sister network (the first ones, query topic first)."""
    portal_pages: int = 12
    """Pages per portal; every one carries the network bar."""
    held_out: int = 2
    """Uncrawled authorities each hub lists (for crawl priorities)."""
    seed: int = 1
    vocabulary: int = 3000
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        def need(ok: bool, what: str) -> None:
            if not ok:
                raise ValueError(f"TopicWebSpec: {what}")

        need(len(self.topics) >= 1 and len(set(self.topics)) == len(self.topics),
             f"topics must be one or more distinct topics, not {self.topics!r}")
        need(self.query_topic in self.topics, f"query_topic {self.query_topic!r} is not one of the topics")
        need(self.authorities >= 1 and self.hubs >= 0 and self.query_scale >= 1,
             "authorities must be >= 1, hubs >= 0 and query_scale >= 1")
        need(self.portals >= 0 and self.portal_pages >= 1 and self.held_out >= 0,
             "portals and held_out must be >= 0 and portal_pages >= 1")
        need(0 <= self.mixed_hub_share <= 1, f"mixed_hub_share must be in [0, 1], not {self.mixed_hub_share}")
        # host names index the vocabulary: authority sites at 50 + 17 x topic + site, hubs at 900 + 31 x topic + hub
        t = len(self.topics) - 1
        highest = [302, 50 + 17 * t + (self.authorities * self.query_scale + 1) // 2 - 1]
        if self.hubs:
            highest.append(900 + 31 * t + self.hubs * self.query_scale - 1)
        low = 1 + max(highest)
        need(low <= self.vocabulary <= MAX_VOCABULARY,
             f"vocabulary must be {low} to {MAX_VOCABULARY} words for this many topics, authorities and hubs, "
             f"not {self.vocabulary}")


def slug(topic: str) -> str:
    return topic.replace(" ", "-")


@dataclass
class _Page:
    url: str
    host: str
    topic: str
    kind: str
    title: str
    crawled: bool = True
    lists: list = field(default_factory=list)  # [(topic, [urls])] for hubs


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;")


class TopicWeb:
    """The planned web: pages by kind and topic, then rendered to HTML."""

    def __init__(self, spec: TopicWebSpec):
        self.spec = spec
        self.rng = random.Random(f"topics:{spec.seed}")
        # portals for the first `portals` topics, the query topic first
        self.portal_topics = tuple(([spec.query_topic] + [t for t in spec.topics if t != spec.query_topic])
                                   [: spec.portals])
        self.vocab = Vocabulary(spec.seed, spec.vocabulary)
        self.topic_words = {t: self.vocab.sample(self.rng, 40) for t in spec.topics}
        self.pages: list[_Page] = []
        self.site_pages: dict[str, list[_Page]] = {}
        self.authorities: dict[str, list[_Page]] = {t: [] for t in spec.topics}
        self.held_out: dict[str, list[_Page]] = {t: [] for t in spec.topics}
        self._plan()
        self.titles = {p.url: p.title for p in self.pages}
        self.titles.update((p.url, p.title) for pages in self.held_out.values() for p in pages)

    def _scale(self, topic: str, n: int) -> int:
        return n * (self.spec.query_scale if topic == self.spec.query_topic else 1)

    def _add(self, page: _Page) -> _Page:
        self.pages.append(page)
        self.site_pages.setdefault(page.host, []).append(page)
        return page

    def _title(self, topic: str) -> str:
        words = self.vocab.sample(self.rng, self.rng.randint(2, 4))
        return f"{topic.capitalize()}: {' '.join(words)}"

    def _plan(self) -> None:
        rng, spec = self.rng, self.spec
        for ti, topic in enumerate(spec.topics):
            n = self._scale(topic, spec.authorities)
            site_no = 0
            while n > 0:
                per_site = min(n, rng.randint(2, 3))
                host = f"www.{slug(topic)}-{self.vocab.words[50 + 17 * ti + site_no]}{site_no}.org"
                for j in range(per_site):
                    path = "/" if j == 0 else f"/{self.vocab.words[300 + j]}-{j}.html"
                    self.authorities[topic].append(
                        self._add(_Page(f"https://{host}{path}", host, topic, "authority", self._title(topic))))
                n -= per_site
                site_no += 1
            for j in range(spec.held_out * 3):
                host = f"www.{slug(topic)}-unvisited{j}.net"
                self.held_out[topic].append(_Page(f"https://{host}/", host, topic, "authority",
                                                  self._title(topic), crawled=False))
        for ti, topic in enumerate(spec.topics):
            for j in range(self._scale(topic, spec.hubs)):
                host = f"links-{self.vocab.words[900 + 31 * ti + j]}{j}.{slug(topic)}-fans.net"
                mixed = rng.random() < spec.mixed_hub_share and len(spec.topics) > 1  # one draw either way
                page = self._add(_Page(f"https://{host}/", host, topic, "mixed_hub" if mixed else "hub",
                                       f"My {topic} links"))
                page.lists.append((topic, self._picks(topic)))
                if mixed:
                    other = rng.choice([t for t in spec.topics if t != topic])
                    page.lists.append((other, self._picks(other)))
        for topic in self.portal_topics:
            host = f"{slug(topic)}.{NETWORK}"
            for j in range(spec.portal_pages):
                path = "/" if j == 0 else f"/article-{j}.html"
                title = f"{topic.capitalize()} Toolbox" if j == 0 else " ".join(self.vocab.sample(rng, 4)).capitalize()
                self._add(_Page(f"https://{host}{path}", host, topic, "portal", title))

    def _picks(self, topic: str) -> list[str]:
        rng = self.rng
        pool = self.authorities[topic]
        urls = [p.url for p in rng.sample(pool, min(len(pool), rng.randint(6, 12)))]
        urls += [p.url for p in rng.sample(self.held_out[topic], self.spec.held_out)]
        if topic in self.portal_topics and rng.random() < 0.3:
            urls.append(f"https://{slug(topic)}.{NETWORK}/")
        rng.shuffle(urls)
        return urls

    def _title_of(self, url: str) -> str:
        return self.titles.get(url, url)

    def _para(self, topic: str, mention: bool) -> str:
        rng = self.rng
        words = [rng.choice(self.topic_words[topic]) if rng.random() < 0.3 else w
                 for w in self.vocab.sample(rng, rng.randint(30, 70))]
        if mention:
            words.insert(rng.randrange(len(words)), topic)
        words[0] = words[0].capitalize()
        return " ".join(words) + "."

    def _generic_para(self) -> str:
        """Portal text: words of the vocabulary (Zipf-drawn) and no topic's words
        mixed in, so that it is about none of the topics."""
        rng = self.rng
        words = self.vocab.sample(rng, rng.randint(30, 70))
        words[0] = words[0].capitalize()
        return " ".join(words) + "."

    def render(self, page: _Page) -> str:
        rng = self.rng
        site = self.site_pages[page.host]
        menu = "".join(f"<li><a href='{p.url}'>{_esc(p.title)}</a></li>" for p in site[:5])
        header = (f"<header class='top'><a href='https://{page.host}/' class='logo'>{page.host}</a> "
                  f"<a href='https://{page.host}/about.html'>About</a></header>"
                  f"<nav class='menu'><ul>{menu}</ul></nav>")
        network = ""
        if page.kind == "portal":
            items = " ".join(f"<a href='https://{slug(t)}.{NETWORK}/'>{t.capitalize()}</a>"
                             for t in self.portal_topics)
            services = " ".join(f"<a href='https://www.{NETWORK}{s}'>{s.strip('/').capitalize()}</a>"
                                for s in NETWORK_SERVICES)
            network = f"<div class='network'>ToolboxNet network: {items} | {services}</div>"
        parts = [f"<h1>{_esc(page.title)}</h1>"]
        if page.kind == "authority":
            parts += [f"<p>{self._para(page.topic, True)}</p>" for _ in range(rng.randint(2, 4))]
            peers = self.authorities[page.topic]
            if rng.random() < 0.3 and len(peers) > 1:
                other = rng.choice([p for p in peers if p is not page] or peers)
                parts.append(f"<p>See also <a href='{other.url}'>{_esc(other.title)}</a>.</p>")
        elif page.kind in ("hub", "mixed_hub"):
            for i, (topic, urls) in enumerate(page.lists):
                items = "".join(f"<li><a href='{u}'>{_esc(self._title_of(u))}</a></li>" for u in urls)
                parts.append(f"<div class='list'><h2>{'Favourite' if i == 0 else 'Also'} {topic} sites</h2>"
                             f"<p>{self._para(topic, True)}</p><ul>{items}</ul></div>")
        else:  # portal: generic network text, the topic named only on the home page
            intro = (f"Welcome to {page.title}, part of the ToolboxNet network. " if page.url.endswith("/") else "")
            parts += [f"<p>{intro}{self._generic_para()}</p>" for _ in range(2)]
        footer = (f"<footer><a href='https://{page.host}/privacy.html'>Privacy</a> "
                  f"<a href='https://{page.host}/terms.html'>Terms</a> Copyright 2026 {page.host}</footer>")
        return (f"<!doctype html><html><head><meta charset='utf-8'><title>{_esc(page.title)}</title></head>"
                f"<body>{network}{header}<main>{''.join(parts)}</main>{footer}</body></html>")

    def truth(self, page: _Page) -> dict:
        q = self.spec.query_topic
        relevant = page.kind in ("authority", "hub", "mixed_hub") and page.topic == q
        return {"url": page.url, "host": page.host, "topic": page.topic, "kind": page.kind,
                "crawled": page.crawled, "relevant": relevant}


def generate_topics(spec: TopicWebSpec, out: str) -> dict:
    """Write OUT/warc/topics.warc.gz, OUT/truth.jsonl (crawled and held-out
    pages) and OUT/spec.json; return the summary."""
    os.makedirs(os.path.join(out, "warc"), exist_ok=True)
    web = TopicWeb(spec)
    path = os.path.join(out, "warc", "topics.warc.gz")
    kinds: dict[str, int] = {}
    with open(path, "wb") as fh, open(os.path.join(out, "truth.jsonl"), "w", encoding="utf-8") as truth:
        writer = WARCWriter(fh, gzip=True)
        for page in web.pages:
            html = web.render(page)
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            record = writer.create_warc_record(page.url, "response", payload=io.BytesIO(html.encode("utf-8")),
                                               http_headers=headers,
                                               warc_headers_dict={
                                                   "WARC-Date": "2026-11-01T00:00:00Z",
                                                   "WARC-Record-ID": f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, page.url)}>"})
            writer.write_record(record)
            truth.write(json.dumps(web.truth(page)) + "\n")
            kinds[page.kind] = kinds.get(page.kind, 0) + 1
        for pages in web.held_out.values():
            for page in pages:
                truth.write(json.dumps(web.truth(page)) + "\n")
    summary = {"spec": asdict(spec), "generator": spec.GENERATOR, "pages": len(web.pages), "kinds": kinds,
               "relevant": sum(web.truth(p)["relevant"] for p in web.pages), "warc_files": [path]}
    with open(os.path.join(out, "spec.json"), "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=1)
    return summary


def read_truth(out: str) -> list[dict]:
    opener = gzip.open if out.endswith(".gz") else open
    path = out if out.endswith((".jsonl", ".jsonl.gz")) else os.path.join(out, "truth.jsonl")
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
