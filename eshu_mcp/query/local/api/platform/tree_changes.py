"""
The work trees no watcher keeps current, compared with the index on demand and kept for a
short while, so an answer's freshness says "fresh" only when the indexed generation
matches the tree (see :mod:`...index.build.tree_compare`).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable

from eshu_mcp.query.local.index.build.tree_compare import TreeDifference, compare_work_tree

KEEP_SECONDS = 2.0
"""How long a comparison answers for its tree before the tree is compared again."""


class TreeChanges:
    """The last comparison of each unwatched work tree with its active generation."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: dict[tuple[str, str, str], tuple[float, TreeDifference | None]] = {}
        self._comparing: set[tuple[str, str, str]] = set()

    def difference(self, conn: sqlite3.Connection, repo: sqlite3.Row) -> TreeDifference | None:
        """How ``repo``'s work tree differs from its active generation (blocking)."""
        key = (repo["repo_id"], repo["local_path"], repo["active_generation_id"] or "")
        now = self._clock()
        with self._lock:
            seen = self._seen.get(key)
            if seen is not None and now - seen[0] <= KEEP_SECONDS:
                return seen[1]
            if key in self._comparing and seen is not None:
                return seen[1]  # another thread is comparing: its predecessor answers
            self._comparing.add(key)
        try:
            found = compare_work_tree(conn, repo["repo_id"], repo["local_path"], repo["is_git"])
        finally:
            with self._lock:
                self._comparing.discard(key)
        with self._lock:
            self._seen[key] = (now, found)
        return found

    def forget(self) -> None:
        """Drop every comparison (tests; a replaced index file)."""
        with self._lock:
            self._seen.clear()


TREE_CHANGES = TreeChanges()
