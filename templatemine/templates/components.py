"""Connected components of a graph given as DataFrames (id; src, dst).

GraphFrames' `connectedComponents` when its JVM jars are on the session's
classpath (the production path); otherwise the same algorithms in DataFrame
joins, a stop-gap for machines where the jars cannot be had, picked by
`detect.cc_algorithm` like GraphFrames':
- two_phase: Kiveris et al.'s alternating large-star / small-star ("Connected
  Components in MapReduce and Beyond", SoCC 2014), the algorithm GraphFrames'
  two_phase implements: O(log n) rounds in practice, whatever the diameter;
- graphx (or anything else): min-label propagation, GraphX's Pregel way: each
  round gives every vertex the smallest label among itself and its neighbours,
  until no label changes (rounds = the diameter of the largest component).
All return (id, component) where the component is the smallest vertex id in it.
The web-wide pagelets ("Home", "Share") make components that span thousands of
sites, whose diameter grows with the crawl: scripts/detect_cost.py measures both.
"""

from __future__ import annotations

import time

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from templatemine.config import DetectConfig
from templatemine.spark import graphframes_available


def connected_components(spark: SparkSession, vertices: DataFrame, edges: DataFrame,
                         config: DetectConfig = DetectConfig(), report: dict | None = None) -> DataFrame:
    """(id, component) for the vertices in components of two or more (isolated
    vertices may be left out: GraphFrames has been seen to drop them, issue 441,
    and single-vertex components are never templates). `report`, if given,
    gets the implementation used, the fallback's rounds, and `seconds`: the wall
    time of the call, which runs the rounds eagerly (and computes the input
    edges first: the template links), what a benchmark reports as the
    components' share of detect."""
    report = {} if report is None else report
    started = time.time()
    try:
        if graphframes_available(spark):
            from graphframes import GraphFrame

            report.update(implementation=f"graphframes {config.cc_algorithm}")
            return GraphFrame(vertices, edges).connectedComponents(
                algorithm=config.cc_algorithm,
                checkpointInterval=config.cc_checkpoint_interval,
                broadcastThreshold=config.cc_broadcast_threshold,
            ).select("id", "component")
        if config.cc_algorithm == "two_phase":
            report.update(implementation="large-star/small-star (DataFrame)")
            return star_contraction(vertices, edges, report=report)
        report.update(implementation="min-label propagation (DataFrame)")
        return min_label_propagation(vertices, edges, report=report)
    finally:
        report["seconds"] = round(time.time() - started, 3)


def _truncate(df: DataFrame) -> DataFrame:
    """Cut the lineage of a round's result: a reliable checkpoint (files in the
    session's checkpoint directory, which run_detect always sets) so that an
    executor lost mid-run costs a recomputation, not the job; a local one
    (executor storage) only when no directory is set."""
    if df.sparkSession.sparkContext.getCheckpointDir():
        return df.checkpoint(eager=True)
    return df.localCheckpoint(eager=True)


def _undirected(edges: DataFrame) -> DataFrame:
    """Each undirected edge once, as (src, dst) with src > dst; no self-loops."""
    return edges.select(F.greatest("src", "dst").alias("src"), F.least("src", "dst").alias("dst")).where(
        F.col("src") != F.col("dst")).distinct()


def large_star(edges: DataFrame) -> DataFrame:
    """Every vertex u links its larger neighbours v > u to m(u), the least of u
    and its neighbours. Edges in and out are (larger, smaller)."""
    both = edges.union(edges.select(F.col("dst").alias("src"), F.col("src").alias("dst")))
    least = both.groupBy("src").agg(F.min("dst").alias("m")).select("src", F.least("src", "m").alias("m"))
    return _undirected(both.where(F.col("dst") > F.col("src")).join(least, "src").select(
        F.col("dst").alias("src"), F.col("m").alias("dst")))


def small_star(edges: DataFrame) -> DataFrame:
    """Every vertex u links itself and its smaller neighbours to m(u), the least
    of them. Edges in and out are (larger, smaller)."""
    least = edges.groupBy("src").agg(F.min("dst").alias("m"))
    moved = edges.join(least, "src").select(F.col("dst").alias("src"), F.col("m").alias("dst"))
    return _undirected(moved.union(least.select("src", F.col("m").alias("dst"))))


def star_contraction(vertices: DataFrame, edges: DataFrame, max_rounds: int = 100,
                     report: dict | None = None) -> DataFrame:
    """Alternate large-star and small-star until the graph is a set of stars
    (every vertex has one edge, to its component's least vertex, which has
    none of its own); the star's centre labels its vertices. Isolated vertices
    are left out (they are no template)."""
    current = _truncate(_undirected(edges))
    rounds = 0
    for rounds in range(1, max_rounds + 1):
        # each round's edges are checkpointed: the lineage stays one round long
        current = _truncate(small_star(large_star(current)))
        fanned = current.groupBy("src").count().where("count > 1").limit(1).count()
        chained = current.join(current.select(F.col("src").alias("dst")).distinct(), "dst", "left_semi").limit(
            1).count()
        if fanned == 0 and chained == 0:
            break
    else:
        raise RuntimeError(f"connected components: no convergence in {max_rounds} rounds of large/small-star")
    if report is not None:
        report["rounds"] = rounds
    centres = current.select(F.col("dst").alias("id"), F.col("dst").alias("component")).distinct()
    return current.select(F.col("src").alias("id"), F.col("dst").alias("component")).union(centres)


def min_label_propagation(vertices: DataFrame, edges: DataFrame, max_rounds: int = 100,
                          report: dict | None = None) -> DataFrame:
    both = edges.select("src", "dst").union(edges.select(F.col("dst").alias("src"), F.col("src").alias("dst")))
    both = both.where(F.col("src") != F.col("dst")).distinct().persist()
    labels = _truncate(vertices.select("id", F.col("id").alias("component")))
    rounds = 0
    for rounds in range(1, max_rounds + 1):
        offers = both.join(labels.withColumnRenamed("id", "src"), "src").groupBy(F.col("dst").alias("id")).agg(
            F.min("component").alias("offer"))
        # each round's labels are checkpointed: the lineage stays one round long
        labels = _truncate(labels.join(offers, "id", "left").select(
            "id",
            F.least("component", F.coalesce("offer", "component")).alias("component"),
            F.coalesce(F.col("offer") < F.col("component"), F.lit(False)).alias("changed"),
        ))
        if labels.where("changed").count() == 0:
            break
        labels = labels.drop("changed")
    else:
        raise RuntimeError(f"connected components: labels still changing after {max_rounds} rounds "
                           "(a component of larger diameter: use detect.cc_algorithm=two_phase)")
    both.unpersist()
    if report is not None:
        report["rounds"] = rounds
    return labels.select("id", "component")
