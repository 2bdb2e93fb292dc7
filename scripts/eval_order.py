"""Word order of page mode's clean text: own texts in document order
(`NODES.text_at`, `model.document_order`) against the preorder join of before.

    PYTHONPATH=. .venv/bin/python scripts/eval_order.py [--corpora DIR] [--json OUT] [--bench ROUNDS]

Every page of news/scrapinghub, news/cleanportaleval and sites/* is judged in
page mode with the shipped model, once with `at` and once without. The
bag-of-words F1 of the corpus README cannot see order (it must not move: the
same words are kept); an order-aware score can. Here that is a sequence F1:
the tokens (the metric's lower-cased \\w+ runs) of the clean text and of the
gold matched in order by difflib's SequenceMatcher (longest matching blocks,
no junk heuristic), precision = matched / extracted, recall = matched / gold,
per page, averaged per site, then over sites, as the bag metric is. Also
printed: the pages whose clean text differs, and the tokens that moved (not
in the longest in-order match between the two clean texts).

With --bench, what the order costs instead: `judge_page` on the scrapinghub
pages' nodes (walked once beforehand) with and without `at`, best of ROUNDS
alternating rounds; and on a page of 4,000 `<div>` whose text goes on after a
paragraph (every one of them cut), `document_order` against `judge_page`.
"""

from __future__ import annotations

import argparse
import difflib
import glob
import json
import os
import re
import sys
import time
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))

_WORD = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def matched(a: list[str], b: list[str]) -> int:
    return sum(m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())


def sequence_prf(got: list[str], want: list[str]) -> tuple[float, float, float]:
    if not got and not want:
        return 1.0, 1.0, 1.0
    m = matched(got, want)
    p = m / len(got) if got else 0.0
    r = m / len(want) if want else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default=os.path.join(ROOT, "..", "shared", "corpora"))
    ap.add_argument("--json", help="write the numbers here")
    ap.add_argument("--bench", type=int, default=0, metavar="ROUNDS")
    args = ap.parse_args()
    if args.bench:
        return bench(args.corpora, args.bench)

    from check_walk import read_pages
    from templatemine.evaluate.bow import prf, read_gold, site_means
    from templatemine.html.urls import registered_domain, url_host
    from templatemine.pagelevel.features import page_nodes
    from templatemine.pagelevel.model import judge_page, load_model

    model = load_model()
    corpora = {"news/scrapinghub": "news/scrapinghub", "news/cleanportaleval": "news/cleanportaleval"}
    for p in sorted(glob.glob(os.path.join(args.corpora, "sites", "*", "gold.jsonl"))):
        corpora["sites/" + os.path.basename(os.path.dirname(p))] = "sites"
    totals: dict[str, dict] = {}
    per_corpus: dict[str, dict] = defaultdict(lambda: {k: defaultdict(list) for k in
                                                        ("bag_pre", "bag_doc", "seq_pre", "seq_doc")})
    t0 = time.time()
    for folder, corpus in corpora.items():
        gold = read_gold(os.path.join(args.corpora, folder, "gold.jsonl"))
        pages = read_pages(os.path.join(args.corpora, folder, "pages.warc.gz"))
        changed = moved = n_tokens = 0
        for url, want_text in gold.items():
            html = pages.get(url)
            texts = {}
            if html is not None:
                a = page_nodes(html, arrays=True)
                for key, at in (("pre", None), ("doc", a.at)):
                    texts[key] = judge_page(a.parent, a.features, a.n_tokens, a.texts, model, unlikely=a.unlikely,
                                            article=a.article, at=at).clean_text
            pre, doc, want = tokens(texts.get("pre", "")), tokens(texts.get("doc", "")), tokens(want_text)
            if sorted(pre) != sorted(doc):
                raise SystemExit(f"{url}: the two orders keep different words")
            changed += pre != doc
            moved += len(doc) - matched(pre, doc)
            n_tokens += len(doc)
            site = registered_domain(url_host(url)) if corpus != "sites" else folder
            c = per_corpus[corpus]
            c["bag_pre"][site].append(prf(" ".join(pre), want_text))
            c["bag_doc"][site].append(prf(" ".join(doc), want_text))
            c["seq_pre"][site].append(sequence_prf(pre, want))
            c["seq_doc"][site].append(sequence_prf(doc, want))
        t = totals.setdefault(corpus, {"pages": 0, "changed": 0, "moved_tokens": 0, "tokens": 0})
        t["pages"] += len(gold)
        t["changed"] += changed
        t["moved_tokens"] += moved
        t["tokens"] += n_tokens
    out = {}
    for corpus, c in per_corpus.items():
        row = dict(totals[corpus])
        for key, by_site in c.items():
            row[key] = round(site_means(by_site).f1, 4)
        out[corpus] = row
        print(f"{corpus:<22} pages {row['pages']:>4}, clean text reordered on {row['changed']:>3}, "
              f"{row['moved_tokens']} of {row['tokens']} tokens moved; bag F1 {row['bag_pre']:.4f} -> "
              f"{row['bag_doc']:.4f}; sequence F1 {row['seq_pre']:.4f} -> {row['seq_doc']:.4f}", flush=True)
    print(f"({time.time() - t0:.0f} s; page mode, shipped model {model.version}; preorder -> document order)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"model": model.version, "corpora": out}, fh, indent=1)
    return 0


def bench(corpora: str, rounds: int) -> int:
    import numpy as np

    from check_walk import read_pages
    from templatemine.pagelevel.features import page_nodes
    from templatemine.pagelevel.model import document_order, judge_page, load_model

    model = load_model()
    arrays = [page_nodes(h, arrays=True)
              for h in read_pages(os.path.join(corpora, "news/scrapinghub/pages.warc.gz")).values()]
    best = {"document order": float("inf"), "preorder": float("inf")}
    for _ in range(rounds):
        for name in best:
            t = time.perf_counter()
            for a in arrays:
                judge_page(a.parent, a.features, a.n_tokens, a.texts, model, unlikely=a.unlikely, article=a.article,
                           at=a.at if name == "document order" else None)
            best[name] = min(best[name], (time.perf_counter() - t) / len(arrays) * 1e3)
    extra = best["document order"] - best["preorder"]
    print(f"judge_page on {len(arrays)} scrapinghub pages, best of {rounds} alternating rounds: document order "
          f"{best['document order']:.3f} ms/page, preorder {best['preorder']:.3f} ms/page "
          f"(+{extra:.3f} ms, {extra / best['preorder']:+.1%})")
    a = page_nodes("<html><body>" + "<div>Intro words <p>A paragraph of text.</p> closing words</div>" * 4000
                   + "</body></html>", arrays=True)
    words = np.array([len(t.split()) for t in a.texts], dtype=np.int64)
    order_s = judge_s = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        document_order(a.parent, a.texts, words, a.at)([True] * len(a.texts))
        order_s = min(order_s, time.perf_counter() - t)
        t = time.perf_counter()
        judge_page(a.parent, a.features, a.n_tokens, a.texts, model)
        judge_s = min(judge_s, time.perf_counter() - t)
    print(f"a page of {len(a.texts)} nodes, 4,000 of them cut: document_order {order_s * 1e3:.1f} ms, "
          f"judge_page in preorder {judge_s * 1e3:.1f} ms (ratio {order_s / judge_s:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
