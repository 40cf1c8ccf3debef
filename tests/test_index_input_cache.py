"""
Tests for graph inputs kept between builds (eshu_mcp.query.local.index.resolve.input_cache): a
long-lived builder child that patches its kept inputs ends every build with exactly the
edges a fresh index of the same tree has, through edits of bodies, of a base class, of an
import, and through added and deleted files; kept inputs another writer made stale are
not used.
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.resolve import input_cache
from eshu_mcp.query.local.index.resolve.graph import warm_inheritance
from eshu_mcp.query.local.index.resolve.inputs import read_graph_inputs
from eshu_mcp.query.local.index.resolve.receivers import nested_names
from eshu_mcp.query.local.index.store.database import open_reader, open_writer
from tests.daemon import child_environment
from tests.test_index_indexer import git

BUILD_DEADLINE = 60.0

BASE = """\
class Base:
    def run(self):
        return self.step()

    def step(self):
        return 1


class Other:
    def run(self):
        return 2
"""
HELPERS = """\
def helper(value):
    return value


def spare(value):
    return value + 1
"""
MORE_HELPERS = """\
def helper(value):
    return value * 2
"""
CHILD = """\
from pkg.base import Base
from pkg.helpers import helper


class Child(Base):
    def step(self):
        return helper(self.extra())
