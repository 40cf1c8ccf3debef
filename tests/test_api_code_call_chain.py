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

    def test_a_name_given_as_an_entity_id_is_read_as_the_name(self):
        body = {"start_entity_id": self.index.entities["batch"], "end_entity_id": "helper"}
        data = call(self.conn, ROUTE, body).data
        self.assertEqual(
            [[node["name"] for node in chain["chain"]] for chain in data["chains"]],
            [["batch", "charge", "helper"]],
        )
        self.assertEqual(data["end_entity_id"], self.index.entities["helper"])

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

    def test_a_shared_name_answers_every_chain_found_with_the_ambiguity_stated(self):
        rows = self.conn.execute(
            "SELECT entity_id FROM entities WHERE entity_name = 'run' ORDER BY start_line"
        ).fetchall()
        base_run = rows[0][0]
        self.index.edge("CALLS", base_run, self.index.entities["helper"], line=3)
        self.index.writer.commit()
        data = call(self.index.reader(), ROUTE, {"start": "run", "end": "helper"}).data
        # both definitions of run reach helper: each chain names its own start
        starts = [(c["chain"][0]["file_path"], c["chain"][0]["start_line"]) for c in data["chains"]]
        self.assertEqual(starts, [("shop/service.py", 2), ("shop/service.py", 7)])
        self.assertEqual({c["chain"][-1]["name"] for c in data["chains"]}, {"helper"})
        self.assertEqual(data["start_entity_id"], base_run)  # the first chain's ends
        ambiguity = data["ambiguity"]
        self.assertEqual((ambiguity["start_candidates"], ambiguity["end_candidates"]), (2, 1))
        self.assertEqual(ambiguity["pairs_with_chains"], 2)
        self.assertIn(
            '"run" names 2 definitions: 2 of 2 pairs are joined by a chain', ambiguity["note"]
        )
        # and a qualified name picks one, with nothing left ambiguous
        data = call(self.index.reader(), ROUTE, {"start": "Child.run", "end": "helper"}).data
        self.assertEqual(len(data["chains"]), 1)
        self.assertNotIn("ambiguity", data)

    def test_a_shared_name_no_chain_joins_is_an_empty_answer_not_an_error(self):
        data = call(self.conn, ROUTE, {"start": "helper", "end": "run"}).data
        self.assertEqual(data["chains"], [])
        self.assertIn('"run" names 2 definitions: 0 of 2 pairs are joined', data["reason"])

    def test_many_shared_definitions_are_probed_up_to_the_pair_bound(self):
        from eshu_mcp.query.local.api.graph.call_chain import MAX_CANDIDATE_PAIRS

        repo = self.index.repository("spread")
        for index in range(30):
            module = self.index.file(repo, f"pkg/mod{index:02}.py", "def spread(): ...\n" * 6)
            start = self.index.entity(module, "Function", "spread", 1, 2)
            end = self.index.entity(module, "Function", "gather", 5, 6)
            self.index.edge("CALLS", start, end, line=2)
        self.index.writer.commit()
        data = call(self.index.reader(), ROUTE, {"start": "spread", "end": "gather"}).data
        ambiguity = data["ambiguity"]
        self.assertEqual((ambiguity["start_candidates"], ambiguity["end_candidates"]), (30, 30))
        self.assertLessEqual(ambiguity["probed_pairs"], MAX_CANDIDATE_PAIRS)
        self.assertIn("pairs were probed", ambiguity["note"])
        self.assertTrue(data["chains"])
        for chain in data["chains"]:
            self.assertEqual(chain["chain"][0]["file_path"], chain["chain"][-1]["file_path"], chain)

    def test_required_endpoints(self):
        self.assertEqual(
            error_of(self.conn, ROUTE, {"end": "x"}).detail, "start or start_entity_id is required"
        )
        self.assertEqual(
            error_of(self.conn, ROUTE, {"start": "x", "end": "  "}).detail,
            "end or end_entity_id is required",
        )
