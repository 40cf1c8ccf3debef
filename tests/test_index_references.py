"""Tests for REFERENCES edges: definitions used as values, resolved and kept right on re-index."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories

from .test_index_indexer import git

UTIL = """\
def fmt(value):
    return str(value)


def unused_util():
    return 0
"""

SERVICE = """\
from pkg.util import fmt
from pkg import util
from pkg.registry import register


def helper(result):
    return result


def make_worker():
    return None


def factory():
    return helper


@register
def decorated():
    return 1


HANDLERS = {"a": helper, "b": util.fmt}
CHAIN = [fmt, make_worker]
alias = helper


class Base:
    def _base_cb(self, result):
        return result


class Service(Base):
    def start(self, d, spawn):
        d.addCallback(self._cb)
        d.addErrback(self._base_cb)
        spawn(createWorker=make_worker)

        def later():
            d.addBoth(self._cb)

        return later

    def _cb(self, result):
        return result


def shadowed(helper):
    return run(helper)
"""

REGISTRY = """\
def register(function):
    return function
"""


def references(db: Path) -> set[tuple[str, str, str]]:
    """(source name or file path, target qualified name, resolution method) of each edge."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT COALESCE(s.qualified_name, 'file:' || f.relative_path), t.qualified_name,"
            " e.resolution_method FROM edges e JOIN entities t ON t.entity_id = e.target_id"
            " LEFT JOIN entities s ON s.entity_id = e.source_id"
            " LEFT JOIN files f ON 'file:' || f.file_id = e.source_id"
            " WHERE e.type = 'REFERENCES'"
        ).fetchall()
    finally:
        conn.close()
    return set(rows)


class ReferenceEdgeTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-references-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = self.tmp / "repo"
        (self.repo / "pkg").mkdir(parents=True)
        (self.repo / "pkg" / "__init__.py").write_text("")
        self.write("pkg/util.py", UTIL)
        self.write("pkg/service.py", SERVICE)
        self.write("pkg/registry.py", REGISTRY)
        git(self.repo, "init", "-q", "-b", "main")
        self.commit()
        self.db = self.tmp / "index.sqlite"
        self.assertTrue(index_repositories(self.db, [self.repo], workers=1).ok)

    def write(self, path: str, text: str) -> None:
        (self.repo / path).write_text(text)

    def commit(self) -> None:
        git(self.repo, "add", "-A")
        git(self.repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", ".")

    def reindex(self) -> None:
        self.commit()
        self.assertTrue(index_repositories(self.db, [self.repo], workers=1).ok)

    def test_each_value_form_references_its_definition(self) -> None:
        found = {(source, target) for source, target, _ in references(self.db)}
        for edge in [
            ("Service.start", "Service._cb"),  # d.addCallback(self._cb)
            ("Service.start", "Base._base_cb"),  # inherited through the class's base
            ("Service.start", "make_worker"),  # createWorker=make_worker
            ("later", "Service._cb"),  # a nested function's self is the method's
            ("factory", "helper"),  # returned
            ("file:pkg/service.py", "helper"),  # dict value and assignment at module level
            ("file:pkg/service.py", "fmt"),  # list member, imported name
            ("file:pkg/service.py", "register"),  # decorator, imported
        ]:
            self.assertIn(edge, found)

    def test_module_attribute_and_import_resolve_by_binding(self) -> None:
        methods = {(s, t): m for s, t, m in references(self.db)}
        self.assertEqual(methods[("file:pkg/service.py", "fmt")], "import_binding")
        self.assertEqual(methods[("Service.start", "Service._cb")], "same_file")

    def test_a_parameter_named_like_a_definition_is_not_a_reference(self) -> None:
        sources = {source for source, target, _ in references(self.db) if target == "helper"}
        self.assertNotIn("shadowed", sources)

    def test_unreferenced_definitions_get_no_edge(self) -> None:
        targets = {target for _, target, _ in references(self.db)}
        self.assertNotIn("unused_util", targets)
        self.assertNotIn("decorated", targets)

    def test_reindexing_a_changed_file_keeps_references_right(self) -> None:
        self.write("pkg/service.py", SERVICE.replace('"a": helper', '"a": factory'))
        self.reindex()
        found = {(source, target) for source, target, _ in references(self.db)}
        self.assertIn(("file:pkg/service.py", "factory"), found)
        self.assertIn(("file:pkg/service.py", "helper"), found)  # still: alias = helper

    def test_a_definition_appearing_elsewhere_is_linked_from_unchanged_files(self) -> None:
        self.write("pkg/util.py", UTIL.replace("def fmt(value)", "def fmt_old(value)"))
        self.reindex()
        self.assertNotIn("fmt", {target for _, target, _ in references(self.db)})
        self.write("pkg/util.py", UTIL)
        self.reindex()
        found = {(source, target) for source, target, _ in references(self.db)}
        self.assertIn(("file:pkg/service.py", "fmt"), found)  # service.py did not change


WIDGET_JS = """\
import { format } from "./format.js";

function onTick() {
  return 1;
}

export class Widget {
  start(timer) {
    timer.on("tick", this.onDone);
    setTimeout(onTick, 10);
    return [format];
  }

  onDone() {
    return 0;
  }
}
"""

FORMAT_JS = "export function format(value) {\n  return String(value);\n}\n"

SERVER_GO = """\
package server

import "net/http"

func Run() {
\thttp.HandleFunc("/", handle)
\troutes := map[string]func(){"health": health}
\t_ = routes
}
"""

HANDLERS_GO = """\
package server

func handle() {}

func health() {}
"""


class OtherLanguageReferenceTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-references-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        repo = self.tmp / "repo"
        for path, text in [
            ("web/widget.js", WIDGET_JS),
            ("web/format.js", FORMAT_JS),
            ("server/server.go", SERVER_GO),
            ("server/handlers.go", HANDLERS_GO),
        ]:
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", ".")
        self.db = self.tmp / "index.sqlite"
        self.assertTrue(index_repositories(self.db, [repo], workers=1).ok)

    def test_javascript_function_and_method_references(self) -> None:
        found = {(source, target) for source, target, _ in references(self.db)}
        self.assertIn(("Widget.start", "Widget.onDone"), found)  # this.onDone
        self.assertIn(("Widget.start", "onTick"), found)  # setTimeout(onTick)
        self.assertIn(("Widget.start", "format"), found)  # imported, listed

    def test_go_function_values_resolve_within_the_package(self) -> None:
        found = {(source, target) for source, target, _ in references(self.db)}
        self.assertIn(("Run", "handle"), found)  # http.HandleFunc("/", handle)
        self.assertIn(("Run", "health"), found)  # a map literal of handlers
