"""Headless Chromium (Debian's package) for the report: one place that knows its flags.

The flags are the ones this kind of machine needs (a closed network: no
background networking, component updates or sync; root: no sandbox), and a new
empty profile per call so that runs do not share state."""

from __future__ import annotations

import shutil
import subprocess
import tempfile

CHROMIUM = "/usr/bin/chromium"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


class ChromiumError(RuntimeError):
    pass


def chromium(args: list[str], timeout: float = 180, budget_ms: int = 10_000) -> str:
    """Run headless Chromium with `args` (e.g. --dump-dom URL, --screenshot=PNG URL);
    its stdout. --virtual-time-budget lets the page's scripts finish first."""
    profile = tempfile.mkdtemp(prefix="tm-chromium-")
    try:
        done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}",
                               f"--virtual-time-budget={budget_ms}", *args],
                              capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if done.returncode != 0:
        raise ChromiumError(f"chromium exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout
