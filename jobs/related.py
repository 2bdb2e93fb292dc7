"""spark-submit entry point: `templatemine related` (same arguments; the session is spark-submit's)."""

import sys

from templatemine.cli import main

if __name__ == "__main__":
    sys.exit(main(["related", *sys.argv[1:]]))
