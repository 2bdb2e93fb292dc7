"""The compiled DOM walk (templatemine/pagelevel/_walk.pyx) and smoothing DP
(_isotonic.pyx) against the Python walk and the numpy DP, and their speed.

    PYTHONPATH=. .venv/bin/python scripts/check_walk.py [--corpora DIR] [--against REV] [--bench ROUNDS]

1. Every page of news/scrapinghub, news/cleanportaleval and sites/*: the
   compiled `page_nodes(html, arrays=True)` (`_walk.page`: pagelets and walk in
   C) and the compiled walk given html/pagelets.py's pagelets (`_walk.walk`)
   equal the Python walk's output bit for bit (parent, features, n_tokens,
   texts, keep, at), and so do the NODES rows extract writes (`page_nodes(html)`:
   labels, pagelets, every field), and the compiled `joined_text` equals
   html/pagelets.py's on every element (the text of pagelets and anchors),
   and the own texts put in document order by `text_at`
   (`model.document_order`) read as the body's text, white space aside, and
   etdm's text nodes joined (`templates/etdm.DomTree.joined`) are that text.
   With --against REV, the Python walk is also compared with
   features.py as committed at git revision REV (the split of
   `_feature_matrix` into `_node_matrix` must not change it). Each page is
   then judged with the shipped model (page mode) with the compiled DP and
   with the numpy DP: smoothed scores, decisions and clean text equal.
2. With --bench: judge_html ms/page on the scrapinghub pages, Python walk vs
   compiled, same process, best of ROUNDS alternating rounds, and where the
   compiled path's time goes.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def read_pages(path: str) -> dict[str, str]:
    """URL -> HTML of a WARC's response records, as scripts/eval_pagelevel.py reads them."""
    from templatemine.html.charset import decode_html
    from templatemine.warc.reader import iter_records

    pages = {}
    with open(path, "rb") as fh:
        for raw in iter_records(path, fh):
            if raw.outcome is None and raw.payload:
                pages[raw.target_uri] = decode_html(raw.payload, raw.content_type)[0]
    return pages


def same(a, b) -> str:
    """'' when two PageArrays are identical, else what differs."""
    import numpy as np

    for name in ("parent", "features", "n_tokens", "keep", "at"):
        if not (hasattr(a, name) and hasattr(b, name)):  # --against a revision before PageArrays.at
            continue
        x, y = getattr(a, name), getattr(b, name)
        if x.dtype != y.dtype or x.shape != y.shape or not np.array_equal(x, y) or x.tobytes() != y.tobytes():
            return name
    if a.texts != b.texts:
        return "texts"
    return ""


def order_differs(html: str, a) -> tuple[str, bool]:
    """('' when the page's own texts put in document order (`model.document_order`,
    every node kept) read as the body's text (html/pagelets `element_text`),
    white space aside, and etdm's text nodes joined (`DomTree.joined`) are that
    text exactly; whether preorder would have read otherwise)."""
    import numpy as np

    from templatemine.html.nesting import parse as parse_html
    from templatemine.html.pagelets import element_text, page_root, strip_invisible
    from templatemine.pagelevel.model import document_order
    from templatemine.templates.etdm import DomTree

    tree = parse_html(html)[0]
    strip_invisible(tree)
    root = page_root(tree)
    body = " ".join(element_text(root).split()) if root is not None else ""
    words = np.fromiter(map(len, map(str.split, a.texts)), dtype=np.int64, count=len(a.texts))
    every = [True] * len(a.texts)
    ordered = document_order(a.parent, a.texts, words, a.at)(every)
    moved = ordered != document_order(a.parent, a.texts, words, None)(every)
    if "".join(ordered.split()) != "".join(body.split()):
        return "document order", moved
    etdm = DomTree.from_html(html)
    return ("" if etdm.joined(etdm.text_nodes()) == body else "etdm text"), moved


def joined_differs(html: str, walk) -> str:
    """'' when the compiled `_walk.joined_text` (pagelet and anchor text) equals
    html/pagelets._joined_text on every element of the page."""
    from templatemine.html.nesting import parse as parse_html
    from templatemine.html.pagelets import _joined_text, strip_invisible

    tree = parse_html(html)[0]
    strip_invisible(tree)
    for element in tree.root.traverse():
        got = walk.joined_text(element.mem_id)
        if got is not None and got != _joined_text(element):
            return f"joined_text of <{element.tag}>"
    return ""


def features_at(rev: str):
    """templatemine/pagelevel/features.py as of git revision `rev`, as a module."""
    src = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:templatemine/pagelevel/features.py"],
                         capture_output=True, text=True, check=True).stdout
    spec = importlib.util.spec_from_loader(f"features_at_{rev}", loader=None)
    mod = importlib.util.module_from_spec(spec)
    exec(compile(src, f"features_at_{rev}.py", "exec"), mod.__dict__)
    return mod


