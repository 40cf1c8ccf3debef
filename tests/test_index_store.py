"""Tests for eshu_mcp.query.local.index.store.database: opening the index file."""

import sqlite3
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.store import codes, database


class StoreTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.db = self.tmp / "index.sqlite"

    def test_writer_creates_schema_in_wal_mode_with_version(self) -> None:
        conn = database.open_writer(self.db)
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        conn.close()
        self.assertEqual(mode, "wal")
        self.assertEqual(int(version[0]), database.SCHEMA_VERSION)

    def test_a_new_index_has_large_pages_and_an_old_one_keeps_its_own(self) -> None:
        conn = database.open_writer(self.db)
        conn.close()
        old = self.tmp / "old.sqlite"
        made = sqlite3.connect(old)
        made.execute("PRAGMA page_size = 4096")
        made.execute("PRAGMA journal_mode = WAL")
        made.execute("CREATE TABLE kept (value)")
        made.execute("INSERT INTO kept VALUES ('still here')")
        made.commit()
        made.close()
        sizes = {}
        for path in (self.db, old):
            conn = database.open_writer(path)
            sizes[path.name] = conn.execute("PRAGMA page_size").fetchone()[0]
            if path == old:
                kept = conn.execute("SELECT value FROM kept").fetchone()[0]
                self.assertEqual(kept, "still here")
            conn.close()
        self.assertEqual(sizes, {"index.sqlite": database.PAGE_SIZE, "old.sqlite": 4096})
        reader = database.open_reader(self.db)
        self.addCleanup(reader.close)
        self.assertEqual(reader.execute("SELECT COUNT(*) FROM files").fetchone()[0], 0)

    def test_an_index_written_without_the_name_indexes_gains_them_when_opened(self) -> None:
        """Who calls or refers to a name is looked up through an index (an incremental
        build's scope), also in an index file written before those indexes existed."""
        conn = database.open_writer(self.db)
        conn.execute("DROP INDEX call_rows_callee")
        conn.execute("DROP INDEX reference_rows_name")
        conn.close()
        conn = database.open_writer(self.db)
        try:
            names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
            plan = " ".join(
                str(row[3])
                for row in conn.execute(
                    "EXPLAIN QUERY PLAN SELECT DISTINCT c.file_id FROM call_rows c CROSS JOIN"
                    " files f ON f.file_id = c.file_id WHERE c.callee_name IN ('run')"
                    " AND f.repo_id = 'r'"
                )
            )
        finally:
            conn.close()
        self.assertLessEqual({"call_rows_callee", "reference_rows_name"}, names)
        self.assertIn("USING INDEX call_rows_callee", plan)

    def test_the_writer_stores_none_as_null_and_bytes_as_a_blob(self) -> None:
        conn = database.open_writer(self.db)
        self.addCleanup(conn.close)
        conn.execute("CREATE TABLE kept (a, b)")
        conn.executemany("INSERT INTO kept VALUES (?, ?)", [(None, b"\x00\xff"), (1, None)])
        stored = conn.execute("SELECT typeof(a), typeof(b), quote(b) FROM kept").fetchall()
        self.assertEqual(
            [tuple(row) for row in stored],
            [("null", "blob", "X'00FF'"), ("integer", "null", "NULL")],
        )

    def test_reader_returns_rows_and_refuses_writes(self) -> None:
        database.open_writer(self.db).close()
        reader = database.open_reader(self.db)
        row = reader.execute("SELECT key, value FROM meta WHERE key='schema_version'").fetchone()
        self.assertEqual(row["value"], str(database.SCHEMA_VERSION))
        with self.assertRaises(sqlite3.OperationalError):
            reader.execute("DELETE FROM meta")
        reader.close()

    def test_reader_of_missing_file_raises_index_unavailable(self) -> None:
        with self.assertRaises(database.IndexUnavailable):
            database.open_reader(self.tmp / "missing.sqlite")

    def test_reader_of_non_index_file_raises_index_unavailable(self) -> None:
        other = self.tmp / "other.sqlite"
        sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
        with self.assertRaises(database.IndexUnavailable):
            database.open_reader(other)

    def test_entity_source_view_slices_utf8_byte_span(self) -> None:
        conn = database.open_writer(self.db)
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
        self.patch(database.os, "environ", {"ESHU_MCP_DB": str(self.db)})
        self.assertEqual(database.default_db_path(), self.db)

    def test_an_older_schema_is_refused_by_readers_and_rebuilt_by_the_writer(self) -> None:
        old = sqlite3.connect(self.db)
        old.executescript(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "INSERT INTO meta VALUES ('schema_version', '1');"
            "CREATE TABLE entities (rid INTEGER PRIMARY KEY, entity_name TEXT);"
            "INSERT INTO entities VALUES (1, 'stale');"
            "CREATE VIRTUAL TABLE entities_fts USING fts5(entity_name, tokenize='trigram');"
        )
        old.commit()
        old.close()
        with self.assertRaises(database.IndexUnavailable) as caught:
            database.open_reader(self.db)
        self.assertIn("rebuild", str(caught.exception))
        conn = database.open_writer(self.db)
        self.addCleanup(conn.close)
        names = dict(conn.execute("SELECT name, type FROM sqlite_master").fetchall())
        self.assertEqual(names["entities"], "view")
        self.assertNotIn("entities_fts", names)
        self.assertEqual(conn.execute("SELECT COUNT(*) FROM entities").fetchone()[0], 0)
        database.open_reader(self.db).close()

    def test_views_decode_every_code_the_writer_stores(self) -> None:
        conn = database.open_writer(self.db)
        self.addCleanup(conn.close)
        conn.row_factory = None
        conn.execute(
            "INSERT INTO repositories(repo_id, name, local_path, created_at)"
            " VALUES ('repository:r_1', 'r', '/r', 'now')"
        )
        conn.execute(
            "INSERT INTO files(repo_id, relative_path, content, content_hash, byte_size,"
            " line_count, parse_status, indexed_at, generation_id)"
            " VALUES ('repository:r_1', 'a.py', '', 'h', 0, 0, 'parsed', 'now', 'g')"
        )
        for name in (*codes.EDGE_TYPES, *codes.METHODS, *codes.CALL_KINDS, "other"):
            conn.execute(
                "INSERT INTO edges (repo_id, type, source_id, target_id, call_kind,"
                " resolution_method, confidence, line_number, evidence_file_id, generation_id)"
                " VALUES ('repository:r_1', ?, 'file:1', ?, ?, ?, 0.7, 3, 1, '')",
                (
                    name if name in codes.EDGE_TYPES else "CALLS",
                    "target:" + name,
                    name if name in codes.CALL_KINDS or name == "other" else None,
                    name if name in codes.METHODS or name == "other" else "declared",
                ),
            )
        stored = conn.execute(
            "SELECT t.node_id, r.type, r.call_kind, r.method, r.confidence FROM edge_rows r"
            " JOIN nodes t ON t.nid = r.dst"
        ).fetchall()
        for node_id, type_code, kind, method, confidence in stored:
            name = node_id.removeprefix("target:")
            self.assertEqual(type_code, codes.EDGE_TYPES.get(name, codes.EDGE_TYPES["CALLS"]))
            self.assertEqual(kind, codes.CALL_KINDS.get(name, "other" if name == "other" else None))
            self.assertEqual(method, codes.METHODS.get(name, "other" if name == "other" else 1))
            self.assertEqual(confidence, 70)
        shown = conn.execute(
            "SELECT target_id, type, call_kind, resolution_method, confidence FROM edges"
        ).fetchall()
        for target, edge_type, kind, method, confidence in shown:
            name = target.removeprefix("target:")
            self.assertEqual(edge_type, name if name in codes.EDGE_TYPES else "CALLS")
            self.assertEqual(kind, name if name in codes.CALL_KINDS or name == "other" else None)
            self.assertEqual(
                method, name if name in codes.METHODS or name == "other" else "declared"
            )
            self.assertEqual(confidence, 0.7)
        conn.execute(
            "INSERT INTO call_sites (repo_id, file_id, caller_entity_id, callee_name, full_name,"
            " receiver, call_kind, line_number) VALUES"
            " ('repository:r_1', 1, NULL, 'join', 'os.path.join', 'os.path', 'method_call', 2),"
            " ('repository:r_1', 1, NULL, 'f', 'Type::f', 'Type', 'macro', 3)"
        )
        self.assertEqual(
            conn.execute("SELECT full_name FROM call_rows ORDER BY call_id").fetchall(),
            [(None,), ("Type::f",)],
        )
        self.assertEqual(
            conn.execute("SELECT full_name, call_kind FROM call_sites ORDER BY call_id").fetchall(),
            [("os.path.join", "method_call"), ("Type::f", "macro")],
        )
