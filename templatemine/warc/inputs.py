"""Turn command-line INPUTs into the list of WARC/ARC files to read.

An INPUT is a WARC/ARC file, a directory (its `*.warc`, `*.warc.gz`, `*.arc`,
`*.arc.gz` files, recursively), a glob (local paths), or a *manifest*: a text
file with one path per line (blank lines and `#` comments ignored), as
cc-pyspark takes, gzipped or not (Common Crawl's `warc.paths.gz`). Paths may
be local, `file://`, `hdfs://`, `s3a://` (also `s3://`, `s3n://`). Whether a
file is an archive or a manifest is decided by its content, not its name: a
WARC given where a manifest was expected (the top complaint of cc-pyspark
users) just works. (A remote file named like an archive is taken at its name,
sparing a read per file of a long manifest.)

Everything is checked before Spark starts: a missing or unreadable path is an
`InputError` naming it.
"""

from __future__ import annotations

import glob
import gzip
import os
import re
import zlib
from dataclasses import dataclass
from typing import BinaryIO
from urllib.parse import urlsplit

ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")
REMOTE_SCHEMES = ("hdfs", "s3a", "s3", "s3n", "gs", "abfs", "abfss")


def archive_name(path: str) -> bool:
    """True for a file named as an archive, in any case (`X.WARC.GZ` was read when
    named but skipped in a folder)."""
    return path.lower().endswith(ARCHIVE_SUFFIXES)


class InputError(ValueError):
    """A bad INPUT: missing, unreadable, or not an archive or manifest."""


class UnwritableOutput(OSError):
    """An output Python's tasks cannot write (check_output): the CLI prints it
    as one line and exits 2, not as a traceback."""


class NotFound(InputError):
    """An INPUT, or a manifest's entry, that does not exist (`path` as listed)."""

    def __init__(self, path: str):
        super().__init__(f"input not found: {path}")
        self.path = path


@dataclass(frozen=True)
class InputFile:
    path: str  # as given (local path or URI)
    size: int  # bytes, -1 when unknown


def is_remote(path: str) -> bool:
    return urlsplit(path).scheme.lower() in REMOTE_SCHEMES


def local_path(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


HEAD_BYTES = 4096  # what `sniff_archive` is given of a file


def sniff_archive(head: bytes) -> bool:
    """True for the first bytes (HEAD_BYTES) of a WARC or ARC file, gzipped or not.

    A gzipped file is judged by what it inflates to: text lines that start no
    record are a gzipped manifest (Common Crawl ships `warc.paths.gz`), which
    was taken for an archive and read as one malformed record; a damaged or
    binary one is an archive, for the reader to say what it holds. A first line
    that starts like a URL is an ARC v1 header only with its five fields or more
    (URL, IP, date, type, length); a manifest of `https://` paths was taken for
    an ARC file too."""
    if head.startswith(b"\x1f\x8b"):
        try:
            inner = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, HEAD_BYTES)
        except zlib.error:
            return True
        if not inner or _starts_record(inner):
            return True
        try:
            inner.decode("utf-8")
        except UnicodeDecodeError as exc:
            return exc.start < len(inner) - 3  # not a character cut by the end of what was inflated
        return False
    return _starts_record(head)


_WARC_VERSION = re.compile(rb"WARC/[0-9.]*(?:\r?\n|\Z)")  # \Z: a head cut inside the line


