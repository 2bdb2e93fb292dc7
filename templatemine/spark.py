"""The Spark session: local mode by default, spark-submit's when there is one.

The GraphFrames JVM jars are taken from the folder scripts/bootstrap fills
(`.cache/jars`) or from $TEMPLATEMINE_JARS, so a run needs no network; under
spark-submit, pass them with `--packages` instead.
"""

from __future__ import annotations

import glob
import os
import sys
import time

from pyspark.sql import SparkSession

# What every templatemine session needs, whatever the cluster.
REQUIRED_CONF = {
    "spark.sql.session.timeZone": "UTC",  # WARC dates are UTC; Arrow timestamps travel as UTC
}
# Defaults that the user's own setting of the same key (the config's [spark] table,
# --conf, spark-submit's --conf or spark-defaults.conf) replaces.
DEFAULT_SQL_CONF = {
    # Parquet (and the nightly Delta state) in zstd, not Spark's snappy: a `run`'s
    # output 0.63 to 0.65 of the bytes in the same time (scripts/bench_storage.py;
    # README, "Storage")
    "spark.sql.parquet.compression.codec": "zstd",
    # the captures' schema has 28 top-level columns (RECORDS' and PAGES'): over Spark's
    # 25 a plan's string is truncated with a WARN, which broke `run --quiet`'s silence
    "spark.sql.debug.maxToStringFields": "100",
}
# Local mode: no delay scheduling. Its one executor runs every task, so waiting for a more local
# slot gains nothing, and a job hung for ever: measured with `run`'s output on a MiniDFSCluster,
# a broadcast's job at extract's counts (the links' redirect resolution) and detect's waited with
# no task running and the scheduler idle (900 s), and ran in seconds with this. Our reading: its
# stage mixed shuffle reads, preferring the driver's executor, with HDFS blocks, preferring the
# DataNode's host name, which is not the one the executor runs under; delay scheduling waits at
# a locality level for a slot no task can take, and local mode offers its cores again only when a
# task ends (no periodic revive, SPARK-4939), so no offer came to end the wait.
LOCALITY_WAIT = "spark.locality.wait"
GRAPHFRAMES_VERSION = "0.12.3"
GRAPHFRAMES_PACKAGES = (
    f"io.graphframes:graphframes-spark4_2.13:{GRAPHFRAMES_VERSION}",
    f"io.graphframes:graphframes-graphx-spark4_2.13:{GRAPHFRAMES_VERSION}",
)
# Delta Lake for the nightly state. 4.3.1 (POM: Spark 4.1.0) runs on our pyspark 4.1.4;
# 4.1.0 does not (measured: ClassNotFoundException ...logical.IgnoreCachedData, a
# class Spark 4.1.4 no longer has). The PyPI package pins the same version.
DELTA_VERSION = "4.3.1"
DELTA_PACKAGES = (f"io.delta:delta-spark_2.13:{DELTA_VERSION}",)
DELTA_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}
# What scripts/fetch_jars.py resolves into .cache/jars (name -> coordinates), and
# what `--packages` must name under spark-submit.
JVM_PACKAGES = {"graphframes": GRAPHFRAMES_PACKAGES, "delta": DELTA_PACKAGES}


def repo_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def jars_dir() -> str:
    return os.environ.get("TEMPLATEMINE_JARS") or os.path.join(repo_root(), ".cache", "jars")


def local_jars() -> list[str]:
    return sorted(glob.glob(os.path.join(jars_dir(), "*.jar")))


def delta_jars_present() -> bool:
    """True when set-up fetched the Delta jars (a spark-submit run brings its own by --packages)."""
    return any(os.path.basename(j).startswith("io.delta_delta-spark") for j in local_jars())


def under_spark_submit() -> bool:
    """True when spark-submit launched this driver (it owns master and jars)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def submitted_conf() -> dict[str, str]:
    """What spark-submit set for this driver (its --conf, --driver-memory...,
    spark-defaults.conf); {} outside spark-submit, where no JVM runs yet and
    starting one here would fix its memory and jars before the session's conf."""
    if not under_spark_submit():
        return {}
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # the gateway spark-submit opened
    return dict(SparkConf().getAll())


LOG4J2_PROPERTIES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
JAVA_OPTIONS = ("spark.driver.extraJavaOptions", "spark.driver.defaultJavaOptions")
LOG4J_FILES = tuple(f"log4j2{ext}" for ext in (".properties", ".xml", ".yaml", ".yml", ".json"))


