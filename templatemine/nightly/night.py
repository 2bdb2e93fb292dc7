"""One night of incremental crawl cleaning: new WARC files into the Delta state.

    new WARC files (those no committed night ingested)
      -> extract (the same stage as `run`) into STATE/_work/<night>/extract
      -> MERGE into the state: the newest capture of a URL wins; a 404/410 newer
         than what we hold marks the page removed (kept, with removed_at);
         links and pagelets follow their page's winning capture
      -> a snapshot of the sites the night touched (their live pages, links,
         pagelets, nodes) -> detect, the page-level model, clean: the same
         stages as `run`, the same pagelevel.mode (auto: a site with fewer
         than pagelevel.min_site_pages live pages in the state is judged page
         by page, issue 4's case of new and small sites)
      -> MERGE the touched sites' templates into the state
      -> publish STATE/nights/<night>/ and append the night's row (the commit)

The night's id is its sequence number and a hash of its file list, so a re-run
of a killed night has the same id, rewrites the same scratch and output paths
and applies the same idempotent MERGEs (state.py says why that is enough).
Templates are recomputed over the whole state of every touched site, not over
the night's pages alone: Def. 4's support is a property of the site.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import replace
from functools import reduce
from datetime import datetime, timezone
from typing import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from templatemine import schema as S
from templatemine.config import Config
from templatemine.nightly.state import (LINKS, NIGHTS, NODES, PAGELETS, PAGES, RECORDS, STATE_PAGES_SCHEMA,
                                        STATE_TABLES, TEMPLATE_PAGELETS, TEMPLATES, State, StateError, delta_ready)
from templatemine.spark import empty_frame
from templatemine.tables.output import MANIFEST, RunOutput
from templatemine.warc.inputs import InputFile, same_file

GONE_STATUSES = ("HTTP 404", "HTTP 410")  # a capture that says the page is no longer there
# ... at the start of a non_2xx record's detail, alone or before the reader's note ("HTTP 404; offset ...")
GONE_DETAIL = "^(" + "|".join(GONE_STATUSES) + ")(;|$)"
EPOCH = "TIMESTAMP '1970-01-01 00:00:00'"
CRASH_ENV = "TEMPLATEMINE_NIGHTLY_CRASH_AT"  # tests: die hard at a named step, like a killed driver


class NothingOpened(RuntimeError):
    """No new file of a night could be opened: the night fails, merging nothing."""


def _crash_point(step: str) -> None:
    if os.environ.get(CRASH_ENV) == step:
        os._exit(86)


def night_id(seq: int, paths: list[str]) -> str:
    digest = hashlib.sha1("\n".join(sorted(paths)).encode()).hexdigest()[:10]
    return f"{seq:04d}-{digest}"


def capture_order(prefix: str) -> str:
    """The newest-capture order of extract's newest_captures (tables/extract.py),
    as a SQL struct: WARC date (undated: oldest), then file, then offset."""
    return f"struct(coalesce({prefix}.fetch_time, {EPOCH}), {prefix}.warc_file, {prefix}.warc_offset)"


def held_order(prefix: str = "") -> str:
    """What the state holds for a URL, in capture_order's terms: its capture, or,
    once removed, the removal's time alone (file and offset lowest): the state
    keeps the removed capture's file and offset, not the 404's, and comparing
    those made a re-run of a killed night miss its own removal whenever the
    404's file sorted before the page's."""
    p = f"{prefix}." if prefix else ""
    return (f"struct(coalesce({p}removed_at, {p}fetch_time, {EPOCH}), "
            f"if({p}removed_at IS NULL, {p}warc_file, ''), if({p}removed_at IS NULL, {p}warc_offset, CAST(-1 AS BIGINT)))")


def run_night(spark: SparkSession, state_root: str, files: list[InputFile], config: Config,
              progress: Callable[[str], None] = print, missing: list[str] = ()) -> dict:
    """Ingest the files no committed night has ingested; returns the night's summary
    (`{"night": None, ...}` when there is nothing new). `missing`: paths the
    manifest lists that do not exist (`expand_inputs(..., missing)`): those an
    earlier night ingested are no concern, the others are named and counted
    (`files_missing`) and left to a night that finds them. One night at a time:
    it holds STATE/_lock (state.StateLock) throughout."""
    delta_ready(spark)
    state = State(spark, state_root)
    with state.lock() as lock:
        if lock.taken_over:
            progress(f"nightly: took over the lock of a night that is gone ({lock.taken_over})")
        return _run_night(spark, state, files, config, progress, missing)


def _run_night(spark: SparkSession, state: State, files: list[InputFile], config: Config,
               progress: Callable[[str], None], missing: list[str]) -> dict:
    """run_night, holding the state's lock."""
    from templatemine.pagelevel.stage import SITE, run_pagelevel
    from templatemine.tables.extract import NOT_READ_WHOLE, run_extract
    from templatemine.templates.stage import run_clean, run_detect

    started = datetime.now(timezone.utc)
    clock = time.time()
    # a file is known by what it is, not how it is spelt: one read before through a
    # symlinked folder, or as s3:// where it is s3a:// now, was ingested again and
    # every record of it counted twice (found in review). What it is was resolved
    # when it was ingested (a symlink moved since does not make another file old),
    # and only paths not ingested as spelt are resolved now
    done_paths, done = state.processed()
    key = {f.path: same_file(f.path) for f in files if f.path not in done_paths}
    fresh = [f for f in files if f.path in key and key[f.path] not in done]
    empty = [f.path for f in fresh if f.size == 0]
    if empty:  # being written, or cut short: once ingested, never read again
        progress(f"nightly: WARNING {len(empty)} new file(s) are empty, not ingested, left for a later night: "
                 f"{', '.join(empty[:3])}{' ...' if len(empty) > 3 else ''}")
    new = [f for f in fresh if f.size]
    absent = [p for p in missing if p not in done_paths and same_file(p) not in done]
    if absent:
        progress(f"nightly: WARNING {len(absent)} listed file(s) not found, never ingested, left for a later "
                 f"night: {', '.join(absent[:3])}{' ...' if len(absent) > 3 else ''}")
    if not new:
        progress(f"nightly: nothing new: all {len(files) - len(empty)} file(s) found were ingested by earlier "
                 f"nights{f', {len(empty)} empty' if empty else ''}")
        return {"night": None, "files": 0, "files_already_ingested": len(files) - len(empty),
                "files_missing": len(absent), "files_empty": empty}
    nights = state.nights()
    committed = [n["night"] for n in nights]  # (read once: the removals need them too)
    _check_settings(state, nights, config)
    seq = len(committed) + 1
    night = night_id(seq, [f.path for f in new])
    # scratch of earlier nights: committed ones whose clean-up was cut short, and
    # killed ones whose files this night takes (or a later one will, from scratch);
    # and the outputs of killed nights that were published but not committed (a
    # re-run over more files has another id: they stayed beside the committed ones)
    RunOutput(spark, state.root, night).remove_path(f"{state.root}/_work")
    removed = _remove_uncommitted_outputs(state, committed)
    if removed:
        progress(f"nightly: removed the output of {len(removed)} night(s) never committed: {', '.join(removed[:3])}")
    work = f"{state.root}/_work/{night}"
    progress(f"nightly: night {night}: {len(new)} new file(s), {len(files) - len(new) - len(empty)} already "
             "ingested")
    spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", f"night {night}")
    timings: dict[str, float] = {}

    def lap(name: str, since: float) -> float:
        timings[name] = round(time.time() - since, 3)
        return time.time()

    try:
        t = time.time()
        judge = config.pagelevel.mode != SITE  # nodes only for the page-level model
        extracted = run_extract(spark, new, f"{work}/extract", replace(config.extract, nodes=judge), progress)
        t = lap("extract_s", t)
        # a file listed but not opened (gone since it was listed, not readable yet, a transient
        # error of the file system), or whose reading the file system failed midway, is not
        # ingested, none of its rows: a later night takes it up whole
        records = spark.read.parquet(f"{work}/extract/{S.RECORDS}")
        failed = F.col("outcome").eqNullSafe("malformed") & reduce(
            lambda a, b: a | b, [F.col("detail").startswith(prefix) for prefix in NOT_READ_WHOLE])
        unopened = sorted(r["warc_file"] for r in records.where(failed).select("warc_file").distinct().collect())
        if unopened:
            progress(f"nightly: WARNING {len(unopened)} new file(s) could not be opened or read whole, not ingested, "
                     f"left for a later night: {', '.join(unopened[:3])}{' ...' if len(unopened) > 3 else ''}")
            if len(unopened) == len(new):
                raise NothingOpened(f"night {night}: none of its {len(new)} new file(s) could be opened or read "
                                    f"whole (first: {unopened[0]}); nothing merged, a later night takes them up")
        left = set(unopened)
        ingested = [f.path for f in new if f.path not in left]
        _crash_point("extracted")
        changes = _merge_captures(state, night, f"{work}/extract", work, progress, judge, committed, unopened)
        t = lap("merge_s", t)
        touched = spark.read.parquet(changes.pop("touched_sites_path"))
        snapshot, redirects = _snapshot(state, touched, changes["touched_sites"], f"{work}/run", extracted, night,
                                        judge)
        _crash_point("merged")
        # links reach pages through the redirects of every night so far (the snapshot's REDIRECTS)
        detected = run_detect(spark, f"{work}/run", config.detect, progress)
        judged = run_pagelevel(spark, f"{work}/run", config.pagelevel, progress)  # None in site mode
        cleaned = run_clean(spark, f"{work}/run", progress, config.clean)
        parts = {"detect_s": detected["timings"]["total_s"],  # as each stage timed itself
                 **({"pagelevel_s": judged["timings"]["total_s"]} if judged else {}),
                 "clean_s": cleaned["timings"]["total_s"]}
        if config.clean.report:
            from templatemine.report import write_report

            reported = time.time()
            write_report(spark, f"{work}/run", progress)
            parts["report_s"] = round(time.time() - reported, 3)
        t = lap("detect_clean_s", t)
        timings.update(parts)
        templates = _merge_templates(state, f"{work}/run", touched, work)
        t = lap("templates_s", t)
        _crash_point("templates")
        output = state.night_output(night)
        _publish(spark, f"{work}/run", output)
        _crash_point("published")
        versions = {name: state.version(name) for name in STATE_TABLES if state.exists(name)}
        summary = {
            "night": night, "seq": seq, "files": len(ingested),
            "files_already_ingested": len(files) - len(new) - len(empty), "files_missing": len(absent),
            "files_empty": empty, "files_unopened": unopened,
            **_ingested_records(extracted, records, unopened),
            "malformed_sample": extracted["malformed_sample"],
            "nesting_flattened": extracted["pages"]["nesting_flattened"],
            "flattened_sample": extracted["flattened_sample"],
            **changes, "snapshot_pages": snapshot, "snapshot_redirects": redirects,
            "templates": detected["rows"][TEMPLATES], "detect_mode": detected["mode"],
            **({"pagelevel": {k: judged[k] for k in ("model", "modes", "set_aside") if k in judged}}
               if judged else {}),
            "clean_pages": cleaned["rows"]["clean_pages"],
            "mean_template_token_fraction": cleaned["mean_template_token_fraction"],
            "state_changes": templates, "output": output, "extract_settings": _settings(config),
            "timings": {**timings, "total_s": round(time.time() - clock, 3)},
        }
        state.commit_night({
            "seq": seq, "night": night, "started_at": started, "finished_at": datetime.now(timezone.utc),
            "files": ingested, "file_keys": [key[p] for p in ingested], "output": output, "versions": versions,
            "summary": json.dumps(summary, default=str),
        })
    finally:
        spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")
    RunOutput(spark, work, night).remove_path(work)
    progress(f"nightly: committed night {night} -> {output}")
    return summary


