"""Spark: site-level labels on NODES, and the templateness classifiers trained
on them with MLlib (Chakrabarti, Kumar & Punera, "Automatically labeling data"
and "Learning the templateness classifier" slides).

    OUT/nodes + OUT/template_pagelets (one or more site-level runs)
      -> node_labels        (label per node: template iff all its own text is, below it too)
      -> train_page_model   (one LogisticRegression per size band, MLlib)
      -> MODEL/<version>/{model.json, band-<i>/}  (MLlib's own format + the plain coefficients)
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from typing import Callable

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StructField, StructType

from templatemine.config import PageLevelConfig, parse_bands
from templatemine.pagelevel.features import (FEATURES, FORMAT, N_FEATURES, node_features_mismatch,
                                             set_aside_message)
from templatemine.pagelevel.model import LATEST, LOCAL_FILES, ModelFiles, PageModel, subtree_labels
from templatemine.tables.output import MANIFEST, qualified, read_json, read_text, replace_text, require_tables


class UntrainableBand(ValueError):
    """A size band without both labels to learn from (a crawl of one-page sites
    has no templates): the page-level stage's model=run falls back to the
    shipped model on this, and on nothing else (a read error is not a reason)."""


_LABEL_SCHEMA = StructType([StructField("page_key", LongType(), False), StructField("node", IntegerType(), False),
                            StructField("label", IntegerType(), False)])


def own_text_labels(nodes: DataFrame, template_pagelets: DataFrame) -> DataFrame:
    """`nodes` with own_label: 1 when every pagelet of the node's own text is a
    template pagelet, 0 when one is not, -1 when it has no own text."""
    members = template_pagelets.groupBy("page_key").agg(F.collect_set("ordinal").alias("template_ordinals"))
    return nodes.join(members, "page_key", "left").withColumn(
        "own_label",
        F.when(F.size("own_pagelets") == 0, F.lit(-1)).when(
            F.forall("own_pagelets", lambda o: F.coalesce(F.array_contains("template_ordinals", o), F.lit(False))),
            F.lit(1)).otherwise(F.lit(0))).drop("template_ordinals")


def _subtree(pdf: pd.DataFrame) -> pd.DataFrame:
    pdf = pdf.sort_values("node")
    return pd.DataFrame({"page_key": pdf["page_key"].to_numpy(), "node": pdf["node"].to_numpy(),
                         "label": subtree_labels(pdf["parent"].to_numpy(), pdf["own_label"].to_numpy())})


def node_labels(nodes: DataFrame, template_pagelets: DataFrame) -> DataFrame:
    """(page_key, node, label): the site-level label of every node's subtree
    (model.subtree_labels), one pandas group per page."""
    tree = nodes.select("page_key", "node", "parent", "own_pagelets")
    return own_text_labels(tree, template_pagelets).select("page_key", "node", "parent", "own_label").groupBy(
        "page_key").applyInPandas(_subtree, _LABEL_SCHEMA)


def judgeable_nodes(spark: SparkSession, out: str, stage: str,
                    progress: Callable[[str], None] = print) -> tuple[DataFrame, dict]:
    """OUT's NODES that this code can judge or train on, and what was set aside
    (`{"pages": n, "formats": {format: pages}}`, empty when nothing was). A
    model trained on features of another meaning or number, or scores computed
    from them, would be silently wrong, so:

    - the manifest records the features (`node_features`: an extract's output
      since 2026-11-27): ValueError unless they are this code's, else every node;
    - no record and no `features_format` column (an output extracted before
      both): ValueError if a node has other than N_FEATURES (one scan);
    - no record, with the column (a nightly run's snapshot: the state's nodes
      come from many nights, perhaps of an older templatemine): each page with
      a node of another format, or of another count, is set aside and said so;
      it is not judged, so clean takes its text from the site-level templates,
      until its page is captured again. A row of null format (a state's node
      from before the column) is set aside too, as of an unknown format: the
      column came while the format was 2, so such a row is of format 2 or older
      (it was judged when its count was right, which format 3 kept at 43)."""
    out = out.rstrip("/")
    record = (read_json(spark, f"{out}/{MANIFEST}") or {}).get("node_features")
    why = node_features_mismatch(record)
    if why:
        raise ValueError(f"{out}: {stage}: {why}")
    nodes = spark.read.parquet(f"{out}/nodes")
    if record:
        return nodes, {}
    if "features_format" not in nodes.columns:
        wrong = nodes.where(F.size("features") != N_FEATURES).select("page_key").limit(1).collect()
        if wrong:
            raise ValueError(f"{out}: {stage}: nodes with other than the {N_FEATURES} features this templatemine "
                             f"computes (page_key {wrong[0]['page_key']}); extract it again")
        return nodes, {}
    # rows of another format, and null rows: two scans
    # whose filters on the format Parquet can push down (an OR with size() it cannot),
    # so once every row is of this format the row groups' statistics (min = max =
    # FORMAT, no null) skip both: 0.22 s against 3.57 s for one OR scan on 20 M nodes; with
    # old null rows in every file 3.56 s against 3.24 s (scripts/bench_format_check.py;
    # docs/pagelevel.md, "Checking the nodes' format")
    fmt = F.col("features_format")
    other = nodes.where(fmt.isNotNull() & (fmt != FORMAT)).unionByName(nodes.where(fmt.isNull()))
    # per page: its other format, or "unknown" (null rows: from before the column)
    stale = other.groupBy("page_key").agg(F.max(F.when(fmt != FORMAT, fmt)).alias("format"))
    by_format = {("unknown" if r["format"] is None else str(r["format"])): r["pages"]
                 for r in stale.groupBy("format").agg(F.count("*").alias("pages")).collect()}
    if not by_format:
        return nodes, {}
    formats = dict(sorted(by_format.items(), key=lambda kv: (0, int(kv[0])) if kv[0].isdigit() else (1, 0)))
    set_aside = {"pages": sum(by_format.values()), "formats": formats}
    progress(f"{stage}: {set_aside_message(set_aside)}")
    # the join finds them again, reading only the row groups that hold them (not cached: a
    # cache would outlive the run in a long-lived session and serve a rewritten OUT's old keys)
    return nodes.join(stale.select("page_key"), "page_key", "left_anti"), set_aside


def labelled_nodes(spark: SparkSession, outs: list[str], min_site_pages: int = 1, max_pages: int = 0,
                   seed: int = 7, progress: Callable[[str], None] = print,
                   judgeable: dict[str, DataFrame] | None = None) -> DataFrame:
    """Nodes with features and a 0/1 label, from site-level runs' outputs: the
    pages of sites with at least `min_site_pages` pages in their output, at
    most `max_pages` of them per output (0: all), sampled by page hash. An
    output's nodes are `judgeable_nodes`' unless `judgeable` has them already
    (the page-level stage's, checked once)."""
    frames = []
    for out in outs:
        out = out.rstrip("/")
        require_tables(spark, out, ("pages", "nodes", "template_pagelets"), "training")
        checked = (judgeable or {}).get(out)
        if checked is None:
            checked, _ = judgeable_nodes(spark, out, "training", progress)
        sites = spark.read.parquet(f"{out}/pages").select("page_key", "site")
        if min_site_pages > 1:
            sizes = sites.groupBy("site").agg(F.count("*").alias("site_pages")).where(
                F.col("site_pages") >= min_site_pages)
            sites = sites.join(sizes.select("site"), "site")
        if max_pages:
            n_pages = sites.count()
            if n_pages > max_pages:
                sites = sites.where((F.abs(F.xxhash64("page_key", F.lit(seed + 1))) % 1_000_000)
                                    < int(1_000_000 * max_pages / n_pages))
        # only the chosen pages' nodes are labelled (a semi-join by page, before the per-page trees)
        nodes = checked.join(sites.select("page_key"), "page_key", "left_semi")
        labels = node_labels(nodes, spark.read.parquet(f"{out}/template_pagelets"))
        frames.append(nodes.select("page_key", "node", "n_tokens", "features").join(labels, ["page_key", "node"])
                      .where(F.col("label") >= 0).join(sites, "page_key"))
    data = frames[0]
    for f in frames[1:]:
        data = data.unionByName(f)
    return data


def band_lowers(config: PageLevelConfig) -> tuple[int, ...]:
    return parse_bands(config.bands)


def train_page_model(spark: SparkSession, outs: list[str], model_root: str, config: PageLevelConfig = PageLevelConfig(),
                     progress=print, save_mllib: bool = True, judgeable: dict[str, DataFrame] | None = None) -> dict:
    """Train, save MODEL_ROOT/<version>/ and point MODEL_ROOT/LATEST at it; the
    training summary (also in model.json's trained_on). MODEL_ROOT is a local
    folder or any Hadoop path of the session (hdfs://, s3a://: `model_files`);
    `save_mllib` False skips MLlib's own copy of each band; `judgeable`: nodes
    already checked, per output (labelled_nodes)."""
    from pyspark.ml.classification import LogisticRegression
    from pyspark.ml.functions import array_to_vector, vector_to_array

    started = time.time()
    lowers = band_lowers(config)
    data = labelled_nodes(spark, outs, config.train_min_site_pages, config.train_max_pages,
                          config.seed, progress, judgeable).withColumn("fv", array_to_vector("features")).withColumn(
        "band", F.lit(0))
    for i, lower in enumerate(lowers[1:], start=1):
        data = data.withColumn("band", F.when(F.col("n_tokens") >= lower, F.lit(i)).otherwise(F.col("band")))
    # hold out whole pages: nodes of one page are not independent
    data = data.withColumn("held", (F.abs(F.xxhash64("page_key", F.lit(config.seed))) % 1000) < config.holdout * 1000)
    data = data.withColumn("label", F.col("label").cast("double"))
    # a node with a NaN or infinite feature is not trained on (it made MLlib's coefficients NaN)
    data = data.withColumn("finite", F.forall("features", lambda v: ~F.isnan(v) & (F.abs(v) != float("inf"))))
    if config.site_weights:  # each site weighs the same within a band, whatever its size
        trained = data.where(F.col("finite"))
        per_site = trained.groupBy("band", "site").agg(F.count("*").alias("site_nodes"))
        per_band = trained.groupBy("band").agg(F.count("*").alias("band_nodes"),
                                               F.countDistinct("site").alias("band_sites"))
        # (left: a node that is not trained on is still counted, below)
        data = data.join(per_site, ["band", "site"], "left").join(per_band, "band", "left").withColumn(
            "weight", F.col("band_nodes") / (F.col("band_sites") * F.col("site_nodes")))
    else:
        data = data.withColumn("weight", F.lit(1.0))
    data = data.persist()
    named = [output_name(spark, o) for o in outs]
    version = _version(named, config)
    files = model_files(spark, model_root)
    target = files.join(model_root, version)
    bands, fitted_bands = [], []
    coefficients, intercepts, ks = [], [], []
    # every band's counts in one job, checked before any band is fitted or written: a
    # band without both labels used to fail after the bands before it were saved
    counted = data.groupBy("band", "held", "label", "finite").agg(F.count("*").alias("n")).collect()
    counts = {(r["band"], r["held"], int(r["label"])): r["n"] for r in counted if r["finite"]}
    non_finite = sum(r["n"] for r in counted if not r["finite"])
    if non_finite:
        progress(f"train: {non_finite} node(s) with a feature that is not a finite number (NaN or infinite) "
                 "left out")
        data = data.where(F.col("finite"))
    for i, lower in enumerate(lowers):
        n_train = [counts.get((i, False, 0), 0), counts.get((i, False, 1), 0)]
        if min(n_train) == 0:
            data.unpersist()
            raise UntrainableBand(f"band {i} (>= {lower} tokens): {n_train[0]} content and {n_train[1]} template "
                                  "nodes to train on; need both (more site-level output, or other pagelevel.bands)")
    for i, lower in enumerate(lowers):
        part = data.where(F.col("band") == i)
        train, held = part.where(~F.col("held")), part.where(F.col("held"))
        n_train = [counts.get((i, False, 0), 0), counts.get((i, False, 1), 0)]
        lr = LogisticRegression(featuresCol="fv", labelCol="label", weightCol="weight", regParam=config.reg_param,
                                elasticNetParam=0.0,
                                maxIter=200, standardization=True, family="binomial")
        fitted = lr.fit(train)
        fitted_bands.append(fitted)  # written once the whole model has passed its check
        scored = fitted.transform(held).select("label", vector_to_array("probability")[1].alias("p"))
        stats = scored.agg(
            F.avg(F.when(F.col("label") == 1, F.col("p"))).alias("k"),
            F.count(F.when(F.col("label") == 1, 1)).alias("held_templates"),
            F.avg(((F.col("p") >= 0.5).cast("double") == F.col("label")).cast("double")).alias("accuracy"),
            F.count("*").alias("n")).first()
        estimated = stats["k"] is not None and stats["held_templates"] >= config.pu_min_held_templates
        k = float(stats["k"]) if estimated else 1.0
        coefficients.append(tuple(float(c) for c in fitted.coefficients.toArray()))
        intercepts.append(float(fitted.intercept))
        ks.append(k)
        bands.append({"lower": lower, "train_content": n_train[0], "train_template": n_train[1],
                      "held_out": stats["n"], "held_out_accuracy": round(stats["accuracy"] or 0.0, 4),
                      "held_out_templates": stats["held_templates"], "pu_k": round(k, 4),
                      "pu_k_estimated": estimated, "iterations": fitted.summary.totalIterations})
        progress(f"train: band >= {lower} tokens: {n_train[0]} content / {n_train[1]} template nodes, "
                 f"held-out accuracy {bands[-1]['held_out_accuracy']:.3f}, k = {k:.3f}"
                 + ("" if estimated else f" (not estimated: {stats['held_templates']} held-out template nodes, "
                    f"fewer than pagelevel.pu_min_held_templates = {config.pu_min_held_templates})"))
    data.unpersist()
    trained_on = {"outputs": named, "bands": bands, **({"non_finite_nodes": non_finite} if non_finite else {}),
                  "config": {"bands": config.bands, "reg_param": config.reg_param, "holdout": config.holdout,
                             "seed": config.seed, "site_weights": config.site_weights,
                             "train_min_site_pages": config.train_min_site_pages,
                             "train_max_pages": config.train_max_pages,
                             "pu_min_held_templates": config.pu_min_held_templates},
                  "trained_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "seconds": round(time.time() - started, 1)}
    model = PageModel(version, FEATURES, lowers, tuple(coefficients), tuple(intercepts), tuple(ks), trained_on)
    try:  # what load_model would refuse is not saved, MLlib's bands neither, and LATEST stays
        model.check()
    except ValueError as exc:
        raise ValueError(f"training gave an unusable model, not saved ({exc})") from None
    if save_mllib:
        for i, fitted in enumerate(fitted_bands):
            fitted.write().overwrite().save(files.join(target, f"band-{i}"))
    model.save(target, files)
    files.replace_text(files.join(model_root, LATEST), version + "\n")
    progress(f"train: model {version} -> {target}")
    return {"version": version, "path": target, **trained_on}


def _version(outs: list[str], config: PageLevelConfig) -> str:
    """pagelevel-<UTC second>-<settings digest>-<random>: the digest says which
    trainings share outputs and settings; the random part keeps two trainings
    started in the same second apart (each writes its own directory)."""
    named = sorted(o.rstrip("/") for o in outs)  # output_name's: "out/" and "./out" alike
    settings = [named, config.bands, config.reg_param, config.holdout, config.seed, config.site_weights,
                config.train_min_site_pages, config.train_max_pages, config.pu_min_held_templates, FEATURES]
    digest = hashlib.sha1(json.dumps(settings).encode()).hexdigest()[:8]
    return f"pagelevel-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{digest}-{uuid.uuid4().hex[:6]}"


def output_name(spark: SparkSession, out: str) -> str:
    """The output folder OUT as the model records it (trained_on, the version's
    digest): a URI as given; a path without a scheme made absolute where Spark
    reads it, on local disk, or qualified by the session's default file system
    when that is not local (fs.defaultFS hdfs://... on YARN: the driver's
    working directory named another folder than the one trained on; found in
    review)."""
    if "://" in out:
        return out.rstrip("/")
    return os.path.abspath(out) if _default_fs_is_local(spark) else qualified(spark, out).rstrip("/")


def _default_fs_is_local(spark: SparkSession) -> bool:
    """Whether a path without a scheme is on the driver's disk (fs.defaultFS file:///)."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    return spark.sparkContext._jvm.org.apache.hadoop.fs.FileSystem.getDefaultUri(conf).getScheme() == "file"


def model_files(spark: SparkSession, path: str) -> ModelFiles:
    """How the model root PATH is read and written: through the session's
    Hadoop FileSystem for a URI (hdfs://, s3a://, file://, any scheme the
    session can reach) and for a path without a scheme when the session's
    default file system is not local disk (fs.defaultFS hdfs://... on YARN,
    EMR, Dataproc: there Spark writes MLlib's band directories, so model.json
    and LATEST go beside them, not onto the driver's disk); plain files
    otherwise."""
    if "://" not in path and _default_fs_is_local(spark):
        return LOCAL_FILES
    return ModelFiles(lambda p: read_text(spark, p), lambda p, text: replace_text(spark, p, text))
