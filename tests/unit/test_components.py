"""Figure 5 step 4 in memory (templates/components.py): scipy's components
against a breadth-first search, on graphs like the hashed (shingle, page) ones."""

import random

import pandas as pd

from templatemine.templates.components import components_in_memory
from tests.graphs import bfs_components


def test_in_memory_components_equal_a_bfs():
    rng = random.Random(3)
    for trial in range(20):
        ids = [rng.randint(-2**63, 2**63 - 1) for _ in range(rng.randint(2, 400))]
        if trial % 4 == 0:  # long paths: a large diameter costs nothing here
            edges = [(ids[i], ids[i + 1]) for i in range(len(ids) - 1) if (i + 1) % 50]
        else:
            edges = [(rng.choice(ids), rng.choice(ids)) for _ in range(rng.randint(1, 300))]
        got = components_in_memory(pd.DataFrame(edges, columns=["src", "dst"]))
        assert dict(zip(got["id"], got["component"])) == bfs_components(edges)
        assert got["id"].is_unique


def test_no_edges_no_rows():
    got = components_in_memory(pd.DataFrame({"src": pd.Series([], dtype="int64"), "dst": pd.Series([], dtype="int64")}))
    assert len(got) == 0 and list(got.columns) == ["id", "component"]


def test_shuffle_partitions_that_are_no_number_fall_back_to_the_parallelism():
    """detect, components and HITS size their partitions by
    spark.sql.shuffle.partitions; a platform's "auto" made int() raise (found
    in review, 2026-11-28). No JVM: a stand-in session."""
    from types import SimpleNamespace

    from templatemine.spark import shuffle_partitions

    def session(value):
        # (`get(key)` gives Spark's default, "200", for a key not set; a default
        # argument of None would give None: the stand-in has no such argument)
        return SimpleNamespace(conf=SimpleNamespace(get=lambda _key: value),
                               sparkContext=SimpleNamespace(defaultParallelism=3))

    assert [shuffle_partitions(session(v)) for v in ("8", "200", "auto", "0")] == [8, 200, 3, 1]