# what makes a page's key, its pagelets and their shingles: the state holds them from
# every night, so a night that computed them otherwise would hold a page twice under
# two keys (strip_index) or compare shingles of other permutations (found in review)
STATE_SETTINGS = ("k", "shingle_ngram", "shingle_rows", "shingle_seed", "dup_ngram", "dup_rows", "strip_index")


def _settings(config: Config) -> dict:
    return {name: getattr(config.extract, name) for name in STATE_SETTINGS}


def _check_settings(state: State, nights: list[dict], config: Config) -> None:
    """Refuse a night whose extract settings differ from the last committed night's
    (a state from before they were recorded is not checked)."""
    held = json.loads(nights[-1]["summary"]).get("extract_settings") if nights else None
    if not held:
        return
    ours = _settings(config)
    differ = [f"extract.{k} = {ours[k]!r} (the state's: {held[k]!r})" for k in STATE_SETTINGS
              if k in held and held[k] != ours[k]]
    if differ:
        raise StateError(f"{state.root}: this night's settings differ from those its state was built with: "
                         f"{'; '.join(differ)}. Keep the state's, or build a new state")


def _ingested_records(extracted: dict, records: DataFrame, unopened: list[str]) -> dict:
    """The night's records and their outcomes, of the files it ingests: extract's
    counts less the rows of the files it does not (an unopened file's row was
    counted, and counted again by the night that read the file, so the nights'
    counts did not add up to RECORDS: found in review). Only those rows are
    counted again, and only when there are such files."""
    counts = dict(extracted["records"]["by_outcome"])
    if unopened:
        for r in records.where(F.col("warc_file").isin(list(unopened))).groupBy("outcome").count().collect():
            counts[r["outcome"]] -= r["count"]
    counts = {k: v for k, v in counts.items() if v}
    return {"records": sum(counts.values()), "records_by_outcome": counts}


