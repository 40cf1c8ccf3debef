"""Tests for /code/call-chain: shortest CALLS chains, bounded depth, endpoint resolution."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from tests.test_api_code_common import call, error_of, shop_index

ROUTE = "/code/call-chain"


class CallChainTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = shop_index(self)
        self.conn = self.index.reader()

    def test_batch_reaches_helper_through_charge(self):
        answer = call(self.conn, ROUTE, {"start": "batch", "end": "helper", "repo_id": "shop"})
        data = answer.data
        self.assertEqual(
            [[node["name"] for node in chain["chain"]] for chain in data["chains"]],
            [["batch", "charge", "helper"]],
        )
        self.assertEqual(data["chains"][0]["depth"], 2)
        self.assertEqual(data["start_entity_id"], self.index.entities["batch"])
        self.assertEqual(data["end_entity_id"], self.index.entities["helper"])
        self.assertEqual(data["chains"][0]["chain"][0]["labels"], ["Function"])
        self.assertEqual(answer.truth["capability"], "call_graph.call_chain_path")

    def test_endpoints_may_be_entity_ids_or_handles(self):
        body = {
            "start": "entity:" + self.index.entities["batch"],
            "end": self.index.entities["helper"],
        }
        data = call(self.conn, ROUTE, body).data
        self.assertEqual(
            [[node["name"] for node in chain["chain"]] for chain in data["chains"]],
            [["batch", "charge", "helper"]],
        )

    def test_depth_bound_hides_longer_chains(self):
        data = call(self.conn, ROUTE, {"start": "batch", "end": "helper", "max_depth": 1}).data
        self.assertEqual(data["chains"], [])

    def test_no_path_is_empty(self):
        data = call(self.conn, ROUTE, {"start": "helper", "end": "batch"}).data
        self.assertEqual(data["chains"], [])

    def test_ambiguous_start_with_one_reachable_pair_is_resolved(self):
        data = call(self.conn, ROUTE, {"start": "run", "end": "helper"}).data
        self.assertEqual(len(data["chains"]), 1)
        self.assertEqual(data["start_entity_id"], self.index.entities["run"])
        self.assertEqual(data["chains"][0]["chain"][0]["method_kind"], "method")
        self.assertEqual(data["chains"][0]["chain"][0]["start_line"], 7)

    def test_several_reachable_pairs_are_named_with_their_classes_and_places(self):
        rows = self.conn.execute(
            "SELECT entity_id FROM entities WHERE entity_name = 'run' ORDER BY start_line"
        ).fetchall()
        base_run = rows[0][0]
        self.index.edge("CALLS", base_run, self.index.entities["helper"], line=3)
        self.index.writer.commit()
        detail = error_of(self.index.reader(), ROUTE, {"start": "run", "end": "helper"}).detail
        self.assertIn(
            "matched multiple reachable entity pairs across the indexed repositories", detail
        )
        # The end they share is stated once; the starts are listed by name and place.
        self.assertIn(
            "one of 2: Base.run (shop/service.py:2), Child.run (shop/service.py:7)"
            " -> helper (shop/service.py:15)",
            detail,
        )
        self.assertIn("pass qualified names (Class.method", detail)
        self.assertIn("or start_entity_id and end_entity_id to pick one", detail)
        # and a qualified name picks one
        data = call(self.index.reader(), ROUTE, {"start": "Child.run", "end": "helper"}).data
        self.assertEqual(len(data["chains"]), 1)

    def test_required_endpoints(self):
        self.assertEqual(
            error_of(self.conn, ROUTE, {"end": "x"}).detail, "start or start_entity_id is required"
        )
        self.assertEqual(
            error_of(self.conn, ROUTE, {"start": "x", "end": "  "}).detail,
            "end or end_entity_id is required",
        )
