"""FOLDER/_lock: one writer of a folder at a time.

A command that writes into an output folder OUT (cli.py) holds OUT/_lock, and a
night holds STATE/_lock (nightly/state.py StateLock, a thin use of FolderLock).
Two writers of one folder at once mixed their tables, or, for nights, wiped
each other's scratch and both committed (found in review); cron's flock guards
one machine only.

The lock is created only where none exists: O_EXCL on a local disk, Hadoop's
create without overwrite elsewhere (atomic on HDFS; on S3 a check, then a
write). It names its holder: host, pid, and what makes a pid one process there
(the machine's id, the boot's id, the PID namespace, the process's start
time). A lock is taken over when its holder is surely gone: the same host and
machine id, booted since, or in the same boot and PID namespace with no
process of that pid (signal 0 says so where /proc hides it) and start time
(a killed process); or when it is empty or unreadable and older than
UNREADABLE_STALE_S (its write failed). It is claimed by renaming it away, which
one process only can do, and checked unchanged before it is dropped. Any other
lock is refused, naming its holder, until released or removed by hand (a
process killed in another container or on another machine: delete it once sure).

Local folders need no Spark (LocalFiles: a command takes its OUT's lock before
its session starts); other file systems go through the session's Hadoop
FileSystem (HadoopFiles).
"""

from __future__ import annotations

import json
import os
import posixpath
import socket
import sys
import time
import uuid
from contextlib import contextmanager
from datetime import datetime, timezone
from urllib.parse import urlsplit

from templatemine.warc.inputs import local_file

LOCK = "_lock"
UNREADABLE_STALE_S = 600  # an empty or unreadable lock this old is a write that failed midway


class LockError(RuntimeError):
    """The lock could not be taken (`path`: the lock file)."""

    def __init__(self, message: str, path: str):
        super().__init__(message)
        self.path = path


class LockHeld(LockError):
    """Another process holds the lock: `held` is what its file says ({} when
    empty or unreadable: being written, or a write that failed)."""

    def __init__(self, path: str, held: dict):
        super().__init__(f"{path} is held by {describe(held)}", path)
        self.held = held


class LockRaced(LockError):
    """Another process took the lock while this one claimed a stale one."""


def describe(held: dict) -> str:
    """Who holds a lock, in words: `pid 4242 on host h since 2026-11-29T10:00:00+00:00 (templatemine detect)`."""
    if not held.get("host") and not held.get("pid"):
        return (f"an empty or unreadable lock (being written, or left by a failed write: taken over once "
                f"{UNREADABLE_STALE_S // 60} minutes old)")
    words = f"pid {held.get('pid', '?')} on host {held.get('host', '?')} since {held.get('since', '?')}"
    return words + (f" ({held['command']})" if held.get("command") else "")


def _missing_folders(folder: str, exists) -> list[str]:
    """FOLDER and those of its parents that do not exist, deepest first: what
    creating the lock creates, and releasing it removes again if still empty
    (a command that failed left no empty OUT)."""
    missing = []
    while urlsplit(folder).path.strip("/.") and not exists(folder):  # (a file system's root exists)
        missing.append(folder)
        parent = posixpath.dirname(folder.rstrip("/"))
        if parent == folder:
            break
        folder = parent
    return missing


