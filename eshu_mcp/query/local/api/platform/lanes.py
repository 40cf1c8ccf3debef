"""
Reader lanes: which queries read a whole repository (scans) and which look up a few rows
(points). Each lane has its own threads and its own bounded queue, so a one-millisecond
symbol lookup never waits behind a dead-code scan, and a flood of scans is answered "busy"
instead of growing a queue without end.
"""

from __future__ import annotations

import threading

from attrs import frozen

POINT = "point"
SCAN = "scan"

SCAN_ROUTES = frozenset(
    {
        ("POST", "/code/call-graph/metrics"),
        ("POST", "/code/complexity"),
        ("POST", "/code/dead-code"),
        ("POST", "/code/dead-code/cross-repo"),
        ("POST", "/code/dead-code/investigate"),
        ("POST", "/code/imports/investigate"),
        ("POST", "/code/quality/inspect"),
        ("POST", "/code/security/secrets/investigate"),
        ("POST", "/code/structure/inventory"),
        ("POST", "/code/language-query"),
        ("POST", "/code/topics/investigate"),
        ("POST", "/content/files/search"),
        ("POST", "/content/entities/search"),
        ("POST", "/impact/change-surface"),
        ("POST", "/search/semantic"),
        ("GET", "/repositories/{repo_id}/stats"),
        ("GET", "/repositories/{repo_id}/context"),
        ("GET", "/repositories/{repo_id}/story"),
        ("GET", "/repositories/{repo_id}/coverage"),
        ("GET", "/repositories/language-inventory"),
        ("GET", "/repositories/by-language"),
    }
)
"""Operations that read a repository (or the index) through, whatever their arguments."""

DEFAULT_POINT_THREADS = 2
DEFAULT_SCAN_THREADS = 2
DEFAULT_MAX_QUEUED = {POINT: 64, SCAN: 8}
"""Queries that may wait for a thread, per lane; one more is answered 503 busy."""


SCAN_UNLESS_EXACT = frozenset({("POST", "/code/search")})
"""Operations that look names up when asked for an exact name, else match every name of a
repository (``find_code``'s substring search: about a second at 26k files)."""


def lane_of(method: str, pattern: str, body: object = None) -> str:
    """The lane an operation runs in (``body``: its JSON arguments, if any)."""
    if (method, pattern) in SCAN_ROUTES:
        return SCAN
    if (method, pattern) in SCAN_UNLESS_EXACT:
        exact = body.get("exact") if isinstance(body, dict) else None
        return POINT if exact in (True, 1, "true", "True") else SCAN
    return POINT


@frozen
class LaneBusy(Exception):
    """A lane's queue is full."""

    lane: str
    queued: int


class LaneQueues:
    """How many queries wait for a thread in each lane (updated from any thread)."""

    def __init__(self, bounds: dict[str, int] | None = None) -> None:
        self.bounds = dict(DEFAULT_MAX_QUEUED if bounds is None else bounds)
        self._waiting = {POINT: 0, SCAN: 0}
        self._lock = threading.Lock()

    def enter(self, lane: str) -> None:
        """One more query waits in ``lane``; raises :class:`LaneBusy` when it is full."""
        with self._lock:
            if self._waiting[lane] >= self.bounds.get(lane, 0):
                raise LaneBusy(lane, self._waiting[lane])
            self._waiting[lane] += 1

    def leave(self, lane: str) -> None:
        """A waiting query got its thread (or went away before)."""
        with self._lock:
            self._waiting[lane] = max(0, self._waiting[lane] - 1)

    def waiting(self, lane: str) -> int:
        """How many queries wait in ``lane`` now."""
        return self._waiting[lane]
