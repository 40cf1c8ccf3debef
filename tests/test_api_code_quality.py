"""Tests for /code/complexity and /code/quality/inspect."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from tests.test_api_code_common import call, error_of, shop_index

TANGLED = "def tangled(a, b, c, d, e, f):\n" + "".join(
    f"    if a == {i}:\n        return {i}\n" for i in range(12)
)


def quality_index(case: SynchronousTestCase):
    index, repo = shop_index(case)
    file_id = index.file(repo, "shop/tangled.py", TANGLED)
    index.entity(file_id, "Function", "tangled", 1, 25, complexity=13, arg_count=6)
    index.writer.commit()
    return index, repo


class ComplexityTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = quality_index(self)
        self.conn = self.index.reader()

    def test_most_complex_functions_rank_tangled_first(self):
        answer = call(self.conn, "/code/complexity", {"repo_id": "shop", "limit": 2})
        data = answer.data
        self.assertEqual([r["name"] for r in data["results"]], ["tangled", "batch"])
        self.assertEqual(data["results"][0]["complexity"], 13)
        self.assertTrue(data["truncated"])
        self.assertEqual(data["result_key"], "entity_id")
        self.assertEqual(answer.truth["capability"], "code_quality.complexity")

    def test_function_by_name_carries_edge_counts(self):
        data = call(self.conn, "/code/complexity", {"function_name": "charge", "repo_id": "shop"})
        data = data.data
        self.assertEqual(data["name"], "charge")
        self.assertEqual((data["incoming_count"], data["outgoing_count"]), (2, 1))
        self.assertEqual(data["total_relationships"], 3)
        self.assertEqual(data["complexity"], 1)

    def test_ambiguous_name_is_a_409_with_candidates(self):
        error = error_of(self.conn, "/code/complexity", {"function_name": "run", "repo_id": "shop"})
        self.assertEqual(error.status, 409)
        self.assertEqual(error.code, "ambiguous")
        self.assertEqual(
            error.detail,
            f'function_name "run" matched multiple entities in repository "{self.repo}":'
            " Base.run (shop/service.py:2), Child.run (shop/service.py:7); pass entity_id, or a"
            " qualified name (Class.method), to pick one",
        )
        # the qualified name picks one
        data = call(self.conn, "/code/complexity", {"function_name": "Child.run"}).data
        self.assertEqual(data["entity_id"], self.index.entities["run"])
        body = error.body(envelope=True)
        self.assertEqual(body["error"]["details"]["status"], "ambiguous")
        self.assertEqual(len(body["error"]["details"]["candidates"]), 2)
        self.assertEqual(body["truth"]["capability"], "code_quality.complexity")
        plain = error.body(envelope=False)
        self.assertEqual(plain["function_name"], "run")
        self.assertEqual(plain["detail"], error.detail)

    def test_unknown_function_is_404(self):
        error = error_of(self.conn, "/code/complexity", {"function_name": "nope"})
        self.assertEqual((error.status, error.detail), (404, "entity not found"))
        error = error_of(self.conn, "/code/complexity", {"entity_id": "content-entity:e_x"})
        self.assertEqual((error.status, error.detail), (404, "entity not found"))


class QualityInspectTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = quality_index(self)
        self.conn = self.index.reader()

    def test_refactoring_candidates_by_default(self):
        answer = call(self.conn, "/code/quality/inspect", {"repo_id": "shop"})
        data = answer.data
        self.assertEqual(data["check"], "refactoring_candidates")
        [row] = data["results"]
        self.assertEqual(row["name"], "tangled")
        self.assertEqual(row["reasons"], ["high_complexity", "long_function", "many_arguments"])
        self.assertEqual(
            data["thresholds"], {"min_complexity": 10, "min_lines": 20, "min_arguments": 5}
        )
        self.assertEqual(answer.truth["capability"], "code_quality.refactoring")

    def test_thresholds_change_the_answer(self):
        data = call(
            self.conn,
            "/code/quality/inspect",
            {"check": "complexity", "thresholds": {"min_complexity": 2}},
        ).data
        self.assertEqual([r["name"] for r in data["results"]], ["tangled", "batch"])
        data = call(
            self.conn, "/code/quality/inspect", {"check": "argument_count", "min_arguments": 7}
        ).data
        self.assertEqual(data["results"], [])

    def test_validation(self):
        self.assertEqual(
            error_of(self.conn, "/code/quality/inspect", {"check": "style"}).detail,
            "unsupported code quality check",
        )
        self.assertEqual(
            error_of(self.conn, "/code/quality/inspect", {"offset": 10001}).detail,
            "offset exceeds maximum of 10000",
        )
