"""What a run tells while it runs: messages, one summary line per stage, the run's summary.

Three ways to say it: human lines (default), nothing but the final summary
(`--quiet`), or one JSON object per line on stdout (`--log-json`, for
schedulers and log shippers: every line parses, the last one is the summary).
Spark's own console progress bar is on only for a human at a terminal
(cli._session), because it would garble logs and JSON.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TextIO


def stage_line(name: str, pages_in: int, seconds: float, rows_out: dict, unit: str = "pages") -> str:
    rate = pages_in / seconds if seconds > 0 else 0.0
    rows = ", ".join(f"{k} {v}" for k, v in rows_out.items())
    return f"stage {name}: {pages_in} {unit} in, {seconds:.1f} s, {rate:.1f} {unit}/s -> {rows}"


class Progress:
    def __init__(self, quiet: bool = False, json_lines: bool = False, stream: TextIO | None = None):
        self.quiet = quiet
        self.json_lines = json_lines
        self.stream = stream or sys.stdout
        self.stages: list[dict] = []

    def event(self, event: dict) -> None:
        print(json.dumps({"ts": round(time.time(), 3), **event}, default=str), file=self.stream, flush=True)

    def __call__(self, message: str) -> None:
        """A progress message (the stages call this as `progress(msg)`)."""
        if self.json_lines:
            self.event({"event": "progress", "message": message})
        elif not self.quiet:
            print(message, file=self.stream, flush=True)

    def stage(self, name: str, pages_in: int, seconds: float, rows_out: dict, unit: str = "pages") -> None:
        """One line per finished stage: pages in, pages/s, rows out. UNIT names what
        was counted in: extract counts the records it read ("records": `records_in`,
        `records_per_s` in JSON), not pages."""
        record = {"stage": name, f"{unit}_in": pages_in, "seconds": round(seconds, 3),
                  f"{unit}_per_s": round(pages_in / seconds, 2) if seconds > 0 else None, "rows_out": rows_out}
        self.stages.append(record)
        if self.json_lines:
            self.event({"event": "stage", **record})
        elif not self.quiet:
            print(stage_line(name, pages_in, seconds, rows_out, unit), file=self.stream, flush=True)

    def summary(self, lines: list[str], document: dict) -> None:
        """The run's summary: always shown (also with --quiet); as JSON, the whole document."""
        if self.json_lines:
            self.event({"event": "summary", **document})
        else:
            print("\n".join(lines), file=self.stream, flush=True)
