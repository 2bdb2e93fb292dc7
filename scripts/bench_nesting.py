"""Benchmark: what deep nesting costs Lexbor, and what html/nesting.py `flatten` costs every page.

    .venv/bin/python scripts/bench_nesting.py [--depths 5000,10000,20000,40000] [--json FILE]

1. Pages of N nested <div>s (each with a word and a link): Lexbor's parse time
   as the page is, and flatten + parse, one process, best of three; the
   exponent of the unflattened time's growth (2: quadratic), and what a
   quadratic from the deepest row gives for a 10 MB payload of unclosed
   <div>s (extrapolated: that parse is not run), beside flatten + parse of
   that payload (measured).
2. The corpora's 1,197 pages (../shared/corpora, when present): flatten's time
   against Lexbor's parse time over all of them, the pages scanned (MIN_TAGS
   '<' or more) and the pages it changed.
3. What it adds to extract: the per-record work of the extract stage
   (`captures_of_files`, nodes off) over the corpora's WARC files, with
   flatten (html/_scan.pyx's pass on every page where it is built), with
   Python's gate instead (what runs without a C compiler), with that gate
   lowered to 2,000 tags, and with flatten replaced by the identity; best of
   --rounds rounds, the order turning each round.
4. Unclosed formatting elements (html/nesting.py): N distinct unclosed <b>s
   closed by a paragraph's end, then N paragraphs: flatten + parse and the <b>
   elements built, with the compiled scan (where built) and without it (then
   pages under MIN_TAGS tags, N up to 2,000 here, are not scanned).
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from templatemine.html.nesting import MAX_DEPTH, MIN_TAGS, flatten  # noqa: E402


def best_of(fn, rounds: int = 3) -> float:
    best = math.inf
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def nested(n: int) -> str:
    return ("<html><body>" + "".join(f'<div>w{i} <a href="/p{i}">p</a> ' for i in range(n)) + "</div>" * n +
            "</body></html>")


def synthetic(depths: list[int]) -> dict:
    rows = []
    for n in depths:
        html = nested(n)
        plain = best_of(lambda: LexborHTMLParser(html))
        flat = best_of(lambda: LexborHTMLParser(flatten(html)[0]))
        rows.append({"depth": n, "kB": round(len(html) / 1e3), "parse_s": round(plain, 4),
                     "flatten_and_parse_s": round(flat, 4), "ratio": round(plain / flat, 1)})
        print(f"  {n:>7,} nested <div>s ({len(html) / 1e3:,.0f} kB): parse {plain:8.3f} s, flatten + parse "
              f"{flat:6.3f} s ({plain / flat:,.1f}x)", flush=True)
    a, b = rows[-2], rows[-1]
    exponent = math.log(b["parse_s"] / a["parse_s"]) / math.log(b["depth"] / a["depth"])
    big = "<html><body>" + "<div>" * (10 * 1024 * 1024 // 5)  # max_payload_bytes of unclosed <div>s
    levels = big.count("<div>")
    extrapolated = b["parse_s"] * (levels / b["depth"]) ** 2  # quadratic: the measured growth is steeper
    t = time.perf_counter()
    out, dropped = flatten(big)
    LexborHTMLParser(out)
    measured = time.perf_counter() - t
    print(f"  growth exponent {exponent:.2f} ({a['depth']:,} -> {b['depth']:,}); a 10 MB payload of {levels:,} "
          f"unclosed <div>s: parse {extrapolated:,.0f} s by a quadratic from the last row (not run), "
          f"flatten + parse {measured:.2f} s measured ({dropped:,} start tags dropped)", flush=True)
    return {"rows": rows, "exponent": round(exponent, 2), "10MB_levels": levels,
            "10MB_parse_s_quadratic": round(extrapolated), "10MB_flatten_and_parse_s": round(measured, 2)}


def corpora() -> dict | None:
    from eval_pagelevel import CORPORA, read_pages

    if not os.path.isdir(CORPORA):
        print("  ../shared/corpora not found: skipped")
        return None
    pages: dict[str, str] = {}
    sites = [os.path.relpath(d, CORPORA) for d in sorted(glob.glob(os.path.join(CORPORA, "sites", "*", "")))]
    for corpus in ["news/scrapinghub", "news/cleanportaleval", *sites]:
        pages.update(read_pages(corpus))
    html = list(pages.values())
    parse = best_of(lambda: [LexborHTMLParser(h) for h in html])
    scan = best_of(lambda: [flatten(h) for h in html])
    scanned = sum(h.count("<") >= MIN_TAGS for h in html)
    changed = sum(flatten(h)[1] > 0 for h in html)
    changed_all = sum(flatten(h, min_tags=0)[1] > 0 for h in html)
    print(f"  {len(html):,} pages: parse {parse:.3f} s, flatten {scan:.4f} s ({scan / parse:.2%} of the parse); "
          f"{scanned} pages scanned ({MIN_TAGS:,} '<' or more), {changed} changed; every page scanned: "
          f"{changed_all} changed", flush=True)
    return {"pages": len(html), "parse_s": round(parse, 3), "flatten_s": round(scan, 4),
            "flatten_share_of_parse": round(scan / parse, 4), "scanned": scanned, "changed": changed,
            "changed_if_all_scanned": changed_all}


def extract_overhead(rounds: int) -> dict | None:
    import templatemine.html.nesting as nesting
    from eval_pagelevel import CORPORA
    from templatemine.config import ExtractConfig
    from templatemine.tables.extract import captures_of_files

    files = sorted(glob.glob(os.path.join(CORPORA, "news", "*", "pages.warc.gz")) +
                   glob.glob(os.path.join(CORPORA, "sites", "*", "pages.warc.gz")))
    if not files:
        return None
    compiled = nesting._scan
    # name: (flatten, the compiled scan or None)
    variants = {"flatten": (flatten, compiled), "flatten, Python gate": (flatten, None),
                "Python, from 2,000 tags": (lambda html: flatten(html, min_tags=2000), None),
                "identity": (lambda html: (html, 0), None)}
    if compiled is None:
        del variants["flatten, Python gate"]
    real, best, n = nesting.flatten, {}, 0
    try:
        names = list(variants)
        for r in range(rounds):  # the order turns each round: no variant always runs first
            for name in names[r % len(names):] + names[:r % len(names)]:
                nesting.flatten, nesting._scan = variants[name]  # what nesting.parse, extract's parse, calls
                t = time.perf_counter()
                n = sum(1 for _ in captures_of_files(iter(files), ExtractConfig(nodes=False)))
                best[name] = min(best.get(name, math.inf), time.perf_counter() - t)
    finally:
        nesting.flatten, nesting._scan = real, compiled
    out = {"records": n}
    for name, seconds in best.items():
        ratio = seconds / best["identity"]
        print(f"  {name:<24} {1e3 * seconds / n:.3f} ms per record, {ratio:.3f} of the identity's "
              f"({n:,} records, best of {rounds})", flush=True)
        out[name] = {"ms_per_record": round(1e3 * seconds / n, 3), "ratio": round(ratio, 4)}
    return out


def formatting() -> list[dict]:
    import templatemine.html.nesting as nesting

    compiled, rows = nesting._scan, []
    try:
        for scan in ([compiled, None] if compiled is not None else [None]):
            nesting._scan = scan
            print(f"  {'with' if scan else 'without'} the compiled scan:", flush=True)
            rows += [dict(row, compiled_scan=scan is not None) for row in _formatting_rows()]
    finally:
        nesting._scan = compiled
    return rows


def _formatting_rows() -> list[dict]:
    rows = []
    for n in (500, 1000, 2000, 5000):
        html = ("<html><body><p>" + "".join(f'<b class="c{i}">' for i in range(n)) + "y</p>" + "<p>x</p>" * n +
                "</body></html>")
        t = time.perf_counter()
        text, dropped = flatten(html)
        tree = LexborHTMLParser(text)
        seconds = time.perf_counter() - t
        rows.append({"n": n, "tags": html.count("<"), "kB": round(len(html) / 1e3), "flattened": dropped > 0,
                     "seconds": round(seconds, 3), "b_elements": len(tree.css("b"))})
        print(f"    N = {n:,} ({rows[-1]['tags']:,} tags, {len(html) / 1e3:.0f} kB): "
              f"{'flatten + parse' if dropped else 'not scanned, parse'} {seconds:.2f} s, "
              f"{rows[-1]['b_elements']:,} <b> elements", flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--depths", default="5000,10000,20000,40000")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--json")
    args = ap.parse_args()
    import templatemine.html.nesting as nesting

    print("compiled scan (html/_scan.pyx): " + ("yes" if nesting._scan is not None else
                                                 f"no, {nesting.COMPILED_SCAN_ERROR}"))
    print(f"1. nested <div>s (MAX_DEPTH {MAX_DEPTH})")
    result = {"compiled_scan": nesting._scan is not None,
              "synthetic": synthetic([int(x) for x in args.depths.split(",")])}
    print("2. the corpora's pages")
    result["corpora"] = corpora()
    print("3. extract per record")
    result["extract"] = extract_overhead(args.rounds)
    print("4. unclosed formatting elements")
    result["formatting"] = formatting()
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
