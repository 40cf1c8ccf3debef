"""
Bulk loading a repository's first generation: secondary indexes and the file FTS trigger
are dropped inside the write transaction and rebuilt once at its end.

Building an index from sorted rows is several times cheaper than maintaining it row by row,
and packs its pages. Everything happens inside the generation's one write transaction, so a
run that dies rolls the drops back with the rows: readers keep the previous state.
"""

from __future__ import annotations

import sqlite3

BULK_MIN_FILES = 200
"""Below this many new files row-by-row maintenance is cheap enough."""
BULK_TABLES = ("files", "entities", "call_sites", "imports", "edges", "modules")
"""Tables whose secondary indexes are rebuilt after a bulk load."""
FILE_FTS_TRIGGER = "files_ai"


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
    """Inside a write transaction: drop, then re-create, indexes and the file FTS trigger."""

    def __init__(self, conn: sqlite3.Connection, repo_id: str, *, fill_file_fts: bool) -> None:
        self.conn = conn
        self.repo_id = repo_id
        self.fill_file_fts = fill_file_fts  # False when an FtsBuilder indexes the files
        marks = ",".join("?" * len(BULK_TABLES))
        self.indexes = conn.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            f" AND tbl_name IN ({marks})",
            BULK_TABLES,
        ).fetchall()
        self.trigger = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?",
            (FILE_FTS_TRIGGER,),
        ).fetchone()
        for name, _ in self.indexes:
            conn.execute(f'DROP INDEX "{name}"')
        if self.trigger is not None:
            conn.execute(f'DROP TRIGGER "{FILE_FTS_TRIGGER}"')

    def finish(self) -> None:
        """Index the repository's files in the file FTS and re-create what was dropped."""
        conn = self.conn
        if self.trigger is not None and self.fill_file_fts:
            conn.execute(
                "INSERT INTO files_fts (rowid, relative_path, content)"
                " SELECT file_id, relative_path, content FROM files WHERE repo_id = ?",
                (self.repo_id,),
            )
        if self.trigger is not None:
            conn.execute(self.trigger[0])
        for _, sql in self.indexes:
            conn.execute(sql)
