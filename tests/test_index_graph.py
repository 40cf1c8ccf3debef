"""Tests for eshu_mcp.query.local.index.resolve.graph: Go interfaces satisfied by method sets."""

import shutil
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.resolve.graph import resolve_repository
from eshu_mcp.query.local.index.store.database import open_reader, open_writer
from tests.test_index_indexer import git

FILES = {
    "go.mod": "module example.com/shop\n",
    "store/store.go": (
        "package store\ntype Store interface {\n  Get(key string) string\n"
        "  Put(key, v string)\n}\ntype Reader interface {\n  Get(key string) string\n}\n"
        "type Any interface{}\n"
    ),
    "store/memory.go": (
        "package store\ntype Memory struct{ m map[string]string }\n"
        "func (s *Memory) Get(key string) string { return s.m[key] }\n"
        "func (s *Memory) Put(key, v string) { s.m[key] = v }\n"
        "type Half struct{}\nfunc (h Half) Get(key string) string { return key }\n"
        'func use(s Store) string { return s.Get("a") }\n'
    ),
    "other/other.go": "package other\ntype Memory struct{}\n",
}
IMPLEMENTS = (
    "SELECT s.qualified_name, s.relative_path, t.qualified_name FROM edges e"
    " JOIN entities s ON s.entity_id = e.source_id JOIN entities t ON t.entity_id = e.target_id"
    " WHERE e.type = 'IMPLEMENTS'"
)


class MethodSetTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-graph-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        repo = self.tmp / "repo"
        for path, content in FILES.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(content)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "fixture")
        self.db = self.tmp / "index.sqlite"
        self.report = index_repositories(self.db, [repo], workers=1).repositories[0]

    def implements(self) -> set[tuple]:
        conn = open_reader(self.db)
        try:
            return {tuple(row) for row in conn.execute(IMPLEMENTS)}
        finally:
            conn.close()

    def test_a_struct_implements_every_interface_whose_methods_it_has(self) -> None:
        self.assertEqual(
            self.implements(),
            {
                ("Memory", "store/memory.go", "Store"),
                ("Memory", "store/memory.go", "Reader"),
                ("Half", "store/memory.go", "Reader"),
            },
        )

    def test_a_call_on_an_interface_value_reaches_the_interfaces_method(self) -> None:
        conn = open_reader(self.db)
        self.addCleanup(conn.close)
        calls = conn.execute(
            "SELECT t.qualified_name FROM edges e JOIN entities s ON s.entity_id = e.source_id"
            " JOIN entities t ON t.entity_id = e.target_id"
            " WHERE e.type = 'CALLS' AND s.qualified_name = 'use'"
        ).fetchall()
        self.assertEqual([tuple(row) for row in calls], [("Store.Get",)])

    def test_a_rebuild_from_the_stored_rows_finds_the_same_edges(self) -> None:
        first = self.implements()
        conn = open_writer(self.db)
        try:
            conn.execute("BEGIN")
            resolve_repository(conn, self.report.repo_id)
            conn.execute("COMMIT")
        finally:
            conn.close()
        self.assertEqual(self.implements(), first)
