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
All return (id, component): the component's smallest vertex id from the
DataFrame algorithms, any label from GraphFrames' randomized_contraction (which
labels by a random hash); detection renames each component to its least carrier
id (`template_components`), so nothing downstream depends on which.
`grouped_components` is what detection calls: its graph is a disjoint union of
per-shingle groups, most of them small enough to solve in memory in one task
(Figure 5 step 4 as the paper words it), so only the giant groups reach the
distributed algorithms above.
The web-wide pagelets ("Home", "Share") make components that span thousands of
sites, whose diameter grows with the crawl: scripts/detect_cost.py measures both.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from templatemine.config import DetectConfig
from templatemine.spark import empty_frame, graphframes_available, shuffle_partitions
from templatemine.tables.cache import persisted


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


def truncate_lineage(df: DataFrame) -> DataFrame:
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
    sc = edges.sparkSession.sparkContext
    sc.setJobDescription("components: undirected edges")
    current = truncate_lineage(_undirected(edges))
    rounds = 0
    for rounds in range(1, max_rounds + 1):
        # each round's edges are checkpointed: the lineage stays one round long
        sc.setJobDescription(f"components: large-star/small-star round {rounds}")
        current = truncate_lineage(small_star(large_star(current)))
        fanned = current.groupBy("src").count().where("count > 1").limit(1).count()
        chained = current.join(current.select(F.col("src").alias("dst")).distinct(), "dst", "left_semi").limit(
            1).count()
        if fanned == 0 and chained == 0:
            break
    else:
        raise RuntimeError(f"connected components: no convergence in {max_rounds} rounds of large/small-star")
    sc.setJobDescription(None)
    if report is not None:
        report["rounds"] = rounds
    centres = current.select(F.col("dst").alias("id"), F.col("dst").alias("component")).distinct()
    return current.select(F.col("src").alias("id"), F.col("dst").alias("component")).union(centres)


