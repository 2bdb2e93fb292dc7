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

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from templatemine import schema as S
from templatemine.tables.lock import (LOCK, UNREADABLE_STALE_S, FolderLock, LockError, LockHeld,  # noqa: F401
                                      LockRaced, folder_files)
from templatemine.tables.lock import process_facts as _process_facts  # noqa: F401 (tests)

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


class StateLock(FolderLock):
    """STATE/_lock, held while a night works on the state (tables/lock.py
    FolderLock: created only where none exists, naming its holder; a killed
    night's is taken over). Two nights at once wiped each other's scratch, merged
    into each other's commit and both committed (found in review); cron's flock
    guards one machine only. Refused, a StateError names the holder: a driver
    killed in another container or on another machine leaves a lock to `rm` by
    hand once sure."""

    def __init__(self, state: "State"):
        super().__init__(state.root, folder_files(state.spark, state.root))
        self.state = state

    def __enter__(self) -> "StateLock":
        root = self.state.root
        try:
            return super().__enter__()
        except LockHeld as exc:
            raise StateError(f"{root}: another night holds the state ({self.path}: {exc.held or 'unreadable'}); "
                             f"if none is running (its driver was killed in another container or on another "
                             f"machine), delete {self.path}") from None
        except LockRaced:
            raise StateError(f"{root}: another night took the state's lock at the same time") from None
        except LockError:
            raise StateError(f"{root}: could not take {self.path}") from None
        except OSError as exc:  # STATE (or its parent) not writable: no permission, a NameNode in safe mode
            raise StateError(f"{root}: cannot create {self.path} ({exc.strerror or exc})") from None

    def __exit__(self, *exc) -> None:
        """Released; where the file system will not delete the lock, a warning
        naming it, and the night's own outcome stands (a committed night was
        reported failed, with a Java stack: found in review)."""
        self.release("delete it by hand before the next night")


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
