"""
Repository-wide answers computed once per generation: the full answer of a scan (import
cycles, module dependencies...) is kept, keyed by the repositories' active generations and
the question, and every page of it is sliced from the kept answer until a build changes a
generation. Concurrent askers of the same answer wait for one computation.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

MAX_KEPT = 32
"""Answers kept at once (least recently used first out)."""
MAX_KEPT_ROWS = 1_000_000
"""Rows kept across every answer (a 26k-file repository's module dependencies are 184k
rows, about 175 MB): past it the least recently used answers go first."""


def _rows(value: Any) -> int:
    """How many rows an answer holds (its list, or the list of an (items, key) pair)."""
    if isinstance(value, tuple) and value and isinstance(value[0], list):
        return len(value[0])
    return len(value) if isinstance(value, list) else 1


def generation_marker(conn: sqlite3.Connection, repo_id: str | None) -> str:
    """The active generation(s) an answer about ``repo_id`` (None: every repository) reads."""
    if repo_id:
        row = conn.execute(
            "SELECT COALESCE(active_generation_id, '') FROM repositories WHERE repo_id = ?",
            (repo_id,),
        ).fetchone()
        return f"{repo_id}={row[0] if row else ''}"
    rows = conn.execute(
        "SELECT repo_id, COALESCE(active_generation_id, '') FROM repositories ORDER BY repo_id"
    ).fetchall()
    return ",".join(f"{repo}={generation}" for repo, generation in rows)


class GenerationAnswers:
    """The kept answers, per (index file, question, generations)."""

    def __init__(self, max_kept: int = MAX_KEPT, max_rows: int = MAX_KEPT_ROWS) -> None:
        self.max_kept = max_kept
        self.max_rows = max_rows
        self._kept: OrderedDict[tuple, Any] = OrderedDict()
        self._computing: dict[tuple, threading.Lock] = {}
        self._lock = threading.Lock()
        self.computed = 0
        """How many answers were computed (not served from a kept one): for tests."""

    def answer(
        self,
        conn: sqlite3.Connection,
        question: str,
        arguments: dict[str, Any],
        repo_id: str | None,
        compute: Callable[[], Any],
    ) -> Any:
        """The kept answer to ``question`` for the current generation(s), computed if none."""
        database = conn.execute("PRAGMA database_list").fetchone()[2]
        key = (
            database,
            question,
            json.dumps(arguments, sort_keys=True, default=str),
            generation_marker(conn, repo_id),
        )
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
            gate = self._computing.setdefault(key, threading.Lock())
        with gate:
            with self._lock:
                if key in self._kept:
                    return self._kept[key]
            value = compute()
            with self._lock:
                self.computed += 1
                self._kept[key] = value
                self._kept.move_to_end(key)
                while len(self._kept) > 1 and (
                    len(self._kept) > self.max_kept
                    or sum(_rows(kept) for kept in self._kept.values()) > self.max_rows
                ):
                    self._kept.popitem(last=False)
                self._computing.pop(key, None)
        return value

    def forget(self) -> None:
        """Drop every kept answer."""
        with self._lock:
            self._kept.clear()


GENERATION_ANSWERS = GenerationAnswers()
