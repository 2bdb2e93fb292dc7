"""Connected components of a graph given as DataFrames (id; src, dst).

GraphFrames' `connectedComponents` when its JVM jars are on the session's
classpath (the production path); otherwise min-label propagation in DataFrame
joins, a stop-gap for machines where the jars cannot be had: each round gives
every vertex the smallest label among itself and its neighbours, until no label
changes (rounds = the diameter of the largest component; template graphs are a
site's link graph, of small diameter). Both return (id, component) where the
component is the smallest vertex id in it.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from templatemine.config import DetectConfig
from templatemine.spark import graphframes_available


def connected_components(spark: SparkSession, vertices: DataFrame, edges: DataFrame,
                         config: DetectConfig = DetectConfig()) -> DataFrame:
    """(id, component) for the vertices in components of two or more (isolated
    vertices may be left out: GraphFrames has been seen to drop them, issue 441,
    and single-vertex components are never templates)."""
    if graphframes_available(spark):
        from graphframes import GraphFrame

        return GraphFrame(vertices, edges).connectedComponents(
            algorithm=config.cc_algorithm,
            checkpointInterval=config.cc_checkpoint_interval,
            broadcastThreshold=config.cc_broadcast_threshold,
        ).select("id", "component")
    return min_label_propagation(vertices, edges)


def min_label_propagation(vertices: DataFrame, edges: DataFrame, max_rounds: int = 100) -> DataFrame:
    both = edges.select("src", "dst").union(edges.select(F.col("dst").alias("src"), F.col("src").alias("dst")))
    both = both.where(F.col("src") != F.col("dst")).distinct().persist()
    labels = vertices.select("id", F.col("id").alias("component")).localCheckpoint()
    for _ in range(max_rounds):
        offers = both.join(labels.withColumnRenamed("id", "src"), "src").groupBy(F.col("dst").alias("id")).agg(
            F.min("component").alias("offer"))
        # each round's labels are checkpointed: the lineage stays one round long
        labels = labels.join(offers, "id", "left").select(
            "id",
            F.least("component", F.coalesce("offer", "component")).alias("component"),
            F.coalesce(F.col("offer") < F.col("component"), F.lit(False)).alias("changed"),
        ).localCheckpoint()
        if labels.where("changed").count() == 0:
            break
        labels = labels.drop("changed")
    both.unpersist()
    return labels.select("id", "component")
