"""Tests for /code/relationships: direct edges, transitive CALLS, name resolution."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.graph import relationships
from eshu_mcp.query.local.api.graph.story.page import RESPONSE_BUDGET_BYTES, wire_bytes
from tests.test_api_code_common import call, error_of, shop_index
from tests.test_api_code_story_page import busy_index

ROUTE = "/code/relationships"


class RelationshipsTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = shop_index(self)
        self.conn = self.index.reader()

    def test_direct_edges_of_charge_by_id(self):
        answer = call(self.conn, ROUTE, {"entity_id": self.index.entities["charge"]})
        data = answer.data
        self.assertEqual(data["name"], "charge")
        self.assertEqual(data["labels"], ["Function"])
        self.assertEqual({r["source_name"] for r in data["incoming"]}, {"create_charge", "batch"})
        self.assertEqual([r["target_name"] for r in data["outgoing"]], ["helper"])
        self.assertFalse(data["incoming_truncated"])
        self.assertEqual(data["incoming"][0]["provenance"]["source_family"], "code_edge")
        self.assertEqual(answer.truth["capability"], "call_graph.direct_callers")

    def test_a_handle_in_entity_id_names_that_entity(self):
        body = {"entity_id": "entity:" + self.index.entities["charge"]}
        self.assertEqual(call(self.conn, ROUTE, body).data["name"], "charge")

    def test_a_name_sent_as_entity_id_is_resolved_by_name(self):
        # analyze_code_relationships sends its target as entity_id on this route.
        data = call(self.conn, ROUTE, {"entity_id": "helper", "direction": "incoming"}).data
        self.assertEqual(data["entity_id"], self.index.entities["helper"])
        self.assertEqual({r["source_name"] for r in data["incoming"]}, {"charge", "run"})

    def test_name_and_direction_filter(self):
        data = call(self.conn, ROUTE, {"name": "helper", "direction": "incoming"}).data
        self.assertEqual(data["outgoing"], [])
        self.assertEqual({r["source_name"] for r in data["incoming"]}, {"charge", "run"})

    def test_transitive_callees_carry_depth(self):
        answer = call(
            self.conn,
            ROUTE,
            {"name": "batch", "direction": "outgoing", "transitive": True, "max_depth": 4},
        )
        depths = {r["target_name"]: r["depth"] for r in answer.data["outgoing"]}
        self.assertEqual(depths, {"charge": 1, "create_charge": 1, "helper": 2})
        self.assertEqual(answer.data["outgoing"][0]["reason"], "transitive_call_graph")
        self.assertEqual(answer.truth["capability"], "call_graph.transitive_callees")

    def test_recursive_walk_terminates(self):
        data = call(
            self.conn,
            ROUTE,
            {"name": "ping", "direction": "outgoing", "transitive": True, "max_depth": 10},
        ).data
        self.assertEqual([r["target_name"] for r in data["outgoing"]], ["pong"])

    def test_ambiguous_name_is_a_200_with_candidates(self):
        data = call(self.conn, ROUTE, {"name": "run"}).data
        self.assertEqual(data["status"], "ambiguous")
        self.assertEqual(data["summary"]["candidate_count"], 2)
        self.assertEqual(data["incoming"], [])

    def test_errors(self):
        cases = [
            ({}, 400, "entity_id or name is required"),
            ({"name": "x", "direction": "up"}, 400, "direction must be incoming or outgoing"),
            (
                {"name": "x", "transitive": True, "relationship_type": "IMPORTS"},
                400,
                "transitive relationships are only supported for CALLS",
            ),
            (
                {"name": "x", "transitive": True},
                400,
                "direction is required for transitive CALLS relationships",
            ),
            ({"entity_id": "content-entity:e_000000000000"}, 404, "entity not found"),
        ]
        for body, status, detail in cases:
            error = error_of(self.conn, ROUTE, body)
            self.assertEqual((error.status, error.detail), (status, detail))

    def test_rows_per_direction_are_capped(self):
        self.patch(relationships, "DIRECT_ROW_CEILING", 1)
        data = call(self.conn, ROUTE, {"entity_id": self.index.entities["charge"]}).data
        self.assertEqual(len(data["incoming"]), 1)
        self.assertTrue(data["incoming_truncated"])
        data = call(
            self.conn,
            ROUTE,
            {"name": "batch", "direction": "outgoing", "transitive": True},
        ).data
        self.assertEqual(len(data["outgoing"]), 1)
        self.assertTrue(data["outgoing_truncated"])


class RelationshipsBudgetTests(SynchronousTestCase):
    def test_a_busy_entity_is_cut_to_the_response_budget(self):
        index, _ = busy_index(self)
        index.writer.execute("UPDATE entity_rows SET entity_name = entity_name || ?", ("z" * 600,))
        index.writer.commit()
        data = call(index.reader(), ROUTE, {"entity_id": index.entities["write"]}).data
        self.assertLessEqual(wire_bytes(data), RESPONSE_BUDGET_BYTES)
        self.assertLess(len(data["incoming"]), 150)
        self.assertTrue(data["incoming_truncated"])
        self.assertTrue(data["incoming_truncated_by_response_budget"])
        self.assertEqual(len(data["outgoing"]), 1)
