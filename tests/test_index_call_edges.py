"""Tests for eshu_mcp.query.local.index.resolve.call_edges: memoised and forked call resolution."""

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.resolve import call_edges
from eshu_mcp.query.local.index.resolve.graph import resolve_repository
from eshu_mcp.query.local.index.store import bulk
from eshu_mcp.query.local.index.store.database import open_writer

from .test_index_indexer import fixture_repository

EDGES = (
    "SELECT type, source_id, target_id, call_kind, resolution_method, confidence, line_number"
    " FROM edges WHERE type = 'CALLS'"
)


def calls_and_reasons(db: Path) -> tuple[list, list]:
    conn = sqlite3.connect(db)
    try:
        edges = sorted(conn.execute(EDGES).fetchall(), key=repr)
        reasons = sorted(conn.execute("SELECT call_id, reason FROM unresolved_calls").fetchall())
    finally:
        conn.close()
    return edges, reasons


class CallEdgesTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-call-edges-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = fixture_repository(self.tmp)

    def test_forked_half_resolves_exactly_like_one_process(self) -> None:
        one = self.tmp / "one.sqlite"
        self.assertTrue(index_repositories(one, [self.repo], workers=1).ok)
        self.patch(call_edges, "SPLIT_ABOVE", 0)
        split = self.tmp / "split.sqlite"
        self.assertTrue(index_repositories(split, [self.repo], workers=1).ok)
        edges, reasons = calls_and_reasons(one)
        self.assertTrue(edges and reasons)
        self.assertEqual(calls_and_reasons(split), (edges, reasons))

    def test_forked_half_beside_the_index_building_thread_changes_nothing(self) -> None:
        one = self.tmp / "one.sqlite"
        self.assertTrue(index_repositories(one, [self.repo], workers=1).ok)
        self.patch(call_edges, "SPLIT_ABOVE", 0)
        self.patch(bulk, "BULK_MIN_FILES", 1)  # indexes are rebuilt on a thread meanwhile
        both = self.tmp / "both.sqlite"
        self.assertTrue(index_repositories(both, [self.repo], workers=1).ok)
        self.assertEqual(calls_and_reasons(both), calls_and_reasons(one))
        conn = sqlite3.connect(both)
        self.addCleanup(conn.close)
        self.assertEqual(conn.execute("PRAGMA integrity_check").fetchone()[0], "ok")

    def test_a_first_build_resolves_like_a_rebuild_from_the_stored_rows(self) -> None:
        db = self.tmp / "first.sqlite"
        report = index_repositories(db, [self.repo], workers=1).repositories[0]
        conn = open_writer(db)
        self.addCleanup(conn.close)
        conn.row_factory = None
        everything = "SELECT * FROM edges ORDER BY type, source_id, target_id, line_number"
        first = (
            conn.execute(everything).fetchall(),
            conn.execute("SELECT * FROM unresolved_calls ORDER BY call_id").fetchall(),
            conn.execute("SELECT * FROM imports ORDER BY import_id").fetchall(),
            conn.execute("SELECT * FROM modules ORDER BY module_key").fetchall(),
        )
        conn.execute("BEGIN")
        counts = resolve_repository(conn, report.repo_id)
        rebuilt = (
            conn.execute(everything).fetchall(),
            conn.execute("SELECT * FROM unresolved_calls ORDER BY call_id").fetchall(),
            conn.execute("SELECT * FROM imports ORDER BY import_id").fetchall(),
            conn.execute("SELECT * FROM modules ORDER BY module_key").fetchall(),
        )
        conn.execute("ROLLBACK")
        strip = [[row[1:] for row in first[0]], *first[1:]]  # edge ids differ
        self.assertEqual([[row[1:] for row in rebuilt[0]], *rebuilt[1:]], strip)
        self.assertTrue(all(first))
        self.assertEqual(counts, report.edges)

    def test_a_failing_child_fails_the_run_and_keeps_nothing(self) -> None:
        self.patch(call_edges, "SPLIT_ABOVE", 0)
        parent, real = os.getpid(), call_edges.resolve_calls

        def explode_in_the_child(*args, **kwargs):
            if os.getpid() != parent:
                raise RuntimeError("resolver bug")
            return real(*args, **kwargs)

        self.patch(call_edges, "resolve_calls", explode_in_the_child)
        db = self.tmp / "failed.sqlite"
        report = index_repositories(db, [self.repo], workers=1)
        self.assertFalse(report.ok)
        self.assertIn("call resolution child failed", report.repositories[0].error)
        conn = sqlite3.connect(db)
        self.addCleanup(conn.close)
        self.assertEqual(conn.execute("SELECT COUNT(*) FROM files").fetchone()[0], 0)

    def test_a_failing_parent_half_fails_the_run_and_reaps_the_child(self) -> None:
        self.patch(call_edges, "SPLIT_ABOVE", 0)
        parent, real = os.getpid(), call_edges.resolve_calls
        children: list[int] = []
        real_fork = os.fork

        def explode_in_the_parent(*args, **kwargs):
            if os.getpid() == parent:
                raise RuntimeError("parent resolver bug")
            return real(*args, **kwargs)

        def recording_fork():
            pid = real_fork()
            if pid:
                children.append(pid)
            return pid

        self.patch(call_edges, "resolve_calls", explode_in_the_parent)
        self.patch(call_edges.os, "fork", recording_fork)
        report = index_repositories(self.tmp / "failed.sqlite", [self.repo], workers=1)
        self.assertIn("parent resolver bug", report.repositories[0].error)
        self.assertEqual(len(children), 1)
        with self.assertRaises(ChildProcessError):  # reaped: nothing is left to wait for
            os.waitpid(children[0], os.WNOHANG)

    def test_calls_that_look_alike_share_one_resolution(self) -> None:
        resolved: list[int] = []

        def fake_resolve_call(call, catalog, bindings, language_of):
            resolved.append(call[0])
            return None, "no_definition"

        class EmptyCatalog:
            by_id: dict = {}
            accessors: set = set()

        self.patch(call_edges, "resolve_call", fake_resolve_call)
        calls = [
            (1, 7, None, "helper", None, None, None, 1, 0, 3),
            (2, 7, None, "helper", None, None, None, 1, 0, 9),
            (3, 8, None, "helper", None, None, None, 1, 0, 3),
        ]
        edges, unresolved = call_edges.resolve_calls(calls, EmptyCatalog(), None, {}, {})
        self.assertEqual(edges, [])
        self.assertEqual([reason for _, reason in unresolved], ["no_definition"] * 3)
        self.assertEqual(resolved, [1, 3])  # the second call in file 7 reused the first's answer