def sections(pages, model, rounds: int) -> None:
    """Where the compiled path's time goes (best round per section)."""
    from selectolax.lexbor import LexborHTMLParser

    from templatemine.html.pagelets import LINK_SELECTOR, strip_invisible
    from templatemine.pagelevel import features as F
    from templatemine.pagelevel.model import judge_page

    names = ["parse (Lexbor, C)", "strip_invisible (Python + Lexbor CSS)", "links: root.css + mem_ids",
             "_walk.page (C)", "_node_matrix (numpy)", "judge_page (numpy + Python)"]
    best = [float("inf")] * len(names)
    for _ in range(rounds):
        spent = [0.0] * len(names)
        for html in pages:
            t = [time.perf_counter()]
            tree = LexborHTMLParser(html)
            t.append(time.perf_counter())
            strip_invisible(tree)
            t.append(time.perf_counter())
            root = tree.body or tree.root
            links = [link.mem_id for link in root.css(LINK_SELECTOR)]
            t.append(time.perf_counter())
            cols = F._compiled.page(root.mem_id, links, 3, F.WRAP_WIDTH)
            t.append(time.perf_counter())
            a = F._node_matrix(*cols)
            t.append(time.perf_counter())
            judge_page(a.parent, a.features, a.n_tokens, a.texts, model, at=a.at)
            t.append(time.perf_counter())
            for i in range(len(names)):
                spent[i] += t[i + 1] - t[i]
        best = [min(b, s) for b, s in zip(best, spent)]
    total = sum(best)
    for name, b in zip(names, best):
        print(f"    {name:<40} {b / len(pages) * 1e3:6.3f} ms/page {b / total:6.1%}")
    print(f"    {'total':<40} {total / len(pages) * 1e3:6.3f} ms/page")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default=os.path.join(ROOT, "..", "shared", "corpora"))
    ap.add_argument("--against", metavar="REV", help="also compare the Python walk with features.py at REV")
    ap.add_argument("--bench", type=int, default=0, metavar="ROUNDS")
    args = ap.parse_args()

    from templatemine.pagelevel import features as F
    from templatemine.pagelevel import isotonic
    from templatemine.pagelevel.model import judge_page, load_model
    if F._compiled is None:
        print(f"compiled walk unavailable: {F.COMPILED_WALK_ERROR}")
        return 2
    if isotonic._compiled is None:
        print(f"compiled DP unavailable: {isotonic.COMPILED_DP_ERROR}")
        return 2
    compiled, dp, shipped = F._compiled, isotonic._compiled, load_model()

    def judged(a, use):
        isotonic._compiled = use
        try:
            return judge_page(a.parent, a.features, a.n_tokens, a.texts, shipped, unlikely=a.unlikely,
                              article=a.article, at=a.at)
        finally:
            isotonic._compiled = dp

    def same_judgement(a) -> str:
        x, y = judged(a, dp), judged(a, None)
        for name in ("y", "template", "text_template"):
            if not np.array_equal(getattr(x, name), getattr(y, name)):
                return "DP: " + name
        return "" if x.clean_text == y.clean_text and x.n_sections == y.n_sections else "DP: clean text"

    head = features_at(args.against) if args.against else None

    def python_walk(html, arrays=True):
        F._compiled = None
        try:
            return F.page_nodes(html, arrays=arrays)
        finally:
            F._compiled = compiled

    paths = {"news/scrapinghub": os.path.join(args.corpora, "news/scrapinghub/pages.warc.gz"),
             "news/cleanportaleval": os.path.join(args.corpora, "news/cleanportaleval/pages.warc.gz")}
    for p in sorted(glob.glob(os.path.join(args.corpora, "sites", "*", "pages.warc.gz"))):
        paths["sites/" + os.path.basename(os.path.dirname(p))] = p
    total = bad = 0
    shub = []
    for name, path in paths.items():
        pages = read_pages(path)
        if name == "news/scrapinghub":
            shub = list(pages.values())
        diffs, nodes, moved = [], 0, 0
        for url, html in pages.items():
            c = F.page_nodes(html, arrays=True)
            p = python_walk(html)
            nodes += len(c.parent)
            d = same(c, p)
            d = d and "page(): " + d
            if not d:
                d = same(F.page_nodes(html, arrays=True, c_pagelets=False), p)
                d = d and "walk(): " + d
            if not d and F.page_nodes(html) != python_walk(html, arrays=False):
                d = "NODES rows"
            if not d:
                d, m = order_differs(html, c)
                moved += m
            if not d:
                d = joined_differs(html, compiled)
            if not d:
                d = same_judgement(c)
            if not d and head is not None:
                d = same(p, head.page_nodes(html, arrays=True))
                d = d and f"python vs {args.against}: " + d
            if d:
                diffs.append((url, d))
        total += len(pages)
        bad += len(diffs)
        print(f"{name:<32} {len(pages):>4} pages {nodes:>7} kept nodes  differences: {len(diffs)}"
              f"  (order not preorder: {moved})", flush=True)
        for url, d in diffs[:5]:
            print(f"    {d}: {url}")
    print(f"all: {total} pages, {bad} with differences")

    if args.bench and shub:
        from templatemine.pagelevel.model import judge_html, load_model

        model = load_model()

        def one(use):
            F._compiled = use
            try:
                t = time.perf_counter()
                for html in shub:
                    judge_html(html, model)
                return (time.perf_counter() - t) / len(shub) * 1e3
            finally:
                F._compiled = compiled

        py, cy = [], []
        for _ in range(args.bench):  # alternating, so that load from elsewhere hits both
            py.append(one(None))
            cy.append(one(compiled))
        ratios = sorted(p / c for p, c in zip(py, cy))
        print(f"judge_html on {len(shub)} scrapinghub pages, best of {args.bench} alternating rounds: "
              f"Python walk {min(py):.3f} ms/page, compiled {min(cy):.3f} ms/page, speed-up {min(py) / min(cy):.2f}x "
              f"(median of the rounds' ratios {ratios[len(ratios) // 2]:.2f}x)")
        print("  compiled path, by section:")
        sections(shub, model, args.bench)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
