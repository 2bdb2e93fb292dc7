"""Every conf/*.toml loads through load_config, and the cluster profiles say what
scripts/package needs (no Spark, no building)."""

import glob
import importlib.util
import os

import pytest

from templatemine.config import CLUSTER, load_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONF_FILES = sorted(glob.glob(os.path.join(ROOT, "conf", "*.toml")))
CLUSTER_PROFILES = ("standalone", "yarn", "kubernetes")


def _package_script():
    spec = importlib.util.spec_from_file_location("package_script", os.path.join(ROOT, "scripts", "package.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_profiles_exist():
    names = {os.path.basename(f)[:-5] for f in CONF_FILES}
    assert {"local", "test", "cluster", *CLUSTER_PROFILES} <= names


@pytest.mark.parametrize("path", CONF_FILES, ids=lambda p: os.path.basename(p))
def test_conf_file_loads(path):
    config = load_config(None, path)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in config.spark.items())
    assert config.extract.batch_records > 0


@pytest.mark.parametrize("name", CLUSTER_PROFILES)
def test_cluster_profiles(name):
    config = load_config(None, os.path.join(ROOT, "conf", f"{name}.toml"))
    spark = config.spark
    assert spark["spark.sql.adaptive.enabled"] == "true" and spark["spark.sql.adaptive.skewJoin.enabled"] == "true"
    assert int(spark["spark.sql.shuffle.partitions"]) >= int(CLUSTER.spark["spark.sql.shuffle.partitions"])
    assert "spark.executor.memoryOverhead" in spark and "spark.sql.execution.arrow.maxRecordsPerBatch" in spark
    # an address-space limit on Python workers breaks pyarrow (see the files' comments)
    assert "spark.executor.pyspark.memory" not in spark
    # "" = OUT/_checkpoints, on the output's (shared) storage
    assert config.detect.checkpoint_dir == "" or "://" in config.detect.checkpoint_dir
    if name == "yarn":
        assert "spark.yarn.queue" in spark
    if name == "kubernetes":
        assert {"spark.kubernetes.container.image", "spark.kubernetes.namespace",
                "spark.kubernetes.authenticate.driver.serviceAccountName"} <= set(spark)
        assert spark["spark.dynamicAllocation.shuffleTracking.enabled"] == "true"


@pytest.mark.parametrize("name", CLUSTER_PROFILES)
def test_submit_line(name):
    package = _package_script()
    archive = os.path.join(ROOT, "dist", "templatemine-env.tar.gz")
    command = package.submit_command(name, None, archive, offline=False)
    argv = command["spark_submit"]
    assert argv[-1] == "jobs/run.py" and os.path.exists(os.path.join(ROOT, argv[-1]))
    assert "dist/templatemine-env.tar.gz#environment" in argv
    assert "spark.pyspark.python=./environment/bin/python" in argv
    packages = argv[argv.index("--packages") + 1].split(",")
    assert set(packages) == {c for group in package.JVM_PACKAGES.values() for c in group}
    client = argv[argv.index("--deploy-mode") + 1] == "client"
    assert client == (name == "standalone")  # standalone runs no Python driver in cluster mode
    assert any(a.startswith("spark.pyspark.driver.python=") for a in argv) == client
    config_arg = command["job_args"][command["job_args"].index("--config") + 1]
    assert config_arg == (f"conf/{name}.toml" if client else f"{name}.toml")
    if not client:  # the driver runs in the cluster and reads the profile from --files
        assert argv[argv.index("--files") + 1] == f"conf/{name}.toml"
        assert any(a.startswith("spark.driver.memory=") for a in argv)


def test_archive_leaves_pyspark_to_the_cluster():
    requirements = _package_script().runtime_requirements(with_pyspark=False)
    names = {r.split("==")[0] for r in requirements}
    assert not names & {"pyspark", "py4j"}
    assert {"pyarrow", "pandas", "selectolax", "warcio", "datasketch", "publicsuffixlist"} <= names
    assert all("==" in r for r in requirements)  # pinned to what .venv runs


def test_every_command_has_its_spark_submit_entry_point(monkeypatch):
    """jobs/<command>.py for each `templatemine` command, passing its arguments
    through to that command: what spark-submit users run instead of the CLI."""
    import argparse
    import runpy

    from templatemine import cli

    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    commands = set(sub.choices)
    jobs = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(ROOT, "jobs", "*.py"))}
    assert commands == jobs, (commands - jobs, jobs - commands)
    for name in sorted(commands):
        seen = []
        monkeypatch.setattr(cli, "main", lambda argv, seen=seen: seen.append(argv) or 0)
        monkeypatch.setattr("sys.argv", [f"jobs/{name}.py", "OUT", "--quiet"])
        with pytest.raises(SystemExit) as done:
            runpy.run_path(os.path.join(ROOT, "jobs", f"{name}.py"), run_name="__main__")
        assert done.value.code == 0 and seen == [[name, "OUT", "--quiet"]], name
