"""Tests for relationship-story request validation (Eshu's texts, in Eshu's order)."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.code.common import RequestFields
from eshu_mcp.query.local.api.graph.story.request import story_request
from eshu_mcp.query.local.api.platform.framework import ApiError
from tests.test_api_code_common import error_of, shop_index

STORY = "/code/relationships/story"


class StoryRequestTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = shop_index(self)
        self.conn = self.index.reader()

    def test_validation_texts(self):
        cases = [
            ({}, "entity_id or target is required"),
            ({"target": "x", "cross_repo": True}, "cross_repo relationship story requires repo_id"),
            ({"target": "x", "offset": -1}, "offset must be >= 0"),
            ({"target": "x", "offset": 10001}, "offset must be <= 10000"),
            ({"target": "x", "token_budget": -1}, "token_budget must be >= 0"),
            ({"target": "x", "min_confidence": 2}, "min_confidence must be between 0 and 1"),
            (
                {"target": "x", "relationship_types": ["CALLS"], "include_transitive": True},
                "relationship_types cannot be combined with include_transitive",
            ),
            (
                {"target": "x", "include_transitive": True, "offset": 5},
                "include_transitive requires offset 0",
            ),
            (
                {"target": "x", "include_transitive": True, "relationship_type": "IMPORTS"},
                "include_transitive currently supports CALLS relationships only",
            ),
            (
                {"target": "x", "include_transitive": True},
                "set direction to incoming or outgoing when include_transitive is true",
            ),
            (
                {"target": "x", "repo_id": "shop", "cross_repo": True, "query_type": "overrides"},
                "cross_repo overrides enrichment is not supported; use relationship_type OVERRIDES",
            ),
        ]
        for body, detail in cases:
            self.assertEqual(error_of(self.conn, STORY, body).detail, detail, body)

    def test_defaults_and_query_type_mapping(self):
        req = story_request(RequestFields({"target": "Child", "query_type": "class_hierarchy"}))
        self.assertEqual(req["relationship_type"], "INHERITS")
        self.assertEqual((req["limit"], req["max_depth"], req["direction"]), (25, 5, "both"))
        req = story_request(RequestFields({"target": "x", "limit": 900, "max_depth": 50}))
        self.assertEqual(
            (req["limit"], req["max_depth"], req["relationship_type"]), (200, 10, "CALLS")
        )

    def test_unknown_relationship_type_is_rejected(self):
        error = self.assertRaises(
            ApiError, story_request, RequestFields({"target": "x", "relationship_type": "USES"})
        )
        self.assertEqual(error.detail, 'unsupported relationship_type "USES"')
