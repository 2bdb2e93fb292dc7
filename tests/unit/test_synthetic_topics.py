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
