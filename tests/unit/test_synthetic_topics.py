"""The topic web (evaluate/synthetic_topics.py): deterministic, with the
ITtoolbox structure the graph tests rely on."""

import gzip
import hashlib

from warcio.archiveiterator import ArchiveIterator

from templatemine.evaluate.synthetic_topics import NETWORK, TopicWebSpec, generate_topics, read_truth
from templatemine.graph.query import matches, parse_query

SMALL = TopicWebSpec(topics=("rock climbing", "java", "sushi", "blues"), authorities=4, hubs=3, portals=3,
                     portal_pages=4)


def _digest(path):
    with gzip.open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def test_same_spec_same_web(tmp_path):
    a = generate_topics(SMALL, str(tmp_path / "a"))
    b = generate_topics(SMALL, str(tmp_path / "b"))
    assert _digest(a["warc_files"][0]) == _digest(b["warc_files"][0])
    # the query topic gets twice the authorities and hubs; portals: 3 x 4 pages
    assert a["kinds"]["authority"] == 4 * 2 + 3 * 4 and a["kinds"]["portal"] == 12
    assert a["relevant"] == 4 * 2 + 3 * 2


def test_network_bar_on_every_portal_page_and_relevance(tmp_path):
    summary = generate_topics(SMALL, str(tmp_path / "w"))
    truth = {t["url"]: t for t in read_truth(str(tmp_path / "w"))}
    query = parse_query('"rock climbing"')
    homes = {f"https://{t.replace(' ', '-')}.{NETWORK}/" for t in SMALL.topics[:3]}
    with open(summary["warc_files"][0], "rb") as fh:
        for rec in ArchiveIterator(fh):
            url = rec.rec_headers.get_header("WARC-Target-URI")
            html = rec.content_stream().read().decode()
            t = truth[url]
            if t["kind"] == "portal":
                assert all(f"href='{h}'" in html for h in homes)  # the bar links every portal
                assert not t["relevant"]
            if t["kind"] == "authority":
                assert matches(html, parse_query(f'"{t["topic"]}"'))
                assert t["relevant"] == (t["topic"] == "rock climbing")
            if t["kind"] in ("hub", "authority") and t["topic"] != "rock climbing":
                assert not matches(html.split("<main>")[1], query)  # only the query's own pages mention it
    assert any(not t["crawled"] for t in truth.values())  # held-out pages for crawl priorities


def test_the_query_topic_has_a_portal_whatever_its_place():
    """Portals go to the first `portals` topics, the query topic first: a query
    topic listed after them still gets its portal, named on its home page."""
    from templatemine.evaluate.synthetic_topics import TopicWeb

    spec = TopicWebSpec(query_topic="blues", topics=SMALL.topics, authorities=4, hubs=3, portals=3, portal_pages=4)
    web = TopicWeb(spec)
    portals = {p.topic for p in web.pages if p.kind == "portal"}
    assert portals == {"blues", "rock climbing", "java"}
    home = next(p for p in web.pages if p.url == f"https://blues.{NETWORK}/")
    html = web.render(home)
    assert "Blues Toolbox" in html and matches(html, parse_query("blues"))
    # the bar links the query topic's portal, first
    assert html.split("ToolboxNet network: ")[1].startswith(f"<a href='https://blues.{NETWORK}/'>")
    # the default spec's query topic is its first topic: its portals are the first ten topics, as before
    default = TopicWeb(TopicWebSpec())
    assert default.portal_topics == TopicWebSpec().topics[:10]


def test_portal_text_is_about_no_topic(tmp_path):
    """Generic portal text: words of the vocabulary alone, no topic's words
    mixed in (it drew 30% of its words from the second topic's words)."""
    from templatemine.evaluate.synthetic_topics import TopicWeb

    web = TopicWeb(TopicWebSpec())
    text = []
    for page in web.pages:
        if page.kind == "portal":
            html = web.render(page)
            text += [w.strip(".,").lower() for p in html.split("<main>")[1].split("<p>")[1:]
                     for w in p.split("</p>")[0].split()]
    assert len(text) > 5000
    # each topic's words are as frequent in it as Zipf draws from the vocabulary make them (0.2-0.35 of
    # the words: topic words are Zipf draws too); 30% of a topic's words on top is what a topic's text has
    rank = {w: r for r, w in enumerate(web.vocab.words, 1)}
    harmonic = sum(1 / r for r in range(1, len(web.vocab.words) + 1))
    for topic, words in web.topic_words.items():
        expected = sum(1 / rank[w] for w in set(words)) / harmonic
        share = sum(w in set(words) for w in text) / len(text)
        assert abs(share - expected) < 0.05, (topic, share, expected)


def test_a_one_topic_web(tmp_path):
    spec = TopicWebSpec(query_topic="sushi", topics=("sushi",), authorities=5, hubs=4, portals=1, portal_pages=3)
    summary = generate_topics(spec, str(tmp_path / "w"))
    assert summary["kinds"] == {"authority": 10, "hub": 8, "portal": 3}  # no mixed hubs without a second topic
    assert summary["relevant"] == 18


def test_topic_spec_is_validated():
    import pytest

    for kw in (dict(query_topic="surfing"), dict(topics=()), dict(topics=("java", "java"), query_topic="java"),
               dict(vocabulary=1260), dict(vocabulary=600_001), dict(authorities=0), dict(portals=-1),
               dict(mixed_hub_share=1.5)):
        with pytest.raises(ValueError, match="TopicWebSpec"):
            TopicWebSpec(**kw)
    TopicWebSpec(vocabulary=1261)  # the default's hosts index words up to 1260
