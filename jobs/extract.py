"""spark-submit entry point for the extract stage (WARC -> PAGES, LINKS, PAGELETS).

    spark-submit --py-files templatemine-0.1.0-py3-none-any.whl jobs/extract.py \\
        s3a://bucket/crawl/warc.paths --out s3a://bucket/templatemine/crawl-1 --preset cluster

Same arguments as `templatemine extract`; the session (master, executors,
jars) is spark-submit's.
"""

import sys

from templatemine.cli import main

if __name__ == "__main__":
    sys.exit(main(["extract", *sys.argv[1:]]))
