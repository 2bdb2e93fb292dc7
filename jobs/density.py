"""spark-submit entry point: `templatemine density OUT [--dest D]` (same arguments; the session is spark-submit's)."""

import sys

from templatemine.cli import main

if __name__ == "__main__":
    sys.exit(main(["density", *sys.argv[1:]]))
