"""
Summaries of real answers: a small repository indexed by the real indexer, asked through
the dispatch, and each tool family's text block checked to name the top result of its
own structured content (so a client that shows only the text still gets the answer).
"""

from __future__ import annotations

from pathlib import Path

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch import run_read_only_tool
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from eshu_mcp.query.local.index.build.indexer import index_repositories
from tests.test_api_code_indexed import indexed_repository
from tests.test_api_resource import InlinePool, ThreadReactor


class IndexedSummaryTests(SynchronousTestCase):
    def setUp(self):
        self.db, self.repo = indexed_repository(self)
        self.resource = LocalQueryResource(
            self.db, reactor=ThreadReactor(), threadpool=InlinePool()
        )

    def ask(self, tool: str, args: dict) -> tuple[str, dict]:
        """The text block and the answer's data (the envelope's, or the plain value)."""
        result = self.successResultOf(run_read_only_tool(self.resource, tool, args, clock=Clock()))
        self.assertFalse(result.get("isError"), result["content"][0].get("text"))
        text = result["content"][0]["text"]
        structured = result["structuredContent"]
        return text, structured.get("data", structured) if "truth" in structured else structured

    def assertNames(self, text: str, *expected: str) -> None:
        for item in expected:
            self.assertIn(item, text)

    def test_code_search_and_symbols_name_the_top_row_where_it_is(self):
        for tool, args in (
            ("find_code", {"query": "charge", "repo_id": self.repo}),
            ("find_symbol", {"symbol": "charge", "repo_id": self.repo}),
            ("resolve_entity", {"query": "charge", "repo_id": self.repo}),
        ):
            text, data = self.ask(tool, args)
            rows = data.get("results") or data.get("entities")
            top = rows[0]
            self.assertNames(text, f"{top['file_path']}:{top['start_line']}", top["name"])

    def test_callers_and_callees_read_as_call_sites(self):
        args = {"query_type": "find_callers", "target": "charge", "repo_id": self.repo}
        text, data = self.ask("analyze_code_relationships", args)
        for row in data["relationships"]:
            self.assertNames(text, f"{row['source_name']} -> charge")
        args = {"query_type": "find_callees", "target": "create_charge", "repo_id": self.repo}
        text, data = self.ask("analyze_code_relationships", args)
        self.assertNames(text, "create_charge -> charge")

    def test_class_hierarchy_names_the_subclass(self):
        args = {"query_type": "class_hierarchy", "target": "Base", "repo_id": self.repo}
        text, data = self.ask("analyze_code_relationships", args)
        child = data["class_hierarchy"]["descendants"][0]["name"]
        self.assertNames(text, "class hierarchy of Base", child)

    def test_call_chain_reads_a_to_b_to_c(self):
        args = {"start": "create_charge", "end": "fmt", "repo_id": self.repo}
        text, data = self.ask("find_function_call_chain", args)
        names = [node["name"] for node in data["chains"][0]["chain"]]
        self.assertNames(text, " -> ".join(names))
        self.assertEqual(names[0], "create_charge")

    def test_dead_code_names_the_first_candidate(self):
        text, data = self.ask("find_dead_code", {"repo_id": self.repo})
        top = data["results"][0]
        self.assertNames(text, f"{top['file_path']}:{top['start_line']} {top['name']}")

    def test_complexity_states_the_number(self):
        args = {"function_name": "create_charge", "repo_id": self.repo}
        text, data = self.ask("calculate_cyclomatic_complexity", args)
        self.assertNames(text, "create_charge", f"cyclomatic complexity {data['complexity']}")
        text, data = self.ask("find_most_complex_functions", {"repo_id": self.repo})
        top = data["results"][0]
        self.assertNames(text, f"{top['name']} (Function) complexity {top['complexity']}")

    def test_imports_and_secrets_name_file_and_line(self):
        args = {"query_type": "imports_by_file", "source_file": "pkg/api.py", "repo_id": self.repo}
        text, data = self.ask("investigate_import_dependencies", args)
        top = data["dependencies"][0]
        self.assertNames(text, f"pkg/api.py:{top['line_number']} imports {top['target_module']}")
        text, data = self.ask("investigate_hardcoded_secrets", {"repo_id": self.repo})
        top = data["findings"][0]
        self.assertNames(text, f"config/settings.py:{top['line_number']}", "[REDACTED]")
        self.assertNotIn("ABCDEFGHIJKLMNOP", text)

    def test_paged_headlines_state_the_total_the_structured_content_gives(self):
        for tool, args, rows_key in (
            ("find_symbol", {"symbol": "charge", "match_mode": "fuzzy"}, "results"),
            (
                "investigate_import_dependencies",
                {"query_type": "imports_by_file"},
                "dependencies",
            ),
        ):
            text, data = self.ask(tool, {**args, "repo_id": self.repo, "limit": 1})
            self.assertEqual(len(data[rows_key]), data["count"])
            self.assertGreater(data["total"], data["count"], tool)
            self.assertIn(f"1 of {data['total']} ", text.splitlines()[0], tool)
            last, _ = self.ask(
                tool, {**args, "repo_id": self.repo, "limit": 1, "offset": data["total"] - 1}
            )
            self.assertIn(f"1 of {data['total']} ", last.splitlines()[0], tool)

    def test_file_tools_carry_the_lines_themselves(self):
        args = {"repo_id": self.repo, "relative_path": "pkg/api.py", "start_line": 1, "end_line": 4}
        text, _ = self.ask("get_file_lines", args)
        self.assertNames(text, "from pkg.service import charge", "def create_charge(req):")
        args = {"repo_id": self.repo, "relative_path": "pkg/helpers.py"}
        text, data = self.ask("get_file_content", args)
        self.assertNames(text, f"pkg/helpers.py: {data['line_count']} lines", "def fmt(value):")

    def test_entity_content_carries_the_source(self):
        _, found = self.ask("find_symbol", {"symbol": "old_refund", "repo_id": self.repo})
        entity = found["results"][0]["entity_id"]
        text, _ = self.ask("get_entity_content", {"entity_id": entity})
        self.assertNames(text, "old_refund (Function) pkg/service.py:", "def old_refund():")

    def test_repository_tools_state_counts(self):
        text, data = self.ask("list_indexed_repositories", {})
        self.assertNames(text, data["repositories"][0]["name"], data["repositories"][0]["id"])
        text, data = self.ask("get_repo_summary", {"repo_id": self.repo})
        self.assertNames(text, f"payments: {data['file_count']} files")
        text, data = self.ask("get_repository_freshness", {"repo_id": self.repo})
        self.assertNames(text, f"index is {data['verdict']}")

    def test_changed_since_names_the_changed_file(self):
        _, lifecycle = self.ask("get_generation_lifecycle", {"repository": self.repo})
        first = lifecycle["generations"][-1]["generation_id"]
        helpers = Path(self.db).parent / "payments" / "pkg" / "helpers.py"
        helpers.write_text(helpers.read_text() + "\n\ndef added():\n    return 2\n")
        self.assertTrue(index_repositories(self.db, [str(helpers.parents[1])], workers=1).ok)
        args = {"repository": self.repo, "since_generation_id": first}
        text, data = self.ask("get_changed_since", args)
        files = data["categories"][0]
        self.assertEqual(files["counts"]["updated"], 1)
        self.assertNames(text, f"changes since generation {first[:12]}", "files: 1 updated")
        self.assertNames(text, f"updated: {files['samples']['updated'][0]['relative_path']}")
        self.assertNames(text, "first added: pkg/helpers.py:")

    def test_status_catalog_and_collector_fed_answers(self):
        text, _ = self.ask("get_index_status", {})
        self.assertTrue(text.startswith("index status: "), text)
        text, data = self.ask("list_query_playbooks", {})
        self.assertNames(text, data["playbooks"][0]["id"])
        text, _ = self.ask("list_ci_cd_run_correlations", {})  # read from workflows: none
        self.assertNames(text, "derived/fresh — No correlations found")
        text, _ = self.ask("list_kubernetes_correlations", {})  # read from manifests: none
        self.assertNames(text, "derived/fresh — No correlations found")
