"""Under spark-submit, the cluster's --conf wins over the preset's [spark] table:
a jobs/*.py entry point run with spark-submit's defaults of `--preset local`
must not shrink a cluster's shuffle to a laptop's 8 partitions. The command's
own --conf still wins over both."""

import json
import os
import subprocess
import sys

from templatemine.spark import repo_root

PROBE = '''
import json, sys
from templatemine.cli import _load, _session, build_parser
args = build_parser().parse_args(["detect", "unused", *sys.argv[1:]])
spark = _session(args, _load(args), "detect")
print("EFFECTIVE " + json.dumps({k: spark.conf.get(k, None) for k in (
    "spark.sql.shuffle.partitions", "spark.databricks.delta.snapshotPartitions", "spark.sql.session.timeZone")}))
print("LOCALITY " + json.dumps(spark.sparkContext.getConf().get("spark.locality.wait", None)))
spark.stop()
'''


def _submit(tmp_path, submit_conf, job_args):
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    env = {**os.environ, "PYTHONPATH": repo_root(), "PYSPARK_PYTHON": sys.executable}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    done = subprocess.run([os.path.join(os.path.dirname(sys.executable), "spark-submit"), "--master", "local[1]",
                           *submit_conf, str(probe), *job_args], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return {key: json.loads(line[len(key) + 1:]) for key in ("EFFECTIVE", "LOCALITY")
            for line in done.stdout.splitlines() if line.startswith(key + " ")}


def test_spark_submit_conf_wins_over_the_preset_and_the_commands_conf_over_both(tmp_path):
    got = _submit(tmp_path, ["--conf", "spark.sql.shuffle.partitions=2000",
                             "--conf", "spark.databricks.delta.snapshotPartitions=9"],
                  ["--preset", "test", "--conf", "spark.databricks.delta.snapshotPartitions=3"])
    assert got["EFFECTIVE"] == {"spark.sql.shuffle.partitions": "2000",
                                "spark.databricks.delta.snapshotPartitions": "3", "spark.sql.session.timeZone": "UTC"}
    assert got["LOCALITY"] == "0s"  # spark-submit's master is local[1]: no delay scheduling (spark.py LOCALITY_WAIT)
    # what spark-submit leaves unset, the preset sets (test: 2 and 2)
    assert _submit(tmp_path, [], ["--preset", "test"])["EFFECTIVE"] == {
        "spark.sql.shuffle.partitions": "2", "spark.databricks.delta.snapshotPartitions": "2",
        "spark.sql.session.timeZone": "UTC"}
    # with no --preset and no --config, the implied local preset's 8 partitions are not taken:
    # Spark's default stands (found in review: a cluster that sets nothing ran with 8)
    assert _submit(tmp_path, [], [])["EFFECTIVE"]["spark.sql.shuffle.partitions"] is None  # unset: Spark's 200
    # a wait the user gives spark-submit stands
    assert _submit(tmp_path, ["--conf", "spark.locality.wait=1s"], [])["LOCALITY"] == "1s"
