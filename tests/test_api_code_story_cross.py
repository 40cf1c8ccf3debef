"""Tests for cross-repository incoming edges in relationship stories."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.auth.principal import Principal
from tests.test_api_code_common import call
from tests.test_api_code_dead_cross import cross_index

STORY = "/code/relationships/story"


class CrossRepoStoryTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo, self.consumer = cross_index(self)
        self.conn = self.index.reader()

    def story(self, principal=None, **body):
        request = {"target": "old_refund", "repo_id": "shop", "direction": "incoming", **body}
        return call(self.conn, STORY, request, principal=principal).data

    def test_consumer_calls_and_imports_appear_with_cross_repo(self):
        data = self.story(cross_repo=True, relationship_types=["CALLS", "IMPORTS"])
        rows = {(r["type"], r["source_repo_id"], r["source_name"]) for r in data["relationships"]}
        self.assertEqual(
            rows, {("CALLS", self.consumer, "app.py"), ("IMPORTS", self.consumer, "app.py")}
        )
        row = data["relationships"][0]
        self.assertEqual(row["resolution_method"], "cross_repo_export_package")
        self.assertEqual(row["provenance"]["confidence_tier"], "medium")
        self.assertEqual(row["edge_origin"], "cross_repo_name_match")
        self.assertEqual(data["coverage"]["scope_mode"], "cross_repo")

    def test_repo_scoped_story_stays_inside_the_repository(self):
        data = self.story()
        self.assertEqual(data["relationships"], [])
        self.assertEqual(data["coverage"]["missing_edge_reason"], "no_relationships_found")

    def test_consumers_outside_the_grant_are_hidden(self):
        repo_id = self.index.writer.execute(
            "SELECT repo_id FROM repositories WHERE name = 'shop'"
        ).fetchone()[0]
        scoped = Principal(mode="scoped", allowed_repository_ids=(repo_id,))
        data = self.story(principal=scoped, cross_repo=True)
        self.assertEqual(data["relationships"], [])
