"""Write a synthetic web with ground truth (templatemine/evaluate/synthetic.py).

    .venv/bin/python scripts/synth_web.py --pages 100000 --out /tmp/synth-100k [--seed 1] [--shards 8 (1-512)] [--workers 2] [--markup lean|real]

OUT gets warc/*.warc.gz (the input of `templatemine run`), gold.jsonl (for
`templatemine evaluate --gold`), truth/*.jsonl.gz (blocks per page, template or
not) and spec.json (the spec and what came of it: sites, sizes, mirrors).
The same spec gives the same pages whatever --workers is.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from templatemine.evaluate.synthetic import WebSpec, generate  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=WebSpec.pages)
    ap.add_argument("--seed", type=int, default=WebSpec.seed)
    ap.add_argument("--shards", type=int, default=WebSpec.shards)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--markup", choices=("lean", "real"), default=WebSpec.markup,
                    help="lean: minimal 4 kB pages; real: the same content in the markup of a real site's page")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if os.path.exists(os.path.join(args.out, "spec.json")):
        print(f"{args.out} already holds a synthetic web (spec.json); choose another --out", file=sys.stderr)
        return 2
    try:
        spec = WebSpec(pages=args.pages, seed=args.seed, shards=args.shards, markup=args.markup)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    summary = generate(spec, args.out, args.workers)
    took = time.perf_counter() - t0
    brief = {k: v for k, v in summary.items() if k not in ("warc_files", "spec")}
    print(json.dumps({**brief, "seconds": round(took, 1), "pages_per_s": round(summary["pages"] / took)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
