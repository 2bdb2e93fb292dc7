"""spark-submit entry point for the extract stage (WARC -> PAGES, LINKS, PAGELETS).

    spark-submit ... jobs/extract.py s3a://bucket/crawl/warc.paths \\
        --out s3a://bucket/templatemine/crawl-1 --config conf/yarn.toml

Same arguments as `templatemine extract`; the session (master, executors,
jars) is spark-submit's. `scripts/package --profile yarn` (README, "On a
cluster") builds the wheel and the executors' packed environment and prints
the whole line: a wheel given to --py-files is not put on the executors'
path (pyspark adds .zip, .egg and .jar files only) and brings no dependencies.
"""

import sys

from templatemine.cli import main

if __name__ == "__main__":
    sys.exit(main(["extract", *sys.argv[1:]]))
