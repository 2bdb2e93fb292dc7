"""Commands that write into OUT hold OUT/_lock (cli.py, tables/lock.py): a second
one on the same OUT is refused at once with one line naming OUT, the lock and its
holder, exit 2, before Spark starts and without touching OUT; a lock left by a
process that is gone is taken over; the lock goes on every way out. Found in
review (2026-11-28): two commands on one OUT mixed their tables. No Spark here
(a local OUT's lock is taken before the session): `_session` is replaced."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from templatemine import cli
from templatemine.tables.lock import FolderLock, LocalFiles
from tests.commands import SparkStarted, alive, ended, holder, no_spark  # noqa: F401 (fixtures)
from tests.fake_session import IdleSession

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "iana.warc.gz")
WRITERS = ["extract", "run", "detect", "pagelevel", "clean", "report", "priority", "density"]


def _argv(command, out):
    if command in ("extract", "run"):
        return [command, SAMPLE, "--out", out]
    return [command, out]


@pytest.fixture
def out(tmp_path):
    """An OUT holding what a run wrote (a manifest, a table's part file)."""
    folder = tmp_path / "out"
    (folder / "pages").mkdir(parents=True)
    (folder / "pages" / "part-0.parquet").write_bytes(b"PAR1 rows PAR1")
    (folder / "manifest.json").write_text('{"run_id": "r1"}')
    return str(folder)


def _snapshot(folder):
    """Every file and folder under FOLDER with its bytes and times: what "unchanged" means."""
    seen = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.stat(path)
            data = open(path, "rb").read() if name in files else None
            seen[os.path.relpath(path, folder)] = (data, st.st_mtime_ns, st.st_size)
    return seen


def _lock_of(pid, command="templatemine run"):
    return holder(pid, command=command)


def test_a_second_command_on_a_locked_out_exits_2_at_once_and_leaves_out_unchanged(capsys, out, alive):
    held = _lock_of(alive)
    with open(f"{out}/_lock", "w") as fh:
        json.dump(held, fh)
    before = _snapshot(out)
    for command in WRITERS:
        assert cli.main(_argv(command, out)) == 2, command  # (SparkStarted would have been raised)
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        assert err[0].startswith(f"templatemine: OUT {out} is being written by another command: {out}/_lock "
                                 f"is held by pid {alive} on host {socket.gethostname()} since "
                                 f"2026-11-29T08:00:00+00:00 (templatemine run)"), err
        assert f"delete {out}/_lock" in err[0]
        assert _snapshot(out) == before, command
    for command in ("train", "density"):  # writing elsewhere: OUT is read only
        argv = (["train", out, "--model", f"{out}.model"] if command == "train"
                else ["density", out, "--dest", f"{out}.density"])
        with pytest.raises(SparkStarted):
            cli.main(argv)
    with pytest.raises(SparkStarted):
        cli.main(["related", "http://example.com/", out])
    with pytest.raises(SparkStarted):
        cli.main(["distill", out, "--query", "x"])
    assert cli.main(["density", out, "--dest", f"{out}/density"]) == 2  # into OUT, as by default
    assert _snapshot(out) == before


def test_the_command_line_itself_refuses_in_one_line_without_spark(out, alive):
    """`python -m templatemine.cli` as a scheduler starts it: exit 2, one line on
    stderr, nothing on stdout, no JVM started (in seconds), OUT as it was."""
    with open(f"{out}/_lock", "w") as fh:
        json.dump(_lock_of(alive, "templatemine detect"), fh)
    before = _snapshot(out)
    started = time.time()
    done = subprocess.run([sys.executable, "-m", "templatemine.cli", "clean", out], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"templatemine: OUT {out} is being written by another command: "
                                                  f"{out}/_lock is held by pid {alive}"), done.stderr
    assert "(templatemine detect)" in lines[0] and time.time() - started < 60
    assert _snapshot(out) == before


def test_a_lock_of_a_dead_process_is_taken_over_and_released(capsys, out, ended):
    with open(f"{out}/_lock", "w") as fh:  # a command of this machine, killed
        json.dump(_lock_of(ended), fh)
    with pytest.raises(SparkStarted):  # not refused: on to Spark
        cli.main(["detect", out])
    said = capsys.readouterr().out
    assert f"detect: took over {out}/_lock, left by pid {ended} on host " in said and "which is gone" in said
    assert not os.path.exists(f"{out}/_lock")


def test_held_while_the_command_runs_and_released_after(capsys, monkeypatch, out):
    from templatemine.pagelevel import stage

    class Spark(IdleSession):
        def stop(self):
            seen.append(os.path.exists(f"{out}/_lock"))

    seen = []

    def run_pagelevel(spark, folder, config, progress):
        held = json.loads(open(f"{folder}/_lock").read())
        seen.append((held["pid"], held["command"], held["host"]))

    monkeypatch.setattr(cli, "_session", lambda *a, **k: Spark())
    monkeypatch.setattr(stage, "run_pagelevel", run_pagelevel)
    assert cli.main(["pagelevel", out, "--pagelevel", "site", "--quiet"]) == 0
    assert seen == [(os.getpid(), "templatemine pagelevel", socket.gethostname()), True]  # held until Spark stops
    assert not os.path.exists(f"{out}/_lock")


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_released_when_the_command_fails_or_is_interrupted(monkeypatch, out, error):
    def session(*a, **k):
        assert os.path.exists(f"{out}/_lock")
        raise error("stopped")

    monkeypatch.setattr(cli, "_session", session)
    with pytest.raises(error):
        cli.main(["clean", out])
    assert not os.path.exists(f"{out}/_lock")


def test_a_new_out_whose_parent_does_not_exist(tmp_path, monkeypatch):
    """The first command creates OUT to hold its lock; one that then fails leaves no empty OUT."""
    out = str(tmp_path / "new" / "deeper" / "out")

    def session(*a, **k):
        assert os.path.isfile(f"{out}/_lock")
        raise SparkStarted()

    monkeypatch.setattr(cli, "_session", session)
    with pytest.raises(SparkStarted):
        cli.main(["run", SAMPLE, "--out", out])
    assert not os.path.exists(tmp_path / "new")


def test_a_stage_on_a_missing_out_makes_no_folder_for_a_lock(tmp_path):
    """detect, clean, ... read OUT's tables: on a mistyped OUT they take no lock,
    so no folder is made for one, and the stage's own one line ("no such output")
    stands; a lock's empty OUT made it "no tables" (found by the test suite)."""
    out = str(tmp_path / "typo")
    for command in ("detect", "clean", "pagelevel", "report"):
        with pytest.raises(SparkStarted):  # on to Spark, which says there is no such output
            cli.main([command, out])
        assert not os.path.exists(out)


def test_an_out_where_no_lock_can_be_created_is_one_line(capsys, tmp_path):
    parent = tmp_path / "a-file"
    parent.write_text("not a folder")
    out = str(parent / "out")
    assert cli.main(["run", SAMPLE, "--out", out]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"templatemine: OUT {out}: cannot create {out}/_lock ("), err
    assert parent.read_text() == "not a folder"


def test_a_command_killed_by_sigterm_leaves_its_lock_to_be_taken_over(tmp_path):
    """A scheduler's kill (SIGTERM) ends the process at once, as it always did
    (a handler raising in Python waited for the running Spark job, then left
    py4j's answers off by one: found in review); its lock names a process that
    is gone, so the next command on this machine takes it over."""
    out = str(tmp_path / "out")
    code = ("import sys, time\n"
            "from templatemine import cli\n"
            "def session(*a, **k):\n"
            "    print('started', flush=True)\n"
            "    time.sleep(60)\n"
            "cli._session = session\n"
            f"sys.exit(cli.main(['run', {os.path.abspath(SAMPLE)!r}, '--out', {out!r}]))\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "started"
        assert json.loads(open(f"{out}/_lock").read())["pid"] == proc.pid
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == -signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
    with FolderLock(out, LocalFiles(), command="templatemine run") as lock:
        assert lock.taken_over["pid"] == proc.pid
    assert not os.path.exists(f"{out}/_lock")


def test_the_lock_is_the_folder_lock_the_tests_above_hold(out):
    """(cli holds tables/lock.py's FolderLock: one held in this process refuses a command of it too.)"""
    with FolderLock(out, LocalFiles(), command="templatemine run"):
        assert cli.main(["report", out]) == 2
        assert os.path.exists(f"{out}/_lock")
    assert not os.path.exists(f"{out}/_lock")


class _RefusingFiles(LocalFiles):
    """A Hadoop file system (HadoopFiles) that refuses a call, as tables/lock.py's hadoop_error words it."""

    def __init__(self, refuse: str):
        self.refuse = refuse

    def exists(self, folder):
        if self.refuse == "exists":
            raise OSError('AccessControlException: Permission denied: user=etl, access=EXECUTE, inode="/data"')
        return super().exists(folder)

    def delete(self, path):
        if self.refuse == "delete":
            raise OSError("SafeModeException: Cannot delete /data/out/_lock. Name node is in safe mode.")
        return super().delete(path)


def test_an_out_hdfs_will_not_let_us_look_at_or_unlock_is_one_line_not_a_traceback(out, monkeypatch, capsys):
    """An OUT only the session reaches (hdfs://): a folder the user may not enter ends the
    command in one line, exit 2, before any stage; a lock the file system will not let go
    at the end is a warning naming it, and the command's own result stands (found in review)."""
    from templatemine.tables import lock as tlock

    ran = []
    monkeypatch.setattr(cli, "_on_driver_disk", lambda path: False)  # as hdfs://, reached through the session
    monkeypatch.setattr(cli, "_session", lambda *a, **k: IdleSession())
    monkeypatch.setattr(cli, "_stages", lambda *a, **k: ran.append(1) or 0)  # the command's work, done

    monkeypatch.setattr(tlock, "folder_files", lambda spark, folder: _RefusingFiles("exists"))
    assert cli.main(["detect", out, "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"templatemine: OUT {out}: cannot read {out} (AccessControlException: Permission denied: "
                   f'user=etl, access=EXECUTE, inode="/data")'] and ran == []

    monkeypatch.setattr(tlock, "folder_files", lambda spark, folder: _RefusingFiles("delete"))
    assert cli.main(["detect", out, "--quiet"]) == 0 and ran == [1]
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"templatemine: warning: could not remove {out}/_lock (SafeModeException: Cannot delete "
                   f"/data/out/_lock. Name node is in safe mode.); delete it by hand"]
    assert os.path.exists(f"{out}/_lock")


def test_a_nights_lock_the_file_system_will_not_delete_is_a_warning_not_a_failed_night(tmp_path, monkeypatch,
                                                                                        capsys):
    """STATE/_lock on HDFS that cannot be deleted once the night is done (a NameNode gone into
    safe mode): a warning naming it; the night's own outcome stands (found in review)."""
    from templatemine.nightly import state as nstate

    monkeypatch.setattr(nstate, "folder_files", lambda spark, folder: _RefusingFiles("delete"))
    root = tmp_path / "state"
    with nstate.StateLock(nstate.State(None, str(root))) as lock:
        assert json.loads((root / "_lock").read_text()) == lock.holder
    assert capsys.readouterr().err.strip().splitlines() == [
        f"templatemine: warning: could not remove {root}/_lock (SafeModeException: Cannot delete /data/out/_lock. "
        f"Name node is in safe mode.); delete it by hand before the next night"]
    assert (root / "_lock").exists()
