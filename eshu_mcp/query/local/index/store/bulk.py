"""
Bulk loading a repository's first generation: secondary indexes are dropped inside the write
transaction and rebuilt once at its end.

Building an index from sorted rows is several times cheaper than maintaining it row by row,
and packs its pages. Everything happens inside the generation's one write transaction, so a
run that dies rolls the drops back with the rows: readers keep the previous state.
"""

from __future__ import annotations

import sqlite3
from functools import cache
from itertools import chain, islice

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


ROWS_PER_STATEMENT = 64
"""Rows one multi-row INSERT carries (its parameters stay far below SQLite's limit)."""


def insert_rows(conn: sqlite3.Connection, statement: str, rows: list[tuple]) -> None:
    """
    ``conn.executemany(statement, rows)``, with the same rows in the same order, but
    :data:`ROWS_PER_STATEMENT` rows per step of one ``INSERT ... VALUES (...), (...)``.

    ``statement`` ends in one ``VALUES (?, ..., ?)`` group. Binding and stepping a statement
    once per row cost the build's inserts about a quarter of their time.
    """
    whole = len(rows) - len(rows) % ROWS_PER_STATEMENT
    if whole:
        widths = set(map(len, rows))
        if len(widths) != 1:
            raise ValueError(f"rows of different lengths {sorted(widths)} for {statement!r}")
        values = chain.from_iterable(islice(rows, whole))
        # each statement's parameters: the next ROWS_PER_STATEMENT rows' values, in order
        groups = zip(*[values] * (ROWS_PER_STATEMENT * widths.pop()), strict=True)
        conn.executemany(_many_rows(statement, ROWS_PER_STATEMENT), groups)
    if whole < len(rows):
        conn.executemany(statement, rows[whole:])


@cache
def _many_rows(statement: str, count: int) -> str:
    """``statement`` with its one VALUES group repeated ``count`` times."""
    head, marker, group = statement.rpartition("VALUES")
    if not marker or not group.strip().startswith("("):
        raise ValueError(f"not a single-row INSERT ... VALUES (...) statement: {statement!r}")
    return f"{head}VALUES {', '.join([group.strip()] * count)}"
