"""Spark stage: WARC files -> RECORDS, PAGES, LINKS, PAGELETS (Parquet).

Section 3.2 of Bar-Yossef & Rajagopalan: the tables are built "by streaming
through the pages in the dataset, and parsing their HTML text to extract their
links and pagelets", constant time per page. Here:

1. `read_captures`: one Spark task per WARC file (largest first). Each task
   streams its file (templatemine/warc/reader.py), parses every HTML page once
   (templatemine/html/), and hands Spark Arrow batches of `batch_records`
   records through `mapInArrow`, so a task's memory is bounded by one batch
   whatever the file size. One row per input record, links and pagelets nested.
2. The captures are staged as Parquet (the expensive Python work runs once),
   then `newest_captures` keeps the newest capture of each URL,
   `mark_duplicates` points near-duplicate pages at one representative
   (`dup_of`, step 1 of the local algorithm, Fig. 4), and the tables are
   selected and exploded from the staged captures with built-in functions.
3. Counts in the manifest are computed from the written tables.
"""

from __future__ import annotations

import platform
import time
from dataclasses import asdict
from functools import lru_cache, partial
from importlib.metadata import PackageNotFoundError, version
from typing import Callable, Iterator

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from templatemine import schema as S
from templatemine.config import ExtractConfig
from templatemine.html.page import PageConfig, PageParser
from templatemine.html.record import FLATTENED, OUTCOMES, PAGE, Capture, extract_capture
from templatemine.pagelevel.features import FORMAT, node_features_record
from templatemine.tables.output import DERIVED, MANIFEST, RunOutput, new_run_id
from templatemine.tables.targets import REDIRECT, TWIN, crawled_targets
from templatemine.warc.inputs import InputFile, open_input
from templatemine.warc.reader import RawRecord, iter_records


# ---------------------------------------------------------------- Python tasks
_NESTED = ("links", "pagelets", "nodes")


class _CaptureBatch:
    """Columnar accumulation of captures into one Arrow RecordBatch."""

    def __init__(self, arrow_schema):
        import pyarrow as pa

        self.pa = pa
        self.schema = arrow_schema
        self.top = [f.name for f in arrow_schema if f.name not in _NESTED]
        self.link_fields = list(S.LINK_FIELDS.names)
        self.pagelet_fields = list(S.PAGELET_FIELDS.names)
        self.node_fields = list(S.NODE_FIELDS.names)
        self.reset()

    def reset(self):
        self.columns = {name: [] for name in self.top}
        self.links = [[] for _ in self.link_fields]
        self.pagelets = [[] for _ in self.pagelet_fields]
        self.nodes = [[] for _ in self.node_fields]
        self.link_offsets = [0]
        self.pagelet_offsets = [0]
        self.node_offsets = [0]
        self.size = 0

    def add(self, c: Capture) -> None:
        raw = c.raw
        values = {
            "warc_file": raw.warc_file, "warc_offset": raw.offset, "record_type": raw.record_type,
            "target_uri": raw.target_uri, "outcome": c.outcome, "detail": c.detail or None,
            "warc_record_id": raw.record_id, "redirect_page_key": c.redirect_page_key, "redirect_url": c.redirect_url,
            "page_key": c.page_key, "url": c.url, "host": c.host, "site": c.site, "fetch_time": c.fetch_time,
            "http_status": raw.http_status, "content_type": raw.content_type, "charset": c.charset,
            "charset_source": c.charset_source, "title": c.title, "text_length": c.text_length,
            "n_links": c.n_links, "n_pagelets": c.n_pagelets, "dup_signature": c.dup_signature,
        }
        for name in self.top:
            self.columns[name].append(values[name])
        for rows, cols, offsets in ((c.links, self.links, self.link_offsets),
                                    (c.pagelets, self.pagelets, self.pagelet_offsets),
                                    (c.nodes, self.nodes, self.node_offsets)):
            if rows:
                for col, values_ in zip(cols, zip(*rows)):
                    col.extend(values_)
            offsets.append(offsets[-1] + len(rows))
        self.size += 1

    def _nested(self, name, cols, offsets):
        pa = self.pa
        list_type = self.schema.field(name).type
        struct_type = list_type.value_type
        children = [pa.array(col, type=struct_type.field(i).type) for i, col in enumerate(cols)]
        values = pa.StructArray.from_arrays(children, fields=list(struct_type))
        return pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), values, type=list_type)

    def flush(self):
        pa = self.pa
        arrays = []
        for field in self.schema:
            if field.name == "links":
                arrays.append(self._nested("links", self.links, self.link_offsets))
            elif field.name == "pagelets":
                arrays.append(self._nested("pagelets", self.pagelets, self.pagelet_offsets))
            elif field.name == "nodes":
                arrays.append(self._nested("nodes", self.nodes, self.node_offsets))
            else:
                arrays.append(pa.array(self.columns[field.name], type=field.type))
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        self.reset()
        return batch