def spark_conf_dir(environ=os.environ) -> str | None:
    """The folder spark-submit reads spark-defaults.conf and log4j2 files from:
    SPARK_CONF_DIR, else SPARK_HOME's conf (pip's pyspark is SPARK_HOME when unset)."""
    if environ.get("SPARK_CONF_DIR"):
        return environ["SPARK_CONF_DIR"]
    home = environ.get("SPARK_HOME")
    if not home:
        try:
            from pyspark.find_spark_home import _find_spark_home

            home = _find_spark_home()
        except (Exception, SystemExit):  # (it exits where it finds no Spark)
            return None
    return os.path.join(home, "conf")


def _properties_files(environ) -> list[str]:
    """The properties files spark-submit reads for this driver: PYSPARK_SUBMIT_ARGS's
    --properties-file (with CONF_DIR/spark-defaults.conf too under
    --load-spark-defaults), else CONF_DIR/spark-defaults.conf."""
    import shlex

    try:
        words = shlex.split(environ.get("PYSPARK_SUBMIT_ARGS", ""))
    except ValueError:
        words = []
    files = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--properties-file"]
    files += [w.split("=", 1)[1] for w in words if w.startswith("--properties-file=")]
    conf_dir = spark_conf_dir(environ)
    if conf_dir and (not files or "--load-spark-defaults" in words):
        files.append(os.path.join(conf_dir, "spark-defaults.conf"))
    return files


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:  # (a Latin-1 comment is no error)
            return fh.read()
    except OSError:
        return ""


def _sets(text: str, key: str) -> bool:
    """Whether a properties file's text sets KEY (a line starting with it and a separator)."""
    import re

    return re.search(rf"(?m)^[ \t\f]*{re.escape(key)}[ \t\f]*[=: \t\f]", text) is not None


def quiet_log_options(settings: dict, environ=os.environ) -> str | None:
    """spark.driver.extraJavaOptions for a driver this process starts (not under
    spark-submit: local mode, or a client-mode driver of --master): the
    session's own value, with log4j2 pointed at LOG4J2_PROPERTIES (Spark's WARN
    default without the lines every laptop run printed: "Using Spark's default
    log4j profile", "Setting default log level", a loopback host name, no native
    Hadoop library). None, to leave everything as it is:
    - where a properties file spark-submit reads (spark-defaults.conf,
      --properties-file) sets spark.driver.extraJavaOptions: our --conf would
      replace its value whole, and carrying it over means parsing Java's
      properties format exactly (continuations, escapes), which a mistake turns
      into a driver that does not start (found in review);
    - where the user configures log4j: a log4j2.configurationFile or
      log4j.configuration in the session's Java options, in SPARK_SUBMIT_OPTS or
      conf/java-opts, in a properties file with defaultJavaOptions,
      LOG4J_CONFIGURATION_FILE, or a log4j2 file in Spark's conf folder;
    - where the shipped file is not there."""
    conf_dir = spark_conf_dir(environ)
    texts = [_read_text(path) for path in _properties_files(environ)]
    if any(_sets(text, JAVA_OPTIONS[0]) for text in texts):
        return None
    user = " ".join([settings.get(JAVA_OPTIONS[0], ""), settings.get(JAVA_OPTIONS[1], ""),
                     environ.get("SPARK_SUBMIT_OPTS", ""), _read_text(os.path.join(conf_dir, "java-opts")) if conf_dir
                     else "", *(text for text in texts if _sets(text, JAVA_OPTIONS[1]))])
    if ("log4j2.configurationFile" in user or "log4j.configuration" in user
            or environ.get("LOG4J_CONFIGURATION_FILE")
            or (conf_dir and any(os.path.exists(os.path.join(conf_dir, name)) for name in LOG4J_FILES))
            or not os.path.exists(LOG4J2_PROPERTIES)):
        return None
    # a path, not a file: URI (a '#' or '%20' in it made log4j2 find no configuration), quoted and
    # escaped for the launcher's option parser, which reads quotes and backslashes (a path holding '
    # stopped every command before: "Invalid option string"); both found in review
    option = f"-Dlog4j2.configurationFile={LOG4J2_PROPERTIES}"
    quoted = '"' + option.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return " ".join(filter(None, [settings.get(JAVA_OPTIONS[0], ""), quoted]))


def local_mode_defaults(master: str | None, settings: dict, environ=os.environ) -> dict:
    """What a session in local mode (a `local` or `local[...]` master: one
    executor; not `local-cluster[...]`) sets where the user did not:
    spark.locality.wait 0s (LOCALITY_WAIT's comment). The user sets it in
    `settings` (the config's [spark] table, --conf), spark-submit's conf, or a
    properties file or PYSPARK_SUBMIT_ARGS' --conf a driver this process starts
    reads. `master` as get_session's (None: local[*], or spark-submit's)."""
    submitted = submitted_conf()
    running = (settings.get("spark.master") or master
               or (submitted.get("spark.master", "") if under_spark_submit() else "local[*]"))
    if not (running == "local" or running.startswith("local[")):
        return {}
    if (LOCALITY_WAIT in settings or LOCALITY_WAIT in submitted
            or f"{LOCALITY_WAIT}=" in environ.get("PYSPARK_SUBMIT_ARGS", "")
            or any(_sets(_read_text(path), LOCALITY_WAIT) for path in _properties_files(environ))):
        return {}
    return {LOCALITY_WAIT: "0s"}