def _merge_captures(state: State, night: str, extract_out: str, work: str, progress, nodes: bool,
                    committed: list[str], unopened: list[str] = ()) -> dict:
    """The night's records, pages, links, pagelets (and with NODES, the nodes)
    into the state; which pages won, which were removed, which sites the night
    touched (`committed`: the committed nights' ids). The rows and pages of
    `unopened` files (not opened, or not read whole) are left out: the night does
    not ingest them, and a row of theirs would keep that record's capture out of
    RECORDS when a later night reads the file."""
    spark = state.spark
    records = spark.read.parquet(f"{extract_out}/{S.RECORDS}")
    pages = spark.read.parquet(f"{extract_out}/{S.PAGES}")
    if unopened:  # (links, pagelets and nodes follow the pages that win)
        records = records.where(~F.col("warc_file").isin(list(unopened)))
        pages = pages.where(~F.col("warc_file").isin(list(unopened)))
    for name, schema in ((RECORDS, S.RECORDS_SCHEMA), (PAGES, STATE_PAGES_SCHEMA),
                         (LINKS, S.LINKS_SCHEMA), (PAGELETS, S.PAGELETS_SCHEMA)):
        state.create_if_missing(name, schema)
    # every record, once: (file, offset) is the record's identity
    metrics = {"records": state.merge(RECORDS, records.select(*S.RECORDS_SCHEMA.names),
                                      ["warc_file", "warc_offset"], update_all=False)}
    # what the state holds per URL; a page a committed night removed stays removed, and is
    # not removed (nor its site touched) again by each later 404 (a re-run of a killed night,
    # under this id or another, removes again what it removed: the MERGE is idempotent)
    current = state.latest(PAGES).select("page_key", F.expr(held_order()).alias("held"), (
        F.col("removed_at").isNotNull() & (F.col("night").isin(committed) if committed else F.lit(False))).alias(
        "removed_before"))
    # the newest event per URL this night: a page capture, or a dated 404/410 (an undated one
    # cannot say the page went after the capture held). A 404's order is its time alone (file
    # and offset lowest), as the state holds a removal (held_order): at the same second a
    # capture wins, whichever night brings either (before, within one night the file names
    # decided, and across nights the capture won)
    gone = records.where(F.col("outcome").eqNullSafe("non_2xx") & F.col("detail").rlike(GONE_DETAIL)
                         & F.col("page_key").isNotNull() & F.col("fetch_time").isNotNull()).select(
        "page_key", "fetch_time", F.lit("").alias("warc_file"), F.lit(-1).cast("bigint").alias("warc_offset"))
    events = pages.select("page_key", "fetch_time", "warc_file", "warc_offset", F.lit(False).alias("gone")).unionByName(
        gone.withColumn("gone", F.lit(True)))
    newest = events.withColumn("order", F.struct(F.coalesce("fetch_time", F.expr(EPOCH)), "warc_file", "warc_offset"))
    best = newest.groupBy("page_key").agg(F.max("order").alias("order"))
    newest = newest.join(best, ["page_key", "order"]).join(current, "page_key", "left")
    wins = newest.where(F.col("held").isNull() | (F.col("order") >= F.col("held")))
    winners = wins.where(~F.col("gone")).select("page_key").persist()
    # (two 404s of a URL in one second tie: one row per page, or Delta refuses the MERGE)
    removed = wins.where(F.col("gone") & F.col("held").isNotNull() & ~F.col("removed_before")).select(
        "page_key", "fetch_time").dropDuplicates(["page_key"]).persist()

    page_rows = pages.join(winners, "page_key", "left_semi").withColumn(
        "removed_at", F.lit(None).cast("timestamp")).withColumn("night", F.lit(night))
    metrics[PAGES] = state.merge(PAGES, page_rows.select(*STATE_PAGES_SCHEMA.names), ["page_key"],
                                 update_when=f"{capture_order('s')} >= {held_order('t')}")
    if removed.take(1):
        metrics["removals"] = state.merge(
            PAGES, removed, ["page_key"], insert=False,
            update_when=f"s.fetch_time >= coalesce(t.removed_at, t.fetch_time, {EPOCH})",
            set_columns={"removed_at": "s.fetch_time", "night": f"'{night}'"})
    _crash_point("pages")
    links = spark.read.parquet(f"{extract_out}/{S.LINKS}").join(winners, F.col("src_page_key") == F.col("page_key"),
                                                                 "left_semi")
    metrics[LINKS] = state.replace_groups(LINKS, links, winners.withColumnRenamed("page_key", "src_page_key"),
                                          "src_page_key", ["src_page_key", "link_ordinal"], f"{work}/merge-links")
    _crash_point("links")
    pagelets = spark.read.parquet(f"{extract_out}/{S.PAGELETS}").join(winners, "page_key", "left_semi")
    metrics[PAGELETS] = state.replace_groups(PAGELETS, pagelets, winners, "page_key", ["page_key", "ordinal"],
                                             f"{work}/merge-pagelets")
    if nodes or state.exists(NODES):  # a site-mode night drops a new capture's old nodes: none are stale
        state.create_if_missing(NODES, S.NODES_SCHEMA)
        new_nodes = (spark.read.parquet(f"{extract_out}/{S.NODES}").join(winners, "page_key", "left_semi") if nodes
                     else empty_frame(spark, S.NODES_SCHEMA))
        metrics[NODES] = state.replace_groups(NODES, new_nodes, winners, "page_key", ["page_key", "node"],
                                              f"{work}/merge-nodes")
    # the touched sites stay in Spark (a night of a big crawl touches millions): written once, read back
    touched_path = f"{work}/touched-sites"
    state.latest(PAGES).join(winners.unionByName(removed.select("page_key")), "page_key", "left_semi").select(
        "site").where(F.col("site").isNotNull()).distinct().write.mode("overwrite").parquet(touched_path)
    counts = {"pages_won": winners.count(), "pages_removed": removed.count(),
              "touched_sites": spark.read.parquet(touched_path).count()}
    progress(f"nightly: state merged: {counts['pages_won']} page(s) new or newer, {counts['pages_removed']} removed, "
             f"{counts['touched_sites']} site(s) touched")
    winners.unpersist()
    removed.unpersist()
    return {**counts, "merge_metrics": metrics, "touched_sites_path": touched_path}