UNOPENED = "cannot open file: "  # the detail of the one `malformed` row of a file no task could open
# ... and the start of the detail of the `malformed` row where the file system failed a
# read (a reset connection, EIO): the records after it may be lost, not damaged
READ_FAILED = "file read failed: "
NOT_READ_WHOLE = (UNOPENED, READ_FAILED)  # a nightly run leaves such a file for a later night


class _Watched:
    """A file's stream that notes the file system's own errors (an OSError of read
    or seek). The reader takes any exception for damage in the data and goes on,
    so a connection reset in the middle of an S3 object was a `malformed` row like
    any other, and a nightly run ingested the file for good without the records
    it lost (found in review)."""

    def __init__(self, fh):
        self._fh = fh
        self.failure: OSError | None = None

    def _call(self, name, *args):
        try:
            return getattr(self._fh, name)(*args)
        except OSError as exc:
            self.failure = self.failure or exc
            raise

    def read(self, *args):
        return self._call("read", *args)

    def readinto(self, *args):
        return self._call("readinto", *args)

    def readline(self, *args):
        return self._call("readline", *args)

    def seek(self, *args):
        return self._call("seek", *args)

    def __getattr__(self, name):
        return getattr(self._fh, name)


@lru_cache(maxsize=4)
def page_parser(config: PageConfig) -> PageParser:
    """One parser per Python worker process and config: its URL and token caches
    stay warm across the tasks a reused worker runs (spark.python.worker.reuse)."""
    return PageParser(config)


def captures_of_files(paths: Iterator[str], config: ExtractConfig) -> Iterator[Capture]:
    """Pure per-file loop (no Spark): every record of every file, as captures."""
    parser = page_parser(config.page_config())
    for path in paths:
        try:
            fh = open_input(path)
        except (OSError, ValueError) as exc:  # vanished or unreadable since the driver checked it; a
            # path the file system refuses (pyarrow's ArrowInvalid is a ValueError) fails no task either
            raw = RawRecord(path, 0, None, outcome="malformed", detail=f"{UNOPENED}{exc}")
            yield _checked(Capture(raw, raw.outcome, raw.detail), config)
            continue
        with fh:
            watched, said, last = _Watched(fh), False, None
            records = iter_records(path, watched, config.max_payload_bytes)
            while True:
                try:
                    raw = next(records, None)
                except OSError as exc:  # outside warcio's guarded loop (the format's first bytes, a
                    # resync's search): one row for what is left of the file, not a failed task
                    yield _checked(_read_failed(path, watched, last, exc), config)
                    break
                if raw is None:
                    break
                if watched.failure is not None and not said and raw.outcome == "malformed":
                    # the first malformed row after the failure is where the reader met it
                    raw.detail, said = f"{READ_FAILED}{raw.detail}", True
                last = raw.offset
                yield _checked(extract_capture(raw, parser), config)


def _read_failed(path: str, fh, last: int | None, exc: OSError) -> Capture:
    """The `malformed` row of a file whose read the file system failed where the
    reader does not turn it into a row itself: at the byte the file had reached
    (past the last row's offset, so no two rows share one), naming the file and
    what was lost. A bad sector or one reset connection on a file's first read
    failed the task, and so the whole local run (found in review, 2026-11-28)."""
    try:
        at = fh.tell()
    except Exception:  # noqa: BLE001 - the stream that failed may not tell either
        at = 0
    if last is not None and at <= last:
        at = last + 1
    detail = (f"{READ_FAILED}{path} at byte {at}: {type(exc).__name__}: {exc}; "
              f"the rest of the file was not read")
    raw = RawRecord(path, at, None, outcome="malformed", detail=detail)
    return Capture(raw, raw.outcome, raw.detail)


