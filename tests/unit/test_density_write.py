"""density_report.write_folder_atomically on a local stand-in for Hadoop's
FileSystem (the same calls, POSIX semantics), so that its failures can be
staged: what it leaves behind when a write or a rename fails, and what it
refuses to replace. tests/spark/test_density_report.py runs it on Hadoop's."""

from __future__ import annotations

import os
import shutil

import pytest

from templatemine.report import density_report as D

FILES = {"density.html": b"<p>new", "density.png": b"png", "density.json": b"{}"}


class _Status:
    def __init__(self, path: str):
        self.path = path

    def isDirectory(self) -> bool:  # noqa: N802 - Hadoop's names
        return os.path.isdir(self.path)

    def isFile(self) -> bool:  # noqa: N802
        return os.path.isfile(self.path)

    def getPath(self):  # noqa: N802
        return self

    def getName(self) -> str:  # noqa: N802
        return os.path.basename(self.path)


class _LocalFS:
    """The FileSystem calls write_folder_atomically and check_dest make."""

    def __init__(self, fail_write: str | None = None, fail_rename_to: str | None = None,
                 raise_on_rename_to: tuple[str, BaseException] | None = None):
        self.fail_write, self.fail_rename_to = fail_write, fail_rename_to
        self.raise_on_rename_to = raise_on_rename_to  # (dst, error): the rename of DEST.tmp-* there raises

    def create(self, path, overwrite):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fh = open(path, "wb")
        fail = self.fail_write is not None and path.endswith(self.fail_write)

        class Stream:
            def write(self, data):
                if fail:
                    raise OSError("disk full")
                fh.write(bytes(data))

            def close(self):
                fh.close()

        return Stream()

    def exists(self, path) -> bool:
        return os.path.exists(path)

    def getFileStatus(self, path):  # noqa: N802
        return _Status(path)

    def listStatus(self, path):  # noqa: N802
        return [_Status(os.path.join(path, n)) for n in os.listdir(path)]

    def rename(self, src, dst) -> bool:
        if dst == self.fail_rename_to and ".tmp-" in src:
            return False
        if self.raise_on_rename_to and dst == self.raise_on_rename_to[0] and ".tmp-" in src:
            raise self.raise_on_rename_to[1]
        try:
            os.rename(src, dst)
            return True
        except OSError:
            return False

    def delete(self, path, recursive) -> bool:
        shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        return True


def _with_fs(monkeypatch, fs: _LocalFS) -> None:
    monkeypatch.setattr(D, "_fs", lambda spark, path: (fs, str))


def _old_report(tmp_path) -> str:
    dest = str(tmp_path / "dens")
    os.makedirs(dest)
    for name in D.FILES:
        (tmp_path / "dens" / name).write_bytes(b"old")
    return dest


def _contents(folder: str) -> dict[str, bytes]:
    return {n: open(os.path.join(folder, n), "rb").read() for n in sorted(os.listdir(folder))}


def test_an_earlier_report_is_replaced_and_nothing_is_left_beside_it(monkeypatch, tmp_path):
    _with_fs(monkeypatch, _LocalFS())
    dest = _old_report(tmp_path)
    D.write_folder_atomically(None, dest, FILES)
    assert _contents(dest) == FILES and os.listdir(tmp_path) == ["dens"]


def test_a_failed_write_removes_the_temporary_folder(monkeypatch, tmp_path):
    """It stayed beside DEST as DEST.tmp-* (found in review)."""
    _with_fs(monkeypatch, _LocalFS(fail_write="density.png"))
    dest = _old_report(tmp_path)
    with pytest.raises(OSError, match="disk full"):
        D.write_folder_atomically(None, dest, FILES)
    assert os.listdir(tmp_path) == ["dens"] and set(_contents(dest).values()) == {b"old"}


def test_a_failed_final_rename_puts_the_old_report_back_and_removes_the_new(monkeypatch, tmp_path):
    dest = _old_report(tmp_path)
    _with_fs(monkeypatch, _LocalFS(fail_rename_to=dest))
    with pytest.raises(OSError, match="could not move"):
        D.write_folder_atomically(None, dest, FILES)
    assert os.listdir(tmp_path) == ["dens"] and set(_contents(dest).values()) == {b"old"}


class _Py4JError(Exception):
    """What a failed Hadoop call raises through Py4J."""


@pytest.mark.parametrize("error", [_Py4JError("rename: connection reset"), KeyboardInterrupt()],
                         ids=["py4j", "interrupt"])
def test_a_final_rename_that_raises_puts_the_old_report_back(monkeypatch, tmp_path, error):
    """Only a rename that returned False put the old DEST back; one that raised
    (a Py4J error, ^C between the two renames) left DEST missing and the old
    report under DEST.old-* (found in review)."""
    dest = _old_report(tmp_path)
    _with_fs(monkeypatch, _LocalFS(raise_on_rename_to=(dest, error)))
    with pytest.raises(type(error)):
        D.write_folder_atomically(None, dest, FILES)
    assert os.listdir(tmp_path) == ["dens"] and set(_contents(dest).values()) == {b"old"}


def test_a_folder_holding_anything_else_is_not_replaced(monkeypatch, tmp_path):
    """--dest OUT deleted the run: the folder named was set aside and deleted
    whatever it held (found in review)."""
    _with_fs(monkeypatch, _LocalFS())
    run = tmp_path / "run"
    for table in ("pages", "pagelets", "templates"):
        (run / table).mkdir(parents=True)
        (run / table / "part-0.parquet").write_bytes(b"x")
    with pytest.raises(ValueError, match="not a density report"):  # DestError: the command exits 2
        D.write_folder_atomically(None, str(run), FILES)
    assert sorted(os.listdir(run)) == ["pagelets", "pages", "templates"] and os.listdir(tmp_path) == ["run"]
    # a folder named like a report's file is not a report's file either
    dest = _old_report(tmp_path)
    os.remove(os.path.join(dest, "density.json"))
    os.makedirs(os.path.join(dest, "density.json", "inner"))
    with pytest.raises(ValueError, match="density.json"):
        D.write_folder_atomically(None, dest, FILES)
    assert os.path.isdir(os.path.join(dest, "density.json", "inner"))
    # a file is not replaced; an empty folder, or a report missing a file, is
    (tmp_path / "note.txt").write_text("mine")
    with pytest.raises(ValueError, match="is a file"):
        D.write_folder_atomically(None, str(tmp_path / "note.txt"), FILES)
    assert (tmp_path / "note.txt").read_text() == "mine"
    (tmp_path / "empty").mkdir()
    D.write_folder_atomically(None, str(tmp_path / "empty"), FILES)
    assert _contents(str(tmp_path / "empty")) == FILES
    shutil.rmtree(dest)
    dest = _old_report(tmp_path)
    os.remove(os.path.join(dest, "density.png"))
    D.write_folder_atomically(None, dest, FILES)
    assert _contents(dest) == FILES
    assert sorted(os.listdir(tmp_path)) == ["dens", "empty", "note.txt", "run"]