def _snapshot(state: State, touched: DataFrame, n_sites: int, out: str, extracted: dict, night: str,
              nodes: bool) -> tuple[int, int]:
    """The touched sites' live pages, links and pagelets (and with NODES, their
    nodes) as a run folder, which detect, the page-level model and clean work on
    as they do after extract. A page with no nodes in the state (ingested by a
    site-mode night) is cleaned at site level.

    REDIRECTS: the URLs that redirect to a snapshot page, by the state's
    RECORDS (every night's so far; rows of nights before 2026-11-29 hold no
    Location), which the folder does not hold: the night's detect, and any
    `detect`, `priority` or `related` run on its folder later, follow them
    (tables/targets.py).

    Near-duplicates (`dup_of`) are marked again over the snapshot: each night's
    extract marked them among its own pages only, and the evidence filter's
    "pages that are not near-duplicates of each other" (Def. 4 with the paper's
    section 3 remark on mirrors) must see the site's pages together (measured
    on the nine sites split in two nights: 10 more templates without this)."""
    from templatemine.tables.extract import mark_duplicates
    from templatemine.tables.targets import redirect_keys, twin_keys

    spark = state.spark
    pages = state.latest(PAGES).where(F.col("removed_at").isNull()).join(touched, "site", "left_semi")
    mark_duplicates(pages.drop("dup_of")).select(*S.PAGES_SCHEMA.names).write.mode("overwrite").parquet(
        f"{out}/{S.PAGES}")
    snapshot_pages = spark.read.parquet(f"{out}/{S.PAGES}")
    keys = snapshot_pages.select("page_key")
    state.latest(LINKS).join(keys.withColumnRenamed("page_key", "src_page_key"), "src_page_key", "left_semi") \
        .write.mode("overwrite").parquet(f"{out}/{S.LINKS}")
    state.latest(PAGELETS).join(keys, "page_key", "left_semi").write.mode("overwrite").parquet(f"{out}/{S.PAGELETS}")
    if nodes:
        state.latest(NODES).join(keys, "page_key", "left_semi").write.mode("overwrite").parquet(f"{out}/{S.NODES}")
    redirect_keys(state.latest(RECORDS), snapshot_pages, twin_keys(snapshot_pages)).select(
        *S.REDIRECTS_SCHEMA.names).write.mode("overwrite").parquet(f"{out}/{S.REDIRECTS}")
    n_pages = keys.count()
    n_redirects = spark.read.parquet(f"{out}/{S.REDIRECTS}").count()
    # not `node_features`: the snapshot's nodes come from the state, extracted by
    # earlier nights, perhaps by another templatemine: pagelevel sets aside the pages
    # whose rows' features_format is another (train.judgeable_nodes)
    night_only = {k: v for k, v in extracted.items() if k != "node_features"}
    manifest = {**night_only, "out": out, "night": night,
                "snapshot": {"sites": n_sites, "pages": n_pages, "redirects": n_redirects},
                "note": "pages/links/pagelets/nodes are the touched sites' state; redirects are the state's "
                        "RECORDS' for those pages; records and counts are the night's"}
    RunOutput(spark, out, night).write_text(f"{out}/{MANIFEST}", json.dumps(manifest, indent=2, default=str))
    return n_pages, n_redirects