def _checked(capture: Capture, config: ExtractConfig) -> Capture:
    """The capture; with --fail-fast, the first malformed one, from the
    reader, the file system or the parser, stops the run."""
    if config.fail_fast and capture.outcome == "malformed":
        raise RuntimeError(f"malformed record in {capture.raw.warc_file} at offset {capture.raw.offset}: "
                           f"{capture.detail} (--fail-fast)")
    return capture


def _captures_task(batches, config: ExtractConfig, paths):
    """mapInArrow function: file numbers in (from `spark.range`), capture
    batches out. `paths` is a broadcast of the file list."""
    from pyspark.sql.pandas.types import to_arrow_schema

    builder = _CaptureBatch(to_arrow_schema(S.CAPTURES_SCHEMA, timestamp_utc=True))
    files = (paths.value[i] for batch in batches for i in batch.column(0).to_pylist())
    held = 0
    for capture in captures_of_files(files, config):
        builder.add(capture)
        held += capture.text_length or 0
        if builder.size >= config.batch_records or held >= config.batch_text_chars:
            yield builder.flush()
            held = 0
    if builder.size:
        yield builder.flush()


# ---------------------------------------------------------------- DataFrames
def read_captures(spark: SparkSession, files: list[InputFile], config: ExtractConfig) -> DataFrame:
    """One row per input record; one task per WARC file, largest files first.

    The tasks are driven by `spark.range(n)` with one number per partition
    (file i of a broadcast list), not by a Python RDD of paths: that would run
    a second Python stage in every task just to produce its input row."""
    paths = [f.path for f in sorted(files, key=lambda f: -f.size)]
    broadcast = spark.sparkContext.broadcast(paths)
    return spark.range(0, len(paths), 1, max(1, len(paths))).mapInArrow(
        partial(_captures_task, config=config, paths=broadcast), S.CAPTURES_SCHEMA
    )


def newest_captures(captures: DataFrame) -> DataFrame:
    """Mark older captures of a URL `superseded`: the newest capture wins
    (ties broken by file and offset, so the choice is deterministic). Only
    pages compete: a newer 304, 301 or 503 of the URL (non_2xx, with a
    page_key too) is no capture of the page and supersedes nothing (the
    nightly run reads a newer 404/410 as the page removed, from `records`).

    Only the page rows are ranked, so every other row (requests, metadata,
    warcinfo: two of a Common Crawl WARC's three records, most with no
    page_key) is a window partition of its own, keyed by its file and offset:
    keyed (null, false) they all went to one task (found in review)."""
    is_page = F.col("outcome") == PAGE
    own = F.when(is_page, F.col("page_key")).otherwise(F.xxhash64("warc_file", "warc_offset"))
    newest_first = Window.partitionBy(own, is_page).orderBy(
        F.col("fetch_time").desc_nulls_last(), F.col("warc_file").desc(), F.col("warc_offset").desc()
    )
    rank = F.when(is_page, F.row_number().over(newest_first))
    return captures.withColumn(
        "outcome", F.when(rank > 1, F.lit("superseded")).otherwise(F.col("outcome"))
    ).withColumn("detail", F.when(rank > 1, F.lit("a newer capture of the URL was kept")).otherwise(F.col("detail")))


def records_table(captures: DataFrame) -> DataFrame:
    return captures.select(*S.RECORDS_SCHEMA.names)


def mark_duplicates(pages: DataFrame) -> DataFrame:
    """`dup_of`: pages whose Broder signature equals another page's point at
    the representative of their group, the page with the smallest URL. A page
    without a signature (no text) is a window partition of its own: together
    they went to one task (found in review)."""
    unsigned = F.col("dup_signature").isNull()
    group = Window.partitionBy(F.when(unsigned, F.col("page_key")).otherwise(F.col("dup_signature")),
                               unsigned).orderBy("url")
    representative = F.first("page_key").over(group)
    return pages.withColumn(
        "dup_of",
        F.when(F.col("dup_signature").isNotNull() & (representative != F.col("page_key")), representative),
    )


def pages_table(captures: DataFrame) -> DataFrame:
    captured = F.col("target_uri")
    pages = captures.where(F.col("outcome") == PAGE).withColumn(
        "target_uri", F.when(captured != F.col("url"), captured)).select(
        *[c for c in S.PAGES_SCHEMA.names if c != "dup_of"])
    return mark_duplicates(pages).select(*S.PAGES_SCHEMA.names)


