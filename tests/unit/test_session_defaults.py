"""local_mode_defaults (templatemine/spark.py): a local-mode session does no delay
scheduling (spark.locality.wait 0s), unless the user set the wait; a cluster's
session keeps Spark's. No JVM: spark-submit's conf is a stand-in."""

import pytest

from templatemine import spark as tspark
from templatemine.spark import LOCALITY_WAIT, local_mode_defaults


@pytest.fixture(autouse=True)
def no_users_conf(monkeypatch, tmp_path):
    """This machine's Spark configuration plays no part: an empty conf folder, no submit args."""
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)


@pytest.fixture
def submitted(monkeypatch):
    """Run as under spark-submit, with the conf it set (the dict the test fills)."""
    conf: dict = {}
    monkeypatch.setattr(tspark, "under_spark_submit", lambda: True)
    monkeypatch.setattr(tspark, "submitted_conf", lambda: dict(conf))
    return conf


def test_local_mode_waits_for_no_locality():
    assert local_mode_defaults(None, {}) == {LOCALITY_WAIT: "0s"}  # no master: local[*]
    assert local_mode_defaults("local[2]", {"spark.sql.shuffle.partitions": "2"}) == {LOCALITY_WAIT: "0s"}


def test_the_users_wait_and_a_clusters_master_are_left_alone():
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


def test_a_master_in_the_settings_decides_and_local_cluster_is_no_local_mode():
    # --conf spark.master=yarn (or the config's [spark] table) replaces the builder's local[*]
    assert local_mode_defaults(None, {"spark.master": "yarn"}) == {}
    assert local_mode_defaults(None, {"spark.master": "local[3]"}) == {LOCALITY_WAIT: "0s"}
    # several executors and the standalone backend's periodic offers: Spark's wait stands
    assert local_mode_defaults("local-cluster[2,1,1024]", {}) == {}
    assert local_mode_defaults("local", {}) == {LOCALITY_WAIT: "0s"}


def test_a_wait_in_a_properties_file_or_the_submit_args_stands(tmp_path):
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    environ = {"SPARK_CONF_DIR": str(conf_dir)}
    assert local_mode_defaults(None, {}, environ) == {LOCALITY_WAIT: "0s"}
    (conf_dir / "spark-defaults.conf").write_text("spark.locality.wait   1s\n")
    assert local_mode_defaults(None, {}, environ) == {}
    submit_args = {"PYSPARK_SUBMIT_ARGS": "--conf spark.locality.wait=2s pyspark-shell"}
    assert local_mode_defaults(None, {}, submit_args) == {}
