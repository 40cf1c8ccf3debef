"""Tests for /code/call-graph/metrics: hubs, recursion, paging and the edge ceiling."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.code_metrics import hub_functions
from eshu_mcp.query.local.api.framework import ApiError
from tests.test_api_code_common import call, error_of, shop_index

ROUTE = "/code/call-graph/metrics"


class MetricsTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = shop_index(self)
        self.conn = self.index.reader()

    def test_charge_is_the_top_hub(self):
        answer = call(self.conn, ROUTE, {"repo_id": "shop", "limit": 1})
        data = answer.data
        [top] = data["functions"]
        self.assertEqual(top["function_name"], "charge")
        self.assertEqual(
            (top["incoming_calls"], top["outgoing_calls"], top["total_degree"]), (2, 1, 3)
        )
        self.assertEqual(top["rank"], 1)
        self.assertEqual(top["entity_handle"], "entity:" + self.index.entities["charge"])
        self.assertTrue(data["truncated"])
        self.assertEqual(data["next_offset"], 1)
        self.assertEqual(data["coverage"]["query_shape"], "hub_functions")
        self.assertEqual(answer.truth["capability"], "call_graph.metrics")

    def test_recursive_functions_find_self_and_mutual_calls(self):
        data = call(self.conn, ROUTE, {"repo_id": "shop", "metric_type": "recursive_functions"})
        kinds = {
            (r["function_name"], r["partner_name"], r["recursion_kind"])
            for r in data.data["functions"]
        }
        self.assertEqual(
            kinds,
            {
                ("loop", "loop", "self_call"),
                ("ping", "pong", "mutual_call"),
                ("pong", "ping", "mutual_call"),
            },
        )
        ping = next(r for r in data.data["functions"] if r["function_name"] == "ping")
        self.assertEqual(
            ping["recursion_evidence"]["cycle_path"],
            [ping["function_id"], ping["partner_id"], ping["function_id"]],
        )

    def test_edge_ceiling_is_a_422(self):
        error = self.assertRaises(ApiError, hub_functions, self.conn, self.repo, "", scope_limit=3)
        self.assertEqual(error.status, 422)
        self.assertEqual(
            error.detail,
            "call graph metrics scope is too broad: reached the"
            " 4-edge sentinel; maximum exact scope is 3",
        )

    def test_validation(self):
        cases = [
            ({}, "repo_id is required"),
            ({"repo_id": "shop", "limit": 201}, "limit must be <= 200"),
            ({"repo_id": "shop", "limit": 0}, "limit must be >= 1"),
            ({"repo_id": "shop", "offset": -1}, "offset must be >= 0"),
            (
                {"repo_id": "shop", "metric_type": "fan_out"},
                "metric_type must be one of: hub_functions, recursive_functions",
            ),
        ]
        for body, detail in cases:
            self.assertEqual(error_of(self.conn, ROUTE, body).detail, detail)
