"""Tests for eshu_mcp.query.local.index.call_edges: memoised and forked call resolution."""

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index import call_edges
from eshu_mcp.query.local.index.indexer import index_repositories

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

    def test_calls_that_look_alike_share_one_resolution(self) -> None:
        resolved: list[int] = []

        def fake_resolve_call(call, catalog, bindings, language_of):
            resolved.append(call[0])
            return None, "no_definition"

        class EmptyCatalog:
            by_id: dict = {}

        self.patch(call_edges, "resolve_call", fake_resolve_call)
        calls = [
            (1, 7, None, "helper", None, None, None, 1, 3),
            (2, 7, None, "helper", None, None, None, 1, 9),
            (3, 8, None, "helper", None, None, None, 1, 3),
        ]
        edges, unresolved = call_edges.resolve_calls(calls, EmptyCatalog(), None, {}, {})
        self.assertEqual(edges, [])
        self.assertEqual([reason for _, reason in unresolved], ["no_definition"] * 3)
        self.assertEqual(resolved, [1, 3])  # the second call in file 7 reused the first's answer