def get_session(app_name: str = "templatemine", master: str | None = None, conf: dict | None = None,
                defaults: dict | None = None) -> SparkSession:
    """`conf` is set whatever else is; `defaults` (a preset's or a config file's
    [spark] table) only where spark-submit did not set the key, so a job under
    spark-submit runs with the cluster's --conf, not a laptop preset's."""
    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    elif not under_spark_submit():
        builder = builder.master("local[*]")
    if not under_spark_submit():
        # Python workers started by this driver must use this interpreter (the
        # virtualenv with selectolax, warcio...), not whatever `python3` is first
        # on PATH; a cluster ships its own (see conf/ and scripts/).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    given = submitted_conf() if defaults else {}
    settings = {**{k: v for k, v in (defaults or {}).items() if k not in given}, **(conf or {}), **REQUIRED_CONF}
    settings.update(local_mode_defaults(master, settings))
    if not under_spark_submit() and (options := quiet_log_options(settings)):
        settings["spark.driver.extraJavaOptions"] = options  # (under spark-submit the driver runs already)
    jars = local_jars()
    if jars and not under_spark_submit() and "spark.jars.packages" not in settings:
        existing = settings.get("spark.jars", "")
        settings["spark.jars"] = ",".join(filter(None, [existing, *jars]))
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    given = spark.sparkContext.getConf()
    for key, value in DEFAULT_SQL_CONF.items():
        if key not in settings and not given.contains(key):
            spark.conf.set(key, value)
    spark.sparkContext.setLogLevel(os.environ.get("TEMPLATEMINE_SPARK_LOG_LEVEL", "WARN"))
    return spark


def graphframes_available(spark: SparkSession) -> bool:
    """True if the GraphFrames JVM classes can be loaded by this session."""
    try:
        spark.sparkContext._jvm.java.lang.Class.forName(
            "org.graphframes.GraphFrame", True, spark.sparkContext._jvm.Thread.currentThread().getContextClassLoader()
        )
        return True
    except Exception:
        return False


def shuffle_partitions(spark: SparkSession) -> int:
    """spark.sql.shuffle.partitions as a number of partitions to ask for (Spark's
    own default, 200, when unset: `get` with a default of None gave None, found
    in review); the default parallelism where it is no number (a platform's "auto")."""
    value = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        return max(1, int(value))
    except (TypeError, ValueError):
        return max(1, spark.sparkContext.defaultParallelism)


def empty_frame(spark: SparkSession, schema):
    """An empty DataFrame of `schema` (a StructType or DDL string) that runs no
    job: createDataFrame of an empty list is two empty partitions for Python's
    workers, a job of their own in every query it joins, which adaptive
    execution may leave running (stop_when_idle); an empty RDD has no partition."""
    return spark.createDataFrame(spark.sparkContext.emptyRDD(), schema)


def stop_when_idle(spark: SparkSession, wait_s: float = 30.0, poll_s: float = 0.1) -> int:
    """Stops the session once no job of it runs, waiting at most `wait_s`
    seconds; returns how many jobs were running when it was called.

    A command calls it when its work is done, so every job it waited on has
    ended: a job still running is one that adaptive execution started and no
    plan needed (the other side of a join that an empty side had already
    ended, which Spark leaves running: SPARK-37043). Stopping Spark under such
    a job killed its Python worker, and the run's stderr, --quiet or not, held
    a crashed worker's or a Python accumulator's error (a flaky CI failure of
    the quiet-run test, 2026-11-29). Idle means no job on two polls in a row,
    `poll_s` apart (the tracker hears of a job a moment after it starts). A
    command that raised stops at once (the caller's plain stop), and so does
    this on Ctrl-C while it waits; a job still running after `wait_s` is
    stopped under, as before."""
    running = 0
    try:
        tracker = spark.sparkContext.statusTracker()
        running = len(tracker.getActiveJobsIds())
        deadline, idle = time.monotonic() + wait_s, 0
        while idle < 2 and time.monotonic() < deadline:
            idle = 0 if tracker.getActiveJobsIds() else idle + 1
            if idle < 2:
                time.sleep(poll_s)
    finally:
        spark.stop()
    return running