def links_table(captures: DataFrame) -> DataFrame:
    return captures.where(F.col("outcome") == PAGE).select(
        F.col("page_key").alias("src_page_key"), F.inline("links")
    ).select(*S.LINKS_SCHEMA.names)


def pagelets_table(captures: DataFrame) -> DataFrame:
    return captures.where(F.col("outcome") == PAGE).select("page_key", F.inline("pagelets")).select(
        *S.PAGELETS_SCHEMA.names
    )


def nodes_table(captures: DataFrame) -> DataFrame:
    return captures.where(F.col("outcome") == PAGE).select("page_key", F.inline("nodes")).withColumn(
        "features_format", F.lit(FORMAT)).select(
        *S.NODES_SCHEMA.names
    )


# ---------------------------------------------------------------- the stage
def _versions() -> dict:
    out = {"python": platform.python_version()}
    for dist in ("templatemine", "pyspark", "graphframes-py", "warcio", "selectolax", "datasketch", "pyarrow",
                 "publicsuffixlist", "charset-normalizer"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def run_extract(
    spark: SparkSession,
    files: list[InputFile],
    out: str,
    config: ExtractConfig,
    progress: Callable[[str], None] = print,
) -> dict:
    """Extract the tables into OUT (atomically) and return the manifest."""
    run_id = new_run_id()
    output = RunOutput(spark, out, run_id)
    started = time.time()
    total_bytes = sum(max(f.size, 0) for f in files)
    progress(f"extract: {len(files)} WARC/ARC file(s), {total_bytes / 1e6:.1f} MB -> {out} (run {run_id})")

    try:
        manifest = _extract_into(spark, files, output, config, progress, started)
    except BaseException:
        output.cleanup()  # a run that fails before its commit leaves OUT as the last complete run wrote it
        raise
    stale = output.remove_stale(DERIVED)
    if stale:
        progress(f"extract: removed the earlier {', '.join(stale)} from {out}: they describe the pages this "
                 f"extract replaces")
    output.commit(list(S.EXTRACT_TABLES), MANIFEST, manifest)
    return manifest


def _extract_into(spark, files, output: RunOutput, config: ExtractConfig, progress, started: float) -> dict:
    timings: dict[str, float] = {}
    t = time.time()
    progress(f"[1/3] reading records and parsing pages ({len(files)} task(s))")
    read_captures(spark, files, config).write.mode("overwrite").parquet(output.staged("captures"))
    timings["read_parse_s"] = round(time.time() - t, 3)

    t = time.time()
    progress("[2/3] writing tables: newest capture per URL, duplicates, links, pagelets, nodes")
    captures = newest_captures(spark.read.schema(S.CAPTURES_SCHEMA).parquet(output.staged("captures")))
    records_table(captures).write.mode("overwrite").parquet(output.staged(S.RECORDS))
    # the nested captures are not shuffled: only the (usually few) superseded
    # records are, and anti-joined away
    superseded = spark.read.parquet(output.staged(S.RECORDS)).where(F.col("outcome") == "superseded").select(
        "warc_file", "warc_offset")
    winners = spark.read.schema(S.CAPTURES_SCHEMA).parquet(output.staged("captures")).join(
        superseded, ["warc_file", "warc_offset"], "left_anti")
    pages_table(winners).write.mode("overwrite").parquet(output.staged(S.PAGES))
    links_table(winners).write.mode("overwrite").parquet(output.staged(S.LINKS))
    pagelets_table(winners).write.mode("overwrite").parquet(output.staged(S.PAGELETS))
    nodes_table(winners).write.mode("overwrite").parquet(output.staged(S.NODES))
    timings["tables_s"] = round(time.time() - t, 3)

    t = time.time()
    progress("[3/3] counting what was written")
    counts = table_counts(spark, {name: output.staged(name) for name in S.EXTRACT_TABLES}, [f.path for f in files])
    timings["counts_s"] = round(time.time() - t, 3)
    timings["total_s"] = round(time.time() - started, 3)

    manifest = {
        "stage": "extract",
        "run_id": output.run_id,
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "out": output.out,
        "inputs": [{"path": f.path, "bytes": f.size} for f in files],
        "config": asdict(config),
        **({"node_features": node_features_record()} if config.nodes else {}),
        "spark": {
            "version": spark.version,
            "master": spark.sparkContext.master,
            "default_parallelism": spark.sparkContext.defaultParallelism,
        },
        "versions": _versions(),
        "timings": timings,
        **counts,
        "tables": {name: {"path": output.final(name), "rows": counts["rows"][name]} for name in S.EXTRACT_TABLES},
    }
    return manifest


def table_counts(spark: SparkSession, paths: dict[str, str], inputs: list[str] | None = None,
                 sample: int = 20) -> dict:
    """Counts for the manifest, from the written tables (never accumulators).

    `records.accounted` is what the written table can show on its own: every row
    has a known outcome and no two rows name one record (file and offset). It
    was the sum of the outcome counts against itself, true whatever the reader
    did; a record counted twice (a resync that found it again) now makes it
    false, with the rows' keys in `records.counted_twice` (found in review,
    2026-11-28). A record the reader stepped over without a row cannot show
    here; the reader gives the bytes it skips a `malformed` row of their own
    (but for a gap in stream mode: README, Known gaps).
    INPUTS (the files read) name those that gave no row at all (an empty file,
    or one of only empty gzip members) in `records.files_without_rows`."""
    records = spark.read.parquet(paths[S.RECORDS])
    flattened_page = (F.col("outcome") == PAGE) & F.col("detail").contains(FLATTENED)  # html/nesting.py
    outcomes = records.groupBy("outcome").agg(F.count("*").alias("n"),
                                              F.count(F.when(flattened_page, True)).alias("flattened")).collect()
    by_outcome = {r["outcome"]: r["n"] for r in outcomes}
    n_flattened = sum(r["flattened"] for r in outcomes)
    read = sum(by_outcome.values())
    twice = [r.asDict() for r in records.groupBy("warc_file", "warc_offset").agg(F.count("*").alias("rows"))
             .where("rows > 1").orderBy("warc_file", "warc_offset").limit(sample).collect()]
    with_rows = {r["warc_file"] for r in records.select("warc_file").distinct().collect()}
    rows = {name: spark.read.parquet(path).count() for name, path in paths.items()}
    links = spark.read.parquet(paths[S.LINKS])
    pages = spark.read.parquet(paths[S.PAGES])
    internal = links.where("same_site")
    crawled = pages.select(F.col("page_key").alias("dst_page_key"))
    n_internal = internal.count()
    counted = crawled_targets(internal, pages, records, via="via").join(crawled, "dst_page_key", "left_semi").agg(
        F.count("*").alias("resolved"), F.count(F.when(F.col("via") == TWIN, True)).alias("by_twin"),
        F.count(F.when(F.col("via") == REDIRECT, True)).alias("by_redirect")).first()
    charsets = {r["charset_source"]: r["n"] for r in
                pages.groupBy("charset_source").agg(F.count("*").alias("n")).collect()}
    return {
        "records": {
            "read": read,
            "by_outcome": {k: by_outcome.get(k, 0) for k in OUTCOMES if by_outcome.get(k, 0)},
            "accounted": set(by_outcome) <= set(OUTCOMES) and not twice,
            "counted_twice": twice,
            "files_without_rows": len(set(inputs or ()) - with_rows),
            "files_without_rows_sample": sorted(set(inputs or ()) - with_rows)[:sample],
        },
        "rows": rows,
        "links": {
            "internal": n_internal,
            "internal_resolved": counted["resolved"],
            # written to a crawled page's scheme twin, or to a URL that redirects to it (tables/targets.py)
            "internal_resolved_by_twin": counted["by_twin"],
            "internal_resolved_by_redirect": counted["by_redirect"],
            "internal_resolved_share": round(counted["resolved"] / n_internal, 4) if n_internal else None,
        },
        "pages": {
            "with_dup_of": pages.where(F.col("dup_of").isNotNull()).count(),
            "charset_source": charsets,
            "nesting_flattened": n_flattened,
        },
        "malformed_sample": _record_sample(records, F.col("outcome") == "malformed", sample)
        if by_outcome.get("malformed") else [],
        "flattened_sample": _record_sample(records, flattened_page, sample) if n_flattened else [],
    }


def _record_sample(records: DataFrame, condition, n: int) -> list[dict]:
    """The first `n` records meeting `condition`, in file and offset order, with their detail."""
    rows = (records.where(condition).orderBy("warc_file", "warc_offset").select("warc_file", "warc_offset", "detail")
            .limit(n).collect())
    return [{"warc_file": r["warc_file"], "warc_offset": r["warc_offset"], "detail": r["detail"]} for r in rows]
