"""
The compact answer view, on a real index, through the dispatcher, against the full view.

A small git repository is indexed for real; each test calls tools in process with the
compact detail (what MCP clients get) and the full detail (Eshu's HTTP shape).
"""

import json
import subprocess
from pathlib import Path

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.envelope import decode_body, envelope_from_value
from eshu_mcp.dispatch.inprocess import InProcessDispatcher
from eshu_mcp.dispatch.routes import resolve_route
from eshu_mcp.encoding import dumps
from eshu_mcp.query.compact import CONTENT_LINES, compact_answer
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from eshu_mcp.query.local.index.build.indexer import index_repositories
from tests.test_api_resource import InlinePool, ThreadReactor

BODY = "\n".join(f"        total = total + {n}  # step {n}" for n in range(40))
SERVICE = f'''"""Payments."""


class PaymentService:
    """
    Charges and refunds customers.

    A second paragraph that the compact view leaves out of the docstring.
    """

    def charge(self, amount):
        total = 0
{BODY}
        audit_marker = amount
        return total + audit_marker


def main():
    service = PaymentService()
    service.charge(5)
    return service.charge(6)
'''
BIG = "".join(f"def step_{n}():\n    return {n}\n" for n in range(1, CONTENT_LINES // 2 + 51))


def make_repository(root: Path) -> Path:
    repo = root / "payments"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "service.py").write_text(SERVICE)
    (repo / "app" / "big.py").write_text(BIG)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "snapshot"], check=True)
    return repo


class CompactCase(SynchronousTestCase):
    def setUp(self):
        root = Path(self.mktemp())
        root.mkdir()
        db = root / "index.sqlite"
        index_repositories(db, [make_repository(root)], workers=1)
        self.resource = LocalQueryResource(
            str(db), reactor=ThreadReactor(), threadpool=InlinePool()
        )
        repos = self.call("list_indexed_repositories", {}, detail="full")
        self.repo_id = repos["structuredContent"]["data"]["repositories"][0]["id"]

    def dispatcher(self, detail="compact", **kwargs):
        return InProcessDispatcher(self.resource, Clock(), answer_detail=detail, **kwargs)

    def call(self, tool, args, detail="compact", **kwargs):
        result = self.successResultOf(self.dispatcher(detail, **kwargs).call(tool, args))
        self.assertNotIn("isError", result, result["content"][0].get("text"))
        return result

    def data(self, tool, args, detail="compact", **kwargs):
        return self.call(tool, args, detail, **kwargs)["structuredContent"]["data"]

    def http_body(self, tool, args) -> bytes:
        """What a plain HTTP caller of /api/v0 gets for this tool's request."""
        response = self.successResultOf(self.dispatcher("full").request(resolve_route(tool, args)))
        return response.body


class EntityRowTests(CompactCase):
    def test_entity_rows_carry_the_signature_and_the_whole_source_is_one_call_away(self):
        full = self.data("find_symbol", {"symbol": "PaymentService"}, detail="full")
        compact = self.data("find_symbol", {"symbol": "PaymentService"})
        (full_row,) = full["results"]
        (row,) = compact["results"]
        self.assertGreater(len(full_row["source_cache"]), 1000)
        self.assertEqual(row["source_cache"], "class PaymentService:")
        self.assertTrue(row["source_truncated"])
        self.assertIn("get_entity_content", compact["source_note"])
        for key in ("name", "file_path", "start_line", "end_line", "entity_id", "repo_id"):
            self.assertEqual(row[key], full_row[key], key)
        self.assertEqual(row["metadata"]["docstring"], "Charges and refunds customers.")
        self.assertNotIn("matches", compact)
        self.assertEqual(full["matches"], full["results"])
        for repeated in ("relative_path", "entity_name", "source_handle", "repo_name"):
            self.assertIn(repeated, full_row)
            self.assertNotIn(repeated, row)
        whole = self.data("get_entity_content", {"entity_id": row["entity_id"]})
        self.assertEqual(whole["source_cache"], full_row["source_cache"])
        self.assertNotIn("content_truncated", whole)

    def test_search_rows_show_the_lines_around_the_searched_text(self):
        compact = self.data("search_entity_content", {"pattern": "audit_marker"})
        row = next(row for row in compact["results"] if row["entity_name"] == "charge")
        self.assertIn("audit_marker = amount", row["source_cache"])
        self.assertTrue(row["source_truncated"])
        self.assertGreater(row["source_snippet_start_line"], row["start_line"])
        self.assertLessEqual(row["source_cache"].count("\n"), 4)


