"""Tests for eshu_mcp.query.local.index.store: opening the index file."""

import sqlite3
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index import store


class StoreTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.db = self.tmp / "index.sqlite"

    def test_writer_creates_schema_in_wal_mode_with_version(self) -> None:
        conn = store.open_writer(self.db)
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        conn.close()
        self.assertEqual(mode, "wal")
        self.assertEqual(int(version[0]), store.SCHEMA_VERSION)

    def test_reader_returns_rows_and_refuses_writes(self) -> None:
        store.open_writer(self.db).close()
        reader = store.open_reader(self.db)
        row = reader.execute("SELECT key, value FROM meta WHERE key='schema_version'").fetchone()
        self.assertEqual(row["value"], str(store.SCHEMA_VERSION))
        with self.assertRaises(sqlite3.OperationalError):
            reader.execute("DELETE FROM meta")
        reader.close()

    def test_reader_of_missing_file_raises_index_unavailable(self) -> None:
        with self.assertRaises(store.IndexUnavailable):
            store.open_reader(self.tmp / "missing.sqlite")

    def test_reader_of_non_index_file_raises_index_unavailable(self) -> None:
        other = self.tmp / "other.sqlite"
        sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
        with self.assertRaises(store.IndexUnavailable):
            store.open_reader(other)

    def test_entity_source_view_slices_utf8_byte_span(self) -> None:
        conn = store.open_writer(self.db)
        conn.execute(
            "INSERT INTO repositories(repo_id, name, local_path, created_at)"
            " VALUES ('repository:r_1', 'r', '/r', 'now')"
        )
        text = "x = 'é'\ndef héllo():\n    pass\n"
        conn.execute(
            "INSERT INTO files(repo_id, relative_path, content, content_hash, byte_size,"
            " line_count, parse_status, indexed_at, generation_id)"
            " VALUES ('repository:r_1', 'a.py', ?, 'h', 0, 3, 'parsed', 'now', 'g')",
            (text,),
        )
        start = len("x = 'é'\n".encode())
        conn.execute(
            "INSERT INTO entities(entity_id, repo_id, file_id, relative_path, entity_type,"
            " entity_name, start_line, end_line, start_byte, end_byte, generation_id)"
            " VALUES ('e', 'repository:r_1', 1, 'a.py', 'Function', 'héllo', 2, 3, ?, ?, 'g')",
            (start, len(text.encode())),
        )
        source = conn.execute("SELECT source_cache FROM entity_source").fetchone()[0]
        conn.close()
        self.assertEqual(source, "def héllo():\n    pass\n")

    def test_default_db_path_honours_environment(self) -> None:
        self.patch(store.os, "environ", {"ESHU_MCP_DB": str(self.db)})
        self.assertEqual(store.default_db_path(), self.db)
