"""
Building the trigram FTS indexes of a fresh database on a thread, beside the writer.

Trigram tokenizing is the largest part of a first build's writer time (about 35 MB of file
and entity source for 13 MB of code). SQLite releases the GIL while it tokenizes, so a thread
with its own in-memory database builds ``files_fts`` and ``entities_fts`` while the writer
inserts rows. The finished index is a handful of shadow-table rows, copied into the write
transaction at its end. This is only valid while the database's FTS indexes are empty
(:func:`fts_is_empty`); the index format does not depend on where it was built, given the
same table definition, which is copied from the database itself.
"""

from __future__ import annotations

import queue
import sqlite3
import threading

FTS_TABLES = ("files_fts", "entities_fts")
_DONE = object()


def fts_is_empty(conn: sqlite3.Connection) -> bool:
    """True when no file (hence no FTS row) exists in the database."""
    return conn.execute("SELECT NOT EXISTS (SELECT 1 FROM files)").fetchone()[0] == 1


class FtsBuilder:
    """Collects FTS rows on a queue; a thread inserts them into a scratch database."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        marks = ",".join("?" * len(FTS_TABLES))
        definitions = conn.execute(
            f"SELECT sql FROM sqlite_master WHERE type = 'table' AND name IN ({marks})",
            FTS_TABLES,
        ).fetchall()
        self.scratch = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        for (sql,) in definitions:
            self.scratch.execute(sql)
        self.rows: queue.Queue = queue.Queue(maxsize=256)
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="fts-build", daemon=True)
        self.thread.start()

    def add_file(self, file_id: int, relative_path: str, content: str) -> None:
        """Queue one files_fts row."""
        self.rows.put(("files", [(file_id, relative_path, content)]))

    def add_entities(self, rows: list[tuple[int, str, str]]) -> None:
        """Queue entities_fts rows: (rid, entity name, source)."""
        if rows:
            self.rows.put(("entities", rows))

    def _run(self) -> None:
        statements = {
            "files": "INSERT INTO files_fts (rowid, relative_path, content) VALUES (?, ?, ?)",
            "entities": "INSERT INTO entities_fts (rowid, entity_name, source_cache)"
            " VALUES (?, ?, ?)",
        }
        try:
            self.scratch.execute("BEGIN")
            while (item := self.rows.get()) is not _DONE:
                kind, rows = item
                self.scratch.executemany(statements[kind], rows)
            self.scratch.execute("COMMIT")
        except BaseException as e:  # reported by finish(); keep draining so put() never blocks
            self.failure = e
            while self.rows.get() is not _DONE:
                pass

    def finish(self, conn: sqlite3.Connection) -> None:
        """Wait for the thread, then replace the (empty) FTS shadow tables in ``conn``."""
        self.rows.put(_DONE)
        self.thread.join()
        if self.failure is not None:
            raise self.failure
        try:
            for table in FTS_TABLES:
                shadows = self.scratch.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB ?",
                    (table + "_*",),
                ).fetchall()
                for (shadow,) in shadows:
                    rows = self.scratch.execute(f'SELECT * FROM "{shadow}"').fetchall()
                    conn.execute(f'DELETE FROM "{shadow}"')
                    if rows:
                        marks = ",".join("?" * len(rows[0]))
                        conn.executemany(f'INSERT INTO "{shadow}" VALUES ({marks})', rows)
        finally:
            self.close()

    def close(self) -> None:
        """Stop the thread (if still running) and drop the scratch database."""
        if self.thread.is_alive():
            self.rows.put(_DONE)
            self.thread.join()
        self.scratch.close()
