"""Fetch the JVM jars templatemine uses (GraphFrames, Delta Lake) into .cache/jars;
with --tests (scripts/test), the tests' own (Hadoop's MiniDFSCluster) into
.cache/test-jars instead.

Spark resolves `--packages` coordinates from Maven Central with its bundled
Ivy; we let it do exactly that once per package group, into .cache/ivy-<group>,
and copy the resolved jars to .cache/jars, which templatemine.spark puts on
`spark.jars` for every local run: no network after set-up. A group the registry
does not serve is recorded in .cache/<group>-fetch.txt and not retried (set
TEMPLATEMINE_REFETCH=1 to retry); exit status 0 all the same, since extraction,
detection and cleaning do not need them (the GraphFrames test skips, and
`nightly` says which jars are missing).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from templatemine.spark import JVM_PACKAGES, delta_jars_present, jars_dir  # noqa: E402

PROBE = """
from pyspark.sql import SparkSession
s = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
     .config("spark.jars.packages", {packages!r}).config("spark.jars.ivy", {ivy!r}).getOrCreate())
s.stop()
"""


def status_file(group: str) -> str:
    return os.path.join(ROOT, ".cache", f"{group}-fetch.txt")


def artifact_of(jar_name: str) -> str:
    """'log4j-core-2.25.3.jar' -> 'log4j-core'."""
    return re.sub(r"-\d[\w.]*\.jar$", "", jar_name)


def spark_artifacts() -> set[str]:
    import pyspark

    return {artifact_of(os.path.basename(j)) for j in glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "*.jar"))}


def fetch(group: str, packages: tuple[str, ...], target: str) -> None:
    wanted = [p.split(":")[1] + "-" + p.split(":")[2] for p in packages]
    # Ivy names a jar <group>_<artifact>-<version>.jar
    have = [os.path.basename(j).split("_", 1)[-1] for j in glob.glob(os.path.join(target, "*.jar"))]
    if all(any(h.startswith(w) for h in have) for w in wanted):
        return
    status = status_file(group)
    if os.path.exists(status) and not os.environ.get("TEMPLATEMINE_REFETCH"):
        print(f"bootstrap: {group} jars unavailable (" + open(status).read().strip()[:160]
              + "); set TEMPLATEMINE_REFETCH=1 to try again", file=sys.stderr)
        return
    ivy = os.path.join(ROOT, ".cache", f"ivy-{group}")
    print(f"bootstrap: resolving {', '.join(packages)} from Maven Central", file=sys.stderr)
    proc = subprocess.run([sys.executable, "-c", PROBE.format(packages=",".join(packages), ivy=ivy)],
                          capture_output=True, text=True)
    resolved = glob.glob(os.path.join(ivy, "jars", "*.jar"))
    if proc.returncode != 0 or not resolved:
        lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
        reason = next((line for line in lines if "unresolved dependency" in line), lines[-1] if lines else "")
        with open(status, "w") as fh:
            fh.write(reason + "\n")
        print(f"bootstrap: WARNING: could not fetch the {group} jars: {reason}", file=sys.stderr)
        return
    shipped = spark_artifacts()
    for jar in resolved:
        # Ivy brings the transitive closure, including logging jars Spark ships in
        # its own (newer or older) version: two log4j-cores on one classpath is trouble.
        if artifact_of(os.path.basename(jar).split("_", 1)[-1]) not in shipped:
            shutil.copy2(jar, target)
    if os.path.exists(status):
        os.remove(status)
    print(f"bootstrap: {group}: {len(resolved)} jar(s) in {target}", file=sys.stderr)


MAVEN = "https://repo1.maven.org/maven2"
# Hadoop's own test cluster (MiniDFSCluster, one NameNode and DataNode in a JVM of
# their own) for tests/spark/test_hdfs.py, with the two jars it loads from JUnit;
# kept apart from .cache/jars so no Spark session ever has them on its classpath
TEST_JARS = ("org.apache.hadoop:hadoop-client-minicluster:{hadoop}", "junit:junit:4.13.2",
             "org.hamcrest:hamcrest-core:1.3")


def test_jars_dir() -> str:
    return os.path.join(ROOT, ".cache", "test-jars")


def spark_hadoop_version() -> str:
    """The Hadoop client version pyspark ships (hadoop-client-api-3.4.2.jar: 3.4.2)."""
    import pyspark

    jars = glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "hadoop-client-api-*.jar"))
    return re.sub(r"^hadoop-client-api-|\.jar$", "", os.path.basename(jars[0])) if jars else ""


def fetch_test_jars() -> None:
    """Download TEST_JARS from Maven Central, each checked against its published
    SHA-1; a failure is recorded in .cache/test-jars-fetch.txt (the HDFS test then
    skips, saying so) and not retried unless TEMPLATEMINE_REFETCH is set."""
    import hashlib
    import urllib.request

    target, status = test_jars_dir(), status_file("test-jars")
    hadoop = spark_hadoop_version()
    coords = [c.format(hadoop=hadoop) for c in TEST_JARS]
    names = [f"{c.split(':')[1]}-{c.split(':')[2]}.jar" for c in coords]
    if all(os.path.exists(os.path.join(target, n)) for n in names):
        return
    if os.path.exists(status) and not os.environ.get("TEMPLATEMINE_REFETCH"):
        print(f"bootstrap: test jars unavailable ({open(status).read().strip()[:160]}); "
              "set TEMPLATEMINE_REFETCH=1 to try again", file=sys.stderr)
        return
    os.makedirs(target, exist_ok=True)
    try:
        if not hadoop:
            raise OSError("no hadoop-client-api jar in pyspark's jars: the Hadoop version is unknown")
        for coord, name in zip(coords, names):
            group, artifact, version = coord.split(":")
            url = f"{MAVEN}/{group.replace('.', '/')}/{artifact}/{version}/{name}"
            print(f"bootstrap: downloading {url}", file=sys.stderr)
            with urllib.request.urlopen(url, timeout=120) as r:
                data = r.read()
            with urllib.request.urlopen(url + ".sha1", timeout=60) as r:
                want = r.read().decode().split()[0].strip()
            if hashlib.sha1(data).hexdigest() != want:
                raise OSError(f"{url}: SHA-1 {hashlib.sha1(data).hexdigest()} is not the published {want}")
            with open(os.path.join(target, name + ".part"), "wb") as fh:
                fh.write(data)
            os.replace(os.path.join(target, name + ".part"), os.path.join(target, name))
    except OSError as exc:  # urllib's URLError and HTTPError are OSErrors
        with open(status, "w") as fh:
            fh.write(f"{exc}\n")
        print(f"bootstrap: WARNING: could not fetch the test jars ({exc}); the HDFS test will skip",
              file=sys.stderr)
        return
    if os.path.exists(status):
        os.remove(status)
    print(f"bootstrap: test jars: {', '.join(names)} in {target}", file=sys.stderr)


def main() -> int:
    if sys.argv[1:] == ["--tests"]:  # scripts/test: the tests' own jars only (the demo does not need them)
        fetch_test_jars()
        return 0
    target = jars_dir()
    os.makedirs(target, exist_ok=True)
    for group, packages in JVM_PACKAGES.items():
        fetch(group, packages, target)
    if not delta_jars_present():
        # without them the nightly tests skip themselves: set-up must not pass as if all were there
        print("bootstrap: the Delta jars are required (nightly state) and could not be fetched; "
              "see above, then run again with TEMPLATEMINE_REFETCH=1", file=sys.stderr)
        return 1
    return 0  # GraphFrames is optional: components fall back to the DataFrame algorithm


if __name__ == "__main__":
    sys.exit(main())
