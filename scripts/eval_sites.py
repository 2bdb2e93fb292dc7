"""Quality of the cleaned text on ../shared/corpora/sites: per-site F1 beside
the peers, for the paper's algorithm and for the evidence settings of a grid,
with a leave-one-site-out estimate so that the chosen defaults are not scored
on the sites they were chosen on.

    .venv/bin/python scripts/eval_sites.py [--out OUT] [--mode global|local] [--grid quick|full]

OUT is an extract output of the nine sites (made if missing). Metric: the
corpus README's bag-of-words F1 per page, averaged per site, then over sites.
"""

from __future__ import annotations

import argparse
import glob
import itertools
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
SITES = os.path.join(ROOT, "..", "shared", "corpora", "sites")

# measured 2026-11-22 by the corpus maintainers (../shared/corpora/README.md), F1 per site
PEERS = {
    "trafilatura": {"0install-mkdocs": .99, "glfw-doxygen": .59, "hiphish-blog": .93, "kos-sphinx": .92,
                    "linux-mdbook": .77, "nltk-sphinx": .82, "peroxide-rustdoc": .81, "processing-javadoc": .83,
                    "quasilyte-hugo": .92},
    "resiliparse": {"0install-mkdocs": .99, "glfw-doxygen": .71, "hiphish-blog": .89, "kos-sphinx": .92,
                    "linux-mdbook": .77, "nltk-sphinx": .98, "peroxide-rustdoc": .90, "processing-javadoc": .61,
                    "quasilyte-hugo": .93},
}


def open_sites(out: str, app: str):
    """(spark, gold files) with OUT an extract output of the nine sites (made if
    missing); None, with a message, when ../shared/corpora/sites is absent."""
    from templatemine.config import LOCAL, ExtractConfig
    from templatemine.spark import get_session
    from templatemine.tables.extract import run_extract
    from templatemine.warc.inputs import expand_inputs

    golds = sorted(glob.glob(os.path.join(SITES, "*", "gold.jsonl")))
    if not golds:
        print(f"no gold files under {SITES}", file=sys.stderr)
        return None
    spark = get_session(app, None, {**LOCAL.spark, "spark.ui.showConsoleProgress": "false"})
    spark.sparkContext.setCheckpointDir(os.path.join(out, "_checkpoints"))
    if not os.path.exists(os.path.join(out, "manifest.json")):
        warcs = sorted(glob.glob(os.path.join(SITES, "*", "pages.warc.gz")))
        run_extract(spark, expand_inputs(warcs), out, ExtractConfig(), progress=lambda _m: None)
    return spark, golds


def score_config(spark, out: str, config, golds: list[str]) -> tuple[dict, dict]:
    """Detect with `config`, clean (no WET: only clean_pages is scored), and
    score clean_pages against `golds`: (evaluate_texts result, detect manifest)."""
    from templatemine.config import CleanConfig
    from templatemine.evaluate.bow import evaluate_texts
    from templatemine.html.urls import normalize_url
    from templatemine.templates.stage import run_clean, run_detect

    quiet = lambda _m: None  # noqa: E731
    detected = run_detect(spark, out, config, progress=quiet)
    run_clean(spark, out, progress=quiet, config=CleanConfig(wet=False))
    texts = {r["url"]: r["clean_text"] for r in
             spark.read.parquet(os.path.join(out, "clean_pages")).select("url", "clean_text").collect()}
    return evaluate_texts(texts, golds, normalize_url), detected


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/templatemine-eval-sites")
    ap.add_argument("--mode", default="global", choices=["global", "local"])
    ap.add_argument("--grid", default="quick", choices=["quick", "full"])
    args = ap.parse_args()

    from templatemine.config import DetectConfig

    opened = open_sites(args.out, "templatemine-eval")
    if opened is None:
        return 2
    spark, golds = opened

    supports = [0.1, 0.3, 0.5] if args.grid == "quick" else [0.05, 0.1, 0.2, 0.3, 0.5, 0.7]
    shares = [0.0, 0.8] if args.grid == "quick" else [0.0, 0.5, 0.8, 0.9]
    grid = [DetectConfig(mode=args.mode, min_site_support=a, min_path_share=b)
            for a, b in itertools.product(supports, shares)]
    default = DetectConfig(mode=args.mode)
    paper_config = DetectConfig(mode=args.mode, enabled=False)
    results = {}
    for ev in [paper_config, default, *[g for g in grid if g != default]]:
        res, _ = score_config(spark, args.out, ev, golds)
        results[ev] = {k: v.f1 for k, v in res["per_file"].items()}
        label = "paper (Def. 4 literally)" if not ev.enabled else f"support>={ev.min_site_support} path>={ev.min_path_share}"
        print(f"{args.mode} {label:<32} mean F1 {res['mean_f1']:.3f}", flush=True)
    spark.stop()

    sites = list(results[default])
    paper = results[paper_config]
    # leave one site out: choose the setting on the other sites, score the held-out one
    loso = {}
    for held in sites:
        best = max(grid, key=lambda ev: sum(f for s, f in results[ev].items() if s != held))
        loso[held] = results[best][held]
    mean = lambda d: sum(d.values()) / len(d)  # noqa: E731
    print()
    print(f"{'site':<22}{'trafil.':>8}{'resilip.':>9}{'paper':>7}{'default':>8}{'LOSO':>7}")
    for s in sites:
        print(f"{s:<22}{PEERS['trafilatura'][s]:>8.2f}{PEERS['resiliparse'][s]:>9.2f}{paper[s]:>7.3f}"
              f"{results[default][s]:>8.3f}{loso[s]:>7.3f}")
    print(f"{'mean of 9 sites':<22}{0.843:>8.3f}{0.856:>9.3f}{mean(paper):>7.3f}{mean(results[default]):>8.3f}"
          f"{mean(loso):>7.3f}")
    print("(peers: the corpus README's per-site numbers, rounded to 2 places; their means are its own)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
