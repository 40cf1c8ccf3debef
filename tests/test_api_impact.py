"""Tests for code-level change impact."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries.result import summarize_envelope
from tests.test_api_resource import ApiClient, rich_index


class ImpactTests(SynchronousTestCase):
    def setUp(self):
        self.ids = rich_index(self.mktemp())
        self.client = ApiClient(self, self.ids["index"].path)

    def test_change_surface_lists_direct_dependents(self):
        body = self.client.post("/impact/change-surface", {"target": "charge"}, envelope=True)
        data = body.json()["data"]
        names = {(a["name"], a["relationship"], a["depth"]) for a in data["affected"]}
        # CONTAINS is structure, not dependence: the enclosing class is not "affected".
        self.assertEqual(names, {("create_charge", "CALLS", 1)})
        self.assertEqual(data["services"], [])
        self.assertIn("platform_graph_unavailable", data["partial_reasons"])

    def test_change_surface_of_a_qualified_name(self):
        data = self.client.post(
            "/impact/change-surface", {"target": "PaymentService.charge"}
        ).json()
        self.assertEqual({a["name"] for a in data["affected"]}, {"create_charge"})

    def test_dependents_only_an_ambiguous_call_links_are_marked_possible_and_listed_last(self):
        index = self.ids["index"]
        index.writer.execute(
            "INSERT INTO edges (repo_id, type, source_id, target_id, resolution_method,"
            " confidence, line_number, generation_id) VALUES (?, 'CALLS', ?, ?, 'ambiguous',"
            " 0.38, 7, 'gen')",
            (self.ids["repo"], self.ids["refund"], self.ids["charge"]),
        )
        index.writer.commit()
        body = self.client.post("/impact/change-surface", {"target": "charge"}, envelope=True)
        data = body.json()["data"]
        self.assertEqual([a["name"] for a in data["affected"]], ["create_charge", "old_refund"])
        self.assertNotIn("possible", data["affected"][0])
        self.assertTrue(data["affected"][1]["possible"])
        self.assertEqual(data["possibly_affected_count"], 1)
        text = summarize_envelope("find_change_surface", body.json())
        self.assertIn(
            "2 affected definitions for 'charge' within 1 hop (direct dependents):"
            " 1 through resolved links, 1 only",
            text,
        )
        self.assertIn("old_refund (Function) (possible: only through an ambiguous call)", text)

    def test_importing_files_are_listed_apart_and_not_counted_as_definitions(self):
        data = self.client.post(
            "/impact/pre-change", {"repo_id": "payments", "changed_paths": ["app/service.py"]}
        ).json()
        kinds = {a["kind"] for a in data["affected"]}
        self.assertNotIn("file", kinds)
        self.assertEqual(data["affected_count"], len(data["affected"]))
        self.assertEqual(data["max_depth"], 4)
        self.assertEqual(data["importing_files_count"], len(data["importing_files"]))
        text = summarize_envelope("analyze_pre_change_impact", {"data": data})
        self.assertIn(f"{data['affected_count']} affected definition", text)
        self.assertIn("within 4 hops", text)

    def test_dependents_in_shipped_code_come_before_those_in_tests(self):
        index = self.ids["index"]
        tests = index.file(self.ids["repo"], "tests/test_a.py", "def test_a():\n    pass\n")
        index.writer.execute("UPDATE files SET is_test = 1 WHERE file_id = ?", (tests,))
        test_a = index.entity(tests, "Function", "test_a", 1, 2)
        index.edge(self.ids["repo"], "CALLS", test_a, self.ids["charge"], line=2)
        index.writer.commit()
        data = self.client.post("/impact/pre-change", {"target": "charge"}).json()
        self.assertEqual(
            [(a["name"], a["in_tests"]) for a in data["affected"]],
            [("create_charge", False), ("test_a", True)],
        )

    def test_a_method_is_named_with_its_class(self):
        index = self.ids["index"]
        path = "app/ledger.py"
        ledger = index.file(self.ids["repo"], path, "class Ledger:\n    def __init__(self):\n")
        init = index.entity(ledger, "Function", "__init__", 2, 2, class_context="Ledger")
        index.edge(self.ids["repo"], "CALLS", init, self.ids["charge"], line=2)
        index.writer.commit()
        body = self.client.post("/impact/pre-change", {"target": "charge"}, envelope=True)
        data = body.json()["data"]
        [row] = [a for a in data["affected"] if a["name"] == "__init__"]
        self.assertEqual(row["class_context"], "Ledger")
        text = summarize_envelope("analyze_pre_change_impact", body.json())
        self.assertIn("app/ledger.py:2 Ledger.__init__ (Function)", text.splitlines())

    def test_pre_change_walks_from_changed_paths(self):
        data = self.client.post(
            "/impact/pre-change",
            {"repo_id": "payments", "changed_paths": ["app/service.py", "docs/missing.md"]},
        ).json()
        self.assertEqual([a["name"] for a in data["affected"]], ["create_charge"])
        self.assertEqual(data["unindexed_paths"], ["docs/missing.md"])
        self.assertIn("changed_paths_not_indexed", data["partial_reasons"])

    def test_structured_changes_and_validation(self):
        data = self.client.post(
            "/impact/pre-change",
            {"repo_id": "payments", "changes": [{"path": "app/service.py", "status": "modified"}]},
        ).json()
        self.assertEqual(data["changed_paths"], ["app/service.py"])
        empty = self.client.post("/impact/pre-change", {})
        self.assertEqual(empty.json()["detail"], "changed_paths, changes or target is required")
        escape = self.client.post(
            "/impact/pre-change", {"repo_id": "payments", "changed_paths": ["../x"]}
        )
        self.assertEqual(escape.status, 400)
        self.assertEqual(self.client.post("/impact/change-surface", {}).status, 400)
