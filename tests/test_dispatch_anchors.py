"""
Tests for entity anchors of relationship tool calls, end to end through the in-process
dispatch and the local query Resource: an entity id, a handle or ``start_entity_id``
names one definition, and the largest advertised limit fits the response budget.
"""

from __future__ import annotations

from collections import Counter

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch import run_read_only_tool
from eshu_mcp.dispatch.anchors import anchored_arguments
from eshu_mcp.dispatch.budget import DEFAULT_RESPONSE_BUDGET, measure
from eshu_mcp.dispatch.first_page import DEFAULT_ANSWER_ROWS
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from tests.test_api_code_story_page import busy_index
from tests.test_api_resource import InlinePool, ThreadReactor

TOOL = "analyze_code_relationships"


class AnchoredArgumentsTests(SynchronousTestCase):
    def test_start_entity_id_becomes_the_target(self):
        args = {"query_type": "find_callers", "target": "write", "start_entity_id": " e1 "}
        self.assertEqual(anchored_arguments(TOOL, args)["target"], "e1")

    def test_call_chains_keep_their_ends(self):
        args = {"query_type": "call_chain", "target": "a->b", "start_entity_id": "e1"}
        self.assertEqual(anchored_arguments(TOOL, args), args)

    def test_other_tools_and_blank_ids_are_left_alone(self):
        args = {"query_type": "find_callers", "target": "write", "start_entity_id": " "}
        self.assertEqual(anchored_arguments(TOOL, args), args)
        self.assertEqual(
            anchored_arguments("find_code", {"start_entity_id": "e"}), {"start_entity_id": "e"}
        )
        self.assertIsNone(anchored_arguments(TOOL, None))


class RelationshipToolTests(SynchronousTestCase):
    def setUp(self):
        self.index, _ = busy_index(self)
        reactor = ThreadReactor()
        self.resource = LocalQueryResource(
            self.index.path, reactor=reactor, threadpool=InlinePool()
        )

    def run_tool(self, **args):
        result = self.successResultOf(run_read_only_tool(self.resource, TOOL, args, clock=Clock()))
        self.assertFalse(result.get("isError"), result)
        return result["structuredContent"]

    def resolved_entity(self, **args) -> str:
        data = self.run_tool(query_type="find_callers", repo_id="net", **args)["data"]
        self.assertEqual(data["target_resolution"]["status"], "resolved")
        return data["target_resolution"]["entity_id"]

    def test_a_target_holding_an_entity_id_answers_that_entity(self):
        second = self.index.entities["second_write"]
        self.assertEqual(self.resolved_entity(target=second), second)

    def test_a_target_holding_a_handle_answers_that_entity(self):
        second = self.index.entities["second_write"]
        self.assertEqual(self.resolved_entity(target="entity:" + second), second)

    def test_start_entity_id_is_honoured(self):
        second = self.index.entities["second_write"]
        self.assertEqual(self.resolved_entity(target="write", start_entity_id=second), second)

    def test_a_shared_name_answers_callers_grouped_by_definition(self):
        data = self.run_tool(query_type="find_callers", target="write", repo_id="net")["data"]
        self.assertEqual(data["target_resolution"]["status"], "ambiguous")
        # A call naming no limit gets the compact first page, then the next offset.
        rows = DEFAULT_ANSWER_ROWS
        self.assertEqual(len(data["relationships"]), rows)
        self.assertEqual([g["returned"] for g in data["definition_groups"]], [rows, 0, 0])
        self.assertEqual([g["edge_count"] for g in data["definition_groups"]], [150, 8, 0])
        self.assertEqual(data["summary"]["next_offset"], rows)

    def test_paging_a_shared_name_through_the_tool_serves_every_edge_once(self):
        stored = Counter(
            (row["source_id"], row["target_id"], row["line_number"])
            for row in self.index.reader().execute(
                "SELECT source_id, target_id, line_number FROM edges WHERE type = 'CALLS'"
                " AND target_id IN (?, ?)",
                (self.index.entities["write"], self.index.entities["second_write"]),
            )
        )
        served: Counter = Counter()
        offset, reads = 0, 0
        while offset is not None and reads < 100:
            data = self.run_tool(
                query_type="find_callers", target="write", repo_id="net", limit=40, offset=offset
            )["data"]
            self.assertEqual(len(data["definition_groups"]), 3)
            # A compact page states once the definition all of its rows belong to.
            shared = data.get("relationships_shared", {})
            for row in data["relationships"]:
                target = row.get("target_id") or {**shared, **row}["definition_entity_id"]
                served[(row["source_id"], target, row["line_number"])] += 1
            following = data["summary"]["next_offset"]
            self.assertEqual(following, data.get("next_offset", following))
            self.assertTrue(following is None or following > offset)
            offset, reads = following, reads + 1
        self.assertEqual(served, stored)

    def test_the_largest_limit_fits_the_response_budget(self):
        self.index.writer.execute(
            "UPDATE entity_rows SET entity_name = entity_name || ?", ("y" * 600,)
        )
        self.index.writer.commit()
        payload = self.run_tool(
            query_type="find_callers", target=self.index.entities["write"], limit=200
        )
        self.assertLessEqual(measure(payload), DEFAULT_RESPONSE_BUDGET)
        summary = payload["data"]["summary"]
        self.assertTrue(summary["truncated"])
        self.assertEqual(summary["next_offset"], summary["relationship_count"])
        self.assertLess(summary["relationship_count"], 150)
