"""
Bulk loading a repository's first generation: secondary indexes are dropped inside the write
transaction and rebuilt once at its end.

Building an index from sorted rows is several times cheaper than maintaining it row by row,
and packs its pages. Everything happens inside the generation's one write transaction, so a
run that dies rolls the drops back with the rows: readers keep the previous state.
"""

from __future__ import annotations

import sqlite3

BULK_MIN_FILES = 200
"""Below this many new files row-by-row maintenance is cheap enough."""
BULK_TABLES = ("entity_rows", "call_rows", "imports", "edge_rows", "modules", "reference_rows")
"""Tables whose secondary indexes are rebuilt after a bulk load."""


def worth_bulk_loading(conn: sqlite3.Connection, new_files: int, repository_files: int) -> bool:
    """
    True for a repository's first build when its new files are at least as many as every
    other repository's files (rebuilding indexes costs the whole database's rows).
    """
    if repository_files or new_files < BULK_MIN_FILES:
        return False
    others = conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
    return others <= new_files


class BulkLoad:
    """Inside a write transaction: drop, then re-create, the bulk tables' indexes."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        marks = ",".join("?" * len(BULK_TABLES))
        self.indexes = conn.execute(
            f"SELECT name, sql, tbl_name FROM sqlite_master WHERE type = 'index'"
            f" AND sql IS NOT NULL AND tbl_name IN ({marks})",
            BULK_TABLES,
        ).fetchall()
        for name, _, _ in self.indexes:
            conn.execute(f'DROP INDEX "{name}"')

    def finish(self, tables: tuple[str, ...] | None = None) -> None:
        """Re-create what was dropped (of ``tables`` only, when given); once each."""
        remaining = []
        for name, sql, table in self.indexes:
            if tables is None or table in tables:
                self.conn.execute(sql)
            else:
                remaining.append((name, sql, table))
        self.indexes = remaining
