"""
Replacing a repository's inheritance edges (INHERITS, IMPLEMENTS, OVERRIDES) by only what
changed. They are resolved again on every build (a base can be renamed anywhere), but an
incremental build changes a handful of them: deleting and re-inserting all of them (about
8,000 rows and their index entries on Twisted) was a fixed cost of every one-file build.
A process that keeps graph inputs between builds also knows which of them are stored
(:mod:`.input_cache`), and spares reading them back.
"""

from __future__ import annotations

import sqlite3

from eshu_mcp.query.local.index.resolve import input_cache
from eshu_mcp.query.local.index.resolve.bindings import plain_rows
from eshu_mcp.query.local.index.store.codes import EDGE_TYPES

REBUILT_ALWAYS = tuple(EDGE_TYPES[t] for t in ("INHERITS", "IMPLEMENTS", "OVERRIDES"))
COLUMNS = (
    "repo, type, src, dst, call_kind, reason, method, confidence, line_number, evidence_file_id"
)
"""An edge row as ``writer.INSERT_EDGES`` takes it."""
SAME_ROW = (
    "DELETE FROM edge_rows WHERE src = ? AND repo = ? AND type = ? AND dst = ?"
    " AND call_kind IS ? AND reason IS ? AND method IS ? AND confidence IS ?"
    " AND line_number IS ? AND evidence_file_id IS ?"
)


def only_new(
    conn: sqlite3.Connection, repo_id: str, repo_key: int, rows: list[tuple]
) -> list[tuple]:
    """
    Inside the build's transaction, with ``rows`` every inheritance edge the repository has
    now (as ``INSERT_EDGES`` rows): delete the stored ones not among them and return those
    not stored yet (to insert). The stored set then equals ``rows``, as if rebuilt.
    """
    wanted = set(rows)  # one row per (type, source, target, line): resolve dedups them
    stored = input_cache.stored_inheritance(conn, repo_id)
    if stored is None:
        new = _against_stored_rows(conn, repo_key, wanted)
    else:
        for row in stored - wanted:
            conn.execute(SAME_ROW, (row[2], row[0], row[1], *row[3:]))  # src first: indexed
        new = wanted - stored
    input_cache.keep_inheritance(conn, repo_id, wanted)
    return [row for row in rows if row in new]  # in resolution order, as a rebuild inserts


def _against_stored_rows(conn: sqlite3.Connection, repo_key: int, wanted: set[tuple]) -> set:
    """Read the stored rows back, delete the stale ones; returns the missing ones."""
    marks = ",".join("?" * len(REBUILT_ALWAYS))
    stored: set[tuple] = set()
    stale: list[tuple[int]] = []
    for edge_id, *row in conn.execute(
        f"SELECT edge_id, {COLUMNS} FROM edge_rows WHERE repo = ? AND type IN ({marks})",
        (repo_key, *REBUILT_ALWAYS),
    ):
        row = tuple(row)
        if row in wanted and row not in stored:
            stored.add(row)
        else:  # gone, or a second copy
            stale.append((edge_id,))
    conn.executemany("DELETE FROM edge_rows WHERE edge_id = ?", stale)
    return wanted - stored


def stored_rows(conn: sqlite3.Connection, repo_key: int) -> set[tuple]:
    """The repository's stored inheritance edge rows (as ``INSERT_EDGES`` takes them)."""
    marks = ",".join("?" * len(REBUILT_ALWAYS))
    return set(
        plain_rows(conn).execute(
            f"SELECT {COLUMNS} FROM edge_rows WHERE repo = ? AND type IN ({marks})",
            (repo_key, *REBUILT_ALWAYS),
        )
    )
