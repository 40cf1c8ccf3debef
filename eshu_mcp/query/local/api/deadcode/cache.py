"""
Dead-code scans kept per process for the database state they were computed on, so the pages
after the first one of an answer (and repeated questions) do not scan the repository again.

A state is the database file, every repository's active generation and the newest row
numbers: a new generation or any added row makes a new state, and old entries age out.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

SIZE = 8
"""Scans kept (the least recently used goes first)."""
_KEPT: OrderedDict[tuple, Any] = OrderedDict()
_LOCK = threading.Lock()


def database_state(conn: sqlite3.Connection) -> tuple | None:
    """What identifies the indexed state a scan reads (None for a database with no file)."""
    path = next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "")
    if not path:
        return None
    generations = tuple(
        tuple(row)
        for row in conn.execute(
            "SELECT repo_id, active_generation_id FROM repositories ORDER BY repo_id"
        )
    )
    newest = tuple(
        conn.execute(
            "SELECT (SELECT MAX(rid) FROM entity_rows), (SELECT MAX(edge_id) FROM edge_rows),"
            " (SELECT MAX(file_id) FROM files), (SELECT MAX(nid) FROM nodes)"
        ).fetchone()
    )
    return path, generations, newest


def kept(conn: sqlite3.Connection, request: tuple, compute: Callable[[], Any]) -> Any:
    """The kept outcome of ``request`` on this database state, computing it when missing."""
    state = database_state(conn)
    if state is None:
        return compute()
    key = (state, request)
    with _LOCK:
        found = _KEPT.get(key)
        if found is not None:
            _KEPT.move_to_end(key)
            return found
    result = compute()
    with _LOCK:
        _KEPT[key] = result
        while len(_KEPT) > SIZE:
            _KEPT.popitem(last=False)
    return result


def forget() -> None:
    """Drop every kept scan."""
    with _LOCK:
        _KEPT.clear()
