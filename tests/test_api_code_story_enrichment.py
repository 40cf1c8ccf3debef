"""Tests for the class-hierarchy and override enrichment of relationship stories."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.code.common import entity_by_id
from eshu_mcp.query.local.api.graph.story.enrichment import class_hierarchy, repository_overrides
from tests.test_api_code_common import CodeIndex, call, scratch_dir, shop_index


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


def wide_hierarchy(case: SynchronousTestCase) -> tuple[CodeIndex, str]:
    """``Protocol`` with 60 direct subclasses, each of the first 20 with one of its own."""
    index = CodeIndex(scratch_dir(case))
    repo = index.repository("wide")
    text = "class Protocol:\n    pass\n" + "class C:\n    pass\n" * 80
    source = index.file(repo, "wide/protocols.py", text)
    base = index.entity(source, "Class", "Protocol", 1, 2)
    children = [
        index.entity(source, "Class", f"Child{n:02d}", 3 + 2 * n, 4 + 2 * n) for n in range(60)
    ]
    for n, child in enumerate(children):
        index.edge("INHERITS", child, base, line=3 + 2 * n)
    for n, child in enumerate(children[:20]):
        grandchild = index.entity(source, "Class", f"Grand{n:02d}", 123 + 2 * n, 124 + 2 * n)
        index.edge("INHERITS", grandchild, child, line=123 + 2 * n)
    index.writer.commit()
    return index, repo


class WideHierarchyTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = wide_hierarchy(self)
        self.conn = self.index.reader()

    def hierarchy(self, **body):
        data = call(
            self.conn,
            "/code/relationships/story",
            {"repo_id": "wide", "target": "Protocol", "query_type": "class_hierarchy", **body},
        ).data
        return data["class_hierarchy"]

    def test_direct_subclasses_come_first_and_are_counted_when_the_page_is_short(self):
        block = self.hierarchy(limit=25)
        self.assertEqual(len(block["descendants"]), 25)
        self.assertEqual({d["depth"] for d in block["descendants"]}, {1})
        self.assertEqual(block["descendants_count"], 80)
        self.assertEqual(block["direct_descendant_count"], 60)
        self.assertTrue(block["descendants_truncated"])
        self.assertEqual(block["descendants_next_offset"], 25)

    def test_paging_the_descendants_serves_every_subclass_once(self):
        seen, offset, reads = [], 0, 0
        while offset is not None and reads < 20:
            block = self.hierarchy(limit=25, offset=offset)
            seen += [(d["name"], d["depth"]) for d in block["descendants"]]
            offset = block["descendants_next_offset"]
            reads += 1
        self.assertEqual(reads, 4)
        self.assertEqual(len(seen), len(set(seen)))
        self.assertEqual(sorted(n for n, d in seen if d == 1), [f"Child{n:02d}" for n in range(60)])
        self.assertEqual(sorted(n for n, d in seen if d == 2), [f"Grand{n:02d}" for n in range(20)])

    def test_a_limit_above_the_count_returns_every_descendant_untruncated(self):
        block = self.hierarchy(limit=200)
        self.assertEqual(len(block["descendants"]), 80)
        self.assertFalse(block["descendants_truncated"])
        self.assertIsNone(block["descendants_next_offset"])
