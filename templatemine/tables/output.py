"""Run-scoped, atomically committed outputs.

A stage writes each table into OUT/_staging/<run_id>/<table>; only when every
table is written (and its counts computed from what was written) are they moved
into OUT/<table>, replacing the previous run's, and the manifest is written
last. Readers that wait for the manifest never see a half-written run; a
re-run replaces its output instead of appending to it.

Moves go through Hadoop's FileSystem API of the session, so the same code
commits to local disk, HDFS (atomic rename) and S3A (copy, not atomic: a
reader must go by the manifest there).
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone

from py4j.protocol import Py4JJavaError
from pyspark.errors.exceptions.captured import CapturedException
from pyspark.sql import SparkSession

from templatemine import localfs


MANIFEST = "manifest.json"  # the extract stage's; later stages add a summary to it
# file systems whose rename with OVERWRITE replaces a file atomically (RunOutput.replace_text;
# local disk goes by os.replace)
ATOMIC_RENAME_SCHEMES = ("hdfs", "viewfs")
_FILE_CONTEXTS: dict = {}


def path_exists(spark: SparkSession, path: str) -> bool:
    """Whether PATH exists, on whatever file system its scheme names."""
    jvm = spark.sparkContext._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    return bool(p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).exists(p))


def qualified(spark: SparkSession, path: str) -> str:
    """PATH as the URI the session's Hadoop FileSystem makes of it, where
    Spark's writers put a table of that path: `file:/abs/path` for local disk,
    and a path without a scheme on fs.defaultFS (`hdfs://nn:8020/user/u/out` on
    YARN, relative to the user's home there). Python tasks that write files
    beside Spark's (clean's WET) are given this, not PATH: on an executor a
    path without a scheme is its own local disk."""
    p = spark.sparkContext._jvm.org.apache.hadoop.fs.Path(path)
    return str(p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).makeQualified(p).toString())


# What the stages after extract write into OUT. An extract that rewrites OUT removes
# them: they describe the pages it replaced, and a later stage would use them (clean
# took an old template_pagelets by (page_key, ordinal) without a word). The model
# a run trained (OUT/model/, versioned) stays. `redirects` is a night's folder's
# (schema.REDIRECTS): an extract into that folder has its own RECORDS, which the
# readers would pass over for the old pages' redirects (tables/targets.out_aliases).
DERIVED = ("detect.json", "templates", "template_pagelets", "page_templates", "_checkpoints",
           "pagelevel.json", "page_templateness", "clean.json", "clean_pages", "clean_links", "wet",
           "report.html", "density", "priority.json", "crawl_priority", "redirects")

# What the stages after detect write from its templates, which a detect that
# rewrites OUT removes for the same reason (found in review: `detect O --mode local`
# after a run left O's clean_pages, clean.json, WET and report describing the old
# templates). The page-level judgement stays: it names the detect it followed
# (pagelevel.json's detect_run_id), and clean and the report ignore it after another.
AFTER_DETECT = ("clean.json", "clean_pages", "clean_links", "wet", "report.html", "density", "priority.json",
                "crawl_priority")

# the command whose output holds each table a stage requires, for the error that names a missing one
MADE_BY = {"pages": "extract", "links": "extract", "pagelets": "extract", "nodes": "extract --set extract.nodes=true",
           "template_pagelets": "detect", "clean_pages": "clean"}


class MissingTables(ValueError):
    """OUT lacks a table a stage reads: the path is wrong, or an earlier stage
    has not run there. The CLI prints it as one line and exits 2."""


class UnreadableFile(ValueError):
    """A file a stage reads (a manifest, a model's LATEST or model.json) is
    there but cannot be read: a directory, no permission, not UTF-8, a file
    system that does not answer. The CLI prints it as one line and exits 2."""


def extract_config(spark: SparkSession, out: str) -> dict:
    """The settings OUT's tables were extracted with (its manifest's config);
    {} for an output without a manifest."""
    return (read_json(spark, f"{out.rstrip('/')}/{MANIFEST}") or {}).get("config", {})


def require_tables(spark: SparkSession, out: str, names: tuple[str, ...], stage: str) -> None:
    """Raise MissingTables, saying what is missing and which command writes it,
    unless every table of NAMES is in OUT (on whatever file system OUT names).
    A stage calls it before its first read, so a mistyped OUT or a skipped
    stage is one clear line instead of Spark's PATH_NOT_FOUND trace. The nodes
    table of an extract run with extract.nodes=false is there but empty, and
    counts as missing: judging or training on it would do nothing, silently."""
    out = out.rstrip("/")
    no_nodes = "nodes" in names and extract_config(spark, out).get("nodes") is False
    missing = [n for n in names if (n == "nodes" and no_nodes) or not path_exists(spark, f"{out}/{n}")]
    if not missing:
        return
    if not path_exists(spark, out):
        raise MissingTables(f"{out}: no such output; {stage} reads the tables of a templatemine output "
                            f"(`templatemine run WARC... --out {out}`, or extract first)")
    wanted = {MADE_BY.get(n, "run") for n in missing}
    needs = [c for c in dict.fromkeys([*MADE_BY.values(), "run"]) if c in wanted]  # in the order they run
    raise MissingTables(f"{out}: no {', '.join(missing)} table{'s' if len(missing) > 1 else ''} for {stage}; "
                        f"{'they come' if len(missing) > 1 else 'it comes'} from "
                        + " and ".join(f"`templatemine {c}`" for c in needs) + f" on {out} first")


def read_text(spark: SparkSession, path: str) -> str | None:
    """PATH's text (UTF-8) on whatever file system its scheme names; None if
    there is no such file."""
    return RunOutput(spark, path, "io").read_text(path)


def read_json(spark: SparkSession, path: str) -> dict | None:
    """PATH's JSON object (a manifest, a stage's summary); None if there is no
    such file; UnreadableFile naming PATH if it is not a JSON object (a write
    cut short, an edit by hand): one line, not json's traceback (found in
    review, 2026-11-28)."""
    return RunOutput(spark, path, "io").read_json(path)


def parse_json(text: str | None, path: str) -> dict | None:
    """TEXT (read from PATH) as a JSON object; None for None; UnreadableFile
    naming PATH otherwise."""
    if text is None:
        return None
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise UnreadableFile(f"cannot read {path} (not JSON: {exc})") from None
    if not isinstance(document, dict):
        raise UnreadableFile(f"cannot read {path} (not a JSON object)")
    return document


def replace_text(spark: SparkSession, path: str, text: str) -> None:
    """Write PATH's text as a whole (RunOutput.replace_text), on whatever file
    system its scheme names."""
    RunOutput(spark, path, "io").replace_text(path, text)


def java_error(exc: BaseException) -> str:
    """An error as one line: a Java exception relayed by Py4J (or by PySpark's
    captured exceptions) as the first line of its toString, class and message
    (HDFS puts the NameNode's stack trace into the message of an exception it
    relays; that, and the client's trace, are for a developer, not a crawl's
    operator); any other as its first line."""
    java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    if java is not None:
        try:
            lines = str(java.toString()).strip().splitlines()
            if lines:
                return lines[0]
        except Exception:  # the gateway is gone: fall back to what Python kept
            pass
    kept = getattr(exc, "errmsg", None)  # Py4JJavaError's own text ("An error occurred while calling o41.open.")
    try:
        text = kept if isinstance(kept, str) and kept.strip() else str(exc)
    except Exception:  # str() of a Py4JJavaError asks the gateway too
        text = ""
    lines = text.strip().splitlines()
    return lines[0] if lines else exc.__class__.__name__


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:8]


class RunOutput:
    def __init__(self, spark: SparkSession, out: str, run_id: str):
        self.spark = spark
        self.out = out.rstrip("/")
        self.run_id = run_id
        self.staging = f"{self.out}/_staging/{run_id}"
        jvm = spark.sparkContext._jvm
        self._Path = jvm.org.apache.hadoop.fs.Path
        self._fs = self._Path(self.out).getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())

    def staged(self, name: str) -> str:
        return f"{self.staging}/{name}"

    def final(self, name: str) -> str:
        return f"{self.out}/{name}"

    def restage(self, src: str, name: str) -> None:
        """Put the staged table SRC in place of the staged table NAME (a stage
        that wrote NAME again, filtered: pagelevel's pages set aside)."""
        target = self._Path(self.staged(name))
        self._fs.delete(target, True)
        if not self._fs.rename(self._Path(self.staged(src)), target):
            raise OSError(f"could not move {self.staged(src)} to {self.staged(name)}: the file system refused "
                          "the rename")

    def write_text(self, path: str, text: str) -> None:
        stream = self._fs.create(self._Path(path), True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def read_json(self, path: str) -> dict | None:
        """PATH's JSON object; None if there is no such file (parse_json)."""
        return parse_json(self.read_text(path), path)

    def read_text(self, path: str) -> str | None:
        """PATH's text exactly (UTF-8, one round trip for the bytes); None if
        there is no such file; a one-line UnreadableFile naming PATH if there is
        one that cannot be read (a directory, no permission, not UTF-8), not
        Hadoop's Java stack trace."""
        jvm = self.spark.sparkContext._jvm
        p = self._Path(path)
        try:
            if not self._fs.exists(p):
                return None
            data = jvm.java.io.ByteArrayOutputStream()
            jvm.org.apache.hadoop.io.IOUtils.copyBytes(self._fs.open(p), data, 65536, True)  # closes both
            return bytes(data.toByteArray()).decode("utf-8")
        except (Py4JJavaError, CapturedException) as exc:  # PySpark turns some Java errors into its own
            raise UnreadableFile(f"cannot read {path} ({java_error(exc)})") from None
        except UnicodeDecodeError as exc:
            raise UnreadableFile(f"cannot read {path} (not UTF-8: {exc})") from None

    def commit(self, tables: list[str], manifest_name: str, manifest: dict) -> None:
        """Move staged tables into OUT (replacing), then write the manifest.

        Not atomic across tables (a rename per table; on S3A each is a copy):
        if a move fails, OUT is left without this manifest, the tables not
        yet moved stay in the staging folder, and the error says which are
        where; running the stage again replaces them all. Neither the stage's
        manifest nor its entry in OUT/manifest.json (`stages`) is left naming
        the run before while its tables go: both are removed before the first
        move, and written again after the last."""
        fs, Path = self._fs, self._Path
        manifest_path = Path(self.final(manifest_name))
        if fs.exists(manifest_path):  # the old manifest no longer describes OUT
            fs.delete(manifest_path, False)
        if manifest_name != MANIFEST:
            self._forget_stage(manifest.get("stage", "?"))
        moved: list[str] = []
        for name in tables:
            target = Path(self.final(name))
            try:
                if fs.exists(target):
                    fs.delete(target, True)
                if not fs.rename(Path(self.staged(name)), target):
                    raise OSError("the file system refused the rename")
            except Exception as exc:
                rest = tables[len(moved):]
                raise OSError(
                    f"could not move {self.staged(name)} to {self.final(name)} ({exc}): {self.out} is left without "
                    f"its {manifest_name}, with this run's {', '.join(moved) or 'no table'} and without "
                    f"{', '.join(rest)} (still in {self.staging}); run the stage again") from exc
            moved.append(name)
        self._replace(manifest_name, manifest)
        if manifest_name != MANIFEST:
            self._record_stage(manifest)
        self.cleanup()

    def replace_text(self, path: str, text: str) -> None:
        """Write PATH as a whole, a reader seeing the old text or the new, never
        none, and a failed write leaving the old one: on local disk by
        os.replace (localfs.replace_text; Hadoop's local rename with OVERWRITE
        deletes first), on HDFS by one rename with OVERWRITE (FileContext), of
        a temporary file of this writer's own. Object stores (s3a://, gs://,
        ...) have no atomic rename: there the old file is deleted, then the
        temporary one copied in."""
        fs, Path = self._fs, self._Path
        target = fs.makeQualified(Path(path))
        scheme = target.toUri().getScheme()
        if scheme == "file":
            localfs.replace_text(target.toUri().getPath(), text)
            return
        tmp = fs.makeQualified(Path(f"{path}.{uuid.uuid4().hex[:8]}.tmp"))  # FileContext has its own working dir
        try:
            self.write_text(tmp.toString(), text)
            if scheme in ATOMIC_RENAME_SCHEMES:
                jvm = self.spark.sparkContext._jvm
                rename = getattr(jvm.org.apache.hadoop.fs, "Options$Rename")
                overwrite = self.spark.sparkContext._gateway.new_array(rename, 1)
                overwrite[0] = rename.OVERWRITE
                self._file_context(target).rename(tmp, target, overwrite)
            else:
                if fs.exists(target):
                    fs.delete(target, False)
                if not fs.rename(tmp, target):
                    raise OSError("the file system refused the rename")
        except Exception as exc:
            try:
                if fs.exists(tmp):
                    fs.delete(tmp, False)
            except Exception:  # the error worth reporting is the one above
                pass
            raise OSError(f"could not write {path} (through {tmp.toString()}): {java_error(exc)}") from exc

    def _file_context(self, target):
        """One FileContext per file system and session (each holds a client of
        its own, which is never closed)."""
        uri, sc = target.toUri(), self.spark.sparkContext
        key = (id(sc._gateway), uri.getScheme(), uri.getAuthority())  # the entry holds the gateway: no id reuse
        if key not in _FILE_CONTEXTS:
            _FILE_CONTEXTS[key] = (sc._gateway, sc._jvm.org.apache.hadoop.fs.FileContext.getFileContext(
                uri, sc._jsc.hadoopConfiguration()))
        return _FILE_CONTEXTS[key][1]

    def _replace(self, name: str, document: dict) -> None:
        """Write OUT/NAME as a whole: a temporary file, then a rename."""
        self.replace_text(self.final(name), json.dumps(document, indent=2, sort_keys=False))

    def _record_stage(self, manifest: dict) -> None:
        """OUT/manifest.json (the extract's) also lists every later stage's run
        id, row counts and timings, so one file tells what OUT holds."""
        main = self.read_json(self.final(MANIFEST))
        if main is None:
            return
        summary = {k: manifest[k] for k in ("run_id", "mode", "rows", "timings", "wet") if k in manifest}
        main.setdefault("stages", {})[manifest.get("stage", "?")] = summary
        self._replace(MANIFEST, main)

    def _forget_stage(self, stage: str) -> None:
        """Drop STAGE's entry from OUT/manifest.json's `stages` (written again
        by _record_stage once the stage's tables are all in place): a commit
        that fails or is killed half way left it naming the run before, beside
        that run's tables partly replaced and no `<stage>.json`."""
        main = self.read_json(self.final(MANIFEST))
        if main is None:
            return
        if stage not in (main.get("stages") or {}):
            return
        del main["stages"][stage]
        if not main["stages"]:  # as the extract wrote it
            del main["stages"]
        self._replace(MANIFEST, main)

    def remove(self, name: str) -> None:
        """Delete OUT/NAME, a table this run does not write (so no stale one stays)."""
        self.remove_path(self.final(name))

    def remove_stale(self, names) -> list[str]:
        """Delete each OUT/NAME of NAMES that exists: what later stages wrote from
        the tables this run replaces. Called before the commit, so a crash between
        leaves the old tables without them, never them beside the new tables.
        Returns the names removed, for the stage to say so. A stage manifest
        removed (clean.json) takes its entry in OUT/manifest.json's `stages`
        with it (a detect left `stages.clean` naming a clean whose tables it had
        removed; found in review)."""
        stale = [name for name in names if path_exists(self.spark, self.final(name))]
        for name in stale:
            if name.endswith(".json") and name != MANIFEST:
                self._forget_stage(name[:-len(".json")])
            self.remove(name)
        return stale

    def remove_path(self, path: str | None) -> None:
        """Delete a file or folder (recursively) if it exists."""
        if path:
            p = self._Path(path)
            fs = p.getFileSystem(self.spark.sparkContext._jsc.hadoopConfiguration())
            if fs.exists(p):
                fs.delete(p, True)

    def cleanup(self) -> None:
        fs, Path = self._fs, self._Path
        if fs.exists(Path(self.staging)):
            fs.delete(Path(self.staging), True)
        parent = Path(f"{self.out}/_staging")
        if fs.exists(parent) and len(fs.listStatus(parent)) == 0:
            try:  # not recursive: another run may have staged into it since the listing
                fs.delete(parent, False)
            except Exception:  # py4j's error for HDFS's "directory is not empty": it stays, as it should
                pass
