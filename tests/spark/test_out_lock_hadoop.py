"""FOLDER/_lock through the session's Hadoop FileSystem (tables/lock.py
HadoopFiles: an OUT or STATE on HDFS or S3A), run here over Hadoop's local file
system; and a command whose OUT only the session can reach (hdfs://, or a path
without a scheme under spark-submit) takes OUT's lock once the session starts,
before any stage. The local-disk lock and the commands on a local OUT:
tests/unit/test_folder_lock.py and tests/unit/test_out_lock.py."""

import json
import os

import pytest

from templatemine import cli
from templatemine.tables import lock as tlock
from templatemine.tables.lock import FolderLock, HadoopFiles, LockHeld
from tests.commands import alive, ended, holder  # noqa: F401 (fixtures)
from tests.spark.test_hdfs import hdfs  # noqa: F401 (a MiniDFSCluster; skipped without its jars)


def _holder(pid):
    return holder(pid, command="templatemine run")


def _visible(folder):
    """What the folder holds, without Hadoop's local checksum files."""
    return sorted(n for n in os.listdir(folder) if not n.endswith(".crc"))


def test_the_lock_through_hadoops_file_system(spark, tmp_path, alive, ended):
    out = tmp_path / "new" / "out"
    uri = f"file://{out}"
    lock = FolderLock(uri, HadoopFiles(spark, uri), command="templatemine detect")
    with lock:
        assert json.loads((out / "_lock").read_text()) == lock.holder
        with pytest.raises(LockHeld) as refused:  # a second one, while held
            with FolderLock(uri, HadoopFiles(spark, uri)):
                pass
        assert refused.value.held == lock.holder and f"pid {os.getpid()}" in str(refused.value)
    assert not (tmp_path / "new").exists()  # created for the lock, removed again when left empty
    out.mkdir(parents=True)
    (out / "_lock").write_text(json.dumps(_holder(alive)))
    with pytest.raises(LockHeld, match=f"pid {alive} on host"):
        with FolderLock(uri, HadoopFiles(spark, uri)):
            pass
    assert json.loads((out / "_lock").read_text()) == _holder(alive)
    (out / "_lock").write_text(json.dumps(_holder(ended)))  # a killed command's
    with FolderLock(uri, HadoopFiles(spark, uri)) as taken:
        assert taken.taken_over == _holder(ended)
        assert json.loads((out / "_lock").read_text()) == taken.holder
    assert _visible(out) == []


class _Session:
    """The test session, which a command must not stop."""

    def __init__(self, spark):
        self._spark = spark

    def __getattr__(self, name):
        return getattr(self._spark, name)

    def stop(self):
        pass


