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
from collections import Counter

from . import input_cache
from .codes import EDGE_TYPES

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
    wanted = Counter(rows)
    stored = input_cache.stored_inheritance(conn, repo_id)
    if stored is None:
        new = _against_stored_rows(conn, repo_key, wanted)
    else:
        stale = stored - wanted
        for row in stale:  # every copy goes; those still wanted are inserted again below
            src_first = (row[2], row[0], row[1], *row[3:])
            conn.execute(SAME_ROW, src_first)
        new = wanted - (stored - stale)
    input_cache.keep_inheritance(conn, repo_id, wanted)
    return list(new.elements())


def _against_stored_rows(conn: sqlite3.Connection, repo_key: int, wanted: Counter) -> Counter:
    """Read the stored rows back, delete the stale ones; returns the missing ones."""
    marks = ",".join("?" * len(REBUILT_ALWAYS))
    stored: dict[tuple, list[int]] = {}
    for edge_id, *row in conn.execute(
        f"SELECT edge_id, {COLUMNS} FROM edge_rows WHERE repo = ? AND type IN ({marks})",
        (repo_key, *REBUILT_ALWAYS),
    ):
        stored.setdefault(tuple(row), []).append(edge_id)
    missing = Counter(wanted)
    stale: list[tuple[int]] = []
    for row, edge_ids in stored.items():
        keep = missing.pop(row, 0)
        stale.extend((edge_id,) for edge_id in edge_ids[keep:])
        if keep > len(edge_ids):
            missing[row] = keep - len(edge_ids)
    conn.executemany("DELETE FROM edge_rows WHERE edge_id = ?", stale)
    return missing
