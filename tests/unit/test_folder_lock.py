"""FOLDER/_lock (tables/lock.py) over a local folder, without Spark: created only
where none exists, naming its holder; refused while its holder lives; a dead
holder's lock claimed; released on every way out; the folders it had to create
removed again when left empty. (The nightly's StateLock is this lock over
STATE: tests/spark/test_nightly_edges.py.)"""

import json
import os
import socket
import time

import pytest

from templatemine.tables.lock import (UNREADABLE_STALE_S, FolderLock, LocalFiles, LockHeld, LockRaced,
                                      process_facts)
from tests.commands import alive, ended, holder  # noqa: F401 (fixtures)


def _lock(folder, **about):
    return FolderLock(str(folder), LocalFiles(), **about)


def test_held_while_inside_and_names_its_holder(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with _lock(out, command="templatemine detect") as lock:
        held = json.loads((out / "_lock").read_text())
        assert held == lock.holder and lock.taken_over is None
        assert held["host"] == socket.gethostname() and held["pid"] == os.getpid()
        assert held["command"] == "templatemine detect" and held["since"].startswith("20")
        assert held.get("start") == process_facts(os.getpid()).get("start")
    assert not (out / "_lock").exists() and out.is_dir()


def test_a_second_holder_is_refused_naming_the_first(tmp_path):
    out = tmp_path / "out"
    with _lock(out, command="templatemine run") as first:
        before = (out / "_lock").read_text()
        with pytest.raises(LockHeld) as refused:
            with _lock(out, command="templatemine clean"):
                pass
        assert refused.value.held == first.holder and refused.value.path == f"{out}/_lock"
        message = str(refused.value)
        for words in (f"{out}/_lock", f"pid {os.getpid()}", f"host {socket.gethostname()}",
                      f"since {first.holder['since']}", "(templatemine run)"):
            assert words in message, (words, message)
        assert (out / "_lock").read_text() == before  # the refused one touched nothing
    with _lock(out):  # released: free again
        pass


def test_a_live_holder_here_elsewhere_or_in_another_container_is_not_taken_over(tmp_path, alive):
    out = tmp_path / "out"
    out.mkdir()
    here = holder(alive)
    # ... nor one of another machine of the same host name (a cloned VM, a container given
    # --hostname elsewhere: its boot differs too, found in review), or of an unknown machine
    other_machine = {**here, "boot": "another-boot", "machine": "another-machine"}
    for held in (here, {**here, "host": "elsewhere"}, {**here, "pidns": 1}, {**here, "boot": None},
                 {**here, "pid": "x"}, other_machine, {**other_machine, "machine": None}):
        (out / "_lock").write_text(json.dumps(held))
        with pytest.raises(LockHeld):
            with _lock(out):
                pass
        assert json.loads((out / "_lock").read_text()) == held
    os.utime(out / "_lock", (time.time() - 2 * UNREADABLE_STALE_S,) * 2)  # old, but its holder lives
    with pytest.raises(LockHeld):
        with _lock(out):
            pass


def test_a_lock_of_a_process_that_is_gone_is_claimed(tmp_path, ended, alive):
    out = tmp_path / "out"
    out.mkdir()
    dead = holder(ended)  # (its facts but the start time, which an ended process has no more)
    reused = {**holder(alive), "start": 1}  # its pid now another process's
    rebooted = {**holder(alive), "boot": "an-earlier-boot"}  # the same machine id, where there is one
    for held in (dead, reused, *((rebooted,) if rebooted.get("machine") else ())):
        (out / "_lock").write_text(json.dumps(held))
        with _lock(out) as lock:
            assert lock.taken_over == held
            assert json.loads((out / "_lock").read_text()) == lock.holder
        assert sorted(os.listdir(out)) == []  # no claim file left behind either


def test_an_empty_lock_is_waited_for_ten_minutes_then_claimed(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "_lock").write_text("")
    with pytest.raises(LockHeld, match="empty or unreadable"):
        with _lock(out):
            pass
    os.utime(out / "_lock", (time.time() - UNREADABLE_STALE_S - 5,) * 2)
    with _lock(out) as lock:
        assert lock.taken_over == {"unreadable": ""}


def test_a_claim_that_meets_a_fresh_lock_gives_it_back(tmp_path, ended):
    """Two processes judged one dead holder's lock stale: the second renames away the
    first one's fresh lock, sees it is not what it judged, and puts it back."""
    out = tmp_path / "out"
    out.mkdir()
    stale = json.dumps(holder(ended))
    (out / "_lock").write_text(stale)
    fresh = json.dumps(holder(os.getpid(), command="the other"))

    class Racing(LocalFiles):
        def rename(self, src, dst):
            if src.endswith("/_lock") and ".stale." in dst:
                (out / "_lock").write_text(fresh)  # the other process claimed and took it meanwhile
            return super().rename(src, dst)

    with pytest.raises(LockRaced, match="at the same time"):
        with FolderLock(str(out), Racing()):
            pass
    assert (out / "_lock").read_text() == fresh and os.listdir(out) == ["_lock"]


def test_a_claim_is_not_put_back_over_a_third_process_lock(tmp_path, ended):
    """As above, and a third process created its lock in the gap: putting the
    claim back with a rename overwrote that lock, and two processes went on,
    each holding it (found in review). The claim stays, named in the error."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "_lock").write_text(json.dumps(holder(ended)))
    fresh = json.dumps(holder(os.getpid(), command="the second"))
    third = json.dumps(holder(os.getpid(), command="the third"))

    class Racing(LocalFiles):
        def rename(self, src, dst):
            if src.endswith("/_lock") and ".stale." in dst:
                (out / "_lock").write_text(fresh)
                done = super().rename(src, dst)
                (out / "_lock").write_text(third)  # created where none was, after the claim
                return done
            return super().rename(src, dst)

    with pytest.raises(LockRaced, match="could not be put back") as raced:
        with FolderLock(str(out), Racing()):
            pass
    assert (out / "_lock").read_text() == third
    claims = [n for n in os.listdir(out) if n.startswith("_lock.stale.")]
    assert len(claims) == 1 and (out / claims[0]).read_text() == fresh and claims[0] in str(raced.value)


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt, SystemExit])
def test_released_on_every_way_out(tmp_path, error):
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(error):
        with _lock(out):
            raise error()
    assert os.listdir(out) == []


def test_a_missing_folder_is_created_and_removed_again_when_left_empty(tmp_path):
    out = tmp_path / "a" / "b" / "out"
    with _lock(out):
        assert (out / "_lock").is_file()
    assert not (tmp_path / "a").exists()  # a command that wrote nothing leaves no empty OUT
    with _lock(out):
        (out / "pages").mkdir()  # what the command wrote stays, with its folders
    assert sorted(os.listdir(out)) == ["pages"]
    other = tmp_path / "a" / "other"
    with _lock(other):
        pass
    assert not other.exists() and (tmp_path / "a").is_dir()  # only what the lock created, only if empty


def test_a_refused_lock_creates_nothing(tmp_path, alive):
    out = tmp_path / "out"
    out.mkdir()
    (out / "_lock").write_text(json.dumps(holder(alive)))
    with pytest.raises(LockHeld):
        with _lock(tmp_path / "out/"):
            pass
    assert os.listdir(out) == ["_lock"]


def test_file_uris_are_local_paths(tmp_path):
    out = tmp_path / "out"
    with FolderLock(f"file://{out}", LocalFiles()) as lock:
        assert lock.path == f"file://{out}/_lock" and (out / "_lock").is_file()
    assert not out.exists()


class _JavaError(Exception):
    """What py4j raises for a Java exception: the Java object at `java_exception`."""

    def __init__(self, java):
        super().__init__("An error occurred while calling o77.create.\n: " + "\n\tat org.apache.hadoop" * 40)
        self.java_exception = java


class _Java:
    def __init__(self, name, message, remote=None):
        self._name, self._message, self._remote = name, message, remote

    def getClass(self):
        return self

    def getName(self):
        return self._name

    def getMessage(self):
        return self._message

    def getClassName(self):
        return self._remote


def test_a_hadoop_error_is_one_line_naming_the_remote_class():
    """A Java exception from the Hadoop FileSystem where the lock is made (through
    py4j, a page of stack) becomes an OSError of one line; an HDFS RemoteException
    is named by the NameNode's class (its AccessControlException, SafeModeException)."""
    from templatemine.tables.lock import hadoop_error

    denied = hadoop_error(_JavaError(_Java(
        "org.apache.hadoop.ipc.RemoteException",
        'Permission denied: user=nobody, access=WRITE, inode="/runs":me:supergroup:drwxr-xr-x\n\tat org.apache',
        "org.apache.hadoop.security.AccessControlException")))
    assert isinstance(denied, OSError) and str(denied) == (
        'AccessControlException: Permission denied: user=nobody, access=WRITE, inode="/runs":me:supergroup:drwxr-xr-x')
    local = hadoop_error(_JavaError(_Java("org.apache.hadoop.fs.ParentNotDirectoryException",
                                          "/a/b (is not a directory)")))
    assert str(local) == "ParentNotDirectoryException: /a/b (is not a directory)"
    assert str(hadoop_error(_JavaError(_Java("java.io.IOException", None)))) == "IOException"
    assert hadoop_error(ValueError("not Java")) is None  # Python's own errors are raised as they are


def test_a_hadoop_error_when_the_jvm_is_gone_asks_it_nothing():
    """py4j's own exception: str() of it asks the JVM for the stack (protocol.py), which
    raised again when the gateway was gone; what py4j said first is used instead (found
    in review)."""
    from py4j.protocol import Py4JJavaError, Py4JNetworkError

    from templatemine.tables.lock import _already_exists, hadoop_error

    class Gone:
        def send_command(self, command):
            raise Py4JNetworkError("Answer from Java side is empty")

    class Dead:
        _target_id, _gateway_client = "o77", Gone()

        def getClass(self):
            raise Py4JNetworkError("Answer from Java side is empty")

    exc = Py4JJavaError("An error occurred while calling o77.create.\n", Dead())
    error = hadoop_error(exc)
    assert isinstance(error, OSError) and str(error) == "Py4JJavaError: An error occurred while calling o77.create."
    assert not _already_exists(exc)
    assert _already_exists(_JavaError(_Java("org.apache.hadoop.fs.FileAlreadyExistsException", "/out/_lock exists")))
    assert _already_exists(_JavaError(_Java("org.apache.hadoop.ipc.RemoteException", "/out/_lock for client",
                                            "org.apache.hadoop.fs.FileAlreadyExistsException")))
    assert not _already_exists(_JavaError(_Java("org.apache.hadoop.ipc.RemoteException", "denied",
                                                "org.apache.hadoop.security.AccessControlException")))


class _Fs:
    """A Hadoop FileSystem through py4j whose calls raise a NameNode's error (a _JavaError)."""

    def __init__(self, refuse):
        self.refuse = refuse

    def __getattr__(self, name):
        def call(*args):
            raise _JavaError(_Java("org.apache.hadoop.ipc.RemoteException", f"{name} refused.\n\tat x",
                                   f"org.apache.hadoop.hdfs.server.namenode.{self.refuse}"))
        return call


def test_hadoop_files_turn_every_refused_call_into_one_line():
    """HadoopFiles over a file system that refuses: exists, make_folder, create and delete
    raise an OSError of one line (what _holding and StateLock print), never py4j's error."""
    from templatemine.tables.lock import HadoopFiles

    files = HadoopFiles.__new__(HadoopFiles)  # (no session: its JVM objects are the stand-ins)
    files._fs, files._Path = _Fs("SafeModeException"), str
    for call in (lambda: files.exists("hdfs://nn/out"), lambda: files.make_folder("hdfs://nn/out"),
                 lambda: files.create("hdfs://nn/out/_lock", "x"), lambda: files.delete("hdfs://nn/out/_lock")):
        with pytest.raises(OSError, match=r"^SafeModeException: \w+ refused\.$"):
            call()


def test_a_lock_that_cannot_be_read_back_at_the_end_is_said_not_left_quietly(tmp_path):
    """A lock still there but unreadable when released (HDFS gone meanwhile: HadoopFiles.read
    gives ""): an OSError for the caller to warn about (found in review)."""

    class Unreadable(LocalFiles):
        def read(self, path):
            return ""

    out = tmp_path / "out"
    lock = FolderLock(str(out), Unreadable())
    lock.__enter__()
    with pytest.raises(OSError, match="could not be read back"):
        lock.__exit__(None, None, None)
    assert (out / "_lock").exists()
    (out / "_lock").unlink()
    lock.__exit__(None, None, None)  # gone meanwhile (removed by hand): nothing to say
