"""Where a run loses F1 on news/cleanportaleval (issue 4's hybrid target, 0.92):
per site, the worst pages, and three losses apart, each as an upper bound of
what removing it would give (oracles for analysis, not rules the model uses).

    .venv/bin/python scripts/cpe_losses.py OUT

OUT: a run over ../shared/corpora/news/cleanportaleval/pages.warc.gz, cleaned
in the mode to analyse (scripts/eval_pagelevel.py's step 3 leaves the last
ablation there; for hybrid: `templatemine pagelevel OUT --pagelevel hybrid`,
then `templatemine clean OUT`). The three:

- empty gold: pages whose gold text has no words (bbc.co.uk's section fronts),
  where any text kept scores 0: scored as if nothing were kept;
- literal HTML entities in the gold ("&rsquo;", words no extractor outputs):
  the gold decoded;
- msnbc.com's video descriptions: `<p class=embedded-caption>` inside an
  `<object>`'s fallback content, beside the article, not in it, so Readability's
  top candidate and its siblings do not reach it and the article rule removes
  it (Readability.js does the same): the caption put back where the clean text
  lacks it.
"""

from __future__ import annotations

import argparse
import html
import os
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
CORPUS = os.path.join(ROOT, "..", "shared", "corpora", "news", "cleanportaleval")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--worst", type=int, default=12, help="pages to list (default 12)")
    args = ap.parse_args()
    import pyarrow.parquet as pq
    from selectolax.lexbor import LexborHTMLParser
    from warcio.archiveiterator import ArchiveIterator

    from templatemine.evaluate.bow import bag, prf, read_gold
    from templatemine.html.urls import normalize_url, registered_domain, url_host

    table = pq.read_table(os.path.join(args.out, "clean_pages"), columns=["url", "clean_text"]).to_pydict()
    texts = {normalize_url(u): t for u, t in zip(table["url"], table["clean_text"])}
    gold = {normalize_url(u): g for u, g in read_gold(os.path.join(CORPUS, "gold.jsonl")).items()}
    captions: dict[str, str] = {}
    with open(os.path.join(CORPUS, "pages.warc.gz"), "rb") as fh:
        for rec in ArchiveIterator(fh):
            if rec.rec_type == "response":
                found = LexborHTMLParser(rec.content_stream().read()).css("p.embedded-caption")
                if found:
                    captions[normalize_url(rec.rec_headers.get_header("WARC-Target-URI"))] = " ".join(
                        " ".join(n.text().split()) for n in found)

    def text_of(url: str, fill_caption: bool) -> str:
        text = texts.get(url, "")
        cap = captions.get(url) if fill_caption else None
        return f"{cap} {text}" if cap and cap[:40] not in " ".join(text.split()) else text

    def score(empty_gold: bool = False, decoded: bool = False, caption: bool = False) -> tuple[float, dict]:
        by_site: dict[str, list[float]] = defaultdict(list)
        for url, g in gold.items():
            g = html.unescape(g) if decoded else g
            t = "" if empty_gold and not bag(g) else text_of(url, caption)
            by_site[registered_domain(url_host(url))].append(prf(t, g)[2])
        per_site = {s: sum(v) / len(v) for s, v in sorted(by_site.items())}
        return sum(per_site.values()) / len(per_site), per_site

    base, per_site = score()
    print(f"F1 {base:.4f} (per page, averaged per site, then over sites)")
    for site, f1 in per_site.items():
        print(f"  {site:<22}{f1:.4f}")
    lacking = [u for u in captions if text_of(u, True) != text_of(u, False)]
    lost = len(lacking)
    print("\nupper bounds, one loss removed at a time (oracles, not rules):")
    empty = sum(1 for g in gold.values() if not bag(g))
    for label, kw in ((f"empty gold (no words): nothing kept on its {empty} page(s)", {"empty_gold": True}),
                      ("the gold's HTML entities decoded", {"decoded": True}),
                      (f"msnbc's video description kept ({lost} of {len(captions)} pages with one lack it)",
                       {"caption": True}),
                      ("all three", {"empty_gold": True, "decoded": True, "caption": True})):
        f1, sites = score(**kw)
        print(f"  {label:<70}{f1:.4f}  ({f1 - base:+.4f})")
    if lacking:
        ps, rs = zip(*(prf(texts.get(u, ""), gold.get(u, ""))[:2] for u in lacking))
        print(f"  (the {lost} pages lacking their video description, as run: recall {min(rs):.3f} to "
              f"{max(rs):.3f}, precision {min(ps):.3f} to {max(ps):.3f})")
    print(f"\nworst {args.worst} pages: F1, precision, recall, gold words, kept words")
    rows = [(prf(texts.get(u, ""), g), sum(bag(g).values()), sum(bag(texts.get(u, "")).values()), u)
            for u, g in gold.items()]
    for (p, r, f), n_gold, n_kept, url in sorted(rows, key=lambda row: row[0][2])[:args.worst]:
        print(f"  {f:.3f}  P {p:.3f}  R {r:.3f}  {n_gold:>5} {n_kept:>5}  {url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
