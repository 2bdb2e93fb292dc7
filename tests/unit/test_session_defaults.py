"""local_mode_defaults (templatemine/spark.py): a local-mode session does no delay
scheduling (spark.locality.wait 0s), unless the user set the wait; a cluster's
session keeps Spark's. No JVM: spark-submit's conf is a stand-in."""

import pytest

from templatemine import spark as tspark
from templatemine.spark import LOCALITY_WAIT, local_mode_defaults


@pytest.fixture
def submitted(monkeypatch):
    """Run as under spark-submit, with the conf it set (the dict the test fills)."""
    conf: dict = {}
    monkeypatch.setattr(tspark, "under_spark_submit", lambda: True)
    monkeypatch.setattr(tspark, "submitted_conf", lambda: dict(conf))
    return conf


def test_local_mode_waits_for_no_locality(monkeypatch):
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert local_mode_defaults(None, {}) == {LOCALITY_WAIT: "0s"}  # no master: local[*]
    assert local_mode_defaults("local[2]", {"spark.sql.shuffle.partitions": "2"}) == {LOCALITY_WAIT: "0s"}


def test_the_users_wait_and_a_clusters_master_are_left_alone(monkeypatch):
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert local_mode_defaults("local[2]", {LOCALITY_WAIT: "3s"}) == {}
    assert local_mode_defaults("yarn", {}) == {}
    assert local_mode_defaults("spark://head:7077", {}) == {}


def test_under_spark_submit_its_master_decides(submitted):
    submitted["spark.master"] = "yarn"
    assert local_mode_defaults(None, {}) == {}
    submitted["spark.master"] = "local[4]"
    assert local_mode_defaults(None, {}) == {LOCALITY_WAIT: "0s"}
    submitted[LOCALITY_WAIT] = "1s"  # spark-submit --conf spark.locality.wait=1s
    assert local_mode_defaults(None, {}) == {}
