"""Tests for eshu_mcp.query.local.index.store.bulk: a bulk first build equals a row-by-row one."""

import shutil
import sqlite3
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build import generation_write
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store import bulk
from eshu_mcp.query.local.index.store.database import open_reader

from .test_index_indexer import fixture_repository

TABLE_QUERIES = {
    "files": "SELECT file_id, relative_path, language, content_hash, parse_status FROM files",
    "entities": "SELECT rid, entity_id, file_id, start_byte, end_byte, metadata FROM entities",
    "edges": "SELECT type, source_id, target_id, resolution_method, line_number FROM edges",
    "calls": "SELECT call_id, caller_entity_id, callee_name, line_number FROM call_sites",
    "unresolved": "SELECT call_id, reason FROM unresolved_calls",
    "imports": "SELECT import_id, module, resolved_file_id FROM imports",
    "facts": "SELECT stable_fact_key, payload_hash, valid_from, valid_to FROM fact_versions",
    "schema": "SELECT type, name, sql FROM sqlite_master WHERE type IN ('index', 'trigger')",
    "file_search": "SELECT rowid FROM files_fts WHERE files_fts MATCH 'def'",
    "entity_search": "SELECT rid FROM entity_source WHERE source_cache LIKE '%return%'",
}


def snapshot(db: Path) -> dict[str, list]:
    """The rows a bulk load must reproduce exactly (ids included), sorted."""
    conn = open_reader(db)
    try:
        return {
            name: sorted((tuple(row) for row in conn.execute(sql)), key=repr)
            for name, sql in TABLE_QUERIES.items()
        }
    finally:
        conn.close()


class BulkLoadTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-bulk-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = fixture_repository(self.tmp)

    def build(self, name: str, minimum: int, *, ok: bool = True) -> Path:
        self.patch(bulk, "BULK_MIN_FILES", minimum)
        db = self.tmp / name
        report = index_repositories(db, [self.repo], workers=1)
        self.assertEqual(report.ok, ok, report)
        return db

    def test_bulk_loaded_first_build_matches_row_by_row_build(self) -> None:
        loads: list[str] = []

        class CountedBulkLoad(bulk.BulkLoad):
            def finish(self, tables=None) -> None:
                if tables is None:
                    loads.append(len(self.indexes))
                super().finish(tables)

        self.patch(generation_write, "BulkLoad", CountedBulkLoad)
        row_by_row = snapshot(self.build("rows.sqlite", 10**9))
        self.assertEqual(loads, [])
        bulk_loaded = snapshot(self.build("bulk.sqlite", 1))
        self.assertEqual(len(loads), 1)
        self.assertTrue(row_by_row["file_search"] and row_by_row["entity_search"])
        self.assertEqual(bulk_loaded, row_by_row)

    def test_file_search_follows_edits_after_a_bulk_load(self) -> None:
        db = self.build("bulk.sqlite", 1)
        (self.repo / "app" / "fees.py").write_text("def renamed_fee_marker():\n    return 1\n")
        report = index_repositories(db, [self.repo], workers=1)
        self.assertEqual(report.repositories[0].modified, ("app/fees.py",))
        conn = open_reader(db)
        self.addCleanup(conn.close)
        found = conn.execute(
            "SELECT f.relative_path FROM files_fts JOIN files f ON f.file_id = files_fts.rowid"
            " WHERE files_fts MATCH 'renamed_fee_marker'"
        ).fetchall()
        self.assertEqual([r[0] for r in found], ["app/fees.py"])
        checker = sqlite3.connect(db)
        self.addCleanup(checker.close)
        checker.execute("INSERT INTO files_fts (files_fts) VALUES ('integrity-check')")

    def test_a_second_repository_after_a_bulk_load_is_searchable(self) -> None:
        other = self.tmp / "other"
        other.mkdir()
        (other / "lonely.py").write_text("def lonely_marker():\n    return 2\n")
        self.patch(bulk, "BULK_MIN_FILES", 1)
        db = self.tmp / "two.sqlite"
        report = index_repositories(db, [self.repo, other], workers=1)
        self.assertTrue(report.ok, report)
        conn = open_reader(db)
        self.addCleanup(conn.close)
        for sql, marker in (
            ("SELECT COUNT(*) FROM files_fts WHERE files_fts MATCH ?", "lonely_marker"),
            ("SELECT COUNT(*) FROM files_fts WHERE files_fts MATCH ?", "compute_fee"),
            ("SELECT COUNT(*) FROM entity_source WHERE source_cache LIKE ?", "%lonely_marker%"),
        ):
            self.assertGreater(conn.execute(sql, (marker,)).fetchone()[0], 0, marker)
        checker = sqlite3.connect(db)
        self.addCleanup(checker.close)
        checker.execute("INSERT INTO files_fts (files_fts) VALUES ('integrity-check')")

    def test_bulk_load_beside_a_smaller_repository_fills_the_file_search(self) -> None:
        other = self.tmp / "other"
        other.mkdir()
        (other / "lonely.py").write_text("def lonely_marker():\n    return 2\n")
        loads: list[int] = []

        class CountedBulkLoad(bulk.BulkLoad):
            def finish(self, tables=None) -> None:
                if tables is None:
                    loads.append(len(self.indexes))
                super().finish(tables)

        self.patch(generation_write, "BulkLoad", CountedBulkLoad)
        self.patch(bulk, "BULK_MIN_FILES", 2)
        db = self.tmp / "two.sqlite"
        report = index_repositories(db, [other, self.repo], workers=1)
        self.assertTrue(report.ok, report)
        self.assertEqual(len(loads), 1)  # the second repository only
        conn = open_reader(db)
        self.addCleanup(conn.close)
        found = conn.execute(
            "SELECT f.relative_path FROM files_fts JOIN files f ON f.file_id = files_fts.rowid"
            " WHERE files_fts MATCH 'compute_fee OR lonely_marker'"
        ).fetchall()
        self.assertEqual(
            sorted(r[0] for r in found), ["app/fees.py", "app/service.py", "lonely.py"]
        )
        checker = sqlite3.connect(db)
        self.addCleanup(checker.close)
        checker.execute("INSERT INTO files_fts (files_fts) VALUES ('integrity-check')")

    def test_a_failed_bulk_load_keeps_the_indexes(self) -> None:
        def explode(*args, **kwargs):
            raise RuntimeError("resolver crashed")

        self.patch(generation_write, "resolve_repository", explode)
        db = self.build("failed.sqlite", 1, ok=False)
        conn = sqlite3.connect(db)
        self.addCleanup(conn.close)
        names = {r[1] for r in conn.execute(TABLE_QUERIES["schema"])}
        self.assertTrue({"files_ai", "edge_rows_in", "edge_rows_out", "entity_rows_name"} <= names)
        self.assertEqual(conn.execute("SELECT COUNT(*) FROM files").fetchone()[0], 0)