def _starts_record(data: bytes) -> bool:
    """A WARC version line or an ARC file's first record. Only a version line: a
    manifest whose first entry is `WARC/CC-2024-a.warc.gz` (paths under a folder
    named WARC) was taken for an archive, read as malformed records and never
    read its entries."""
    if data.startswith(b"filedesc://") or _WARC_VERSION.match(data):
        return True
    if data[:4] not in (b"http", b"dns:"):
        return False
    line, newline, _ = data.partition(b"\n")
    return not newline or len(line.split()) >= 5  # a line longer than the head: an ARC record's, as before


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
    """(pyarrow file system, path inside it) of a remote path (s3a:// is S3).

    On S3 only the scheme and bucket are parsed as a URI; the rest is the object
    key as it is. A key is any string, and parsed as a URI a key with a space
    failed every task (ArrowInvalid), one with `%41` or `#` opened another
    object or none (found in review: a folder's listing gave such keys). S3's
    options come from the environment (AWS_REGION, AWS_ENDPOINT_URL), not from a
    `?query`. Other schemes are URIs as pyarrow takes them (`hdfs://nn:8020/x?user=u`)."""
    from pyarrow import fs

    scheme, _, rest = path.partition("://")
    if scheme.lower() not in ("s3", "s3a", "s3n"):
        try:
            return fs.FileSystem.from_uri(path)
        except OSError as exc:  # pyarrow's own words ("Unable to load libjvm") name no remedy
            if scheme.lower() not in ("hdfs", "viewfs"):
                raise
            raise OSError(f"{path}: pyarrow's HDFS client did not start ({exc}); templatemine reads and writes "
                          f"{scheme.lower()}:// files from Python through libhdfs, which needs JAVA_HOME, libhdfs.so "
                          "(HADOOP_HOME/lib/native or ARROW_LIBHDFS_DIR) and CLASSPATH=$(hadoop classpath --glob) "
                          "where it runs (the driver for a manifest or a listing, every executor for the files; "
                          "README, \"On a cluster\")") from exc
    bucket, _, key = rest.partition("/")
    filesystem, root = fs.FileSystem.from_uri(f"s3://{bucket}/")
    return filesystem, f"{root.rstrip('/')}/{key}" if key else root


# the schemes create_output writes through pyarrow's file systems (viewfs:// and hdfs:// by libhdfs,
# which resolves a viewfs mount table as Hadoop does; gs://, gcs://, abfs:// natively)
OUTPUT_SCHEMES = (*REMOTE_SCHEMES, "viewfs", "gcs")


def create_output(path: str) -> BinaryIO:
    """A binary stream writing a new local or remote file (for files that Spark's
    writers do not make, such as WET). Local parent folders are created.

    PATH is best a URI as the driver's Hadoop qualifies it (tables/output.py
    `qualified`): a task takes a path without a scheme for its local disk,
    where Spark writes to fs.defaultFS (HDFS on YARN). `file:/x`, Hadoop's form
    of a local path, is local (it was written to `./file:/x`); any other scheme
    goes to pyarrow, or is an error naming PATH (`check_output`), never a
    local file."""
    local = local_file(path)
    if local is not None:
        os.makedirs(os.path.dirname(local) or ".", exist_ok=True)
        return open(local, "wb")
    check_output(path)
    filesystem, inner = _remote(path)
    return filesystem.open_output_stream(inner)


def check_output(path: str) -> None:
    """Raise OSError naming PATH unless create_output can write there: a local
    path, or a scheme of OUTPUT_SCHEMES. The driver asks before a job's tasks
    write (clean's WET files), so a file system that Spark writes and pyarrow
    does not (wasb://, oss://, alluxio://...) fails the stage before any of its
    tables is moved into OUT, instead of each task writing somewhere else."""
    scheme = urlsplit(path).scheme.lower()
    if local_file(path) is None and scheme not in OUTPUT_SCHEMES:
        raise UnwritableOutput(f"{path}: cannot write files from Python tasks to {scheme}:// (local paths, file:, "
                      f"{', '.join(s + '://' for s in OUTPUT_SCHEMES)}); choose another OUT, or set "
                      "clean.wet=false")


def local_file(path: str) -> str | None:
    """The local file PATH names: PATH itself without a scheme, the path of
    `file:///x`, `file://host/x` or `file:/x` (Hadoop's qualified local path,
    one slash: `local_path` leaves it as it is); None for another scheme."""
    scheme = urlsplit(path).scheme.lower()
    if not scheme:
        return path
    if scheme != "file":
        return None
    rest = path[len("file:"):]
    if rest.startswith("//"):  # an authority (empty, or a host): the path after it
        rest = "/" + rest[2:].partition("/")[2]
    return rest


def _remote_listing(path: str, manifest_depth: int, missing: list[str] | None = None) -> list[InputFile]:
    from pyarrow import fs

    try:
        filesystem, inner = _remote(path)
        info = filesystem.get_file_info(inner)
    except Exception as exc:
        raise InputError(f"cannot reach {path}: {exc}") from exc
    if info.type == fs.FileType.NotFound:
        raise NotFound(path)
    if info.type == fs.FileType.File:
        if archive_name(path):
            return [InputFile(path, info.size)]
        return _remote_file(path, filesystem, inner, info.size, manifest_depth, missing)
    prefix = path.rstrip("/")
    found = filesystem.get_file_info(fs.FileSelector(inner, recursive=True))
    files = sorted(
        (InputFile(f"{prefix}/{f.path[len(inner.rstrip('/')) + 1:]}", f.size) for f in found
         if f.type == fs.FileType.File and archive_name(f.path)),
        key=lambda f: f.path,
    )
    if not files:  # as for a local folder: an empty run would replace OUT's tables with empty ones
        raise InputError(f"no .warc/.warc.gz/.arc/.arc.gz files under {path}")
    return files


