"""
Which repositories a caller may read: a scoped token's grants, checked on every read.

A caller whose grants cover only some repositories reads the index through a connection
of its own on which every table and view that holds a repository's rows is shadowed by a
temporary view of the same name keeping only the granted repositories' rows (SQLite
resolves an unqualified name in ``temp`` before ``main``). Every handler, graph walk,
count and catalog then sees the other repositories as never indexed: their names, paths,
ids and counts cannot reach an answer, and asking for one is "not found", never
"forbidden". :func:`grant` fills the connection's grant table for one request.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

GRANT_TABLE = "temp.eshu_readable_repositories"

_GRANTED = f"repo_id IN (SELECT repo_id FROM {GRANT_TABLE})"
_GRANTED_FILES = f"file_id IN (SELECT file_id FROM main.files WHERE {_GRANTED})"

SPECIAL: dict[str, str] = {
    "edge_rows": "repo IN (SELECT repo_key FROM main.repositories WHERE " + _GRANTED + ")",
}
"""Relations whose repository is named another way than a ``repo_id`` or ``file_id``."""


def shadow_filter(name: str, columns: set[str]) -> str | None:
    """
    The filter a relation's shadow view applies, or None when it holds no repository's
    rows: by ``repo_id`` when it has one, else by ``file_id`` (the file's repository).
    Any table or view a later schema adds with either column is covered without a change
    here; virtual tables (full-text indexes) are read through the tables they index.
    """
    if name in SPECIAL:
        return SPECIAL[name]
    if "repo_id" in columns:
        return _GRANTED
    if "file_id" in columns and name != "files":
        return _GRANTED_FILES
    return None


def readable(principal: Any, repo_id: str) -> bool:
    """Whether the caller's grants cover the repository (no principal: loopback, all)."""
    if principal is None:
        return True
    check = getattr(principal, "may_read_repository", None)
    return bool(check(repo_id)) if check is not None else True


def restricted(principal: Any) -> bool:
    """Whether the caller's grants may leave some repository out (a scoped caller)."""
    if principal is None or getattr(principal, "all_scopes", False):
        return False
    return getattr(principal, "may_read_repository", None) is not None


def readable_repositories(conn: sqlite3.Connection, principal: Any) -> list[sqlite3.Row]:
    """Every repository the caller may read, sorted by name then id."""
    rows = conn.execute("SELECT * FROM repositories ORDER BY name, repo_id").fetchall()
    return [row for row in rows if readable(principal, row["repo_id"])]


def shadow(conn: sqlite3.Connection) -> sqlite3.Connection:
    """
    Make ``conn`` a granted reader: its grant table (empty: nothing readable) and a shadow
    view over each relation of the index that holds repository rows. Returns ``conn``.
    """
    relations = conn.execute(
        "SELECT name FROM main.sqlite_master WHERE type IN ('table', 'view')"
        " AND name NOT LIKE 'sqlite_%' AND COALESCE(sql, '') NOT LIKE 'CREATE VIRTUAL%'"
        " ORDER BY name"
    ).fetchall()
    statements = [
        f"CREATE TEMP TABLE IF NOT EXISTS {GRANT_TABLE.split('.')[1]}"
        " (repo_id TEXT PRIMARY KEY) WITHOUT ROWID"
    ]
    for (name,) in relations:
        columns = {row[1] for row in conn.execute(f'PRAGMA main.table_info("{name}")')}
        condition = shadow_filter(name, columns)
        if condition is not None:
            statements.append(
                f'CREATE TEMP VIEW IF NOT EXISTS "{name}" AS'
                f' SELECT * FROM main."{name}" WHERE {condition}'
            )
    with _writable_temp(conn):
        for statement in statements:
            conn.execute(statement)
    return conn


def grant(conn: sqlite3.Connection, principal: Any) -> None:
    """Let the granted reader ``conn`` read exactly what ``principal`` may read."""
    ids = [
        repo_id
        for (repo_id,) in conn.execute("SELECT repo_id FROM main.repositories")
        if readable(principal, repo_id)
    ]
    with _writable_temp(conn):
        conn.execute(f"DELETE FROM {GRANT_TABLE}")
        conn.executemany(f"INSERT INTO {GRANT_TABLE} (repo_id) VALUES (?)", [(i,) for i in ids])


@contextmanager
def _writable_temp(conn: sqlite3.Connection) -> Iterator[None]:
    """Lift ``query_only`` while the connection writes its own temporary objects."""
    conn.execute("PRAGMA query_only = OFF")
    try:
        yield
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    finally:
        conn.execute("PRAGMA query_only = ON")
