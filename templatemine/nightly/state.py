"""The nightly state: Delta Lake tables under STATE/tables/, one commit point.

    STATE/tables/records             every input record of every night (accounting)
    STATE/tables/pages               newest capture per URL; removed pages kept, with removed_at
    STATE/tables/links, pagelets     of each page's newest capture
    STATE/tables/nodes               the same, for the page-level model (nights not in pagelevel.mode=site)
    STATE/tables/templates, template_pagelets
    STATE/tables/nights              one row per committed night: its WARC files, counts,
                                     and the version of every table above after it
    STATE/nights/<night>/            the night's run output (clean_pages, wet/, report.html ...)

Each table is changed only by MERGEs that are idempotent (applying the same
night twice leaves the same rows), a night is committed by one row added to
`nights` (a MERGE on its sequence number), the last thing it does, and one
night at a time holds STATE/_lock (StateLock). So:
- a file listed in `nights` is never ingested again (running a night twice changes nothing);
- a night killed midway left merges that its re-run applies again to the same
  result, then commits (the re-run equals an uninterrupted run);
- readers go through `read_table`, which reads each table at the version the
  last committed night recorded (Delta time travel), so they never see a
  half-written night.
"""

from __future__ import annotations

import json
import os
import socket
import time
from datetime import datetime, timezone

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from templatemine import schema as S

RECORDS, PAGES, LINKS, PAGELETS, NODES = S.RECORDS, S.PAGES, S.LINKS, S.PAGELETS, S.NODES
TEMPLATES, TEMPLATE_PAGELETS = "templates", "template_pagelets"
NIGHTS = "nights"
# NODES only once a night has judged pages with the page-level model (pagelevel.mode other than site)
STATE_TABLES = (RECORDS, PAGES, LINKS, PAGELETS, NODES, TEMPLATES, TEMPLATE_PAGELETS)

# the state's PAGES: the run's columns, plus when the URL answered 404/410 and which night last changed it
STATE_PAGES_SCHEMA = T.StructType([*S.PAGES_SCHEMA.fields,
                                   T.StructField("removed_at", T.TimestampType(), True),
                                   T.StructField("night", T.StringType(), True)])

NIGHTS_SCHEMA = T.StructType([
    T.StructField("seq", T.IntegerType(), False),
    T.StructField("night", T.StringType(), False),
    T.StructField("started_at", T.TimestampType(), False),
    T.StructField("finished_at", T.TimestampType(), False),
    T.StructField("files", T.ArrayType(T.StringType(), False), False),  # ingested, never again
    T.StructField("output", T.StringType(), False),  # STATE/nights/<night>
    T.StructField("versions", T.MapType(T.StringType(), T.LongType(), False), False),
    T.StructField("summary", T.StringType(), False),  # JSON: counts and timings
    # what each file is (warc.inputs.same_file), resolved when it was ingested: a
    # file is never ingested again under another name (null: a night from before)
    T.StructField("file_keys", T.ArrayType(T.StringType(), False), True),
])


class StateError(RuntimeError):
    pass


LOCK = "_lock"  # STATE/_lock: the night that works on the state
UNREADABLE_STALE_S = 600  # an empty or unreadable lock this old is a write that failed midway