class LocalFiles:
    """The lock's file operations on the driver's disk, without Spark; paths are
    local ones or `file:` URIs."""

    def _disk(self, path: str) -> str:
        return local_file(path) or path

    def exists(self, folder: str) -> bool:
        return os.path.isdir(self._disk(folder))

    def file_exists(self, path: str) -> bool:
        return os.path.lexists(self._disk(path))

    def make_folder(self, folder: str) -> list[str]:
        created = _missing_folders(self._disk(folder), os.path.isdir)
        os.makedirs(self._disk(folder), exist_ok=True)
        return created

    def remove_empty(self, folders: list[str]) -> None:
        for folder in folders:
            try:
                os.rmdir(folder)
            except OSError:  # not empty: another writer's, or written since
                return

    def create(self, path: str, text: str) -> bool:
        """Write `text` to a new file at `path`; False if one exists. A failed write
        leaves no file (an empty lock would hold off every later writer)."""
        local = self._disk(path)
        for _ in range(3):
            try:
                fd = os.open(local, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                break
            except FileExistsError:
                return False
            except FileNotFoundError:  # the folder was removed as empty by a writer that had just failed
                os.makedirs(os.path.dirname(local) or ".", exist_ok=True)
        else:
            raise FileNotFoundError(f"{path}: its folder keeps disappearing")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
        except BaseException:
            os.unlink(local)
            raise
        return True

    def read(self, path: str) -> str | None:
        """The file's text; None if there is none; "" if it cannot be read (being written, not text)."""
        try:
            with open(self._disk(path), encoding="utf-8") as fh:
                return fh.read()
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return ""

    def age_s(self, path: str) -> float:
        try:
            return time.time() - os.stat(self._disk(path)).st_mtime
        except OSError:
            return 0.0

    def rename(self, src: str, dst: str) -> bool:
        try:
            os.rename(self._disk(src), self._disk(dst))
            return True
        except FileNotFoundError:
            return False

    def restore(self, src: str, dst: str) -> bool:
        """Move SRC to DST unless DST exists (a hard link fails where rename would overwrite)."""
        try:
            os.link(self._disk(src), self._disk(dst))
        except OSError:
            return False
        os.unlink(self._disk(src))
        return True

    def delete(self, path: str) -> None:
        try:
            os.unlink(self._disk(path))
        except FileNotFoundError:
            pass


def hadoop_error(exc: BaseException) -> OSError | None:
    """A Hadoop FileSystem call's Java exception (through py4j) as an OSError of
    one line, "AccessControlException: Permission denied: user=...", the remote
    class named for an HDFS RemoteException; None for an error of Python's own.
    (Raised as it was, it printed a page of Java stack for a folder the user
    may not write: found in review.)"""
    java = getattr(exc, "java_exception", None)
    if java is None:
        return None
    try:
        name = str(java.getClass().getName())
        if name.endswith("RemoteException") and java.getClassName():
            name = str(java.getClassName())
        message = str(java.getMessage() or "")
    except Exception:  # the gateway itself failed: what py4j said, without asking the JVM again
        # (str() of a Py4JJavaError does: found in review)
        name, message = type(exc).__name__, str(getattr(exc, "errmsg", "") or "")
    first = next((line.strip() for line in message.splitlines() if line.strip()), "")
    return OSError(f"{name.rsplit('.', 1)[-1]}: {first}" if first else name.rsplit(".", 1)[-1])


def _already_exists(exc: BaseException) -> bool:
    """Whether a create failed on a file that exists (FileAlreadyExistsException,
    through py4j, or hadoop_error's OSError of it), asking the JVM for the class
    name, not for str() of the error."""
    error = exc if isinstance(exc, OSError) else hadoop_error(exc)
    return error is not None and str(error).startswith("FileAlreadyExistsException")


@contextmanager
def _one_line():
    """A Java error of the calls inside raised as hadoop_error's OSError of one line."""
    try:
        yield
    except Exception as exc:
        raise hadoop_error(exc) or exc from None


class HadoopFiles:
    """The same through the session's Hadoop FileSystem (HDFS, S3A, ...). A Java
    error where the lock is made (no permission, a NameNode in safe mode) comes
    out as an OSError of one line (hadoop_error), as a local one does."""

    def __init__(self, spark, folder: str):
        from templatemine.tables.output import RunOutput

        self._out = RunOutput(spark, folder, "lock")
        self._fs, self._Path = self._out._fs, self._out._Path

    def _exists(self, path: str) -> bool:
        return bool(self._fs.exists(self._Path(path)))

    def exists(self, folder: str) -> bool:
        return self.file_exists(folder.rstrip("/"))

    def file_exists(self, path: str) -> bool:
        with _one_line():
            return self._exists(path)

    def make_folder(self, folder: str) -> list[str]:
        with _one_line():
            created = _missing_folders(folder.rstrip("/"), self._exists)
            if created:
                self._fs.mkdirs(self._Path(folder))
        return created

    def remove_empty(self, folders: list[str]) -> None:
        for folder in folders:
            try:
                if len(self._fs.listStatus(self._Path(folder))) or not self._fs.delete(self._Path(folder), False):
                    return
            except Exception:  # gone, or written meanwhile
                return

    def create(self, path: str, text: str) -> bool:
        try:
            stream = self._fs.create(self._Path(path), False)
        except Exception as exc:  # FileAlreadyExistsException, through py4j
            error = hadoop_error(exc)
            if error is not None and _already_exists(error):
                return False
            try:
                there = self._exists(path)
            except Exception:
                there = False
            if there:
                return False
            raise error or exc from None
        try:
            with _one_line():  # (a quota, a DataNode gone)
                stream.write(bytearray(text.encode("utf-8")))
                stream.close()
        except BaseException:
            try:
                self._fs.delete(self._Path(path), False)
            except Exception:
                pass
            raise
        return True

    def read(self, path: str) -> str | None:
        try:
            return self._out.read_text(path)
        except Exception:  # being written, or not text
            return ""

    def age_s(self, path: str) -> float:
        try:
            return time.time() - self._fs.getFileStatus(self._Path(path)).getModificationTime() / 1000
        except Exception:
            return 0.0

    def rename(self, src: str, dst: str) -> bool:
        return bool(self._fs.rename(self._Path(src), self._Path(dst)))

    def restore(self, src: str, dst: str) -> bool:
        """Move SRC to DST unless DST exists (HDFS's rename refuses an existing file)."""
        return not self._exists(dst) and self.rename(src, dst)

    def delete(self, path: str) -> None:
        with _one_line():
            self._fs.delete(self._Path(path), False)


def folder_files(spark, folder: str):
    """LocalFiles where the session's file system for FOLDER is the local disk
    (O_EXCL and rename are atomic there; Hadoop's local create is not), else HadoopFiles."""
    files = HadoopFiles(spark, folder)
    return LocalFiles() if files._fs.getScheme() == "file" else files


class FolderLock:
    """FOLDER/_lock, held from `with` to its end (see the module's docstring).
    `about`: more facts for the holder's record (`command`), said to those refused."""

    def __init__(self, folder: str, files, **about):
        self.folder = folder.rstrip("/")
        self.path = f"{self.folder}/{LOCK}"
        self.files = files
        self.holder = {"host": socket.gethostname(), "pid": os.getpid(),
                       "since": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                       **process_facts(os.getpid()), **about}
        self.text = json.dumps(self.holder, sort_keys=True)
        self.taken_over: dict | None = None
        self._created: list[str] = []

    def __enter__(self) -> "FolderLock":
        self._created = self.files.make_folder(self.folder)
        try:
            self._take()
        except BaseException:  # (a ^C after this process's lock was written: not left behind)
            if self.files.read(self.path) == self.text:
                self.files.delete(self.path)
            self.files.remove_empty(self._created)
            raise
        return self

    def _take(self) -> None:
        for _ in range(3):
            if self.files.create(self.path, self.text):
                return
            text = self.files.read(self.path)
            if text is None:  # released meanwhile
                continue
            held = parse_holder(text)
            if not self.stale(held):
                raise LockHeld(self.path, held)
            claim = f"{self.path}.stale.{uuid.uuid4().hex}"
            if self.files.read(self.path) != text:
                continue  # replaced meanwhile: judge the new one
            if not self.files.rename(self.path, claim):
                continue  # another process claimed it first
            if self.files.read(claim) != text:  # not the lock judged stale: another's fresh one
                # put back only where no lock is now (a third process's would be overwritten,
                # and two would hold it; found in review): else it stays as the claim, named
                back = self.files.restore(claim, self.path)
                raise LockRaced(f"{self.path} was taken by another process at the same time"
                                + ("" if back else f" (its lock, left at {claim}, could not be put back)"),
                                self.path)
            self.files.delete(claim)
            self.taken_over = held or {"unreadable": text[:200]}
        raise LockError(f"could not take {self.path}", self.path)

    def stale(self, held: dict) -> bool:
        """Whether the holder `held` is surely gone (see the module's docstring)."""
        if not held:
            return self.files.age_s(self.path) > UNREADABLE_STALE_S
        me = self.holder
        if held.get("host") != me["host"]:
            return False
        if held.get("boot") and me.get("boot") and held["boot"] != me["boot"]:
            # booted since, no process of that boot runs: if the same machine (two machines
            # of one host name, cloned VMs, containers given --hostname, differ in boot too)
            return bool(held.get("machine")) and held.get("machine") == me.get("machine")
        if not held.get("boot") or held.get("boot") != me.get("boot") or held.get("pidns") != me.get("pidns"):
            return False  # another container sharing the host name: its pids are not ours to see
        pid = held.get("pid")
        if not isinstance(pid, int) or pid <= 0:
            return False
        start = process_facts(pid).get("start")
        if start is None:  # no /proc entry: gone, or hidden (/proc mounted hidepid: another user's)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
            except PermissionError:
                return False
            return False  # a process we may signal but not read: not surely gone
        return start != held.get("start")

    def __exit__(self, *exc) -> None:
        """Released: the lock deleted if it is still this process's. One that is
        there but cannot be read back (HDFS gone meanwhile) raises OSError, for the
        caller to say so (it was left without a word: found in review)."""
        text = self.files.read(self.path)
        if text == self.text:
            self.files.delete(self.path)
        elif text == "" and self.files.file_exists(self.path):
            raise OSError("it could not be read back to be removed")
        self.files.remove_empty(self._created)

    def release(self, then: str = "delete it by hand") -> None:
        """__exit__ at a command's end: a lock the file system will not remove is
        a warning on stderr naming it (and what to do `then`), not an error that
        would replace the command's own outcome (found in review)."""
        try:
            FolderLock.__exit__(self, None, None, None)
        except OSError as exc:
            print(f"templatemine: warning: could not remove {self.path} ({exc.strerror or exc}); {then}",
                  file=sys.stderr)


def parse_holder(text: str) -> dict:
    try:
        held = json.loads(text)
    except ValueError:
        return {}
    return held if isinstance(held, dict) else {}


def process_facts(pid: int) -> dict:
    """What makes `pid` one process of this machine: the machine's id
    (/etc/machine-id, where there is one), the boot's id, this process's
    PID namespace (its pids are another namespace's too), the process's start
    time (clock ticks since boot; absent when there is no such process)."""
    facts: dict = {}
    try:
        with open("/etc/machine-id") as fh:
            facts["machine"] = fh.read().strip() or None
    except OSError:
        pass
    try:
        with open("/proc/sys/kernel/random/boot_id") as fh:
            facts["boot"] = fh.read().strip()
        facts["pidns"] = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/stat") as fh:
            stat = fh.read()
        facts["start"] = int(stat[stat.rindex(")") + 2:].split()[19])  # field 22, starttime
    except (OSError, ValueError, IndexError):
        pass
    return facts