def _merge_templates(state: State, run_out: str, touched: DataFrame, work: str) -> dict:
    """The touched sites' template membership replaces theirs; templates are
    upserted by id, and a template no page holds any more is deleted (an etdm
    template of no page only when its site is touched)."""
    spark = state.spark
    members = spark.read.parquet(f"{run_out}/{TEMPLATE_PAGELETS}")
    templates = spark.read.parquet(f"{run_out}/{TEMPLATES}")
    state.create_if_missing(TEMPLATE_PAGELETS, members.schema)
    state.create_if_missing(TEMPLATES, templates.schema)
    site_pages = state.latest(PAGES).join(touched, "site", "left_semi").select("page_key")
    metrics = {TEMPLATE_PAGELETS: state.replace_groups(TEMPLATE_PAGELETS, members, site_pages, "page_key",
                                                       ["page_key", "ordinal"], f"{work}/merge-members")}
    held = state.latest(TEMPLATE_PAGELETS).select("template_id").distinct()
    orphans = state.latest(TEMPLATES).join(held, "template_id", "left_anti")
    if "site" in orphans.columns and "n_pages" in orphans.columns:
        # an etdm night's template that no page maps to (n_pages 0: etdm_templates_table keeps
        # them) is held by no membership: it goes when its site is re-detected, not before
        orphans = orphans.where(~((F.coalesce("n_pages", F.lit(0)) == 0) & F.col("site").isNotNull())).unionByName(
            orphans.where((F.coalesce("n_pages", F.lit(0)) == 0) & F.col("site").isNotNull()).join(
                touched, "site", "left_semi"))
    orphans = orphans.select("template_id")
    ids = templates.select("template_id").unionByName(orphans)
    metrics[TEMPLATES] = state.replace_groups(TEMPLATES, templates, ids, "template_id", ["template_id"],
                                              f"{work}/merge-templates")
    return metrics


