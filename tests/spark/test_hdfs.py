"""hdfs:// against a real HDFS: Hadoop's own test cluster (MiniDFSCluster, one
NameNode and one DataNode, from hadoop-client-minicluster of the Hadoop version
pyspark ships) in a JVM of its own, started by MiniHadoopClusterManager.

Tested: what goes through the JVM's Hadoop client, that is a run's OUT on HDFS
(every stage's tables and manifests, staging and commit by rename, a later
stage removing an earlier one's outputs, the report), a page-level model root
on HDFS (train, LATEST, MLlib's copy, loading) and a nightly state on HDFS
(its Delta tables, work folder and published night). Not tested: what Python
tasks read or write through pyarrow's HadoopFileSystem (WARCs and manifests on
HDFS, WET files), which needs libhdfs from a Hadoop install; no package here
provides it, so the runs below set clean.wet=false."""

import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from templatemine.config import PageLevelConfig
from templatemine.pagelevel.model import load_model
from templatemine.pagelevel.stage import run_pagelevel
from templatemine.pagelevel.train import model_files, output_name, train_page_model
from templatemine.spark import repo_root
from templatemine.tables.output import path_exists, read_text, replace_text
from tests.warcgen import sample

QUIET = lambda _m: None  # noqa: E731
JARS = os.path.join(repo_root(), ".cache", "test-jars")  # scripts/fetch_jars.py --tests, run by scripts/test


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def hdfs(tmp_path_factory):
    import pyspark

    jars = glob.glob(os.path.join(JARS, "hadoop-client-minicluster-*.jar"))
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else shutil.which("java")
    if not jars or not java:
        pytest.skip(f"no MiniDFSCluster: {'no java' if not java else 'scripts/fetch_jars.py fetched no ' + JARS}")
    home = tmp_path_factory.mktemp("minidfs")
    port, details = _free_port(), home / "details.json"
    classpath = os.pathsep.join([*sorted(glob.glob(os.path.join(JARS, "*.jar"))),
                                 os.path.join(os.path.dirname(pyspark.__file__), "jars", "*")])
    with open(home / "cluster.log", "w") as log:
        cluster = subprocess.Popen([java, "-cp", classpath, "org.apache.hadoop.mapreduce.MiniHadoopClusterManager",
                                    "-nomr", "-format", "-nnport", str(port), "-datanodes", "1",
                                    "-writeDetails", str(details), "-D", "dfs.permissions.enabled=false"],
                                   cwd=home, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 180
        while not details.exists():  # written once the DataNode has joined (waitActive)
            if cluster.poll() is not None or time.time() > deadline:
                pytest.fail("MiniDFSCluster did not start: " + (home / "cluster.log").read_text()[-3000:])
            time.sleep(1)
        yield f"hdfs://127.0.0.1:{port}"
    finally:
        cluster.terminate()
        try:
            cluster.wait(30)
        except subprocess.TimeoutExpired:
            cluster.kill()


def test_a_run_and_a_model_with_their_output_on_hdfs(spark, hdfs):
    out = f"{hdfs}/runs/a"
    proc = subprocess.run([sys.executable, "-m", "templatemine.cli", "run", sample("iana.warc.gz"),
                           sample("warcio-example-trunc.warc"), "--out", out, "--preset", "test",
                           "--set", "clean.wet=false", "--quiet"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    manifest = json.loads(read_text(spark, f"{out}/manifest.json"))
    assert manifest["records"]["accounted"] and manifest["records"]["by_outcome"]["page"] == 17
    clean = json.loads(read_text(spark, f"{out}/clean.json"))
    assert spark.read.parquet(f"{out}/clean_pages").count() == clean["rows"]["clean_pages"] == 17
    assert spark.read.parquet(f"{out}/clean_links").count() == clean["rows"]["clean_links"] > 0
    assert path_exists(spark, f"{out}/report.html") and not path_exists(spark, f"{out}/wet")
    assert not path_exists(spark, f"{out}/_staging")  # every stage committed and cleaned up

    # a detect that rewrites OUT removes the clean output of the templates it replaces, on HDFS too
    again = subprocess.run([sys.executable, "-m", "templatemine.cli", "detect", out, "--mode", "global",
                            "--preset", "test"], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "removed the earlier clean.json, clean_pages, clean_links, report.html" in again.stdout + again.stderr
    assert not path_exists(spark, f"{out}/clean_pages") and path_exists(spark, f"{out}/template_pagelets")

    # a model root on HDFS: trained, LATEST, MLlib's own copy, loaded and used by the stage
    root = f"{hdfs}/models"
    config = PageLevelConfig(bands="0,5", holdout=0.3, pu_min_held_templates=1)
    summary = train_page_model(spark, [out], root, config, progress=QUIET)
    version = summary["version"]
    assert summary["path"] == f"{root}/{version}" and read_text(spark, f"{root}/LATEST").strip() == version
    assert path_exists(spark, f"{root}/{version}/band-1/metadata")
    assert load_model(root, model_files(spark, root)).version == version
    assert run_pagelevel(spark, out, PageLevelConfig(mode="page", model=root), progress=QUIET)["model"] == version
    # LATEST replaced in one rename over the old file (FileContext, OVERWRITE), no temporary file left
    replace_text(spark, f"{root}/LATEST", version + "\n")
    jvm = spark.sparkContext._jvm
    listing = jvm.org.apache.hadoop.fs.Path(root).getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()) \
        .listStatus(jvm.org.apache.hadoop.fs.Path(root))
    assert sorted(st.getPath().getName() for st in listing) == ["LATEST", version]
    assert read_text(spark, f"{root}/LATEST").strip() == version
    # a root that cannot be read: one line naming the file, though the NameNode puts its own
    # stack trace into the message of the exception the client relays (found in review)
    jvm.org.apache.hadoop.fs.Path(f"{hdfs}/broken/LATEST").getFileSystem(
        spark.sparkContext._jsc.hadoopConfiguration()).mkdirs(jvm.org.apache.hadoop.fs.Path(f"{hdfs}/broken/LATEST"))
    with pytest.raises(ValueError) as err:
        load_model(f"{hdfs}/broken", model_files(spark, f"{hdfs}/broken"))
    assert str(err.value) == (f"cannot read {hdfs}/broken/LATEST (java.io.FileNotFoundException: Path is not a file: "
                              "/broken/LATEST)")

    # a root without a scheme where the default file system is HDFS (YARN, EMR, Dataproc): model.json
    # and LATEST go beside MLlib's band directories on HDFS, not onto the driver's disk (found in review)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    default = conf.get("fs.defaultFS")
    conf.set("fs.defaultFS", hdfs)
    try:
        # ... and the output trained on, named without a scheme, is recorded as the HDFS folder
        # Spark read, not the driver's working directory joined to it (found in review)
        bare_out = out[len(hdfs):]
        assert bare_out == "/runs/a" and output_name(spark, bare_out) == out
        trained = train_page_model(spark, [bare_out], "/bare-models", config, progress=QUIET)
        bare = trained["version"]
        assert trained["outputs"] == [out]
        assert read_text(spark, f"{hdfs}/bare-models/LATEST").strip() == bare
        assert path_exists(spark, f"{hdfs}/bare-models/{bare}/model.json")
        assert path_exists(spark, f"{hdfs}/bare-models/{bare}/band-1/metadata")
        assert not os.path.exists("/bare-models")
        assert load_model("/bare-models", model_files(spark, "/bare-models")).version == bare
    finally:
        conf.set("fs.defaultFS", default) if default else conf.unset("fs.defaultFS")


def test_a_nightly_state_on_hdfs(spark, hdfs):
    """The nightly state on HDFS: its Delta tables, the night's work folder and the
    published night; the same input again is nothing new."""
    from templatemine.nightly.state import State
    from templatemine.spark import delta_jars_present

    if not delta_jars_present():
        pytest.skip("no Delta jars (scripts/bootstrap fetches them)")
    state = f"{hdfs}/state"
    night = [sys.executable, "-m", "templatemine.cli", "nightly", "--state", state, sample("iana.warc.gz"),
             "--preset", "test", "--set", "clean.wet=false", "--quiet"]
    first = subprocess.run(night, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr[-3000:]
    nights = State(spark, state).nights()
    assert [n["seq"] for n in nights] == [1] and nights[0]["output"].startswith(f"{state}/nights/")
    assert State(spark, state).read_table("pages").count() == 16  # iana.warc.gz's 16 pages
    assert spark.read.parquet(f"{nights[0]['output']}/clean_pages").count() == 16
    assert not path_exists(spark, f"{state}/_work/{nights[0]['night']}")  # the night's scratch is gone
    again = subprocess.run(night, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert [n["night"] for n in State(spark, state).nights()] == [nights[0]["night"]]
