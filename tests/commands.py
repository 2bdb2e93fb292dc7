"""What the tests of the command line and of FOLDER/_lock share: a `_session`
that fails the test if Spark would start, and the pids of a live process and of
one that has ended (a lock's holder alive, or killed). Import the fixtures into a
test module to use them (`no_spark` is then autouse there)."""

import socket
import subprocess

import pytest

from templatemine.tables.lock import process_facts


class SparkStarted(Exception):
    pass


@pytest.fixture(autouse=True)
def no_spark(monkeypatch):
    from templatemine import cli

    def session(*args, **kwargs):
        raise SparkStarted()

    monkeypatch.setattr(cli, "_session", session)
    monkeypatch.setattr(cli, "_session_fs_local", lambda spark: True)  # (a stand-in session has no JVM to ask)


@pytest.fixture
def alive():
    """The pid of a live process of this machine (not this one)."""
    sleeper = subprocess.Popen(["sleep", "60"])
    yield sleeper.pid
    sleeper.kill()
    sleeper.wait()


@pytest.fixture
def ended():
    """The pid of a process of this machine that has ended (a killed command's)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def holder(pid: int, **more) -> dict:
    """A lock's record of `pid` of this machine (its start time absent once it has ended)."""
    return {"host": socket.gethostname(), "pid": pid, "since": "2026-11-29T08:00:00+00:00", **process_facts(pid),
            **more}