def min_label_propagation(vertices: DataFrame, edges: DataFrame, max_rounds: int = 100,
                          report: dict | None = None) -> DataFrame:
    both = edges.select("src", "dst").union(edges.select(F.col("dst").alias("src"), F.col("src").alias("dst")))
    # (persisted: released with detect's scope when the rounds fail, as below)
    both = persisted(both.where(F.col("src") != F.col("dst")).distinct())
    labels = truncate_lineage(vertices.select("id", F.col("id").alias("component")))
    rounds = 0
    for rounds in range(1, max_rounds + 1):
        offers = both.join(labels.withColumnRenamed("id", "src"), "src").groupBy(F.col("dst").alias("id")).agg(
            F.min("component").alias("offer"))
        # each round's labels are checkpointed: the lineage stays one round long
        labels = truncate_lineage(labels.join(offers, "id", "left").select(
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


def components_in_memory(edges: pd.DataFrame) -> pd.DataFrame:
    """(id, component) of the vertices of `edges` (src, dst vertex ids), the
    component being its least vertex id: scipy's connected components on the
    sparse adjacency, all groups of a partition at once (their vertex ids are
    disjoint, so their components never merge). Pure: no Spark."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components as scipy_components

    src = edges["src"].to_numpy(np.int64)
    dst = edges["dst"].to_numpy(np.int64)
    if len(src) == 0:
        return pd.DataFrame({"id": np.empty(0, np.int64), "component": np.empty(0, np.int64)})
    ids, index = np.unique(np.concatenate([src, dst]), return_inverse=True)
    m = len(src)
    graph = coo_matrix((np.ones(m, np.int8), (index[:m], index[m:])), shape=(len(ids), len(ids)))
    n_components, labels = scipy_components(graph, directed=False)
    least = np.full(n_components, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(least, labels, ids)  # ids are sorted, but labels need not follow them
    return pd.DataFrame({"id": ids, "component": least[labels]})


def _partition_components(batches):
    """mapInPandas: one partition's edges (whole groups) -> (id, component)."""
    frames = list(batches)
    if frames:
        yield components_in_memory(pd.concat(frames, ignore_index=True))


def grouped_components(spark: SparkSession, edges: DataFrame, config: DetectConfig = DetectConfig(),
                       report: dict | None = None) -> DataFrame:
    """(id, component) for graphs that are a disjoint union of groups, `edges`
    being (group, src, dst) with vertex ids unique to a group (Figure 5's G_s,
    one per shingle). Groups of at most `cc_in_memory_max_edges` edges are
    solved in memory, a partition of them per task (`components_in_memory`): the
    paper's step 4, loading a group's links and finding its components, with
    no rounds; the larger ones, where one task would be a straggler, by
    `connected_components` (GraphFrames). `report` gets both parts' sizes."""
    report = {} if report is None else report
    started = time.time()
    limit = config.cc_in_memory_max_edges
    partitions = shuffle_partitions(spark)
    spark.sparkContext.setJobDescription("components: edges per shingle group")
    # persisted (released with detect's scope if what follows fails), and
    # unpersisted below as soon as they are spent
    sizes = persisted(edges.groupBy("group").agg(F.count("*").alias("n_edges")))
    large = sizes.where(F.col("n_edges") > limit).select("group")
    stats = sizes.agg(
        F.count(F.when(F.col("n_edges") <= limit, 1)).alias("small_groups"),
        F.sum(F.when(F.col("n_edges") <= limit, F.col("n_edges"))).alias("small_edges"),
        F.count(F.when(F.col("n_edges") > limit, 1)).alias("large_groups"),
        F.sum(F.when(F.col("n_edges") > limit, F.col("n_edges"))).alias("large_edges"),
        F.max("n_edges").alias("largest_group_edges"),
    ).first().asDict()
    stats = {k: int(v or 0) for k, v in stats.items()}
    # the large groups are few (a web-wide bar, a sister network) and broadcast;
    # with cc_in_memory_max_edges = 0 every group is large, and joined as usual
    large = F.broadcast(large) if stats["large_groups"] <= 100_000 else large
    parts = []
    if stats["small_edges"]:
        small = edges.join(large, "group", "left_anti") if stats["large_groups"] else edges
        # hash-partitioned by group: every group whole in one partition, and
        # partitions even (a groupBy on a few bucket numbers was not: their
        # hashes collide, measured 116x the median task at 100,000 pages)
        solved = small.select("group", "src", "dst").repartition(partitions, "group").mapInPandas(
            _partition_components, "id long, component long")
        solved = persisted(solved)
        # eager and on its own, like the distributed rounds: `seconds` is the
        # components' time, and its tasks are not mixed with the other part's
        spark.sparkContext.setJobDescription("components: small groups in memory")
        solved.count()
        parts.append(solved)
    distributed: dict = {}
    if stats["large_edges"]:
        spark.sparkContext.setJobDescription("components: large groups distributed")
        big = persisted(edges.join(large, "group", "left_semi").select("src", "dst"))
        vertices = big.select(F.col("src").alias("id")).union(big.select(F.col("dst").alias("id"))).distinct()
        # into as many partitions as the in-memory part: AQE coalesces the
        # rounds' last checkpoint and distinct to the default parallelism (2 in
        # local mode), and at 1M each of those tasks then carried 4.17M rows
        # into every stage that read the union (0.5M in the others); persisted,
        # as the in-memory part is, since the union is read several times
        spread = persisted(connected_components(spark, vertices, big, config, distributed).repartition(
            partitions, "id"))
        spread.count()  # eager, like the in-memory part, before `big` is released below
        parts.append(spread)
    spark.sparkContext.setJobDescription(None)
    # both parts are computed now (counted, or checkpointed by the rounds): the
    # group sizes and the large groups' edges need not stay cached for the session
    sizes.unpersist()
    if stats["large_edges"]:
        big.unpersist()
    if not parts:  # no edges at all
        parts.append(empty_frame(spark, "id long, component long"))
    result = parts[0] if len(parts) == 1 else parts[0].union(parts[1])
    report.update(
        implementation=" + ".join(
            ([f"in memory (groups <= {limit:,} edges)"] if stats["small_edges"] else [])
            + ([distributed.get("implementation")] if distributed else [])) or "none (no edges)",
        **stats,
        **({"distributed": distributed} if distributed else {}),
        **({"rounds": distributed["rounds"]} if "rounds" in distributed else {}),
    )
    report["seconds"] = round(time.time() - started, 3)
    return result
