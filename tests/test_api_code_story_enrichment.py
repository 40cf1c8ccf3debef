"""Tests for the class-hierarchy and override enrichment of relationship stories."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.code_common import entity_by_id
from eshu_mcp.query.local.api.code_story_enrichment import class_hierarchy, repository_overrides
from tests.test_api_code_common import shop_index


class EnrichmentTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = shop_index(self)
        self.conn = self.index.reader()

    def test_base_has_child_as_descendant_and_no_ancestors(self):
        base = entity_by_id(self.conn, self.index.entities["Base"])
        block = class_hierarchy(self.conn, base, 5)
        self.assertEqual(block["ancestors"], [])
        self.assertEqual(
            [(d["name"], d["depth"], d["relationship_type"]) for d in block["descendants"]],
            [("Child", 1, "INHERITS")],
        )
        self.assertFalse(block["descendants_truncated"])

    def test_repository_overrides_pages_with_a_probe(self):
        rows, available, cut = repository_overrides(self.conn, {"limit": 1, "offset": 0}, self.repo)
        [row] = rows
        self.assertEqual((row["source_name"], row["target_name"]), ("run", "run"))
        self.assertEqual(row["source_start_line"], 7)
        self.assertEqual((available["outgoing"], cut["outgoing"]), (1, False))
