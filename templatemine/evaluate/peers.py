"""The single-page extractors people use today, run on the same pages as
templatemine so that `evaluate --peers` prints them in one table.

Each peer is a function HTML text -> main-content text. They come from the
optional `bench` extra (`pip install templatemine[bench]`); a peer that is not
installed is reported as missing, not scored. The raw HTML is read back from
the WARC records the PAGES table points to (`records_at`), so the peers see
exactly the bytes templatemine parsed, decoded the same way.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable


def _trafilatura() -> Callable[[str], str]:
    import trafilatura

    return lambda html: trafilatura.extract(html) or ""


def _resiliparse() -> Callable[[str], str]:
    from resiliparse.extract.html2text import extract_plain_text

    return lambda html: extract_plain_text(html, main_content=True)


def _justext() -> Callable[[str], str]:
    import justext

    stop = justext.get_stoplist("English")

    def run(html: str) -> str:
        return "\n".join(p.text for p in justext.justext(html.encode("utf-8"), stop, encoding="utf-8")
                         if not p.is_boilerplate)
    return run


def _boilerpy3() -> Callable[[str], str]:
    from boilerpy3 import extractors

    extractor = extractors.ArticleExtractor(raise_on_failure=False)
    return lambda html: extractor.get_content(html) or ""


PEERS = {"trafilatura": _trafilatura, "resiliparse": _resiliparse, "jusText": _justext, "boilerpy3": _boilerpy3}


def available_peers(names=None) -> tuple[dict[str, Callable[[str], str]], dict[str, str]]:
    """(name -> extractor, name -> why missing) for `names` (default: all)."""
    found, missing = {}, {}
    for name in names or PEERS:
        try:
            found[name] = PEERS[name]()
        except ImportError as exc:
            missing[name] = f"not installed ({exc.name}); pip install 'templatemine[bench]'"
    return found, missing


def load_html(locations: list[tuple[str, str, int]]) -> tuple[dict[str, str], list[str]]:
    """(url -> decoded HTML, why pages could not be read) for (url, warc_file,
    warc_offset) rows, one pass per file."""
    from templatemine.html.record import html_at

    by_file: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for url, path, offset in locations:
        by_file[path].append((url, offset))
    html, errors = {}, []
    for path, wanted in by_file.items():
        found, failed = html_at(path, [o for _, o in wanted])
        html.update((url, found[offset]) for url, offset in wanted if offset in found)
        errors.extend(failed.values())
    return html, errors


def run_peers(html: dict[str, str], peers: dict[str, Callable[[str], str]]) -> dict[str, dict[str, str]]:
    """peer -> url -> extracted text; an extractor that fails on a page extracts nothing there."""
    out: dict[str, dict[str, str]] = {}
    for name, extract in peers.items():
        texts = {}
        for url, doc in html.items():
            try:
                texts[url] = extract(doc) or ""
            except Exception:  # a peer's crash on one page is its miss, not ours
                texts[url] = ""
        out[name] = texts
    return out
