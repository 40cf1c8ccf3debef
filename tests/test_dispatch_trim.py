"""Cutting an answer's rows to the response budget."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.budget import measure_one_copy
from eshu_mcp.dispatch.trim import trim_rows
from eshu_mcp.encoding import dumps


def rows(count: int, size: int = 400) -> list[dict]:
    return [{"name": f"n{i}", "blob": "y" * size} for i in range(count)]


def trim(payload, budget, *, in_envelope=True, paging_offset=None):
    return trim_rows(
        payload,
        in_envelope=in_envelope,
        budget=budget,
        measure=measure_one_copy,
        paging_offset=paging_offset,
    )


class TrimRowsTests(SynchronousTestCase):
    def test_the_largest_row_list_is_cut_and_the_rest_of_the_answer_kept(self):
        envelope = {
            "data": {"results": rows(100), "tags": rows(3, 10), "offset": 0},
            "truth": {"level": "exact"},
            "error": None,
        }
        trimmed = trim(envelope, 10_000, paging_offset=0)
        data = trimmed.payload["data"]
        self.assertEqual(data["tags"], envelope["data"]["tags"])
        self.assertEqual(trimmed.payload["truth"], {"level": "exact"})
        self.assertEqual(data["results"], envelope["data"]["results"][: len(data["results"])])
        self.assertEqual(data["next_offset"], len(data["results"]))
        self.assertEqual(trimmed.size, measure_one_copy(dumps(trimmed.payload)))
        self.assertLessEqual(trimmed.size, 10_000)
        self.assertGreater(trimmed.size, 10_000 - 2 * 420)

    def test_rows_nested_one_level_down_are_cut_without_a_next_offset(self):
        value = {"class_hierarchy": {"name": "Protocol", "descendants": rows(100)}}
        trimmed = trim(value, 8_000, in_envelope=False, paging_offset=0)
        data = trimmed.payload
        self.assertLess(len(data["class_hierarchy"]["descendants"]), 100)
        self.assertEqual(data["class_hierarchy"]["name"], "Protocol")
        self.assertNotIn("next_offset", data)
        self.assertIn("lower limit", trimmed.note)

    def test_a_cut_nested_list_says_so_in_its_own_truncated_flag(self):
        value = {
            "class_hierarchy": {"descendants": rows(100), "descendants_truncated": False},
        }
        trimmed = trim(value, 8_000, in_envelope=False, paging_offset=0)
        self.assertIs(trimmed.payload["class_hierarchy"]["descendants_truncated"], True)
        self.assertIs(value["class_hierarchy"]["descendants_truncated"], False)

    def test_the_summary_next_offset_follows_the_cut(self):
        summary = {"next_offset": 140, "truncated": True}
        value = {"relationships": rows(40), "summary": summary, "coverage": {"next_offset": 140}}
        trimmed = trim(value, 8_000, in_envelope=False, paging_offset=100)
        data = trimmed.payload
        self.assertLess(len(data["relationships"]), 40)
        self.assertEqual(data["next_offset"], 100 + len(data["relationships"]))
        self.assertEqual(data["summary"]["next_offset"], data["next_offset"])
        self.assertEqual(data["coverage"]["next_offset"], data["next_offset"])
        self.assertEqual(summary["next_offset"], 140)

    def test_cutting_a_list_beside_the_page_moves_no_offset(self):
        summary = {"next_offset": 110, "relationship_count": 10, "truncated": True}
        value = {"relationships": rows(10, 20), "definition_groups": rows(40), "summary": summary}
        trimmed = trim(value, 8_000, in_envelope=False, paging_offset=100)
        data = trimmed.payload
        self.assertLess(len(data["definition_groups"]), 40)
        self.assertEqual(len(data["relationships"]), 10)
        self.assertNotIn("next_offset", data)
        self.assertEqual(data["summary"], summary)
        # Every page carries the groups whole, so a lower limit is not the advice.
        self.assertIn("narrow the question", trimmed.note)
        self.assertNotIn("lower limit", trimmed.note)

    def test_when_every_list_is_cut_the_page_still_says_where_to_resume(self):
        summary = {"next_offset": 140, "relationship_count": 40, "truncated": True}
        value = {"relationships": rows(40), "definition_groups": rows(40), "summary": summary}
        trimmed = trim(value, 8_000, in_envelope=False, paging_offset=100)
        data = trimmed.payload
        kept = len(data["relationships"])
        self.assertLess(kept, 40)
        self.assertLess(len(data["definition_groups"]), 40)
        self.assertEqual(data["next_offset"], 100 + kept)
        self.assertEqual(data["summary"]["next_offset"], 100 + kept)
        self.assertIn(f"offset={100 + kept}", trimmed.note)

    def test_nothing_to_cut_gives_up(self):
        self.assertIsNone(trim({"data": {"blob": "y" * 50_000}}, 10_000))
        self.assertIsNone(trim({"data": [1, 2, 3]}, 10))
        self.assertIsNone(trim({"data": {"results": rows(3, 20_000)}}, 10_000))


class SeveralListsTests(SynchronousTestCase):
    def test_rows_spread_over_several_lists_are_cut_to_the_same_share(self):
        answer = {
            "buckets": {
                "ready": [{"name": f"r{i}", "blob": "y" * 300} for i in range(40)],
                "suppressed": [{"name": f"s{i}", "blob": "y" * 300} for i in range(30)],
                "ready_truncated": False,
            },
            "symbols": [{"name": f"m{i}", "blob": "y" * 300} for i in range(30)],
        }
        trimmed = trim_rows(answer, in_envelope=False, budget=8000, measure=len, paging_offset=None)
        data = trimmed.payload
        self.assertLessEqual(trimmed.size, 8000)
        kept = [
            len(data["buckets"]["ready"]),
            len(data["buckets"]["suppressed"]),
            len(data["symbols"]),
        ]
        self.assertTrue(all(count >= 1 for count in kept), kept)
        self.assertLess(sum(kept), 100)
        self.assertEqual(data["buckets"]["ready"], answer["buckets"]["ready"][: kept[0]])
        self.assertTrue(data["truncated"])
        self.assertIn(f"{kept[0]} of 40 ready", trimmed.note)
        self.assertNotIn("next_offset", data)
        self.assertTrue(data["buckets"]["ready_truncated"])

    def test_a_cut_page_no_longer_claims_every_relationship_was_returned(self):
        coverage = {
            "missing_edge_reason": "complete",
            "truncation_state": "none",
            "truncated": False,
            "evidence_explanation": "every matching relationship in scope was returned",
        }
        summary = {"next_offset": None, "relationship_count": 40, "truncated": False}
        value = {"relationships": rows(40), "summary": summary, "coverage": coverage}
        trimmed = trim(value, 8_000, in_envelope=False, paging_offset=0)
        data = trimmed.payload
        kept = len(data["relationships"])
        self.assertLess(kept, 40)
        self.assertEqual(data["coverage"]["missing_edge_reason"], "truncated_by_limit")
        self.assertEqual(data["coverage"]["truncation_state"], "count")
        self.assertIs(data["coverage"]["truncated"], True)
        self.assertEqual(
            data["coverage"]["evidence_explanation"],
            f"the first {kept} rows fit the answer page; read the rest from next_offset {kept}",
        )
        self.assertEqual(coverage["missing_edge_reason"], "complete")  # the input is kept

    def test_a_page_cut_before_keeps_its_own_reason(self):
        coverage = {"missing_edge_reason": "truncated_by_limit", "truncation_state": "count"}
        summary = {"next_offset": 40, "relationship_count": 40, "truncated": True}
        value = {"relationships": rows(40), "summary": summary, "coverage": coverage}
        data = trim(value, 8_000, in_envelope=False, paging_offset=0).payload
        self.assertEqual(data["coverage"], coverage)
