"""The Spark session: local mode by default, spark-submit's when there is one.

The GraphFrames JVM jars are taken from the folder scripts/bootstrap fills
(`.cache/jars`) or from $TEMPLATEMINE_JARS, so a run needs no network; under
spark-submit, pass them with `--packages` instead.
"""

from __future__ import annotations

import glob
import os
import sys

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
}
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


def quiet_log_options(settings: dict, environ=os.environ) -> str | None:
    """spark.driver.extraJavaOptions for a driver this process starts (local
    mode): the user's, with log4j2 pointed at LOG4J2_PROPERTIES (Spark's WARN
    default without the lines every laptop run printed: "Using Spark's default
    log4j profile", "Setting default log level", a loopback host name, no native
    Hadoop library). None, to leave them as they are, where the user configures
    log4j2 (a -Dlog4j2.configurationFile of theirs, a log4j2.properties in
    SPARK_CONF_DIR) or the file is not there."""
    given = settings.get("spark.driver.extraJavaOptions", "")
    conf_dir = environ.get("SPARK_CONF_DIR")
    if ("log4j2.configurationFile" in given or "log4j.configuration" in given
            or (conf_dir and os.path.exists(os.path.join(conf_dir, "log4j2.properties")))
            or not os.path.exists(LOG4J2_PROPERTIES)):
        return None
    option = f"-Dlog4j2.configurationFile=file:{LOG4J2_PROPERTIES}"
    return " ".join(filter(None, [given, f'"{option}"' if any(c.isspace() for c in option) else option]))


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