"""


def filler(number: int) -> str:
    """A module that calls across the package (so the repository is big enough for scoped
    rebuilds: a change below a quarter of the files)."""
    return (
        "from pkg.helpers import helper, spare\n"
        "from pkg.base import Base\n\n\n"
        f"def work_{number}(value):\n"
        "    return helper(spare(value)) + Base().run()\n"
    )


def make_repository(root: Path) -> Path:
    repo = root / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "base.py").write_text(BASE)
    (repo / "pkg" / "helpers.py").write_text(HELPERS)
    (repo / "pkg" / "more.py").write_text(MORE_HELPERS)
    (repo / "pkg" / "child.py").write_text(CHILD)
    for number in range(12):
        (repo / "pkg" / f"filler_{number}.py").write_text(filler(number))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fixture")
    return repo


def edge_set(db: Path) -> set[tuple]:
    """Every edge row, its ends and evidence named by path (file ids differ between indexes)."""
    conn = open_reader(db)
    try:
        paths = dict(conn.execute("SELECT file_id, relative_path FROM files"))

        def named(node_id: str | None) -> str | None:
            if node_id is not None and node_id.startswith("file:"):
                return "file:" + paths[int(node_id[5:])]
            return node_id  # None: a row whose end no longer exists (the view hides it)

        rows = conn.execute(
            "SELECT r.type, s.node_id, t.node_id, r.call_kind, r.reason, r.method,"
            " r.confidence, r.line_number, r.evidence_file_id FROM edge_rows r"
            " LEFT JOIN nodes s ON s.nid = r.src LEFT JOIN nodes t ON t.nid = r.dst"
        ).fetchall()
        return {
            (*row[:1], named(row[1]), named(row[2]), *row[3:8], paths.get(row[8])) for row in rows
        }
    finally:
        conn.close()


def module_rows(db: Path) -> set[tuple]:
    """Every modules row, its file named by path."""
    conn = open_reader(db)
    try:
        return {
            tuple(row)
            for row in conn.execute(
                "SELECT m.name, m.language, f.relative_path FROM modules m"
                " LEFT JOIN files f ON f.file_id = m.file_id"
            )
        }
    finally:
        conn.close()


def totals(db: Path) -> tuple[int, int]:
    """The files and entities ``--status`` counts."""
    conn = open_reader(db)
    try:
        return tuple(
            conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("files", "entities")
        )
    finally:
        conn.close()


class BuilderChild:
    """``python -m eshu_mcp.query.local.index.build.builder`` fed one request at a time."""

    def __init__(self, home: Path, db: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "eshu_mcp.query.local.index.build.builder", "--db", str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=child_environment(home),
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.builds = 0

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put("")

    def build(self, repo: Path, changed: list[str] | None = None) -> dict:
        self.builds += 1
        request = {"build": self.builds, "paths": [str(repo)], "workers": 1}
        if changed is not None:  # what the daemon's watcher saw
            request["changed"] = {str(repo): changed}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        deadline = time.monotonic() + BUILD_DEADLINE
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=deadline - time.monotonic())
            except queue.Empty:
                break
            if not line:
                break
            event = json.loads(line)
            if event.get("phase") == "built":
                return event
        raise AssertionError("the builder child did not finish a build in time")

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(BUILD_DEADLINE)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self.reader.join(BUILD_DEADLINE)
            self.process.stdout.close()


class KeptInputsThroughTheChildTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-kept-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = make_repository(self.tmp)
        self.db = self.tmp / "index.sqlite"
        self.child = BuilderChild(self.tmp / "home", self.db)
        self.addCleanup(self.child.close)
        self.cold = 0

    def assertEdgesAsCold(self, step: str, changed: list[str] | None = None) -> None:
        built = self.child.build(self.repo, changed)
        self.assertTrue(built["ok"], built)
        self.cold += 1
        cold_db = self.tmp / f"cold-{self.cold}.sqlite"
        index_repositories(cold_db, [self.repo], workers=1)
        ours, cold = edge_set(self.db), edge_set(cold_db)
        (summary,) = built["repositories"]
        self.assertEqual(summary["edges"], len(ours))  # the count --status gives
        self.assertEqual((step, ours - cold, cold - ours), (step, set(), set()))
        self.assertEqual((step, summary["files"], summary["entities"]), (step, *totals(cold_db)))
        self.assertEqual((step, module_rows(self.db)), (step, module_rows(cold_db)))

    def write(self, path: str, text: str) -> None:
        (self.repo / path).write_text(text)

    def test_every_build_has_the_edges_of_a_fresh_index(self) -> None:
        self.assertEdgesAsCold("first build")
        self.write(
            "pkg/filler_0.py", filler(0) + "\n\ndef added(value):\n    return helper(value)\n"
        )
        self.assertEdgesAsCold("body edit (reads back, keeps)")
        self.write("pkg/base.py", BASE + "\n    def extra(self):\n        return 3\n")
        self.assertEdgesAsCold("method added to a base class")
        self.write("pkg/child.py", CHILD + "\n    def run(self):\n        return 4\n")
        self.assertEdgesAsCold("an override added")
        self.write(
            "pkg/base.py",
            BASE.replace(
                "def run(self):\n        return self", "def go(self):\n        return self"
            ),
        )
        self.assertEdgesAsCold("the overridden method renamed in the base")
        self.write("pkg/base.py", BASE)
        self.assertEdgesAsCold("and back")
        self.write("pkg/child.py", CHILD)
        self.assertEdgesAsCold("the override removed")
        self.write("pkg/child.py", CHILD.replace("pkg.helpers import", "pkg.more import"))
        self.assertEdgesAsCold("import moved to another module")
        self.write("pkg/helpers.py", HELPERS.replace("def spare", "def spared"))
        self.assertEdgesAsCold("a called function renamed")
        self.write("pkg/child.py", CHILD.replace("(Base)", "(Other)").replace("Base\n", "Other\n"))
        self.assertEdgesAsCold("base class changed")
        self.write("pkg/child.py", CHILD)
        self.assertEdgesAsCold("base class changed back")
        self.write(
            "pkg/late.py", "from pkg.more import helper\n\n\ndef late():\n    return helper(1)\n"
        )
        self.assertEdgesAsCold("file added")
        self.write("pkg/filler_1.py", filler(1) + "\n\ndef more():\n    return late()\n")
        self.assertEdgesAsCold("a call to the added file's function")
        (self.repo / "pkg" / "more.py").unlink()
        self.assertEdgesAsCold("an imported module deleted")
        self.write("pkg/filler_2.py", filler(2) + "\n\ndef again():\n    return work_3(1)\n")
        self.assertEdgesAsCold("body edit after the deletion")

    def test_builds_told_the_changed_paths_have_the_edges_of_a_fresh_index(self) -> None:
        self.assertEdgesAsCold("first build")
        self.write("pkg/base.py", BASE + "\n    def extra(self):\n        return 3\n")
        self.assertEdgesAsCold("method added to a base class", ["pkg/base.py"])
        self.write("pkg/child.py", CHILD.replace("(Base)", "(Other)").replace("Base\n", "Other\n"))
        self.assertEdgesAsCold("base class changed", ["pkg/child.py"])
        self.write("pkg/helpers.py", HELPERS.replace("def spare", "def spared"))
        self.assertEdgesAsCold("a called function renamed", ["pkg/helpers.py"])
        (self.repo / "pkg" / "more.py").unlink()
        self.assertEdgesAsCold("an imported module deleted", ["pkg/more.py"])
        self.write("pkg/late.py", "def late():\n    return 1\n")
        self.assertEdgesAsCold("file added (a whole walk)", ["pkg/late.py"])

    def test_a_build_by_another_process_is_not_patched_over(self) -> None:
        self.assertEdgesAsCold("first build")
        self.write("pkg/filler_0.py", filler(0) + "\n\ndef one():\n    return 1\n")
        self.assertEdgesAsCold("kept by the child")
        self.write("pkg/helpers.py", HELPERS + "\n\ndef one():\n    return 2\n")
        index_repositories(self.db, [self.repo], workers=1)  # another writer, same index
        self.write("pkg/filler_3.py", filler(3) + "\n\ndef two():\n    return one()\n")
        self.assertEdgesAsCold("the child's next build")


class PatchedInputsTests(SynchronousTestCase):
    """In process: what a patch leaves equals what a read-back gives."""

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-kept-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = make_repository(self.tmp)
        self.db = self.tmp / "index.sqlite"
        input_cache.keep_between_builds(False)  # nothing kept from another test
        input_cache.keep_between_builds()
        self.addCleanup(input_cache.keep_between_builds, False)

    def test_patched_catalog_bindings_and_bases_equal_a_read_back(self) -> None:
        report = index_repositories(self.db, [self.repo], workers=1)
        input_cache.warm(self.db, [report.repositories[0].repo_id])  # as the child does
        ((_, read_back),) = input_cache._kept.items()
        self.write_and_index("pkg/filler_0.py", filler(0) + "\n\ndef a():\n    return 1\n")
        self.write_and_index(
            "pkg/base.py", BASE + "\n    def extra(self):\n        return 3\n"
        )  # patched: a method, a class's children, a name that moved
        self.write_and_index("pkg/child.py", CHILD.replace("pkg.helpers", "pkg.more"))
        ((_, kept),) = input_cache._kept.items()
        self.assertTrue(kept.settled)
        self.assertIs(kept.inputs, read_back.inputs)  # warmed once, then patched, never read again
        conn = open_writer(self.db)
        try:
            (repo_id,) = conn.execute("SELECT repo_id FROM repositories").fetchone()
            fresh = read_graph_inputs(conn, repo_id)
        finally:
            conn.close()
        self.assertEqual(summary(kept.inputs), summary(fresh))

    def test_the_first_edit_after_warming_patches_the_warmed_inheritance(self) -> None:
        """The child resolves the inheritance when it warms up (after the daemon's first
        build): the first edit then patches it, as every later one does, rather than
        resolving every base row (23 s for the first edit at 26k files)."""
        report = index_repositories(self.db, [self.repo], workers=1)
        input_cache.warm(self.db, [report.repositories[0].repo_id], warm_inheritance)
        ((_, kept),) = input_cache._kept.items()
        warmed = kept.hierarchy
        self.assertIsNotNone(warmed)
        self.write_and_index("pkg/child.py", CHILD + "\n    def run(self):\n        return 4\n")
        self.assertIs(kept.hierarchy, warmed)  # patched in place, not resolved whole
        self.write_and_index("pkg/filler_0.py", filler(0) + "\n\ndef a():\n    return 1\n")
        self.assertIs(kept.hierarchy, warmed)
        cold_db = self.tmp / "cold.sqlite"
        index_repositories(cold_db, [self.repo], workers=1)
        self.assertEqual(edge_set(self.db), edge_set(cold_db))

    def test_inheritance_stored_otherwise_is_not_warmed(self) -> None:
        report = index_repositories(self.db, [self.repo], workers=1)
        conn = open_writer(self.db)
        try:
            conn.execute("DELETE FROM edge_rows WHERE type = 5")  # as if another version wrote
        finally:
            conn.close()
        input_cache.warm(self.db, [report.repositories[0].repo_id], warm_inheritance)
        ((_, kept),) = input_cache._kept.items()
        self.assertIsNone(kept.hierarchy)  # the next build resolves it whole, as before

    def write_and_index(self, path: str, text: str) -> None:
        (self.repo / path).write_text(text)
        report = index_repositories(self.db, [self.repo], workers=1)
        self.assertTrue(report.ok)


def summary(inputs) -> dict:
    """What resolution reads of graph inputs, in the order it reads it."""
    catalog = inputs.catalog

    def lists(mapping) -> dict:
        return {key: [e.nid for e in value] for key, value in mapping.items() if value}

    return {
        "by_id": sorted((nid, repr(e)) for nid, e in catalog.by_id.items()),
        "callables": lists(catalog.callables.by_name),
        "methods": lists(catalog.methods.by_name),
        "constructible": lists(catalog.constructible.by_name),
        "by_class": lists(catalog.by_class),
        "types": lists(catalog.types),
        "children": lists(catalog.children),
        "bases_of": {k: v for k, v in catalog.bases_of.items() if v},
        "bases": inputs.bases,
        "records": [
            (r.file_id, r.module, r.imported_name, r.resolved_file_id) for r in inputs.records
        ],
        "records_of": {
            file_id: [r.import_id for r in records]
            for file_id, records in (inputs.records_of or by_file(inputs.records)).items()
            if records
        },
        "module_records": {
            module: [r.import_id for r in records]
            for module, records in (inputs.module_records or by_module(inputs.records)).items()
            if records
        },
        "nested": {
            file_id: names
            for file_id, names in (
                inputs.nested or nested_names(catalog.by_id, catalog.by_id.values())
            ).items()
            if names
        },
        "names": {k: v for k, v in inputs.bindings.names.items() if v},
        "star": {k: v for k, v in inputs.bindings.star.items() if v},
        "files": sorted(tuple(row) for row in inputs.files),
        "file_nids": inputs.file_nids,
    }


def by_module(records) -> dict:
    grouped: dict = {}
    for record in records:
        grouped.setdefault(record.module, []).append(record)
    return grouped


def by_file(records) -> dict:
    grouped: dict = {}
    for record in records:
        grouped.setdefault(record.file_id, []).append(record)
    return grouped


class UncommittedPatchTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-kept-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = make_repository(self.tmp)
        self.db = self.tmp / "index.sqlite"
        input_cache.keep_between_builds(False)
        input_cache.keep_between_builds()
        self.addCleanup(input_cache.keep_between_builds, False)

    def test_inputs_patched_by_a_build_that_rolled_back_are_read_again(self) -> None:
        report = index_repositories(self.db, [self.repo], workers=1)
        repo_id = report.repositories[0].repo_id
        input_cache.warm(self.db, [repo_id])
        ((_, warmed),) = input_cache._kept.items()
        conn = open_writer(self.db)
        try:
            (file_id,) = conn.execute(
                "SELECT file_id FROM files WHERE relative_path = 'pkg/helpers.py'"
            ).fetchone()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DELETE FROM entity_rows WHERE file_id = ?", (file_id,))
            patched = input_cache.graph_inputs(conn, repo_id, frozenset({file_id}), True)
            self.assertIs(patched, warmed.inputs)  # patched to a state never committed
            conn.execute("ROLLBACK")
        finally:
            conn.close()
        (self.repo / "pkg" / "filler_0.py").write_text(filler(0) + "\n\ndef b():\n    return 2\n")
        index_repositories(self.db, [self.repo], workers=1)
        ((_, kept),) = input_cache._kept.items()
        self.assertIsNot(kept.inputs, warmed.inputs)
        cold_db = self.tmp / "cold.sqlite"
        index_repositories(cold_db, [self.repo], workers=1)
        self.assertEqual(edge_set(self.db), edge_set(cold_db))
