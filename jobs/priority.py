"""spark-submit entry point: `templatemine priority` (same arguments; the session is spark-submit's)."""

import sys

from templatemine.cli import main

if __name__ == "__main__":
    sys.exit(main(["priority", *sys.argv[1:]]))
