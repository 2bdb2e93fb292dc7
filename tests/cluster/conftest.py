"""A real Spark standalone cluster on 127.0.0.1: one master and two workers (1 core,
2 GB each) started from the installed pyspark (SPARK_HOME = the pyspark package),
the package built by scripts/package, and a synthetic web to run on.

Everything started here is stopped here, also when a test fails: each daemon runs
in its own process group (its executors and their Python workers inherit it), and
the finalizer kills the groups.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKERS = 2
SYNTH_PAGES = 1500  # a run is some 250 Spark jobs whatever the size: plenty of time for the kill


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/cluster" in str(item.fspath):
            item.add_marker(pytest.mark.cluster)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url: str, timeout: float = 5):
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.load(resp)


def spark_home() -> str:
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


def spark_env() -> dict:
    """The environment of every process the tests start: this pyspark as Spark, on
    127.0.0.1; which Python runs is spark-submit's business (the packed environment),
    not a PYSPARK_PYTHON another test left in os.environ."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    return {**env, "SPARK_HOME": spark_home(), "SPARK_LOCAL_IP": "127.0.0.1"}


def kill_group(proc: subprocess.Popen, grace: float = 10) -> None:
    """SIGTERM the process group (the daemon stops its executors), SIGKILL what is left."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue
        # the leader is gone; anything left in its group still gets the signal
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class StandaloneCluster:
    def __init__(self, base: str):
        self.base = base
        self.procs: list[subprocess.Popen] = []
        self.port, self.ui_port = free_port(), free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.workers: list[dict] = []

    def _start(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(os.path.join(self.base, f"{name}.log"), "wb")
        proc = subprocess.Popen([os.path.join(spark_home(), "bin", "spark-class"), *args], stdout=log,
                                stderr=subprocess.STDOUT, env=spark_env(), start_new_session=True, cwd=self.base)
        self.procs.append(proc)
        return proc

    def start(self, timeout: float = 90) -> None:
        self._start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(self.port), "--webui-port", str(self.ui_port)])
        for i in range(WORKERS):
            work = os.path.join(self.base, f"work-{i}")
            os.makedirs(work)
            ui = free_port()
            proc = self._start(f"worker-{i}", ["org.apache.spark.deploy.worker.Worker", self.url,
                                               "--host", "127.0.0.1", "--cores", "1", "--memory", "2g",
                                               "--webui-port", str(ui), "--work-dir", work])
            self.workers.append({"proc": proc, "work_dir": work, "ui_port": ui})
        deadline = time.time() + timeout
        while time.time() < deadline:
            for proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"a Spark daemon exited ({proc.returncode}): see {self.base}/*.log")
            try:
                state = get_json(f"http://127.0.0.1:{self.ui_port}/json/")
                if sum(w["state"] == "ALIVE" for w in state.get("workers", [])) == WORKERS:
                    return
            except OSError:
                pass
            time.sleep(1)
        raise RuntimeError(f"master did not see {WORKERS} ALIVE workers in {timeout}s: see {self.base}/*.log")

    def master_state(self) -> dict:
        return get_json(f"http://127.0.0.1:{self.ui_port}/json/")

    def worker_state(self, i: int) -> dict:
        return get_json(f"http://127.0.0.1:{self.workers[i]['ui_port']}/json/")

    def stop(self) -> None:
        for proc in reversed(self.procs):  # workers (and their executors) first
            kill_group(proc)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, request):
    c = StandaloneCluster(str(tmp_path_factory.mktemp("standalone")))
    request.addfinalizer(c.stop)  # before start: a half-started cluster is stopped too
    c.start()
    return c


@pytest.fixture(scope="session")
def package():
    """scripts/package's result (wheel, archive) and spark-submit arguments (offline:
    this machine's Maven mirror does not serve GraphFrames, .cache/jars has Delta)."""
    proc = subprocess.run([os.path.join(ROOT, "scripts", "package"), "--profile", "standalone", "--offline",
                           "--json"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def synthetic_web(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth") / "web"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "synth_web.py"), "--pages",
                           str(SYNTH_PAGES), "--shards", "8", "--workers", "1", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return str(out / "warc")
