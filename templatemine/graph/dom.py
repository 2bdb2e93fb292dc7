"""DOM-level topic distillation with MDL hub segmentation (Chakrabarti 2001,
section 4), over the base set of graph/distill.py.

Hubs are link *leaves* of the base pages' DOM trees, authorities pages. One
iteration, as the paper's pseudo-code:

    h <- E a                      every link leaf gets its target's authority
    for each page: F <- segment(page root)          (graph/mdl.py, greedy MDL)
        for v in F: h(v) = sum of its leaves' h; every leaf under v gets h(v)
    a <- E^T h;  normalise a so that sum a = 1

with the paper's conservative start: only root-set pages have authority 1
(the others 0), so hub subtrees are not made uniformly promising before the
segmentation has seen which links are good.

The DOM tree comes from the tables, not from re-parsing the page: a link's
path is its pagelet's `dom_path` (every element Figure 3 splits, i.e. every
element with a child holding >= k links, is an ancestor on some pagelet's
path, so the tree above the pagelets is exact), then the link itself as a leaf
of its pagelet (below a pagelet no child holds k links: what is lost there are
wrappers of at most k-1 links). A link in no pagelet hangs from the page root.

Each iteration is a join, a `groupBy(page).applyInPandas` running `segment`
and `spread` per page, and a group-by; the counts of nodes expanded and pruned
per iteration are the paper's Figures 13 and 14.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from templatemine.graph.distill import BaseSet
from templatemine.graph.mdl import segment, spread

PAGE_ROOT = "page"
SEGMENTED_SCHEMA = ("page_key long, link_ordinal int, dst_page_key long, h double, frontier string, "
                    "frontier_h double, frontier_links int, expanded int, pruned int")


def leaf_path(dom_path: str | None, link_ordinal: int) -> tuple:
    """The node path of one link leaf: page root, the prefixes of its pagelet's
    DOM path, the link."""
    nodes = [PAGE_ROOT]
    # a link in no pagelet has a null path, which applyInPandas hands over as NaN
    # under pandas 3 (a float: .strip() failed the whole configuration; found in review)
    if isinstance(dom_path, str) and dom_path:
        parts = dom_path.strip("/").split("/")
        nodes += ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]
    nodes.append(f"link:{link_ordinal}")
    return tuple(nodes)


def segment_page(pdf: pd.DataFrame, delta: float, node_bits: float = 1.0) -> pd.DataFrame:
    """One page's leaves (link_ordinal, dst_page_key, dom_path, h) -> their
    spread scores and frontier nodes (pure pandas + numpy, no Spark)."""
    pdf = pdf.sort_values("link_ordinal")
    paths = [leaf_path(p, o) for p, o in zip(pdf["dom_path"], pdf["link_ordinal"])]
    h = pdf["h"].to_numpy(dtype=float)
    seg = segment(paths, h, delta, node_bits)
    new = spread(h, seg)
    sizes = np.bincount(seg.leaf_frontier, minlength=len(seg.frontier))
    frontier = [str(seg.frontier[i]) for i in seg.leaf_frontier]
    # the page's counts ride on its first leaf, so a sum over leaves is a sum over pages
    expanded = np.zeros(len(pdf), dtype="int32")
    pruned = expanded.copy()
    if len(pdf):
        expanded[0], pruned[0] = seg.expanded, seg.pruned
    return pd.DataFrame({
        "page_key": pdf["page_key"].to_numpy(), "link_ordinal": pdf["link_ordinal"].to_numpy(dtype="int32"),
        "dst_page_key": pdf["dst_page_key"].to_numpy(), "h": new, "frontier": frontier,
        "frontier_h": new, "frontier_links": sizes[seg.leaf_frontier].astype("int32"),
        "expanded": expanded, "pruned": pruned,
    })


def _segmenter(delta: float, node_bits: float):
    def per_page(pdf: pd.DataFrame) -> pd.DataFrame:
        return segment_page(pdf, delta, node_bits)
    return per_page


def dom_leaves(base: BaseSet, filter_templates: bool) -> DataFrame:
    """Link leaves of the base pages: page_key, link_ordinal, dst_page_key, dom_path."""
    pagelets = base.pagelets.select(F.col("page_key").alias("src_page_key"), F.col("ordinal").alias("pagelet_ordinal"),
                                    "dom_path", "template")
    leaves = base.links.join(pagelets, ["src_page_key", "pagelet_ordinal"], "left")
    if filter_templates:
        leaves = leaves.where(~F.coalesce("template", F.lit(False)))
    return leaves.select(F.col("src_page_key").alias("page_key"), "link_ordinal", "dst_page_key", "dom_path")


def dom_distill(base: BaseSet, filter_templates: bool = False, max_iter: int = 50, tol: float = 1e-6,
                a_frac: float = 0.8, e: float = 0.05, node_bits: float = 1.0, partitions: int = 2) -> dict:
    """Run the iteration to convergence; return the authority scores, the
    segmented leaves of the last iteration and the per-iteration counts."""
    leaves = dom_leaves(base, filter_templates).repartition(partitions, "page_key").persist()
    root = base.root
    n_root = root.count()
    a = root.select(F.col("page_key").alias("dst_page_key"), F.lit(1.0 / max(n_root, 1)).alias("a"))
    history = []
    seg = None
    converged, change = False, math.inf
    try:
        for it in range(1, max_iter + 1):
            scored = leaves.join(a, "dst_page_key", "left").select(
                "page_key", "link_ordinal", "dst_page_key", "dom_path", F.coalesce("a", F.lit(0.0)).alias("h"))
            scored = scored.localCheckpoint()
            # mdl.quantum in Spark: e times the (1 - a) quantile of the positive scores
            q = scored.where("h > 0").agg(F.percentile_approx("h", 1.0 - a_frac, 100_000)).first()[0]
            delta = e * q if q else 1.0
            seg = (scored.groupBy("page_key")
                   .applyInPandas(_segmenter(delta, node_bits), SEGMENTED_SCHEMA)
                   .localCheckpoint())
            raw = seg.groupBy("dst_page_key").agg(F.sum("h").alias("a")).localCheckpoint()
            total = raw.agg(F.sum("a")).first()[0] or 0.0
            new_a = raw.withColumn("a", F.col("a") / F.lit(total if total > 0 else 1.0))
            change = (new_a.join(a.withColumnRenamed("a", "prev"), "dst_page_key", "full")
                      .agg(F.sum(F.abs(F.coalesce("a", F.lit(0.0)) - F.coalesce("prev", F.lit(0.0)))))
                      .first()[0] or 0.0)
            stats = seg.agg(F.sum("expanded"), F.sum("pruned"),
                            F.countDistinct("page_key", "frontier")).first()
            history.append({"iteration": it, "expanded": int(stats[0] or 0), "pruned": int(stats[1] or 0),
                            "frontier": int(stats[2] or 0), "change": change, "quantum": delta})
            a = new_a
            if change < tol:
                converged = True
                break
    finally:
        leaves.unpersist()
    return {"authorities": a.withColumnRenamed("dst_page_key", "auth"), "segmented": seg, "history": history,
            "iterations": len(history), "converged": converged, "change": change}


def top_hub_subtrees(seg: DataFrame, base: BaseSet, n: int) -> list[dict]:
    """The highlighted hub subtree of each of the n best hub pages: the frontier
    node with the largest pooled score, its links, and the page's frontier size."""
    nodes = (seg.groupBy("page_key", "frontier").agg(F.max("frontier_h").alias("score"),
                                                      F.max("frontier_links").alias("links")))
    best = Window.partitionBy("page_key").orderBy(F.desc("score"), "frontier")
    rows = (nodes.withColumn("_r", F.row_number().over(best))
            .withColumn("frontier_nodes", F.count("*").over(Window.partitionBy("page_key")))
            .where("_r = 1 and score > 0")
            .join(base.pages.select("page_key", "url"), "page_key")
            .orderBy(F.desc("score"), "url").limit(n).collect())
    return [{"url": r.url, "subtree": r.frontier, "score": r.score, "links": r.links,
             "frontier_nodes": r.frontier_nodes} for r in rows]
