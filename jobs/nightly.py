"""spark-submit entry point: `templatemine nightly` (same arguments; the session is spark-submit's).

Needs Delta Lake on the cluster: --packages io.delta:delta-spark_2.13:<templatemine.spark.DELTA_VERSION>;
the session extensions are set by templatemine itself."""

import sys

from templatemine.cli import main

if __name__ == "__main__":
    sys.exit(main(["nightly", *sys.argv[1:]]))
