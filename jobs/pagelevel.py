"""spark-submit entry point: `templatemine pagelevel` (same arguments; the session is spark-submit's)."""

import sys

from templatemine.cli import main

if __name__ == "__main__":
    sys.exit(main(["pagelevel", *sys.argv[1:]]))
