"""GraphFrames' JVM side is on the session's classpath after scripts/bootstrap."""

import os

import pytest

from templatemine.spark import graphframes_available, jars_dir, repo_root


def test_graphframes_connected_components(spark):
    if not graphframes_available(spark):
        status = os.path.join(repo_root(), ".cache", "graphframes-fetch.txt")
        why = open(status).read().strip() if os.path.exists(status) else f"no GraphFrames jars in {jars_dir()}"
        pytest.skip(f"GraphFrames JVM jars not available: {why}")
    from graphframes import GraphFrame

    v = spark.createDataFrame([(i,) for i in range(5)], ["id"])
    e = spark.createDataFrame([(0, 1), (1, 2), (3, 4)], ["src", "dst"])
    cc = GraphFrame(v, e).connectedComponents().collect()
    groups = {}
    for row in cc:
        groups.setdefault(row["component"], set()).add(row["id"])
    assert sorted(map(sorted, groups.values())) == [[0, 1, 2], [3, 4]]
