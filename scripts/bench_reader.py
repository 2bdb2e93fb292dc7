"""Benchmark: what the WARC reader's care costs over warcio alone.

    .venv/bin/python scripts/bench_reader.py [--rounds 5] [--json FILE]

`warc/reader.iter_records` adds to warcio's ArchiveIterator: every record as a
RawRecord with its payload read (HTML candidates), records handed out one
behind, the last record's gzip member inflated to its end at the end of each
file (a member cut short shows there), and, for a file gzipped as one stream,
its own member-by-member inflater instead of gzip.GzipFile. Measured on the
WARC files of ../shared/corpora's sites and news (when present; else the bundled
iana sample), and on one file made here from the largest of them gzipped as one
stream, and once more with every record split across two gzip members
("wrong chunking", read across members): iter_records beside a bare
ArchiveIterator pass that reads every record's content (the least any reader
does; through gzip.GzipFile for the last two, as warcio needs), best of
--rounds rounds, the order turning each round. Prints the ratio (reader time / warcio time).
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from warcio.archiveiterator import ArchiveIterator  # noqa: E402

from templatemine.warc.reader import iter_records  # noqa: E402

CORPORA = os.path.join(HERE, "..", "..", "shared", "corpora")
SAMPLES = os.path.join(HERE, "..", "samples")


def bare(paths: list[str]) -> int:
    n = 0
    for path in paths:
        with open(path, "rb") as raw:  # a file gzipped as one stream: through gzip.GzipFile, which warcio needs
            fh = gzip.GzipFile(fileobj=raw) if "stream" in os.path.basename(path) else raw
            for rec in ArchiveIterator(fh):
                rec.content_stream().read()
                n += 1
    return n


def reader(paths: list[str]) -> int:
    n = 0
    for path in paths:
        with open(path, "rb") as fh:
            for _ in iter_records(path, fh):
                n += 1
    return n


def best(fn, paths, rounds: int) -> tuple[float, int]:
    times, n = [], 0
    for _ in range(rounds):
        t = time.perf_counter()
        n = fn(paths)
        times.append(time.perf_counter() - t)
    return min(times), n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    members = sorted(glob.glob(os.path.join(CORPORA, "*", "*", "pages.warc.gz"))) or \
        [os.path.join(SAMPLES, "iana.warc.gz")]  # the corpora's sites and news, well-formed
    largest = max(members, key=os.path.getsize)
    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        one_stream = os.path.join(tmp, "one-stream.warc.gz")
        with gzip.open(largest, "rb") as src, open(one_stream, "wb") as dst:
            dst.write(gzip.compress(src.read()))
        # wrong chunking: each record split across two gzip members (read across members)
        split = os.path.join(tmp, "split-stream.warc.gz")
        with open(largest, "rb") as src, open(split, "wb") as dst:
            starts = [r.offset for r in iter_records(largest, src)]
            src.seek(0)
            data = src.read()
            starts.append(len(data))
            for a, b in zip(starts, starts[1:]):
                plain = gzip.decompress(data[a:b])
                dst.write(gzip.compress(plain[: len(plain) // 2]) + gzip.compress(plain[len(plain) // 2:]))
        for name, paths in (("gzip member per record", members), ("one gzip stream", [one_stream]),
                            ("records split in 2 members", [split])):
            runs = {}
            for r in range(args.rounds):  # turn the order each round
                for label, fn in ((("warcio", bare), ("reader", reader)) if r % 2 == 0 else
                                  (("reader", reader), ("warcio", bare))):
                    t, n = best(fn, paths, 1)
                    runs.setdefault(label, []).append(t)
                    runs[label + "_records"] = n
            w, rd = min(runs["warcio"]), min(runs["reader"])
            mb = sum(os.path.getsize(p) for p in paths) / 1e6
            result[name] = {"files": len(paths), "compressed_mb": round(mb, 1), "records": runs["reader_records"],
                            "warcio_s": round(w, 4), "reader_s": round(rd, 4), "ratio": round(rd / w, 3)}
            print(f"{name:<24} {len(paths):>3} file(s) {mb:>7.1f} MB {runs['reader_records']:>6} records  "
                  f"warcio {w:.3f}s  reader {rd:.3f}s  ratio {rd / w:.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
