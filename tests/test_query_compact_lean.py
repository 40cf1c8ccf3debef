"""
What the compact view states once instead of in every row, on a real index: each test
asks the same question in compact and full detail and checks that the compact answer is
smaller, still names its top result, and loses nothing a reader needs.
"""

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.inprocess import InProcessDispatcher
from eshu_mcp.encoding import dumps
from eshu_mcp.query.compact import compact_answer
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from tests.test_api_code_indexed import indexed_repository
from tests.test_api_resource import InlinePool, ThreadReactor

SOURCES = {
    "app/core.py": (
        "def settle(amount):\n    return amount * 2\n\n\n"
        "def audit(entry):\n    total = 0\n    total += entry\n"
        "    ledger_marker = total\n    return ledger_marker\n"
    ),
    "app/callers.py": "from app.core import settle\n\n\n"
    + "".join(f"def caller_{n}(value):\n    return settle(value + {n})\n\n\n" for n in range(4)),
    "app/reports/summary.py": "def unused_report():\n    return 1\n",
    "app/countdown.py": "def countdown(n):\n    return countdown(n - 1) if n else 0\n",
    "app/writers.py": (
        "class FileWriter:\n    def write(self, text):\n        return text\n\n\n"
        "class NetWriter:\n    def write(self, text):\n        return text\n\n\n"
        "def save():\n    return FileWriter().write('a')\n\n\n"
        "def send():\n    return NetWriter().write('b')\n"
    ),
}