def _remove_uncommitted_outputs(state: State, committed: list[str]) -> list[str]:
    """Delete STATE/nights/<night> of every night not committed; their names."""
    helper = RunOutput(state.spark, state.root, "clean-up")
    fs, Path = helper._fs, helper._Path
    folder = Path(f"{state.root}/nights")
    if not fs.exists(folder):
        return []
    kept = set(committed)
    gone = sorted(s.getPath().getName() for s in fs.listStatus(folder)
                  if s.isDirectory() and s.getPath().getName() not in kept)
    for name in gone:
        fs.delete(Path(f"{state.root}/nights/{name}"), True)
    return gone


def _publish(spark: SparkSession, run_out: str, output: str) -> None:
    """Move the finished run folder to STATE/nights/<night> (a re-run replaces it)."""
    helper = RunOutput(spark, output, "publish")
    helper.remove_path(output)
    fs, Path = helper._fs, helper._Path
    fs.mkdirs(Path(output).getParent())
    if not fs.rename(Path(run_out), Path(output)):
        raise OSError(f"could not move {run_out} to {output}")


def read_table(spark: SparkSession, state_root: str, name: str) -> DataFrame:
    """A state table as the last committed night left it."""
    return State(spark, state_root).read_table(name)


__all__ = ["run_night", "read_table", "night_id", "NIGHTS", "GONE_STATUSES", "NothingOpened"]
