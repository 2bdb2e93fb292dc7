"""Benchmark: what the Parquet codec costs and saves, on one input, in one run.

    .venv/bin/python scripts/bench_storage.py [INPUT...] [--work DIR] [--codecs snappy,zstd] [--json FILE]

Runs `templatemine run INPUT... --pagelevel auto` (nodes written) once per
codec, the codec given as `--conf spark.sql.parquet.compression.codec=C` and
everything else the same (WET and the report off), and prints per table the
bytes on disk, the run's wall time, and each codec's total against the first
one's. Default input: ../shared/corpora/sites/*/pages.warc.gz. templatemine's
default is zstd (templatemine/spark.py `DEFAULT_SQL_CONF`; README, "Storage").
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TM = os.path.join(ROOT, ".venv", "bin", "templatemine")


def tree_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def run(inputs: list[str], out: str, codec: str) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    cmd = [TM, "run", *inputs, "--out", out, "--pagelevel", "auto", "--quiet",
           "--conf", f"spark.sql.parquet.compression.codec={codec}",
           "--set", "clean.wet=false", "--set", "clean.report=false"]
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if done.returncode:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"failed: {' '.join(cmd)}")
    tables = {name: tree_bytes(os.path.join(out, name)) for name in sorted(os.listdir(out))
              if os.path.isdir(os.path.join(out, name)) and not name.startswith(("_", "."))}
    return {"seconds": round(seconds, 1), "bytes": tree_bytes(out), "tables": tables}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="*")
    ap.add_argument("--work", default="/tmp/templatemine-bench-storage")
    ap.add_argument("--codecs", default="snappy,zstd")
    ap.add_argument("--json", help="write every number as JSON")
    args = ap.parse_args()
    inputs = args.inputs or sorted(glob.glob(os.path.join(ROOT, "..", "shared", "corpora", "sites", "*",
                                                          "pages.warc.gz")))
    if not inputs:
        raise SystemExit("no input: pass WARC files (the default, ../shared/corpora/sites, is not there)")
    codecs = args.codecs.split(",")
    result = {c: run(inputs, os.path.join(args.work, c), c) for c in codecs}
    names = sorted(set().union(*(r["tables"] for r in result.values())),
                   key=lambda n: -result[codecs[0]]["tables"].get(n, 0))
    print(f"{'table':<22}" + "".join(f"{c:>14}" for c in codecs))
    for name in names:
        print(f"{name:<22}" + "".join(f"{result[c]['tables'].get(name, 0) / 1e6:>11.2f} MB" for c in codecs))
    print(f"{'all':<22}" + "".join(f"{result[c]['bytes'] / 1e6:>11.2f} MB" for c in codecs))
    print(f"{'run, wall':<22}" + "".join(f"{result[c]['seconds']:>12.1f} s" for c in codecs))
    first = result[codecs[0]]
    for c in codecs[1:]:
        r = result[c]
        print(f"{c} against {codecs[0]}: {r['bytes'] / first['bytes']:.3f} of the bytes, "
              f"{r['seconds'] / first['seconds']:.3f} of the time")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"inputs": inputs, "codecs": result}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
