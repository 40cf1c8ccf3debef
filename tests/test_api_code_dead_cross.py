"""Tests for /code/dead-code/cross-repo: consumer evidence from other indexed repositories."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from tests.test_api_code_common import call, error_of, shop_index

ROUTE = "/code/dead-code/cross-repo"
CONSUMER = "from shop.service import old_refund\n\nold_refund()\n"


def cross_index(case: SynchronousTestCase):
    index, repo = shop_index(case)
    consumer = index.repository("storefront")
    file_id = index.file(consumer, "app.py", CONSUMER)
    index.import_row(consumer, file_id, "shop.service", 1, imported_name="old_refund")
    index.writer.execute(
        "INSERT INTO call_sites (repo_id, file_id, callee_name, full_name, line_number)"
        " VALUES (?, ?, 'old_refund', 'old_refund', 3)",
        (consumer, file_id),
    )
    index.writer.execute(
        "INSERT INTO unresolved_calls (call_id, reason)"
        " SELECT MAX(call_id), 'external' FROM call_sites"
    )
    index.writer.commit()
    return index, repo, consumer


class CrossRepoDeadCodeTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo, self.consumer = cross_index(self)
        self.conn = self.index.reader()

    def test_symbol_used_by_a_consumer_is_live(self):
        answer = call(self.conn, ROUTE, {"repo_id": "shop"})
        data = answer.data
        live = {r["name"]: r for r in data["candidate_buckets"]["live_by_consumer"]}
        dead = {r["name"] for r in data["candidate_buckets"]["dead"]}
        self.assertIn("old_refund", live)
        self.assertNotIn("old_refund", dead)
        self.assertIn("batch", dead)
        kinds = {e["relationship_type"] for e in live["old_refund"]["consumer_evidence"]}
        self.assertEqual(kinds, {"IMPORTS", "CALLS"})
        self.assertEqual(live["old_refund"]["consumer_evidence_count"], 2)
        self.assertEqual(data["consumer_repo_ids"], [self.consumer])
        self.assertEqual(data["query_shape"], "bounded_cross_repo_dead_code")
        self.assertEqual(answer.truth["capability"], "code_quality.dead_code")

    def test_handles_mode_groups_evidence(self):
        data = call(self.conn, ROUTE, {"repo_id": "shop", "evidence_detail": "handles"}).data
        row = next(
            r for r in data["candidate_buckets"]["live_by_consumer"] if r["name"] == "old_refund"
        )
        self.assertEqual(row["consumer_evidence_group_count"], 2)
        self.assertEqual({g["item_count"] for g in row["consumer_evidence"]}, {1})

    def test_consumer_selection_limits_evidence(self):
        data = call(self.conn, ROUTE, {"repo_id": "shop", "consumer_repo_ids": ["shop"]}).data
        self.assertEqual(data["consumer_repo_ids"], [])
        self.assertIn("old_refund", {r["name"] for r in data["candidate_buckets"]["dead"]})

    def test_errors(self):
        self.assertEqual(error_of(self.conn, ROUTE, {}).detail, "repo_id is required")
        self.assertEqual(
            error_of(self.conn, ROUTE, {"repo_id": "shop", "evidence_detail": "all"}).detail,
            "evidence_detail must be full or handles",
        )