class RelationshipRowTests(CompactCase):
    def test_caller_rows_name_the_caller_and_leave_the_anchor_to_the_envelope(self):
        args = {"query_type": "find_callers", "target": "charge"}
        full = self.data("analyze_code_relationships", args, detail="full")
        compact = self.data("analyze_code_relationships", args)
        self.assertEqual(len(compact["relationships"]), len(full["relationships"]))
        anchor = compact["target_resolution"]["entity_id"]
        self.assertEqual(compact["target_resolution"]["name"], "charge")
        for row, full_row in zip(compact["relationships"], full["relationships"], strict=True):
            self.assertEqual(full_row["target_id"], anchor)
            for key in ("source_id", "source_name", "source_file_path", "source_start_line"):
                self.assertEqual(row[key], full_row[key], key)
            self.assertEqual(full_row["provenance"]["truth_state"], "derived")
            for repeated in (
                "target_id",
                "target_name",
                "target_file_path",
                "target_repo_id",
                "source_end_line",
                "source_handle",
                "centrality",
                "provenance",
            ):
                self.assertIn(repeated, full_row)
                self.assertNotIn(repeated, row)
            self.assertLess(len(dumps(row)), len(dumps(full_row)) / 2)


class FileContentTests(CompactCase):
    def test_a_long_file_is_cut_at_a_line_with_the_call_for_the_rest(self):
        args = {"repo_id": self.repo_id, "relative_path": "app/big.py"}
        full = self.data("get_file_content", args, detail="full")
        compact = self.data("get_file_content", args)
        self.assertEqual(full["content"], BIG)
        self.assertEqual(compact["content"], "".join(BIG.splitlines(True)[:CONTENT_LINES]))
        self.assertTrue(compact["content_truncated"])
        self.assertEqual(compact["next_start_line"], CONTENT_LINES + 1)
        rest = compact["rest"]
        self.assertEqual(rest["tool"], "get_file_lines")
        tail = self.data(rest["tool"], rest["arguments"])
        self.assertEqual(compact["content"] + tail["content"], BIG.rstrip("\n"))

    def test_a_short_line_range_is_returned_whole(self):
        args = {
            "repo_id": self.repo_id,
            "relative_path": "app/big.py",
            "start_line": 10,
            "end_line": 12,
        }
        compact = self.data("get_file_lines", args)
        self.assertEqual(compact["content"], "    return 5\ndef step_6():\n    return 6")
        self.assertNotIn("content_truncated", compact)
        self.assertNotIn("content_hash", compact)


class FullDetailTests(CompactCase):
    CALLS = (
        ("find_symbol", {"symbol": "PaymentService"}),
        ("find_code", {"query": "charge"}),
        ("analyze_code_relationships", {"query_type": "find_callers", "target": "charge"}),
    )

    def test_full_detail_is_the_http_answer_byte_for_byte(self):
        for tool, args in self.CALLS:
            result = self.call(tool, args, detail="full")
            expected = envelope_from_value(decode_body(self.http_body(tool, args)))
            self.assertEqual(result["content"][1]["resource"]["text"], dumps(expected), tool)
            self.assertEqual(result["structuredContent"], expected, tool)

    def test_plain_http_callers_get_the_full_shape(self):
        body = json.loads(self.http_body("find_symbol", {"symbol": "PaymentService"}))
        (row,) = body["data"]["results"]
        self.assertEqual(body["data"]["matches"], body["data"]["results"])
        self.assertNotIn("source_truncated", row)
        self.assertIn("audit_marker", row["source_cache"])

    def test_the_local_resource_says_it_answered_compact_so_dispatch_does_not_redo_it(self):
        route = resolve_route("find_symbol", {"symbol": "PaymentService"})
        compact = self.successResultOf(self.dispatcher().request(route))
        full = self.successResultOf(self.dispatcher("full").request(route))
        self.assertEqual(compact.headers.getRawHeaders(b"eshu-answer-detail"), [b"compact"])
        self.assertIsNone(full.headers.getRawHeaders(b"eshu-answer-detail"))


