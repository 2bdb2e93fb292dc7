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
import signal
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
CLUSTER_LOG = []  # the running MiniDFSCluster's log, for a report of a command that hung


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cli(args: list[str], timeout: int, tmp) -> subprocess.CompletedProcess:
    """Run `templatemine ARGS` in a process of its own; one that outlives TIMEOUT
    fails the test with where it was: its last progress events (--log-json),
    the Python stack of every thread (faulthandler, on SIGABRT) and the JVM
    threads in Hadoop or Spark code (jstack), all written to TMP too. CI saw the
    first run below pass the 900 s mark once (2026-11-28, stop 45) where it takes
    under a minute here, with nothing to say where it hung."""
    proc = subprocess.Popen([sys.executable, "-X", "faulthandler", "-m", "templatemine.cli", *args, "--log-json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    except subprocess.TimeoutExpired:
        jvm = _jstack(proc.pid)
        proc.send_signal(signal.SIGABRT)  # faulthandler writes every Python thread's stack to stderr
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the driver's JVM too, which holds the pipes open
            out, err = proc.communicate()
        dump = tmp / f"hung-{args[0]}.txt"
        dump.write_text(f"stdout:\n{out}\nstderr:\n{err}\njstack:\n{jvm}")
        python = err[err.find("Fatal Python error"):] if "Fatal Python error" in err else err[-2000:]
        ours = [block.splitlines()[:24] for block in jvm.split("\n\n")  # threads in HDFS, SQL or a task
                if any(k in block for k in ("org.apache.hadoop.hdfs", "org.apache.spark.sql", "task launch"))]
        log = CLUSTER_LOG[0].read_text()[-2000:] if CLUSTER_LOG else "(none)"
        pytest.fail(f"templatemine {args[0]} still running after {timeout} s (all of it in {dump}).\n"
                    f"last progress:\n{chr(10).join(out.splitlines()[-8:])}\npython:\n{python[:3000]}\n"
                    f"jvm:\n{chr(10).join(line for block in ours[:6] for line in block)}\nMiniDFSCluster's log:\n{log}")


def _jstack(pid: int) -> str:
    """jstack of the JVMs PID started (Spark's driver), or why there is none."""
    jstack = shutil.which("jstack") or (os.path.join(os.environ["JAVA_HOME"], "bin", "jstack")
                                        if os.environ.get("JAVA_HOME") else None)
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    if not jstack or not children:
        return f"no jstack ({jstack}) or no child process ({children})"
    dumps = []
    for child in children:
        try:
            dumps.append(subprocess.run([jstack, child], capture_output=True, text=True, timeout=60).stdout)
        except subprocess.TimeoutExpired:
            dumps.append(f"jstack {child}: no answer in 60 s")
    return "\n".join(dumps)


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
    CLUSTER_LOG[:] = [home / "cluster.log"]
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


def test_a_run_and_a_model_with_their_output_on_hdfs(spark, hdfs, tmp_path):
    out = f"{hdfs}/runs/a"
    proc = _cli(["run", sample("iana.warc.gz"), sample("warcio-example-trunc.warc"), "--out", out, "--preset", "test",
                 "--set", "clean.wet=false"], 900, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    manifest = json.loads(read_text(spark, f"{out}/manifest.json"))
    assert manifest["records"]["accounted"] and manifest["records"]["by_outcome"]["page"] == 17
    clean = json.loads(read_text(spark, f"{out}/clean.json"))
    assert spark.read.parquet(f"{out}/clean_pages").count() == clean["rows"]["clean_pages"] == 17
    assert spark.read.parquet(f"{out}/clean_links").count() == clean["rows"]["clean_links"] > 0
    assert path_exists(spark, f"{out}/report.html") and not path_exists(spark, f"{out}/wet")
    assert not path_exists(spark, f"{out}/_staging")  # every stage committed and cleaned up

    # a detect that rewrites OUT removes the clean output of the templates it replaces, on HDFS too
    again = _cli(["detect", out, "--mode", "global", "--preset", "test"], 600, tmp_path)
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


def test_a_nightly_state_on_hdfs(spark, hdfs, tmp_path):
    """The nightly state on HDFS: its Delta tables, the night's work folder and the
    published night; the same input again is nothing new."""
    from templatemine.nightly.state import State
    from templatemine.spark import delta_jars_present

    if not delta_jars_present():
        pytest.skip("no Delta jars (scripts/bootstrap fetches them)")
    state = f"{hdfs}/state"
    night = ["nightly", "--state", state, sample("iana.warc.gz"), "--preset", "test", "--set", "clean.wet=false"]
    first = _cli(night, 900, tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    nights = State(spark, state).nights()
    assert [n["seq"] for n in nights] == [1] and nights[0]["output"].startswith(f"{state}/nights/")
    assert State(spark, state).read_table("pages").count() == 16  # iana.warc.gz's 16 pages
    assert spark.read.parquet(f"{nights[0]['output']}/clean_pages").count() == 16
    assert not path_exists(spark, f"{state}/_work/{nights[0]['night']}")  # the night's scratch is gone
    again = _cli(night, 600, tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert [n["night"] for n in State(spark, state).nights()] == [nights[0]["night"]]
