"""spark-submit entry point: `templatemine train` (same arguments; the session is spark-submit's)."""

import sys

from templatemine.cli import main

if __name__ == "__main__":
    sys.exit(main(["train", *sys.argv[1:]]))
