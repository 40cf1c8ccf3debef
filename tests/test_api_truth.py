"""Tests for truth levels, the capability matrix and index freshness."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.routemap import load_route_map
from eshu_mcp.query.local.api.platform.truth import (
    CAPABILITY_MAX_LEVEL,
    build_truth,
    current_head,
    index_freshness,
    is_known_capability,
    repository_freshness,
    truth_level,
)
from tests.test_api_resource import ApiIndex, rich_index


class LevelTests(SynchronousTestCase):
    def test_basis_sets_the_level(self):
        self.assertEqual(truth_level("", "semantic_facts"), "exact")
        self.assertEqual(truth_level("", "content_index"), "derived")
        self.assertEqual(truth_level("", ""), "fallback")

    def test_capability_maximum_caps_the_level(self):
        self.assertEqual(truth_level("code_search.fuzzy_symbol", "authoritative_graph"), "derived")
        self.assertEqual(truth_level("code_search.exact_symbol", "authoritative_graph"), "exact")

    def test_unknown_capability_is_logged_not_raised(self):
        self.assertEqual(truth_level("nope.unknown", "content_index"), "derived")
        self.assertEqual(len(self.flushLoggedErrors()), 0)

    def test_every_served_route_capability_is_in_the_matrix(self):
        for spec in load_route_map():
            if spec.mode in ("serve-real", "serve-real-partial") and spec.capability_id:
                self.assertTrue(is_known_capability(spec.capability_id), spec.capability_id)
        self.assertIn("query.playbooks", CAPABILITY_MAX_LEVEL)

    def test_truth_omits_empty_optional_fields_in_go_order(self):
        truth = build_truth("", basis="", freshness={"state": "unavailable"}, level="fallback")
        self.assertEqual(list(truth), ["level", "profile", "freshness"])
        full = build_truth("x.y", basis="hybrid", freshness={"state": "fresh"}, reason="r")
        self.assertEqual(
            list(full), ["level", "capability", "profile", "basis", "freshness", "reason"]
        )


class FreshnessTests(SynchronousTestCase):
    def setUp(self):
        self.ids = rich_index(self.mktemp())
        self.index = self.ids["index"]

    def repo_row(self, conn):
        return conn.execute(
            "SELECT * FROM repositories WHERE repo_id = ?", (self.ids["repo"],)
        ).fetchone()

    def test_head_is_read_from_loose_and_packed_refs(self):
        tree = self.ids["tree"]
        self.assertEqual(current_head(str(tree)), "a" * 40)
        (tree / ".git" / "refs" / "heads" / "main").unlink()
        (tree / ".git" / "packed-refs").write_text(
            "# pack-refs with: peeled\n" + "d" * 40 + " refs/heads/main\n"
        )
        self.assertEqual(current_head(str(tree)), "d" * 40)
        (tree / ".git" / "HEAD").write_text("e" * 40 + "\n")
        self.assertEqual(current_head(str(tree)), "e" * 40)

    def test_head_of_a_non_git_tree_is_unknown(self):
        self.assertIsNone(current_head(self.mktemp()))

    def test_repository_is_fresh_then_stale_when_head_moves(self):
        conn = self.index.reader()
        self.addCleanup(conn.close)
        self.assertEqual(repository_freshness(conn, self.repo_row(conn))["state"], "fresh")
        (self.ids["tree"] / ".git" / "refs" / "heads" / "main").write_text("f" * 40)
        stale = repository_freshness(conn, self.repo_row(conn))
        self.assertEqual(stale["state"], "stale")
        self.assertIn("differs from indexed", stale["detail"])

    def test_pending_generation_is_building(self):
        self.index.hold_writer_lock()  # the indexer writing it is running
        self.index.writer.execute(
            "INSERT INTO generations (generation_id, repo_id, seq, scope_id, status, observed_at)"
            " VALUES ('p', ?, 9, 's', 'pending', '2026-12-02T11:00:00Z')",
            (self.ids["repo"],),
        )
        self.index.writer.commit()
        conn = self.index.reader()
        self.addCleanup(conn.close)
        self.assertEqual(repository_freshness(conn, self.repo_row(conn))["state"], "building")
        self.assertEqual(index_freshness(conn)["state"], "building")

    def test_pending_generation_of_a_dead_indexer_leaves_the_index_fresh(self):
        self.index.hold_writer_lock()
        self.index.writer.execute(
            "INSERT INTO generations (generation_id, repo_id, seq, scope_id, status, observed_at)"
            " VALUES ('p', ?, 9, 's', 'pending', '2026-12-02T11:00:00Z')",
            (self.ids["repo"],),
        )
        self.index.writer.commit()
        self.index.writer_died()
        conn = self.index.reader()
        self.addCleanup(conn.close)
        self.assertEqual(repository_freshness(conn, self.repo_row(conn))["state"], "fresh")
        self.assertEqual(index_freshness(conn)["state"], "fresh")

    def test_empty_index_is_unavailable(self):
        index = ApiIndex(self.mktemp())
        index.writer.commit()
        conn = index.reader()
        self.addCleanup(conn.close)
        self.assertEqual(index_freshness(conn)["state"], "unavailable")
