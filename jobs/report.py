"""spark-submit entry point: `templatemine report` (same arguments; the session is spark-submit's)."""

import sys

from templatemine.cli import main

if __name__ == "__main__":
    sys.exit(main(["report", *sys.argv[1:]]))