class ConstructionTests(SynchronousTestCase):
    """``new C()`` is a call of the class and of the constructor that runs."""

    def test_new_links_the_class_and_its_own_or_inherited_constructor(self) -> None:
        from .test_index_receivers import IndexedSourcesCase

        class Case(IndexedSourcesCase):
            SOURCES = {
                "src/shapes.ts": (
                    "export class Shape {\n  constructor(public name: string) {}\n}\n"
                    "export class Square extends Shape {}\n"
                    "export class Plain {}\n"
                ),
                "src/use.ts": (
                    "import { Shape, Square, Plain } from './shapes';\n"
                    "export function build() {\n"
                    "  new Shape('a');\n  new Square('b');\n  new Plain();\n}\n"
                ),
            }

            def runTest(self) -> None:
                pass

        Case.setUpClass()
        self.addCleanup(Case.tearDownClass)
        found = sorted(
            tuple(row)
            for row in Case.conn.execute(
                "SELECT e.line_number, t.qualified_name FROM edges e"
                " JOIN entities s ON s.entity_id = e.source_id"
                " JOIN entities t ON t.entity_id = e.target_id"
                " WHERE e.type = 'CALLS' AND s.entity_name = 'build'"
            )
        )
        self.assertEqual(
            found,
            [
                (3, "Shape"),
                (3, "Shape.constructor"),
                (4, "Shape.constructor"),  # Square has none of its own
                (4, "Square"),
                (5, "Plain"),
            ],
        )


class AccessorTests(SynchronousTestCase):
    """A member read or assigned in JavaScript/TypeScript uses its get or set accessor."""

    def test_reads_use_the_getter_and_assignments_the_setter(self) -> None:
        from .test_index_receivers import IndexedSourcesCase

        class Case(IndexedSourcesCase):
            SOURCES = {
                "src/box.ts": (
                    "export class Box {\n"
                    "  private n = 0;\n"
                    "  get size(): number { return this.n; }\n"
                    "  set size(v: number) { this.n = v; }\n"
                    "  grow() { this.size = this.size + 1; }\n"
                    "}\n"
                ),
                "src/use.ts": (
                    "import { Box } from './box';\n"
                    "export function show(box: Box) {\n"
                    "  box.size = 2;\n  return box.size;\n}\n"
                ),
            }

            def runTest(self) -> None:
                pass

        Case.setUpClass()
        self.addCleanup(Case.tearDownClass)
        found = sorted(
            tuple(row)
            for row in Case.conn.execute(
                "SELECT s.entity_name, e.line_number, t.start_line, e.call_kind FROM edges e"
                " JOIN entities s ON s.entity_id = e.source_id"
                " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = 'CALLS'"
            )
        )
        getter, setter = 3, 4
        self.assertEqual(
            found,
            [
                ("grow", 5, getter, "property_read"),
                ("grow", 5, setter, "property_write"),
                ("show", 3, setter, "property_write"),
                ("show", 4, getter, "property_read"),
            ],
        )