class InsertRowsTests(SynchronousTestCase):
    """insert_rows stores exactly what executemany would, many rows per statement."""

    def table(self) -> sqlite3.Connection:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        self.addCleanup(conn.close)
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, weight, note TEXT)")
        return conn

    def test_rows_land_in_order_with_their_values_and_ids(self) -> None:
        rows = [(f"n{i}", i * 1.5 if i % 3 else None, "x" * (i % 5)) for i in range(150)]
        rows[7] = ("naïve", b"\x00bytes", None)
        by_many, by_rows = self.table(), self.table()
        statement = "INSERT INTO t (name, weight, note) VALUES (?, ?, ?)"
        by_many.executemany(statement, rows)
        bulk.insert_rows(by_rows, statement, rows)
        query = "SELECT id, name, weight, typeof(weight), note FROM t ORDER BY id"
        stored = by_rows.execute(query).fetchall()
        self.assertEqual(len(stored), 150)
        self.assertEqual(stored, by_many.execute(query).fetchall())

    def test_literal_columns_and_or_ignore_keep_their_meaning(self) -> None:
        conn = self.table()
        rows = [(i % 70, f"n{i}") for i in range(140)]  # ids 0..69 twice: the repeats ignored
        bulk.insert_rows(conn, "INSERT OR IGNORE INTO t (id, name, weight) VALUES (?, ?, 7)", rows)
        self.assertEqual(
            conn.execute("SELECT COUNT(*), MIN(name), SUM(weight) FROM t").fetchone(),
            (70, "n0", 490),
        )
        self.assertEqual(conn.execute("SELECT name FROM t WHERE id = 69").fetchone(), ("n69",))

    def test_few_rows_and_no_rows(self) -> None:
        conn = self.table()
        bulk.insert_rows(conn, "INSERT INTO t (name) VALUES (?)", [])
        bulk.insert_rows(conn, "INSERT INTO t (name) VALUES (?)", [("a",), ("b",)])
        self.assertEqual(
            conn.execute("SELECT name FROM t ORDER BY id").fetchall(), [("a",), ("b",)]
        )

    def test_ragged_rows_are_refused_before_anything_is_stored(self) -> None:
        conn = self.table()
        rows = [("a", 1)] * 100 + [("b",)] + [("c", 2, 3)] + [("d", 4)] * 26
        with self.assertRaises(ValueError):
            bulk.insert_rows(conn, "INSERT INTO t (name, weight) VALUES (?, ?)", rows)
        self.assertEqual(conn.execute("SELECT COUNT(*) FROM t").fetchone(), (0,))

    def test_a_statement_without_one_values_group_is_refused(self) -> None:
        with self.assertRaises(ValueError):
            bulk.insert_rows(self.table(), "INSERT INTO t SELECT 1, 'a', 2, 'b'", [()] * 64)
