"""
Which repositories a caller may read: a scoped token's grants, checked on every read.
"""

from __future__ import annotations

import sqlite3
from typing import Any


def readable(principal: Any, repo_id: str) -> bool:
    """Whether the caller's grants cover the repository (no principal: loopback, all)."""
    if principal is None:
        return True
    check = getattr(principal, "may_read_repository", None)
    return bool(check(repo_id)) if check is not None else True


def readable_repositories(conn: sqlite3.Connection, principal: Any) -> list[sqlite3.Row]:
    """Every repository the caller may read, sorted by name then id."""
    rows = conn.execute("SELECT * FROM repositories ORDER BY name, repo_id").fetchall()
    return [row for row in rows if readable(principal, row["repo_id"])]
