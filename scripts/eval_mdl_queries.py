"""Does the DOM/MDL distiller converge? Runs `dom MDL` and `dom MDL FT` for more
queries over the outputs scripts/eval_distill.py wrote (run that first) and
prints, per query, the iterations and the expanded/pruned counts of each
iteration (Chakrabarti 2001, figures 13-14).

    .venv/bin/python scripts/eval_mdl_queries.py [--work /tmp/distill-eval] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

QUERIES = (("sites", "thread"), ("sites", "window"), ("sites", "install"), ("sites", "memory"), ("sites", '"regular expression"'),
           ("topics/out", "java"), ("topics/out", "sushi"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/distill-eval")
    ap.add_argument("--json")
    args = ap.parse_args()
    from templatemine.config import LOCAL, DistillConfig
    from templatemine.graph.distill import DOM_CONFIGS, distill
    from templatemine.spark import get_session

    spark = get_session("eval_mdl_queries", None, {**LOCAL.spark, "spark.ui.showConsoleProgress": "false"})
    spark.sparkContext.setLogLevel("ERROR")
    rows = []
    for folder, query in QUERIES:
        out = os.path.join(args.work, folder)
        result = distill(spark, out, query, DistillConfig(), DOM_CONFIGS, progress=lambda _m: None)
        for name, c in result["configs"].items():
            rows.append({"out": out, "query": query, "config": name, "root": result["sizes"]["root"],
                         "base": result["sizes"]["base"], "iterations": c["iterations"], "converged": c["converged"],
                         "expanded_pruned": [(h["expanded"], h["pruned"]) for h in c["history"]]})
            r = rows[-1]
            print(f"{folder:<11}{query:<22}{name:<12} root {r['root']:>4} base {r['base']:>4} "
                  f"{r['iterations']:>3} iterations, converged {r['converged']}; expanded/pruned "
                  + " ".join(f"{e}/{p}" for e, p in r["expanded_pruned"]), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    spark.stop()
    return 0 if all(r["converged"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
