"""
Replacing a repository's inheritance edges (INHERITS, IMPLEMENTS, OVERRIDES) by only what
changed. They are resolved again on every build (a base can be renamed anywhere), but an
incremental build changes a handful of them: deleting and re-inserting all of them (about
8,000 rows and their index entries on Twisted) was a fixed cost of every one-file build.
"""

from __future__ import annotations

import sqlite3
from collections import Counter

from .codes import EDGE_TYPES

REBUILT_ALWAYS = tuple(EDGE_TYPES[t] for t in ("INHERITS", "IMPLEMENTS", "OVERRIDES"))
COLUMNS = (
    "repo, type, src, dst, call_kind, reason, method, confidence, line_number, evidence_file_id"
)
"""An edge row as ``writer.INSERT_EDGES`` takes it."""


def only_new(conn: sqlite3.Connection, repo_key: int, rows: list[tuple]) -> list[tuple]:
    """
    Inside the build's transaction, with ``rows`` every inheritance edge the repository has
    now (as ``INSERT_EDGES`` rows): delete the stored ones not among them and return those
    not stored yet (to insert). The stored set then equals ``rows``, as if rebuilt.
    """
    marks = ",".join("?" * len(REBUILT_ALWAYS))
    stored: dict[tuple, list[int]] = {}
    for edge_id, *row in conn.execute(
        f"SELECT edge_id, {COLUMNS} FROM edge_rows WHERE repo = ? AND type IN ({marks})",
        (repo_key, *REBUILT_ALWAYS),
    ):
        stored.setdefault(tuple(row), []).append(edge_id)
    wanted = Counter(rows)
    stale: list[tuple[int]] = []
    for row, edge_ids in stored.items():
        keep = wanted.pop(row, 0)
        stale.extend((edge_id,) for edge_id in edge_ids[keep:])
        if keep > len(edge_ids):
            wanted[row] = keep - len(edge_ids)
    conn.executemany("DELETE FROM edge_rows WHERE edge_id = ?", stale)
    return [row for row, count in wanted.items() for _ in range(count)]
