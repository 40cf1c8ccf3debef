"""A callers answer counts the call sites the index would not link to any definition."""

from __future__ import annotations

from eshu_mcp.dispatch.summaries.result import summarize_envelope
from eshu_mcp.query.local.api.graph.story.unlinked import unlinked_call_sites
from eshu_mcp.query.local.index.resolve.typed_receivers import AMBIGUOUS_CAP
from tests.test_api_code_common import call
from tests.test_index_receivers import IndexedSourcesCase

WRITERS = "".join(
    f"class Writer{n}:\n    def write(self, data):\n        return {n}\n\n\n"
    for n in range(AMBIGUOUS_CAP + 2)
)

SOURCES = {
    "app/writers.py": WRITERS + "def flush(out):\n    out.write(1)\n    out.write(2)\n",
    "app/only.py": "class Single:\n    def close(self):\n        return 0\n\n\n"
    "def shut(s: Single):\n    s.close()\n",
}


class UnlinkedCallSitesTests(IndexedSourcesCase):
    SOURCES = SOURCES

    def story(self, target):
        return call(
            self.conn, "/code/relationships/story", {"target": target, "direction": "incoming"}
        )

    def test_calls_on_an_unknown_receiver_with_too_many_candidates_are_counted(self):
        answer = self.story("write")
        unlinked = answer.data["coverage"]["unlinked_call_sites"]
        self.assertEqual(unlinked["call_sites"], 2)
        self.assertEqual(unlinked["most_candidates"], AMBIGUOUS_CAP + 2)
        self.assertEqual(answer.data["relationships"], [])
        text = summarize_envelope(
            "analyze_code_relationships", {"data": answer.data, "truth": answer.truth}
        )
        self.assertIn("2 more call sites of write() could each run any of up to 10", text)

    def test_one_definition_named_writer_with_it_counts_the_same_sites(self):
        data = self.story("Writer3.write").data
        self.assertEqual(data["target_resolution"]["status"], "resolved")
        self.assertEqual(data["coverage"]["unlinked_call_sites"]["call_sites"], 2)

    def test_linked_calls_leave_nothing_to_count(self):
        data = self.story("close").data
        self.assertEqual(len(data["relationships"]), 1)
        self.assertNotIn("unlinked_call_sites", data["coverage"])
        self.assertIsNone(unlinked_call_sites(self.conn, "close", ""))
