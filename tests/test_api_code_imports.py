"""Tests for /code/imports/investigate: dependencies, importers, cycles, cross-module calls."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries.result import summarize_envelope
from eshu_mcp.query.local.api.imports import investigate
from eshu_mcp.query.local.api.imports.investigate import module_of
from tests.answer_rows import derived
from tests.test_api_code_common import call, error_of, shop_index

ROUTE = "/code/imports/investigate"


def imports_index(case: SynchronousTestCase):
    index, repo = shop_index(case)
    a = index.file(repo, "pkg/a.py", "from pkg import b\n")
    b = index.file(repo, "pkg/b.py", "import os\nfrom pkg import a\n")
    index.import_row(repo, a, "pkg.b", 1, resolved_file_id=b)
    index.import_row(repo, b, "os", 1)
    index.import_row(repo, b, "pkg.a", 2, resolved_file_id=a)
    index.writer.commit()
    return index, repo


class ImportsTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = imports_index(self)
        self.conn = self.index.reader()

    def test_imports_by_file(self):
        answer = call(self.conn, ROUTE, {"repo_id": "shop", "source_file": "pkg/b.py"})
        data = answer.data
        self.assertEqual([d["target_module"] for d in data["dependencies"]], ["os", "pkg.a"])
        first = data["dependencies"][0]
        self.assertEqual(first["rank"], 1)
        self.assertEqual(first["relationship_type"], "IMPORTS")
        self.assertEqual(first["source_name"], "pkg.b")
        self.assertEqual(first["dependency_handle"]["tool"], "investigate_import_dependencies")
        self.assertEqual(data["count"], 2)
        self.assertEqual(data["coverage"]["candidate_scan_limit"], 25000)
        self.assertEqual(answer.truth["capability"], "symbol_graph.import_dependencies")

    def test_importers_of_a_module(self):
        data = call(self.conn, ROUTE, {"query_type": "importers", "target_module": "service"})
        self.assertEqual([d["source_file"] for d in data.data["dependencies"]], ["shop/api.py"])
        self.assertEqual((data.data["total"], data.data["files_total"]), (1, 1))
        text = summarize_envelope("investigate_import_dependencies", derived(data.data))
        self.assertIn('1 import for "service"; in 1 file', text)

    def test_importers_of_a_module_include_its_relative_importers(self):
        index, repo = self.index, self.repo
        cells = index.file(repo, "pkg/cells.py", "def cell_len(s):\n    return 1\n")
        other = index.file(repo, "tests/pkg/cells.py", "")
        user = index.file(repo, "pkg/user.py", "from .cells import cell_len\n")
        sibling = index.file(repo, "pkg/sib.py", "from . import cells\n")
        near = index.file(repo, "tests/pkg/t.py", "from .cells import x\n")
        index.import_row(repo, user, ".cells", 1, imported_name="cell_len", resolved_file_id=cells)
        index.import_row(repo, sibling, ".", 1, imported_name="cells", resolved_file_id=cells)
        index.import_row(repo, near, ".cells", 1, imported_name="x", resolved_file_id=other)
        index.writer.commit()
        data = call(self.conn, ROUTE, {"query_type": "importers", "target_module": "pkg.cells"})
        found = [(d["source_file"], d["target_file"]) for d in data.data["dependencies"]]
        self.assertEqual(found, [("pkg/sib.py", "pkg/cells.py"), ("pkg/user.py", "pkg/cells.py")])

    def test_importers_of_a_module_under_a_source_root(self):
        index, repo = self.index, self.repo
        cells = index.file(repo, "src/pkg_x/cells.py", "")
        user = index.file(repo, "src/pkg_x/user.py", "from .cells import n\n")
        index.import_row(repo, user, ".cells", 1, imported_name="n", resolved_file_id=cells)
        index.writer.commit()
        data = call(self.conn, ROUTE, {"query_type": "importers", "target_module": "pkg_x.cells"})
        found = [d["source_file"] for d in data.data["dependencies"]]
        self.assertEqual(found, ["src/pkg_x/user.py"])

    def test_importers_of_a_file_are_the_imports_resolved_to_it(self):
        data = call(self.conn, ROUTE, {"query_type": "importers", "target_file": "pkg/b.py"})
        found = [(d["source_file"], d["target_file"]) for d in data.data["dependencies"]]
        self.assertEqual(found, [("pkg/a.py", "pkg/b.py")])

    def test_importers_of_a_go_file_are_the_importers_of_its_package(self):
        index, repo = self.index, self.repo
        auth = index.file(repo, "mw/auth.go", "package mw\n", language="go")
        index.file(repo, "mw/throttle.go", "package mw\n", language="go")
        index.file(repo, "mw/sub/x.go", "package sub\n", language="go")
        main = index.file(repo, "cmd/main.go", 'import "example.com/m/mw"\n', language="go")
        index.import_row(repo, main, "example.com/m/mw", 1, resolved_file_id=auth)
        index.writer.commit()
        body = {"query_type": "importers", "target_file": "mw/throttle.go"}
        found = [d["source_file"] for d in call(self.conn, ROUTE, body).data["dependencies"]]
        self.assertEqual(found, ["cmd/main.go"])
        body["target_file"] = "mw/sub/x.go"  # another package: nobody imports it
        self.assertEqual(call(self.conn, ROUTE, body).data["dependencies"], [])

    def test_package_imports_are_distinct(self):
        data = call(self.conn, ROUTE, {"query_type": "package_imports", "repo_id": "shop"}).data
        self.assertEqual(
            [m["module"] for m in data["modules"]], ["os", "pkg.a", "pkg.b", "service"]
        )

    def test_cycle_between_a_and_b(self):
        data = call(self.conn, ROUTE, {"query_type": "file_import_cycles", "repo_id": "shop"}).data
        [cycle] = data["cycles"]
        self.assertEqual(cycle["cycle_path"], ["pkg/a.py", "pkg/b.py", "pkg/a.py"])
        self.assertEqual((cycle["source_line_number"], cycle["back_edge_line_number"]), (1, 2))
        self.assertEqual(len(cycle["cycle_edges"]), 2)

    def test_cross_module_calls(self):
        data = call(self.conn, ROUTE, {"query_type": "cross_module_calls", "repo_id": "shop"}).data
        pairs = {(c["caller_name"], c["callee_name"]) for c in data["cross_module_calls"]}
        self.assertEqual(pairs, {("create_charge", "charge"), ("batch", "charge")})
        self.assertEqual(data["coverage"]["relationship_types"], ["CALLS"])

    def test_paging(self):
        data = call(self.conn, ROUTE, {"repo_id": "shop", "limit": 1, "offset": 1}).data
        self.assertTrue(data["truncated"])
        self.assertEqual(data["next_offset"], 2)
        self.assertEqual(data["dependencies"][0]["rank"], 2)

    def test_candidate_ceiling_is_422(self):
        self.patch(investigate, "CANDIDATE_CEILING", 2)
        error = error_of(self.conn, ROUTE, {"repo_id": "shop"})
        self.assertEqual(error.status, 422)
        self.assertIn("scope is too broad", error.detail)

    def test_validation(self):
        cases = [
            (
                {"repo_id": "shop", "query_type": "x"},
                "query_type must be one of: imports_by_file,"
                " importers, module_dependencies, package_imports, file_import_cycles,"
                " cross_module_calls",
            ),
            ({"repo_id": "shop", "limit": 201}, "limit must be <= 200"),
            ({"repo_id": "shop", "limit": -1}, "limit must be >= 0"),
            (
                {},
                "one of repo_id, source_file, target_file, source_module, or target_module is"
                " required",
            ),
            (
                {"target_file": "a.py"},
                "target_file is supported only for importers, file_import_cycles,"
                " cross_module_calls",
            ),
            (
                {"repo_id": "shop", "query_type": "file_import_cycles", "language": "go"},
                "file_import_cycles currently supports python module-name cycle detection",
            ),
        ]
        for body, detail in cases:
            self.assertEqual(error_of(self.conn, ROUTE, body).detail, detail)

    def test_module_of_paths(self):
        self.assertEqual(module_of("pkg/sub/__init__.py"), "pkg.sub")
        self.assertEqual(module_of("pkg/mod.py"), "pkg.mod")


class WholeRepositoryAnswerTests(SynchronousTestCase):
    """Cycles and module dependencies of one repository: every row, paged, once per generation."""

    def setUp(self):
        from eshu_mcp.query.local.api.platform.generation_answers import GENERATION_ANSWERS

        self.answers = GENERATION_ANSWERS
        self.addCleanup(GENERATION_ANSWERS.forget)
        self.index, self.repo = imports_index(self)
        self.conn = self.index.reader()
        self.patch(investigate, "CANDIDATE_CEILING", 1)  # fewer than the repository holds

    def test_a_repository_past_the_row_ceiling_is_answered_and_paged(self):
        for query_type, key in (
            ("module_dependencies", "dependencies"),
            ("file_import_cycles", "cycles"),
        ):
            first = call(
                self.conn, ROUTE, {"repo_id": "shop", "query_type": query_type, "limit": 1}
            )
            self.assertEqual(first.status, 200, query_type)
            self.assertEqual(first.data["count"], 1)
            if key == "dependencies":
                total = first.data["total"]
                self.assertGreater(total, 1)  # more than the ceiling, all answered
                self.assertTrue(first.data["truncated"])
                rest = call(
                    self.conn,
                    ROUTE,
                    {"repo_id": "shop", "query_type": query_type, "limit": 50, "offset": 1},
                )
                self.assertEqual(rest.data["count"], total - 1)

    def test_the_answer_is_computed_once_per_generation(self):
        arguments = {"repo_id": "shop", "query_type": "module_dependencies"}
        before = self.answers.computed
        call(self.conn, ROUTE, arguments)
        call(self.conn, ROUTE, {**arguments, "offset": 1})
        self.assertEqual(self.answers.computed, before + 1)
        self.index.writer.execute(
            "UPDATE repositories SET active_generation_id = 'next' WHERE repo_id = ?", (self.repo,)
        )
        self.index.writer.commit()
        call(self.conn, ROUTE, arguments)
        self.assertEqual(self.answers.computed, before + 2)