class LeanRowsTests(SynchronousTestCase):
    def setUp(self):
        db, self.repo = indexed_repository(self, SOURCES, name="ledger")
        self.resource = LocalQueryResource(db, reactor=ThreadReactor(), threadpool=InlinePool())

    def both(self, tool: str, args: dict) -> tuple[dict, dict, str]:
        """The compact and full results' data, and the compact text block."""
        answers = []
        for detail in ("compact", "full"):
            dispatcher = InProcessDispatcher(self.resource, Clock(), answer_detail=detail)
            result = self.successResultOf(dispatcher.call(tool, args))
            self.assertFalse(result.get("isError"), result["content"][0].get("text"))
            answers.append(result)
        compact, full = answers
        self.assertLess(len(dumps(compact)), len(dumps(full)))
        return (
            compact["structuredContent"]["data"],
            full["structuredContent"]["data"],
            compact["content"][0]["text"],
        )

    def test_edge_fields_every_row_shares_are_stated_once(self):
        args = {"query_type": "find_callers", "target": "settle", "repo_id": self.repo}
        compact, full, text = self.both("analyze_code_relationships", args)
        shared = compact["relationships_shared"]
        self.assertEqual(shared["resolution_method"], full["relationships"][0]["resolution_method"])
        for row, full_row in zip(compact["relationships"], full["relationships"], strict=True):
            for key, value in shared.items():
                self.assertEqual(full_row[key], value)
                self.assertNotIn(key, row)
            self.assertEqual(row["source_name"], full_row["source_name"])
            self.assertEqual(row["line_number"], full_row["line_number"])
        self.assertIn(f"{compact['relationships'][0]['source_name']} -> settle", text)

    def test_a_shared_names_groups_leave_the_name_to_the_resolution(self):
        args = {"query_type": "find_callers", "target": "write", "repo_id": self.repo}
        compact, full, text = self.both("analyze_code_relationships", args)
        self.assertEqual({group["name"] for group in full["definition_groups"]}, {"write"})
        self.assertEqual(compact["target_resolution"]["target"], "write")
        ids = {group["entity_id"] for group in full["definition_groups"]}
        self.assertEqual({group["entity_id"] for group in compact["definition_groups"]}, ids)
        shared = compact.get("relationships_shared", {})
        for group in compact["definition_groups"]:
            self.assertNotIn("name", group)
        for row in compact["relationships"]:
            self.assertIn({**shared, **row}["definition_entity_id"], ids)
        self.assertIn("FileWriter.write", text)
        self.assertIn("NetWriter.write", text)

    def test_coverage_does_not_repeat_the_summary_and_the_next_offset_still_works(self):
        args = {"query_type": "find_callers", "target": "settle", "repo_id": self.repo, "limit": 2}
        compact, full, text = self.both("analyze_code_relationships", args)
        self.assertEqual(full["coverage"]["next_offset"], 2)
        self.assertNotIn("next_offset", compact["coverage"])
        self.assertEqual(compact["summary"]["next_offset"], 2)
        self.assertIn("more: call again with offset=2", text)
        self.assertEqual(compact["coverage"]["available_by_direction"]["incoming"], 4)
        rest, _, _ = self.both("analyze_code_relationships", {**args, "offset": 2})
        names = [row["source_name"] for row in compact["relationships"] + rest["relationships"]]
        self.assertEqual(sorted(names), [f"caller_{n}" for n in range(4)])

    def test_ranks_that_are_the_row_order_and_handles_that_spell_the_row_go(self):
        args = {"repo_id": self.repo, "metric_type": "hub_functions"}
        compact, full, text = self.both("inspect_call_graph_metrics", args)
        self.assertEqual([row["rank"] for row in full["functions"]][:2], [1, 2])
        self.assertIn("source_handle", full["functions"][0])
        for row, full_row in zip(compact["functions"], full["functions"], strict=True):
            self.assertEqual(row["function_name"], full_row["function_name"])
            for gone in ("rank", "source_handle", "entity_handle"):
                self.assertNotIn(gone, row)
        self.assertIn("settle", text.splitlines()[1])

    def test_a_dead_code_answer_keeps_its_caveats_but_not_the_policy_lists(self):
        compact, full, text = self.both("find_dead_code", {"repo_id": self.repo})
        self.assertIn("frameworks_recognized", full["analysis"])
        self.assertNotIn("frameworks_recognized", compact["analysis"])
        for kept in ("dead_code_language_maturity", "notes"):
            self.assertEqual(compact["analysis"][kept], full["analysis"][kept])
        top = compact["results"][0]
        self.assertIn(f"{top['file_path']}:{top['start_line']} {top['name']}", text)

    def test_a_content_hit_is_the_matching_line_at_its_own_line_number(self):
        compact, _, text = self.both("search_entity_content", {"pattern": "ledger_marker ="})
        (row,) = [row for row in compact["results"] if row["entity_name"] == "audit"]
        self.assertEqual(row["source_cache"], "ledger_marker = total")
        lines = {"repo_id": self.repo, "relative_path": "app/core.py"}
        line = row["source_snippet_start_line"]
        dispatcher = InProcessDispatcher(self.resource, Clock())
        read = dispatcher.call("get_file_lines", {**lines, "start_line": line, "end_line": line})
        content = self.successResultOf(read)["structuredContent"]["data"]
        self.assertIn("ledger_marker = total", str(content))
        self.assertIn("app/core.py", text)

    def test_a_topic_answer_counts_the_kinds_its_ranked_groups_list(self):
        compact, full, text = self.both("investigate_code_topic", {"topic": "report"})
        files, symbols = full["matched_files"], full["matched_symbols"]
        self.assertTrue(files and symbols)
        self.assertEqual(compact["matched_file_count"], len(files))
        self.assertEqual(compact["matched_symbol_count"], len(symbols))
        self.assertEqual(len(compact["evidence_groups"]), len(full["evidence_groups"]))
        self.assertIn("evidence_handles", full["answer_metadata"])
        self.assertNotIn("evidence_handles", compact["answer_metadata"])
        self.assertNotIn("coverage", compact["answer_metadata"])
        self.assertEqual(compact["coverage"]["returned_count"], full["coverage"]["returned_count"])
        self.assertIn(f"{len(symbols)} definition, {len(files)} file", text)
        self.assertIn("app/reports/summary.py", text)

    def test_a_self_call_is_said_once(self):
        args = {"repo_id": self.repo, "metric_type": "recursive_functions"}
        compact, full, text = self.both("inspect_call_graph_metrics", args)
        (row,) = compact["functions"]
        (full_row,) = full["functions"]
        self.assertEqual(full_row["partner_id"], full_row["function_id"])
        self.assertIn("recursion_evidence", full_row)
        for gone in ("partner_id", "partner_name", "partner_file", "recursion_evidence"):
            self.assertNotIn(gone, row)
        self.assertEqual(row["recursion_kind"], "self_call")
        self.assertIn("app/countdown.py:1 countdown calls itself", text)

    def test_a_playbook_listing_names_the_tools_and_resolving_one_gives_the_rest(self):
        compact, full, text = self.both("list_query_playbooks", {})
        self.assertEqual(
            [row["id"] for row in compact["playbooks"]], [row["id"] for row in full["playbooks"]]
        )
        for row, full_row in zip(compact["playbooks"], full["playbooks"], strict=True):
            self.assertEqual(row["step_tools"], [step["tool"] for step in full_row["steps"]])
            self.assertEqual(row["required_inputs"], full_row["required_inputs"])
            self.assertNotIn("failure_modes", row)
        self.assertIn("resolve_query_playbook", compact["playbook_note"])
        first = full["playbooks"][0]
        self.assertIn(f"{first['id']}: {first['name']}", text)
        dispatcher = InProcessDispatcher(self.resource, Clock())
        inputs = {row["name"]: "settle" for row in first["required_inputs"] if row["required"]}
        ask = {"playbook_id": first["id"], "inputs": inputs}
        call = dispatcher.call("resolve_query_playbook", ask)
        resolved = self.successResultOf(call)["structuredContent"]["data"]["resolved"]
        self.assertEqual(resolved["failure_modes"], first["failure_modes"])
        self.assertEqual(
            [step["tool"] for step in resolved["steps"]], compact["playbooks"][0]["step_tools"]
        )

    def test_tree_entries_lose_the_name_their_path_ends_with(self):
        compact, full, text = self.both("list_repository_files", {"repo_id": self.repo})
        for row, full_row in zip(compact["entries"], full["entries"], strict=True):
            self.assertNotIn("name", row)
            self.assertTrue(row["path"].endswith(full_row["name"]))
        self.assertIn("app/", text)


class LeanViewTests(SynchronousTestCase):
    def test_rows_that_differ_keep_their_own_edge_fields(self):
        rows = [
            {"source_id": "a", "confidence": 0.95, "resolution_method": "import_binding"},
            {"source_id": "b", "confidence": 0.5, "resolution_method": "import_binding"},
        ]
        out = compact_answer({"relationships": rows})
        self.assertEqual(out["relationships_shared"], {"resolution_method": "import_binding"})
        self.assertEqual([row["confidence"] for row in out["relationships"]], [0.95, 0.5])

    def test_ranks_out_of_order_are_kept(self):
        rows = [{"name": "a", "rank": 2}, {"name": "b", "rank": 1}]
        self.assertEqual(compact_answer({"results": rows})["results"], rows)
