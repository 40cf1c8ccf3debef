"""Tests for /code/complexity and /code/quality/inspect."""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries.result import summarize_envelope
from eshu_mcp.query.local.index.build.indexer import index_repositories
from tests.test_api_code_common import call, error_of, shop_index
from tests.test_api_resource import ApiClient

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

    def test_a_cut_ranking_states_how_many_functions_it_ranked(self):
        data = call(self.conn, "/code/complexity", {"repo_id": "shop", "limit": 1}).data
        whole = call(self.conn, "/code/complexity", {"repo_id": "shop", "limit": 100}).data
        self.assertEqual((data["count"], data["total"]), (1, len(whole["results"])))
        self.assertEqual((whole["count"], whole["total"]), (whole["total"], whole["total"]))
        self.assertFalse(whole["truncated"])
        text = summarize_envelope("find_most_complex_functions", {"data": data, "truth": {}})
        self.assertTrue(text.startswith(f"1 of {whole['total']} most complex functions"), text)

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


class UnmeasuredComplexityTests(SynchronousTestCase):
    """Functions of a language the indexer measures no complexity for are said to be
    unmeasured, never scored 0 or silently left out of the ranking."""

    def setUp(self):
        self.repo = Path(tempfile.mkdtemp(prefix="eshu-unmeasured-"))
        self.addCleanup(shutil.rmtree, self.repo, True)
        (self.repo / "app.py").write_text("def branchy(a):\n    if a:\n        return 1\n")
        (self.repo / "web.ts").write_text(
            "export function pick(a: number): number {\n  if (a) { return 1; }\n  return 2;\n}\n"
            "export function other(): number {\n  return pick(1);\n}\n"
        )
        self.db = str(self.repo.parent / (self.repo.name + ".sqlite"))
        self.addCleanup(lambda: [os.remove(p) for p in glob.glob(self.db + "*")])
        self.assertTrue(index_repositories(self.db, [self.repo], workers=1).ok)
        self.client = ApiClient(self, self.db)

    def complexity(self, **body):
        body = {"repo_id": self.repo.name, **body}
        return self.client.post("/code/complexity", body, envelope=True).json()

    def test_one_unmeasured_function_says_so_instead_of_complexity_0(self):
        answer = self.complexity(function_name="pick")
        self.assertEqual(answer["data"]["complexity"], 0)  # Eshu's shape is kept
        self.assertEqual(
            answer["truth"]["reason"], "complexity is not measured for typescript functions"
        )
        text = summarize_envelope("calculate_cyclomatic_complexity", answer)
        self.assertIn("pick (web.ts:1-4): complexity is not measured for typescript", text)
        self.assertNotIn("complexity 0", text)

    def test_a_measured_function_keeps_its_score_and_plain_reason(self):
        answer = self.complexity(function_name="branchy")
        self.assertEqual(answer["data"]["complexity"], 2)
        self.assertEqual(answer["truth"]["reason"], "resolved from indexed complexity")
        text = summarize_envelope("calculate_cyclomatic_complexity", answer)
        self.assertIn("cyclomatic complexity 2", text)

    def test_the_ranking_names_the_languages_it_leaves_out(self):
        answer = self.complexity(limit=5)
        self.assertEqual([row["name"] for row in answer["data"]["results"]], ["branchy"])
        reason = "complexity is not measured for typescript (2 functions): they are not ranked"
        self.assertIn(reason, answer["truth"]["reason"])
        text = summarize_envelope("find_most_complex_functions", answer)
        self.assertTrue(text.splitlines()[0].endswith("; " + reason), text)

    def test_a_ranking_of_only_unmeasured_functions_is_not_just_no_results(self):
        answer = self.complexity(limit=5, path="web.ts")
        self.assertEqual(answer["data"]["results"], [])
        text = summarize_envelope("find_most_complex_functions", answer)
        self.assertIn("complexity is not measured for typescript (2 functions)", text)