class BudgetTests(CompactCase):
    def test_a_real_answer_over_the_budget_keeps_its_first_rows_and_the_next_offset(self):
        args = {"symbol": "step_", "match_mode": "fuzzy", "limit": 200, "offset": 3}
        whole = self.data("find_symbol", args)
        trimmed = self.call("find_symbol", args, budget=8192)
        data = trimmed["structuredContent"]["data"]
        kept = len(data["results"])
        self.assertTrue(0 < kept < len(whole["results"]))
        self.assertEqual(data["results"], whole["results"][:kept])
        self.assertEqual(data["next_offset"], 3 + kept)
        self.assertIn(f"offset={3 + kept}", trimmed["content"][0]["text"])
        page = self.data("find_symbol", {**args, "offset": data["next_offset"]})
        self.assertEqual(page["results"][0], whole["results"][kept])

    def test_full_detail_keeps_the_over_budget_error(self):
        args = {"symbol": "step_", "match_mode": "fuzzy", "limit": 200}
        result = self.successResultOf(
            self.dispatcher("full", budget=8192).call("find_symbol", args)
        )
        self.assertTrue(result["isError"])


class CompactAnswerTests(SynchronousTestCase):
    def test_matches_is_dropped_only_when_it_repeats_another_list(self):
        rows = [{"name": "a"}]
        self.assertEqual(compact_answer({"results": rows, "matches": rows}), {"results": rows})
        other = {"results": rows, "matches": [{"name": "b"}]}
        self.assertEqual(compact_answer(other), other)

    def test_the_input_is_left_unchanged(self):
        data = {"results": [{"name": "a", "source_cache": "x\n" * 50, "relative_path": "p"}]}
        before = json.dumps(data)
        compact_answer(data)
        self.assertEqual(json.dumps(data), before)

    def test_non_object_answers_pass_through(self):
        self.assertEqual(compact_answer([1, 2]), [1, 2])
        self.assertIsNone(compact_answer(None))

    def test_a_repository_and_language_all_rows_share_are_stated_once(self):
        rows = [
            {"name": n, "repo_id": "repository:r_1", "language": "python", "entity_id": n}
            for n in ("a", "b")
        ]
        self.assertEqual(
            compact_answer({"results": rows}),
            {
                "results": [{"name": "a", "entity_id": "a"}, {"name": "b", "entity_id": "b"}],
                "repo_id": "repository:r_1",
                "language": "python",
            },
        )

    def test_rows_from_several_repositories_keep_their_own(self):
        rows = [
            {"name": "a", "repo_id": "repository:r_1"},
            {"name": "b", "repo_id": "repository:r_2"},
        ]
        self.assertEqual(compact_answer({"results": rows}), {"results": rows})

    def test_a_handle_that_spells_the_row_id_and_signed_argument_names_go(self):
        row = {
            "entity_id": "e1",
            "entity_handle": "entity:e1",
            "source_cache": "def f(a, b):",
            "metadata": {"args": ["a", "b"], "class_context": "C"},
        }
        (compact,) = compact_answer({"results": [row]})["results"]
        self.assertEqual(
            compact,
            {"entity_id": "e1", "source_cache": "def f(a, b):", "metadata": {"class_context": "C"}},
        )

    def test_grouped_rows_leave_their_definition_to_the_groups_list(self):
        group = {"entity_id": "d1", "name": "write", "file_path": "t/a.py", "start_line": 5}
        row = {
            "definition_entity_id": "d1",
            "target_id": "d1",
            "target_name": "write",
            "target_file_path": "t/a.py",
            "source_id": "s1",
            "source_name": "caller",
            "source_end_line": 40,
            "line_number": 12,
        }
        data = {
            "target_resolution": {"status": "ambiguous", "candidates": [dict(group)]},
            "definition_groups": [group],
            "relationships": [row],
        }
        compact = compact_answer(data)
        self.assertEqual(
            compact["relationships"],
            [
                {
                    "definition_entity_id": "d1",
                    "source_id": "s1",
                    "source_name": "caller",
                    "line_number": 12,
                }
            ],
        )
        self.assertEqual(
            compact["target_resolution"], {"status": "ambiguous", "candidate_count": 1}
        )

    def test_a_recursive_call_keeps_the_caller_of_an_incoming_row(self):
        row = {"source_id": "a", "source_name": "f", "target_id": "a", "target_name": "f"}
        data = {"target_resolution": {"entity_id": "a"}, "relationships": [row]}
        incoming = compact_answer({**data, "scope": {"direction": "incoming"}})
        self.assertEqual(incoming["relationships"], [{"source_id": "a", "source_name": "f"}])
        outgoing = compact_answer({**data, "scope": {"direction": "outgoing"}})
        self.assertEqual(outgoing["relationships"], [{"target_id": "a", "target_name": "f"}])
