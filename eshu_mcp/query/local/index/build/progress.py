"""
Showing indexing progress: a one-line bar (files, rate, ETA) for a terminal, or one JSON
object per phase for programs (the daemon reads these from the child's stdout).
"""

from __future__ import annotations

import json
import time
from typing import Any, TextIO

BAR_WIDTH = 28
NOT_EDGE_COUNTS = frozenset({"unresolved_calls", "rebuilt_files"})
"""Keys of a ``committed`` event's ``edges`` that count something other than edges."""


PARSE_REPORT_SECONDS = 0.5


class JsonLinesProgress:
    """One JSON line per phase; parse progress at most every half second, and at its end."""

    def __init__(self, stream: TextIO, clock=time.monotonic) -> None:
        self.stream = stream
        self.clock = clock
        self._last_parse: float | None = None

    def __call__(self, event: dict[str, Any]) -> None:
        if event.get("phase") == "parse" and event.get("done") != event.get("total"):
            now = self.clock()
            if self._last_parse is not None and now - self._last_parse < PARSE_REPORT_SECONDS:
                return
            self._last_parse = now
        self.stream.write(json.dumps(event, sort_keys=True) + "\n")
        self.stream.flush()


class TerminalProgress:
    """A redrawn progress bar on a terminal stream (stderr), phases as short notes."""

    def __init__(self, stream: TextIO, clock=time.monotonic) -> None:
        self.stream = stream
        self.clock = clock
        self._bar_open = False

    def _line(self, text: str) -> None:
        if self._bar_open:
            self.stream.write("\n")
            self._bar_open = False
        self.stream.write(text + "\n")
        self.stream.flush()

    def __call__(self, event: dict[str, Any]) -> None:
        phase = event.get("phase")
        if phase == "parse":
            self.stream.write(
                "\r" + render_bar(event.get("done", 0), event.get("total", 0), event.get("rate"))
            )
            self.stream.flush()
            self._bar_open = True
        elif phase == "discover":
            self._line(f"indexing {event['path']} ({event['repo_id']})")
            if event.get("git_refused"):
                self._line(f"  warning: {event['git_refused']}")
        elif phase == "walk":
            self._line(
                f"  {event['files']} files, {event['to_parse']} to parse,"
                f" {event['deleted']} deleted"
            )
        elif phase == "skipped":
            self._line(
                f"  warning: skipped {event['undecodable_names']} files whose names are not"
                f" valid UTF-8 (first: {event['example']})"
            )
        elif phase == "resolve":
            self._line("  resolving references and calls ...")
        elif phase == "fresh":
            self._line("  up to date: no new generation")
        elif phase == "committed":
            self._line(
                f"  generation {event['seq']} active: {event['entities']} entities written,"
                f" {edge_total(event.get('edges', {}))} edges"
            )
        elif phase == "failed":
            self._line(f"  failed: {event.get('error')}")
        elif phase == "recovered" and "lock" in event:
            self._line(f"note: {event['lock']}")
        elif phase == "upgrade":
            self._line(
                f"index written by an older eshu-mcp ({event['reason']} changed): also"
                f" re-indexing {len(event['paths'])} recorded repositories"
            )


def edge_total(counts: dict[str, int]) -> int:
    """The repository's edges from a ``committed`` event's counts (as ``--status`` counts)."""
    return sum(value for key, value in counts.items() if key not in NOT_EDGE_COUNTS)


def render_bar(done: int, total: int, rate: float | None) -> str:
    """``[#####-----] 120/891 files  310.2 files/s  ETA 2.5s``."""
    fraction = done / total if total else 1.0
    filled = int(BAR_WIDTH * fraction)
    bar = "#" * filled + "-" * (BAR_WIDTH - filled)
    text = f"[{bar}] {done}/{total} files"
    if rate:
        eta = (total - done) / rate if rate > 0 else 0.0
        text += f"  {rate:.1f} files/s  ETA {eta:.1f}s"
    return text
