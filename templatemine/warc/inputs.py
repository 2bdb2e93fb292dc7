"""Turn command-line INPUTs into the list of WARC/ARC files to read.

An INPUT is a WARC/ARC file, a directory (its `*.warc`, `*.warc.gz`, `*.arc`,
`*.arc.gz` files, recursively), a glob (local paths), or a *manifest*: a text
file with one path per line (blank lines and `#` comments ignored), as
cc-pyspark takes. Paths may be local, `file://`, `hdfs://`, `s3a://` (also
`s3://`, `s3n://`). Whether a file is an archive or a manifest is decided by
its content, not its name: a WARC given where a manifest was expected (the top
complaint of cc-pyspark users) just works. (A remote file named like an archive
is taken at its name, sparing a read per file of a long manifest.)

Everything is checked before Spark starts: a missing or unreadable path is an
`InputError` naming it.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from typing import BinaryIO
from urllib.parse import urlsplit

ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")
REMOTE_SCHEMES = ("hdfs", "s3a", "s3", "s3n", "gs", "abfs", "abfss")


class InputError(ValueError):
    """A bad INPUT: missing, unreadable, or not an archive or manifest."""


@dataclass(frozen=True)
class InputFile:
    path: str  # as given (local path or URI)
    size: int  # bytes, -1 when unknown


def is_remote(path: str) -> bool:
    return urlsplit(path).scheme.lower() in REMOTE_SCHEMES


def local_path(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def sniff_archive(head: bytes) -> bool:
    """True for the first bytes of a WARC or ARC file (gzipped or not)."""
    return head.startswith((b"\x1f\x8b", b"WARC/", b"filedesc://")) or head[:4] in (b"http", b"dns:")


def open_input(path: str) -> BinaryIO:
    """A seekable binary stream of a local or remote file.

    Remote files go through pyarrow's file systems (S3 natively, HDFS through
    libhdfs from the executors' Hadoop install), opened for random access, so a
    task streams its file and can seek to resynchronise after damage."""
    if not is_remote(path):
        return open(local_path(path), "rb")
    filesystem, inner = _remote(path)
    return filesystem.open_input_file(inner)


def _remote(path: str):
    """(pyarrow file system, path inside it) of a remote path (s3a:// is S3)."""
    from pyarrow import fs

    scheme = urlsplit(path).scheme.lower()
    uri = "s3" + path[len(scheme):] if scheme in ("s3a", "s3n") else path
    return fs.FileSystem.from_uri(uri)


def create_output(path: str) -> BinaryIO:
    """A binary stream writing a new local or remote file (for files that Spark's
    writers do not make, such as WET). Local parent folders are created."""
    if not is_remote(path):
        local = local_path(path)
        os.makedirs(os.path.dirname(local) or ".", exist_ok=True)
        return open(local, "wb")
    filesystem, inner = _remote(path)
    return filesystem.open_output_stream(inner)


def _remote_listing(path: str, manifest_depth: int) -> list[InputFile]:
    from pyarrow import fs

    try:
        filesystem, inner = _remote(path)
        info = filesystem.get_file_info(inner)
    except Exception as exc:
        raise InputError(f"cannot reach {path}: {exc}") from exc
    if info.type == fs.FileType.NotFound:
        raise InputError(f"input not found: {path}")
    if info.type == fs.FileType.File:
        if path.endswith(ARCHIVE_SUFFIXES):
            return [InputFile(path, info.size)]
        return _remote_file(path, filesystem, inner, info.size, manifest_depth)
    prefix = path.rstrip("/")
    found = filesystem.get_file_info(fs.FileSelector(inner, recursive=True))
    files = sorted(
        (InputFile(f"{prefix}/{f.path[len(inner.rstrip('/')) + 1:]}", f.size) for f in found
         if f.type == fs.FileType.File and f.path.endswith(ARCHIVE_SUFFIXES)),
        key=lambda f: f.path,
    )
    if not files:  # as for a local folder: an empty run would replace OUT's tables with empty ones
        raise InputError(f"no .warc/.warc.gz/.arc/.arc.gz files under {path}")
    return files


def _remote_file(path: str, filesystem, inner: str, size: int, manifest_depth: int) -> list[InputFile]:
    """A remote file not named like an archive, judged by its content as a local one
    is: a manifest on S3/HDFS taken for a WARC would be read as one malformed record
    (and a nightly run would record it as ingested and never read its entries)."""
    try:
        with filesystem.open_input_file(inner) as fh:  # not open_input_stream: it un-gzips by name
            head = fh.read(16)
            manifest = not sniff_archive(head) and manifest_depth == 0
            data = head + fh.read() if manifest else b""
    except Exception as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    if sniff_archive(head):
        return [InputFile(path, size)]
    if manifest_depth > 0:
        raise InputError(f"{path} (listed in a manifest) is not a WARC/ARC file")
    try:
        lines = data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is neither a WARC/ARC file nor a text manifest") from exc
    return _manifest_entries(path, lines, path.rstrip("/").rsplit("/", 1)[0])


def _local(path: str, manifest_depth: int) -> list[InputFile]:
    plain = local_path(path)
    if any(ch in plain for ch in "*?[") and not os.path.exists(plain):
        matches = sorted(glob.glob(plain, recursive=True))
        if not matches:
            raise InputError(f"no file matches {path}")
        return [f for m in matches for f in _local(m, manifest_depth)]
    if not os.path.exists(plain):
        raise InputError(f"input not found: {path}")
    if os.path.isdir(plain):
        files = []
        for dirpath, _, names in os.walk(plain):
            files.extend(os.path.join(dirpath, n) for n in names if n.endswith(ARCHIVE_SUFFIXES))
        if not files:
            raise InputError(f"no .warc/.warc.gz/.arc/.arc.gz files under {path}")
        return [InputFile(f, os.path.getsize(f)) for f in sorted(files)]
    try:
        with open(plain, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    # named as an archive, it is one, empty or damaged as it may be (the reader says
    # what it holds): a crawler's cut-short .warc.gz is no manifest
    if sniff_archive(head) or plain.endswith(ARCHIVE_SUFFIXES):
        return [InputFile(path, os.path.getsize(plain))]
    if manifest_depth > 0:
        raise InputError(f"{path} (listed in a manifest) is not a WARC/ARC file")
    return read_manifest(plain)


def read_manifest(path: str) -> list[InputFile]:
    """The files listed in a manifest; relative local paths are relative to it."""
    try:
        with open(path, encoding="utf-8-sig") as fh:  # -sig: a byte-order mark is no part of line 1
            lines = fh.read().splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is neither a WARC/ARC file nor a text manifest") from exc
    return _manifest_entries(path, lines, os.path.dirname(os.path.abspath(path)))


def _manifest_entries(path: str, lines: list[str], here: str) -> list[InputFile]:
    """The files listed by a manifest's lines, local or remote alike; relative paths
    are relative to `here`, the manifest's folder (a URI for a remote manifest)."""
    files: list[InputFile] = []
    for number, line in enumerate(lines, 1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if not is_remote(entry) and not os.path.isabs(local_path(entry)) and "://" not in entry:
            entry = f"{here}/{entry}" if is_remote(here) else os.path.join(here, entry)
        try:
            files.extend(_remote_listing(entry, manifest_depth=1) if is_remote(entry)
                         else _local(entry, manifest_depth=1))
        except InputError as exc:
            raise InputError(f"{path}, line {number}: {exc}") from exc
    if not files:
        raise InputError(f"manifest {path} lists no files")
    return files


def expand_inputs(inputs: list[str]) -> list[InputFile]:
    """All archive files named by `inputs`, each once, in the order given."""
    if not inputs:
        raise InputError("no INPUT given")
    seen: set[str] = set()
    out: list[InputFile] = []
    for item in inputs:
        for f in (_remote_listing(item, manifest_depth=0) if is_remote(item) else _local(item, manifest_depth=0)):
            key = _same_file(f.path)
            if key not in seen:
                seen.add(key)
                out.append(InputFile(f.path if is_remote(f.path) else os.path.abspath(local_path(f.path)), f.size))
    return out


def _same_file(path: str) -> str:
    """One key per file, whatever it was called: a symlink and its target, or
    s3://, s3a:// and s3n:// for one object (read twice, its records would be
    counted twice)."""
    if not is_remote(path):
        return os.path.realpath(local_path(path))
    scheme, rest = path.split("://", 1)
    return ("s3" if scheme.lower() in ("s3", "s3a", "s3n") else scheme.lower()) + "://" + rest