def test_an_out_only_the_session_reaches_is_locked_before_any_stage(spark, tmp_path, monkeypatch, capsys,
                                                                    alive, ended):
    from templatemine.templates import stage

    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text('{"rows": {"pages": 3}}')
    seen = []

    def run_detect(session, folder, config, progress):
        seen.append(json.loads((out / "_lock").read_text()))
        return {"timings": {"total_s": 0.1}, "rows": {"templates": 0, "template_pagelets": 0}, "mode": "local"}

    monkeypatch.setattr(cli, "_on_driver_disk", lambda path: False, raising=False)  # as hdfs://, on fs.defaultFS
    monkeypatch.setattr(tlock, "folder_files", lambda session, folder: HadoopFiles(session, folder))
    monkeypatch.setattr(cli, "_session", lambda *a, **k: _Session(spark))
    monkeypatch.setattr(stage, "run_detect", run_detect)

    (out / "_lock").write_text(json.dumps(_holder(alive)))
    before = {n: (out / n).read_bytes() for n in _visible(out)}
    assert cli.main(["detect", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"templatemine: OUT {out} is being written by another command: "
                                               f"{out}/_lock is held by pid {alive}"), err
    assert seen == [] and {n: (out / n).read_bytes() for n in _visible(out)} == before

    (out / "_lock").write_text(json.dumps(_holder(ended)))
    assert cli.main(["detect", str(out)]) == 0
    assert f"took over {out}/_lock, left by pid {ended}" in capsys.readouterr().out
    assert [(h["pid"], h["command"]) for h in seen] == [(os.getpid(), "templatemine detect")]
    assert not (out / "_lock").exists()


def test_on_hdfs_a_second_command_is_refused_and_a_dead_ones_lock_claimed(spark, hdfs, tmp_path, alive, ended):
    """On a real HDFS (tests/spark/test_hdfs.py's MiniDFSCluster): create without
    overwrite refuses a second lock, a dead holder's is claimed by a rename, and
    the command line refuses an OUT there once its session starts, before any stage."""
    import subprocess
    import sys

    from templatemine.tables.output import path_exists, read_text

    out = f"{hdfs}/locks/out"
    files = HadoopFiles(spark, out)
    with FolderLock(out, files, command="templatemine run") as lock:
        assert json.loads(read_text(spark, f"{out}/_lock")) == lock.holder
        with pytest.raises(LockHeld, match=f"pid {os.getpid()} on host"):
            with FolderLock(out, HadoopFiles(spark, out)):
                pass
    assert not path_exists(spark, f"{hdfs}/locks")  # created for the lock, removed again when left empty

    assert files.make_folder(out) == [out, f"{hdfs}/locks"] and files.create(f"{out}/_lock", json.dumps(_holder(ended)))
    with FolderLock(out, HadoopFiles(spark, out)) as taken:
        assert taken.taken_over == _holder(ended)
    assert not path_exists(spark, f"{out}/_lock") and path_exists(spark, out)  # OUT was there before

    assert files.create(f"{out}/_lock", json.dumps(_holder(alive)))
    done = subprocess.run([sys.executable, "-m", "templatemine.cli", "detect", out, "--preset", "test", "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stdout == "", done.stderr[-3000:]
    ours = [line for line in done.stderr.splitlines() if line.startswith("templatemine: ")]  # (and the JVM's)
    assert len(ours) == 1 and ours[0].startswith(f"templatemine: OUT {out} is being written by another command: "
                                                 f"{out}/_lock is held by pid {alive} on host "), done.stderr[-3000:]
    assert json.loads(read_text(spark, f"{out}/_lock")) == _holder(alive)


def _safe_mode(spark, hdfs, on: bool) -> None:
    """The MiniDFSCluster's NameNode into or out of safe mode: it refuses every write (a
    permission error cannot be had here: the cluster runs without permissions, and its
    user is the superuser anyway)."""
    jvm = spark._jvm
    fs = jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI(hdfs), spark._jsc.hadoopConfiguration())
    fs.setSafeMode(jvm.org.apache.hadoop.fs.SafeModeAction.valueOf("ENTER" if on else "LEAVE"))


def test_on_hdfs_a_lock_that_cannot_be_created_is_one_line_not_a_java_stack(spark, hdfs, monkeypatch, capsys):
    """OUT's lock refused by HDFS itself (no permission, a NameNode in safe mode) ends
    the command with one line naming the lock and HDFS's reason, exit 2, before any
    stage; it printed a page of Java stack (found in review)."""
    from templatemine.nightly.state import State, StateError, StateLock
    from templatemine.tables.output import path_exists

    out = f"{hdfs}/safemode/out"
    spark._jvm.org.apache.hadoop.fs.FileSystem.get(spark._jvm.java.net.URI(hdfs),
                                                   spark._jsc.hadoopConfiguration()).mkdirs(
        spark._jvm.org.apache.hadoop.fs.Path(out))
    monkeypatch.setattr(cli, "_session", lambda *a, **k: _Session(spark))
    _safe_mode(spark, hdfs, True)
    try:
        assert cli.main(["detect", out, "--quiet"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"templatemine: OUT {out}: cannot create {out}/_lock "
                                                   f"(SafeModeException: "), err
        assert "safe mode" in err[0]
        with pytest.raises(StateError, match=f"cannot create {hdfs}/safemode/state/_lock \\(SafeModeException: "):
            with StateLock(State(spark, f"{hdfs}/safemode/state")):
                pass
    finally:
        _safe_mode(spark, hdfs, False)
    assert not path_exists(spark, f"{out}/_lock")
