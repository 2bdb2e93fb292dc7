"""A screenshot of the run report's page viewer for one page, with Debian's
headless chromium (scripts/bootstrap installs it): for docs and closing notes.

    .venv/bin/python scripts/report_screenshot.py OUT PAGE out.png [--size 1280,1400] [--write]

PAGE is a sampled page's URL or its index in the viewer's list. OUT must be a
local folder holding report.html (`--write` writes it first, with a local
Spark session). The viewer is opened alone (`#page=...&only`); the script also
prints what the viewer says it shaded, read from the report's own DOM.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from urllib.parse import quote

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from templatemine.report.browser import CHROMIUM  # noqa: E402


def chromium(args: list[str]) -> str:
    from templatemine.report.browser import ChromiumError, chromium as run

    try:
        return run(args)
    except ChromiumError as exc:
        raise SystemExit(str(exc)) from None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", metavar="OUT")
    ap.add_argument("page", metavar="PAGE", help="URL of a sampled page, or its index in the viewer")
    ap.add_argument("png", metavar="PNG")
    ap.add_argument("--size", default="1280,1400", help="window size W,H (default 1280,1400)")
    ap.add_argument("--write", action="store_true", help="write OUT/report.html first (local Spark)")
    args = ap.parse_args()
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"{CHROMIUM} not found: scripts/bootstrap installs Debian's chromium package")
    report = os.path.abspath(os.path.join(args.out, "report.html"))
    if args.write:
        from templatemine.config import LOCAL
        from templatemine.report import write_report
        from templatemine.spark import get_session

        spark = get_session("templatemine report", None, {**LOCAL.spark, "spark.ui.showConsoleProgress": "false"})
        try:
            write_report(spark, args.out, print)
        finally:
            spark.stop()
    if not os.path.isfile(report):
        raise SystemExit(f"{report} not found (run with --write, or `run` the pipeline first)")
    url = f"file://{report}#page={quote(args.page, safe='')}"
    dom = chromium(["--dump-dom", url])
    status = re.search(r'<div id="viewer-status"[^>]*>([^<]*)', dom)
    print(f"viewer: {status.group(1) if status else 'no status (viewer did not run)'}")
    os.makedirs(os.path.dirname(os.path.abspath(args.png)), exist_ok=True)
    chromium(["--hide-scrollbars", f"--window-size={args.size}", f"--screenshot={os.path.abspath(args.png)}",
              url + "&only"])
    print(f"screenshot: {args.png}")
    return 0 if status and 'data-state="done"' in status.group(0) else 1


if __name__ == "__main__":
    sys.exit(main())