class StateLock:
    """STATE/_lock, held while a night works on the state. Created only where none
    exists: O_EXCL on a local disk, Hadoop's create without overwrite elsewhere
    (atomic on HDFS; on S3 a check, then a write). Two nights at once wiped each
    other's scratch, merged into each other's commit and both committed (found in
    review); cron's flock guards one machine only.

    The lock names its holder: host, pid, and what makes a pid one process there
    (the boot's id, the PID namespace, the process's start time). A lock is taken
    over when its holder is surely gone: the same host, booted since, or in the
    same boot and PID namespace with no process of that pid and start time (a
    killed driver); or when it is empty or unreadable and older than
    UNREADABLE_STALE_S (its write failed). It is claimed by renaming it away, which
    one night only can do, and checked unchanged before it is dropped. Any other
    lock is refused, naming its holder, until released or removed by hand (a
    driver killed in another container or on another machine: `rm` it once sure)."""

    def __init__(self, state: "State"):
        from templatemine.tables.output import RunOutput

        self.state = state
        self.path = f"{state.root}/{LOCK}"
        self.holder = {"host": socket.gethostname(), "pid": os.getpid(),
                       "since": datetime.now(timezone.utc).isoformat(timespec="seconds"), **_process_facts(os.getpid())}
        self.text = json.dumps(self.holder, sort_keys=True)
        self.taken_over: dict | None = None
        out = RunOutput(state.spark, state.root, "lock")
        self._fs, self._Path = out._fs, out._Path
        self._out = out
        self._local = self._fs.getScheme() == "file"

    def _on_disk(self, path: str) -> str:
        return self._Path(path).toUri().getPath()

    # ---------------------------------------------------------------- file operations, local or Hadoop
    def _create(self, path: str, text: str) -> bool:
        """Write `text` to a new file at `path`; False if one exists. A failed write
        leaves no file (an empty lock would hold off every later night)."""
        if self._local:
            local = self._on_disk(path)
            os.makedirs(os.path.dirname(local), exist_ok=True)
            try:
                fd = os.open(local, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                return False
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(text)
            except BaseException:
                os.unlink(local)
                raise
            return True
        try:
            stream = self._fs.create(self._Path(path), False)
        except Exception as exc:  # FileAlreadyExistsException, through py4j
            if "AlreadyExists" in str(exc) or self._fs.exists(self._Path(path)):
                return False
            raise
        try:
            stream.write(bytearray(text.encode("utf-8")))
            stream.close()
        except BaseException:
            self._fs.delete(self._Path(path), False)
            raise
        return True

    def _read(self, path: str) -> str | None:
        try:
            if self._local:
                with open(self._on_disk(path), encoding="utf-8") as fh:
                    return fh.read()
            return self._out.read_text(path)
        except FileNotFoundError:
            return None
        except Exception:  # being written, or not text
            return ""

    def _age_s(self, path: str) -> float:
        try:
            if self._local:
                return time.time() - os.stat(self._on_disk(path)).st_mtime
            return time.time() - self._fs.getFileStatus(self._Path(path)).getModificationTime() / 1000
        except Exception:
            return 0.0

    def _rename(self, src: str, dst: str) -> bool:
        if self._local:
            try:
                os.rename(self._on_disk(src), self._on_disk(dst))
                return True
            except FileNotFoundError:
                return False
        return bool(self._fs.rename(self._Path(src), self._Path(dst)))

    def _delete(self, path: str) -> None:
        if self._local:
            try:
                os.unlink(self._on_disk(path))
            except FileNotFoundError:
                pass
        else:
            self._fs.delete(self._Path(path), False)

    # ---------------------------------------------------------------- the lock
    def __enter__(self) -> "StateLock":
        import uuid

        for _ in range(3):
            if self._create(self.path, self.text):
                return self
            text = self._read(self.path)
            if text is None:  # released meanwhile
                continue
            held = _parse(text)
            if not self._stale(held, text):
                raise StateError(f"{self.state.root}: another night holds the state ({self.path}: "
                                 f"{held or 'unreadable'}); if none is running (its driver was killed in another "
                                 f"container or on another machine), delete {self.path}")
            claim = f"{self.path}.stale.{uuid.uuid4().hex}"
            if not self._rename(self.path, claim):
                continue  # another night claimed it first
            if self._read(claim) != text:  # not the lock judged stale: a night's fresh one
                self._rename(claim, self.path)
                raise StateError(f"{self.state.root}: another night took the state's lock at the same time")
            self._delete(claim)
            self.taken_over = held or {"unreadable": text[:200]}
        raise StateError(f"{self.state.root}: could not take {self.path}")

    def _stale(self, held: dict, text: str) -> bool:
        if not held:
            return self._age_s(self.path) > UNREADABLE_STALE_S
        me = self.holder
        if held.get("host") != me["host"]:
            return False
        if held.get("boot") and me.get("boot") and held["boot"] != me["boot"]:
            return True  # booted since: no process of that boot runs
        if not held.get("boot") or held.get("boot") != me.get("boot") or held.get("pidns") != me.get("pidns"):
            return False  # another container sharing the host name: its pids are not ours to see
        pid = held.get("pid")
        if not isinstance(pid, int) or pid <= 0:
            return False
        start = _process_facts(pid).get("start")
        return start is None or start != held.get("start")

    def __exit__(self, *exc) -> None:
        if self._read(self.path) == self.text:
            self._delete(self.path)


def _parse(text: str) -> dict:
    try:
        held = json.loads(text)
    except ValueError:
        return {}
    return held if isinstance(held, dict) else {}


def _process_facts(pid: int) -> dict:
    """What makes `pid` one process of this machine: the boot's id, this process's
    PID namespace (its pids are another namespace's too), the process's start
    time (clock ticks since boot; absent when there is no such process)."""
    facts: dict = {}
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


def delta_ready(spark: SparkSession) -> None:
    """Fail with what to do when the session cannot run Delta."""
    ext = spark.conf.get("spark.sql.extensions", "") or ""
    if "DeltaSparkSessionExtension" not in ext:
        raise StateError("nightly needs Delta Lake in the Spark session: spark.sql.extensions="
                         "io.delta.sql.DeltaSparkSessionExtension and spark.sql.catalog.spark_catalog="
                         "org.apache.spark.sql.delta.catalog.DeltaCatalog (templatemine.spark.DELTA_CONF), "
                         "and the jars (scripts/bootstrap, or --packages io.delta:delta-spark_2.13:<version>)")


class State:
    def __init__(self, spark: SparkSession, root: str):
        self.spark = spark
        self.root = root.rstrip("/")

    def path(self, name: str) -> str:
        return f"{self.root}/tables/{name}"

    def night_output(self, night: str) -> str:
        return f"{self.root}/nights/{night}"

    def exists(self, name: str) -> bool:
        from delta.tables import DeltaTable

        return DeltaTable.isDeltaTable(self.spark, self.path(name))

    def latest(self, name: str) -> DataFrame:
        """The table as it is now, including the merges of a night not yet committed
        (for the night itself; readers use read_table)."""
        return self.spark.read.format("delta").load(self.path(name))

    def version(self, name: str) -> int:
        from delta.tables import DeltaTable

        return DeltaTable.forPath(self.spark, self.path(name)).history(1).first()["version"]

    # ------------------------------------------------------------ nights (the commit point)
    def nights(self) -> list[dict]:
        if not self.exists(NIGHTS):
            return []
        return [r.asDict() for r in self.latest(NIGHTS).orderBy("seq").collect()]

    def processed(self) -> tuple[set[str], set[str]]:
        """The files committed nights ingested: their paths as given, and what they
        are (`same_file`, as resolved when each was ingested; a night from before
        the keys were kept has its paths resolved now)."""
        from templatemine.warc.inputs import same_file

        if not self.exists(NIGHTS):
            return set(), set()
        table = self.latest(NIGHTS)
        if "file_keys" not in table.columns:
            table = table.withColumn("file_keys", F.lit(None).cast("array<string>"))
        paths, keys = set(), set()
        for r in table.select("files", "file_keys").collect():
            paths.update(r["files"])
            keys.update(r["file_keys"] if r["file_keys"] is not None else map(same_file, r["files"]))
        return paths, keys

    def commit_night(self, row: dict) -> None:
        """Add the night's row: the one write that makes the night visible. A MERGE
        on `seq`, not a blind append: two nights that ran at once both appended
        their row under one sequence number, and readers took either's versions
        (found in review). A MERGE reads `nights`, so Delta refuses the second of
        two concurrent ones, and one that finds its number taken inserts nothing."""
        self.create_if_missing(NIGHTS, NIGHTS_SCHEMA)
        frame = self.spark.createDataFrame([row], NIGHTS_SCHEMA)
        self.merge(NIGHTS, frame, ["seq"], update_all=False)
        # (a MERGE that changes nothing commits nothing: its metrics would be the last commit's)
        ours = (F.col("seq") == row["seq"]) & (F.col("night") == row["night"])
        if self.latest(NIGHTS).where(ours).count() != 1:
            raise StateError(f"{self.root}: night {row['night']} not committed: another night committed sequence "
                             f"number {row['seq']} while it ran (its merges are applied again by the next night)")

    # ------------------------------------------------------------ the lock
    def lock(self) -> "StateLock":
        return StateLock(self)

    # ------------------------------------------------------------ readers
    def committed_versions(self) -> dict[str, int]:
        nights = self.nights()
        return dict(nights[-1]["versions"]) if nights else {}

    def read_table(self, name: str) -> DataFrame:
        """NAME as the last committed night left it, never half of a night."""
        versions = self.committed_versions()
        if name not in versions:
            raise StateError(f"{self.root}: no committed night has written {name!r}")
        return self.spark.read.format("delta").option("versionAsOf", versions[name]).load(self.path(name))

    # ------------------------------------------------------------ writers
    def create_if_missing(self, name: str, schema: T.StructType) -> None:
        """NAME, empty with `schema`, unless it exists. A table that exists but lacks
        columns of `schema` (a state written by an older templatemine, e.g. nodes
        before `unlikely`) gains them, nullable, in one Delta schema change: its old
        rows read null there, and MERGEs (which write the target's columns) carry
        the new ones from then on."""
        if not self.exists(name):
            self.spark.createDataFrame([], schema).write.format("delta").mode("errorifexists").save(self.path(name))
            return
        have = set(self.latest(name).columns)
        missing = [f for f in schema.fields if f.name not in have]
        if missing:
            columns = ", ".join(f"`{f.name}` {f.dataType.simpleString()}" for f in missing)
            self.spark.sql(f"ALTER TABLE delta.`{self.path(name)}` ADD COLUMNS ({columns})")

    def merge(self, name: str, source: DataFrame, on: list[str], *, update_when: str | None = None,
              update_all: bool = True, insert: bool = True, set_columns: dict | None = None) -> dict:
        """MERGE source INTO NAME ON the key columns; returns Delta's operation metrics."""
        from delta.tables import DeltaTable

        target = DeltaTable.forPath(self.spark, self.path(name))
        columns = [f.name for f in target.toDF().schema.fields]
        builder = target.alias("t").merge(source.alias("s"), " AND ".join(f"t.{c} <=> s.{c}" for c in on))
        values = set_columns or ({c: f"s.{c}" for c in columns} if update_all else None)
        if values:
            builder = builder.whenMatchedUpdate(condition=update_when, set=values)
        if insert:
            builder = builder.whenNotMatchedInsert(values={c: f"s.{c}" for c in columns})
        builder.execute()
        return self.last_metrics(name)

    def replace_groups(self, name: str, new_rows: DataFrame, groups: DataFrame, group_col: str,
                       key: list[str], scratch: str) -> dict:
        """Rows of NAME whose `group_col` is in `groups` become exactly `new_rows`,
        in one MERGE (one atomic commit): new rows are upserted by `key`, and rows
        of those groups that the new ones do not have are deleted (tombstones).
        Columns of NAME that `new_rows` lacks are written null.
        The source is written to `scratch` first, so the MERGE does not read the
        table it changes while it changes it."""
        from delta.tables import DeltaTable

        target = DeltaTable.forPath(self.spark, self.path(name))
        fields = target.toDF().schema.fields
        columns = [f.name for f in fields]
        current = self.latest(name).join(groups.select(group_col).distinct(), group_col, "left_semi")
        gone = current.select(*key).join(new_rows.select(*key), key, "left_anti")
        # a column the table gained from another night's rows (an etdm night's templates
        # carry their key page and cluster) is null in rows that do not have it
        have = set(new_rows.columns)
        new_rows = new_rows.select(*[F.col(f.name) if f.name in have else F.lit(None).cast(f.dataType).alias(f.name)
                                     for f in fields])
        source = new_rows.withColumn("_delete", F.lit(False)).unionByName(
            gone.withColumn("_delete", F.lit(True)), allowMissingColumns=True)
        source.write.mode("overwrite").parquet(scratch)
        staged = self.spark.read.parquet(scratch)
        (target.alias("t").merge(staged.alias("s"), " AND ".join(f"t.{c} <=> s.{c}" for c in key))
         .whenMatchedDelete(condition="s._delete")
         .whenMatchedUpdate(set={c: f"s.{c}" for c in columns})
         .whenNotMatchedInsert(condition="NOT s._delete", values={c: f"s.{c}" for c in columns})
         .execute())
        return self.last_metrics(name)

    def last_metrics(self, name: str) -> dict:
        from delta.tables import DeltaTable

        row = DeltaTable.forPath(self.spark, self.path(name)).history(1).first()
        return {k: int(v) for k, v in (row["operationMetrics"] or {}).items() if k.startswith("num") and v.isdigit()}

    # ------------------------------------------------------------ history
    def history(self) -> list[dict]:
        """What each night did, from Delta's own history: every state table's
        commits are tagged with their night (commitInfo.userMetadata)."""
        from delta.tables import DeltaTable

        committed = {n["night"]: n for n in self.nights()}
        rows: list[dict] = []
        for name in (*STATE_TABLES, NIGHTS):
            if not self.exists(name):
                continue
            for h in DeltaTable.forPath(self.spark, self.path(name)).history().collect():
                meta = h["userMetadata"] or ""
                night = meta[len("night "):] if meta.startswith("night ") else None
                metrics = {k: v for k, v in (h["operationMetrics"] or {}).items()
                           if k in ("numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted",
                                    "numOutputRows")}
                rows.append({"night": night, "committed": night in committed, "table": name,
                             "version": h["version"], "timestamp": str(h["timestamp"]),
                             "operation": h["operation"], "metrics": metrics})
        return sorted(rows, key=lambda r: (r["timestamp"], r["table"], r["version"]))


def summary_of(night_row: dict) -> dict:
    return json.loads(night_row["summary"])
