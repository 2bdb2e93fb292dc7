"""Alarte et al.'s detector (etdm) on ../shared/corpora/sites beside the global
detector and the peers, the equality relation's precision/recall trade-off,
and the pages Algorithm 1 explores with and without the menu-first order.

    .venv/bin/python scripts/eval_etdm.py [--out OUT]

OUT is an extract output of the nine sites (made if missing). Metric: the
corpus README's bag-of-words F1 per page, averaged per site, then over sites.
Writes OUT/eval_etdm.json beside the printed tables.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
SITES = os.path.join(ROOT, "..", "shared", "corpora", "sites")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/templatemine-eval-sites")
    args = ap.parse_args()

    from eval_sites import PEERS, open_sites, score_config
    from templatemine.config import DetectConfig
    from templatemine.templates.etdm import EQUALITY_PRESETS

    opened = open_sites(args.out, "templatemine-eval-etdm")
    if opened is None:
        return 2
    spark, golds = opened

    runs = {
        "global": DetectConfig(mode="global"),
        "etdm": DetectConfig(mode="etdm"),
        "etdm+global": DetectConfig(mode="etdm+global"),
        "etdm document order": DetectConfig(mode="etdm", etdm_menu_first=False),
        **{f"etdm {name}": DetectConfig(mode="etdm", etdm_equality=name)
           for name in EQUALITY_PRESETS if name != DetectConfig().etdm_equality},
    }
    results, report = {}, {}
    for label, config in runs.items():
        res, detected = score_config(spark, args.out, config, golds)
        results[label] = res
        mean = lambda attr: sum(getattr(s, attr) for s in res["per_file"].values()) / len(res["per_file"])  # noqa
        report[label] = {"mean_f1": round(res["mean_f1"], 6), "mean_precision": round(mean("precision"), 6),
                         "mean_recall": round(mean("recall"), 6),
                         "per_site_f1": {k: round(v.f1, 4) for k, v in res["per_file"].items()},
                         "etdm": detected.get("etdm"), "detect_s": detected["timings"]["total_s"]}
        print(f"{label:<24} P {report[label]['mean_precision']:.3f} R {report[label]['mean_recall']:.3f} "
              f"F1 {res['mean_f1']:.3f}  {json.dumps(detected.get('etdm') or {})}", flush=True)
    spark.stop()

    sites = list(results["global"]["per_file"])
    cols = ["global", "etdm", "etdm+global"]
    print()
    print(f"{'site':<22}{'trafil.':>8}{'resilip.':>9}" + "".join(f"{c:>13}" for c in cols))
    for s in sites:
        print(f"{s:<22}{PEERS['trafilatura'][s]:>8.2f}{PEERS['resiliparse'][s]:>9.2f}"
              + "".join(f"{results[c]['per_file'][s].f1:>13.3f}" for c in cols))
    print(f"{'mean of 9 sites':<22}{0.843:>8.3f}{0.856:>9.3f}" + "".join(f"{results[c]['mean_f1']:>13.3f}" for c in cols))
    print()
    print(f"{'equality relation':<24}{'features':<44}{'P':>7}{'R':>7}{'F1':>7}")
    default_eq = DetectConfig().etdm_equality
    for name, feats in EQUALITY_PRESETS.items():
        r = report["etdm" if name == default_eq else f"etdm {name}"]
        print(f"{name:<24}{','.join(feats):<44}{r['mean_precision']:>7.3f}{r['mean_recall']:>7.3f}{r['mean_f1']:>7.3f}")
    with open(os.path.join(args.out, "eval_etdm.json"), "w") as fh:
        json.dump(report, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