def _remote_file(path: str, filesystem, inner: str, size: int, manifest_depth: int,
                 missing: list[str] | None = None) -> list[InputFile]:
    """A remote file not named like an archive, judged by its content as a local one
    is: a manifest on S3/HDFS taken for a WARC would be read as one malformed record
    (and a nightly run would record it as ingested and never read its entries)."""
    try:
        with filesystem.open_input_file(inner) as fh:  # not open_input_stream: it un-gzips by name
            head = fh.read(HEAD_BYTES)
            archive = sniff_archive(head)  # once: a gzipped head is inflated to judge it
            data = head + fh.read() if not archive and manifest_depth == 0 else b""
    except Exception as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    if archive:
        return [InputFile(path, size)]
    if manifest_depth > 0:
        raise InputError(f"{path} (listed in a manifest) is not a WARC/ARC file")
    lines = _manifest_lines(path, data)
    return _manifest_entries(path, lines, path.rstrip("/").rsplit("/", 1)[0], missing)


def _local(path: str, manifest_depth: int, missing: list[str] | None = None) -> list[InputFile]:
    plain = local_path(path)
    if "://" in plain:  # not a scheme of REMOTE_SCHEMES nor file://
        raise InputError(f"{path}: {urlsplit(plain).scheme}:// is not read (local paths, file://, "
                         f"{', '.join(s + '://' for s in REMOTE_SCHEMES)})")
    if any(ch in plain for ch in "*?[") and not os.path.exists(plain):
        matches = sorted(glob.glob(plain, recursive=True))
        if not matches:
            raise InputError(f"no file matches {path}")
        return [f for m in matches for f in _local(m, manifest_depth, missing)]
    if not os.path.exists(plain):
        raise NotFound(path)
    if os.path.isdir(plain):
        files = []
        walked: set[str] = set()
        # symlinked folders are followed, as a glob follows them (a crawl's monthly
        # folders linked in from other disks were skipped without a word); each real
        # folder once, so a link back up ends the walk
        for dirpath, dirnames, names in os.walk(plain, followlinks=True):
            real = os.path.realpath(dirpath)
            if real in walked:
                dirnames[:] = []
                continue
            walked.add(real)
            files.extend(os.path.join(dirpath, n) for n in names if archive_name(n))
        if not files:
            raise InputError(f"no .warc/.warc.gz/.arc/.arc.gz files under {path}")
        return [InputFile(f, os.path.getsize(f)) for f in sorted(files)]
    try:
        with open(plain, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    # named as an archive, it is one, empty or damaged as it may be (the reader says
    # what it holds): a crawler's cut-short .warc.gz is no manifest
    if sniff_archive(head) or archive_name(plain):
        return [InputFile(path, os.path.getsize(plain))]
    if manifest_depth > 0:
        raise InputError(f"{path} (listed in a manifest) is not a WARC/ARC file")
    return read_manifest(plain, missing)


def read_manifest(path: str, missing: list[str] | None = None) -> list[InputFile]:
    """The files listed in a manifest, gzipped or not; relative local paths are
    relative to it."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    return _manifest_entries(path, _manifest_lines(path, data), os.path.dirname(os.path.abspath(path)), missing)


def _manifest_lines(path: str, data: bytes) -> list[str]:
    """A manifest's lines (un-gzipped first when it is gzipped, as `warc.paths.gz`)."""
    try:
        if data.startswith(b"\x1f\x8b"):
            data = gzip.decompress(data)
        return data.decode("utf-8-sig").splitlines()  # -sig: a byte-order mark is no part of line 1
    except (UnicodeDecodeError, OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{path} is neither a WARC/ARC file nor a text manifest ({exc})") from exc


def _manifest_entries(path: str, lines: list[str], here: str, missing: list[str] | None = None) -> list[InputFile]:
    """The files listed by a manifest's lines, local or remote alike; relative paths
    are relative to `here`, the manifest's folder (a URI for a remote manifest).
    With `missing` (a list), an entry that does not exist is added to it instead
    of failing."""
    entries: list[tuple[int, str]] = []
    for number, line in enumerate(lines, 1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if not is_remote(entry) and not os.path.isabs(local_path(entry)) and "://" not in entry:
            entry = f"{here}/{entry}" if is_remote(here) else os.path.join(here, entry)
        entries.append((number, entry))
    listed = _listed_folders([entry for _, entry in entries])
    files: list[InputFile] = []
    gone = 0
    for number, entry in entries:
        try:
            if entry in listed:
                if listed[entry] is None:
                    raise NotFound(entry)
                files.append(InputFile(entry, listed[entry]))
                continue
            files.extend(_remote_listing(entry, manifest_depth=1) if is_remote(entry)
                         else _local(entry, manifest_depth=1))
        except NotFound as exc:
            if missing is None:
                raise InputError(f"{path}, line {number}: {exc}") from exc
            missing.append(_as_listed(exc.path))
            gone += 1
        except InputError as exc:
            raise InputError(f"{path}, line {number}: {exc}") from exc
    if not files and not gone:
        raise InputError(f"manifest {path} lists no files")
    return files


# A remote folder that a manifest names this many archives in is listed once
# instead of one request per entry (a listing page holds 1,000 keys): Common
# Crawl's warc.paths.gz names about 90,000 WARCs, about 900 per segment folder
LIST_MIN_ENTRIES = 100


def _listed_folders(entries: list[str]) -> dict[str, int | None]:
    """Size (None: not there) of each remote entry named as an archive, in folders
    that hold at least LIST_MIN_ENTRIES of them, from one listing per folder.
    Entries elsewhere, and those of a folder that cannot be listed, are looked up
    one by one (which names what fails)."""
    from collections import defaultdict

    by_folder: dict[str, list[str]] = defaultdict(list)
    for entry in entries:
        if is_remote(entry) and archive_name(entry):
            by_folder[entry.rsplit("/", 1)[0]].append(entry)
    sizes: dict[str, int | None] = {}
    listed = {folder: named for folder, named in by_folder.items() if len(named) >= LIST_MIN_ENTRIES}
    if not listed:
        return sizes
    from pyarrow import fs

    for folder, named in listed.items():
        try:
            filesystem, inner = _remote(folder)
            found = filesystem.get_file_info(fs.FileSelector(inner, allow_not_found=True))
        except Exception:
            continue
        here = {f.base_name: (f.size if f.type == fs.FileType.File else -2) for f in found}
        for entry in named:
            size = here.get(entry.rsplit("/", 1)[1])
            if size != -2:  # a folder named like an archive: listed as a folder, one by one
                sizes[entry] = size
    return sizes


def _as_listed(path: str) -> str:
    """A file's path as `expand_inputs` gives it: a URI, or an absolute local path."""
    return path if is_remote(path) else os.path.abspath(local_path(path))


def expand_inputs(inputs: list[str], missing: list[str] | None = None) -> list[InputFile]:
    """All archive files named by `inputs`, each once, in the order given.

    `missing`, a list, makes a manifest's entries that do not exist (any more)
    no error: their paths (as they would be given) are added to it. A nightly
    run uses it, since its manifest keeps the files earlier nights ingested,
    which may since have been deleted (it was "input not found" every night
    after); an INPUT itself that does not exist is still an error."""
    if not inputs:
        raise InputError("no INPUT given")
    seen: set[str] = set()
    out: list[InputFile] = []
    for item in inputs:
        for f in (_remote_listing(item, 0, missing) if is_remote(item) else _local(item, 0, missing)):
            key = same_file(f.path)
            if key not in seen:
                seen.add(key)
                out.append(InputFile(_as_listed(f.path), f.size))
    if missing:
        missing[:] = list(dict.fromkeys(missing))
    return out


def same_file(path: str) -> str:
    """One key per file, whatever it was called: a symlink and its target, or
    s3://, s3a:// and s3n:// for one object (read twice, its records would be
    counted twice)."""
    if not is_remote(path):
        return os.path.realpath(local_path(path))
    scheme, rest = path.split("://", 1)
    return ("s3" if scheme.lower() in ("s3", "s3a", "s3n") else scheme.lower()) + "://" + rest
