"""
Tests for the relationship story's pages: exact paging, the response budget, entity ids
and handles as targets, and names shared by several definitions answered by definition.
"""

from __future__ import annotations

from collections import Counter

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries.result import summarize_envelope
from eshu_mcp.query.local.api.graph.story.page import RESPONSE_BUDGET_BYTES, wire_bytes
from tests.test_api_code_common import CodeIndex, call, scratch_dir

STORY = "/code/relationships/story"
CALLER_FUNCTIONS = 60
SERVICE = "class Transport:\n    def write(self, data):\n        pass\n" * 3


def busy_index(case: SynchronousTestCase) -> tuple[CodeIndex, str]:
    """
    ``Transport.write`` (three definitions of ``write``) called from 60 functions.

    The most-called ``write`` has 150 incoming CALLS edges (one to three per caller, so
    centrality varies; every fifth caller is a weak ``repo_unique_name`` pick), the second
    8, the third none; ``write`` itself calls ``flush``.
    """
    index = CodeIndex(scratch_dir(case))
    repo = index.repository("net")
    service = index.file(repo, "net/transport.py", SERVICE)
    writes = [
        index.entity(service, "Function", "write", 2 + 3 * n, 3 + 3 * n, class_context="T")
        for n in range(3)
    ]
    flush = index.entity(service, "Function", "flush", 8, 9)
    index.edge("CALLS", writes[0], flush, line=3)
    body = "\n".join(f"def caller_{n}():\n    pass\n" for n in range(CALLER_FUNCTIONS))
    callers_file = index.file(repo, "net/callers.py", body)
    callers = [
        index.entity(callers_file, "Function", f"caller_{n}", 1 + 3 * n, 2 + 3 * n)
        for n in range(CALLER_FUNCTIONS)
    ]
    for n, caller in enumerate(callers):
        weak = n % 5 == 0
        for site in range(1 + n % 3 + (n < 30)):
            index.edge(
                "CALLS",
                caller,
                writes[0],
                line=2 + 3 * n + site * 1000,
                method="repo_unique_name" if weak else "type_inferred",
                confidence=0.5 if weak else 0.8,
            )
    for caller in callers[:8]:
        index.edge("CALLS", caller, writes[1], line=5000, method="ambiguous", confidence=0.3)
    index.writer.commit()
    index.entities["write"] = writes[0]
    index.entities["second_write"] = writes[1]
    return index, repo


class StoryPagingTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = busy_index(self)
        self.conn = self.index.reader()
        self.write = self.index.entities["write"]

    def story(self, **body):
        return call(self.conn, STORY, {"repo_id": "net", **body}).data

    def stored(self, floor: float = 0.0) -> Counter:
        rows = self.conn.execute(
            "SELECT source_id, line_number FROM edges WHERE target_id = ? AND type = 'CALLS'"
            " AND confidence >= ?",
            (self.write, floor),
        ).fetchall()
        return Counter((source, line) for source, line in rows)

    def pages(self, size: int, **body) -> tuple[list[dict], int]:
        rows, offset, reads = [], 0, 0
        while offset is not None and reads < 100:
            data = self.story(limit=size, offset=offset, **body)
            rows += data["relationships"]
            offset = data["summary"]["next_offset"]
            reads += 1
        return rows, reads

    def test_the_busy_definition_has_more_edges_than_one_page(self):
        self.assertEqual(sum(self.stored().values()), 150)

    def test_paging_by_seven_serves_every_edge_once(self):
        rows, reads = self.pages(7, entity_id=self.write, direction="incoming")
        served = Counter((r["source_id"], r["line_number"]) for r in rows)
        self.assertEqual(served, self.stored())
        self.assertEqual(reads, 22)

    def test_pages_of_any_size_give_the_same_sequence(self):
        small, _ = self.pages(7, entity_id=self.write, direction="incoming")
        large, reads = self.pages(200, entity_id=self.write, direction="incoming")
        key = [(r["source_id"], r["line_number"]) for r in small]
        self.assertEqual(key, [(r["source_id"], r["line_number"]) for r in large])
        self.assertEqual(reads, 2)  # the budget clamps the first page of 200

    def test_rows_are_ranked_by_how_often_their_caller_calls(self):
        rows = self.story(entity_id=self.write, direction="incoming", limit=200)["relationships"]
        centrality = [row["centrality"] for row in rows]
        self.assertEqual(centrality, sorted(centrality, reverse=True))
        self.assertEqual(centrality[0], 4)

    def test_paging_with_a_confidence_floor_serves_exactly_the_strong_edges(self):
        rows, _ = self.pages(9, entity_id=self.write, direction="incoming", min_confidence=0.7)
        served = Counter((r["source_id"], r["line_number"]) for r in rows)
        self.assertEqual(served, self.stored(0.7))
        self.assertTrue(all(r["confidence"] == 0.8 for r in rows))

    def test_paging_both_directions_serves_incoming_then_outgoing(self):
        rows, _ = self.pages(11, entity_id=self.write)
        self.assertEqual(len(rows), 151)
        self.assertEqual(rows[-1]["direction"], "outgoing")
        self.assertEqual(rows[-1]["target_name"], "flush")
        self.assertEqual(Counter(r["direction"] for r in rows)["incoming"], 150)

    def test_a_page_reports_what_follows_it(self):
        data = self.story(entity_id=self.write, limit=25, offset=125)
        self.assertEqual(data["summary"]["next_offset"], 150)
        self.assertEqual(
            data["coverage"]["truncated_by_direction"], {"incoming": False, "outgoing": True}
        )
        self.assertEqual(
            data["coverage"]["available_by_direction"], {"incoming": 150, "outgoing": 1}
        )
        self.assertEqual(data["coverage"]["missing_edge_reason"], "truncated_by_limit")

    def test_rows_show_how_each_edge_was_resolved(self):
        rows = self.story(entity_id=self.write, direction="incoming", limit=200)["relationships"]
        methods = Counter((r["resolution_method"], r["confidence"]) for r in rows)
        self.assertEqual(set(methods), {("type_inferred", 0.8), ("repo_unique_name", 0.5)})
        self.assertEqual(rows[0]["provenance"]["method"], rows[0]["resolution_method"])


class StoryResponseBudgetTests(SynchronousTestCase):
    def setUp(self):
        self.index, _ = busy_index(self)
        self.conn = self.index.reader()
        self.write = self.index.entities["write"]
        # Long caller names make each row cost over 2 KiB on the wire.
        self.conn.close()
        self.index.writer.execute(
            "UPDATE entity_rows SET entity_name = entity_name || ?", ("x" * 600,)
        )
        self.index.writer.commit()
        self.conn = self.index.reader()

    def story(self, **body):
        return call(self.conn, STORY, {"repo_id": "net", **body}).data

    def test_the_largest_limit_is_clamped_to_the_budget_with_the_next_offset(self):
        data = self.story(entity_id=self.write, direction="incoming", limit=200)
        served = len(data["relationships"])
        self.assertLess(served, 150)
        self.assertLessEqual(wire_bytes(data), RESPONSE_BUDGET_BYTES)
        self.assertTrue(data["summary"]["truncated"])
        self.assertEqual(data["summary"]["next_offset"], served)
        self.assertEqual(data["coverage"]["response_budget_bytes"], RESPONSE_BUDGET_BYTES)
        self.assertEqual(data["coverage"]["truncation_state"], "count")

    def test_clamped_pages_still_serve_every_edge_once(self):
        rows, offset = [], 0
        while offset is not None:
            data = self.story(entity_id=self.write, direction="incoming", limit=200, offset=offset)
            self.assertLessEqual(wire_bytes(data), RESPONSE_BUDGET_BYTES)
            rows += data["relationships"]
            offset = data["summary"]["next_offset"]
        self.assertEqual(len({(r["source_id"], r["line_number"]) for r in rows}), 150)
        self.assertEqual(len(rows), 150)


class StoryTargetTests(SynchronousTestCase):
    def setUp(self):
        self.index, _ = busy_index(self)
        self.conn = self.index.reader()

    def story(self, **body):
        return call(self.conn, STORY, {"repo_id": "net", **body}).data

    def test_a_target_holding_an_entity_id_answers_that_entity(self):
        second = self.index.entities["second_write"]
        data = self.story(target=second, direction="incoming")
        self.assertEqual(data["target_resolution"]["status"], "resolved")
        self.assertEqual(data["target_resolution"]["entity_id"], second)
        self.assertEqual(len(data["relationships"]), 8)

    def test_a_target_holding_a_handle_answers_that_entity(self):
        second = self.index.entities["second_write"]
        data = self.story(target="entity:" + second, direction="incoming")
        self.assertEqual(data["target_resolution"]["entity_id"], second)

    def test_an_unknown_entity_id_is_unresolved(self):
        data = self.story(target="content-entity:e_000000000000")
        self.assertEqual(data["target_resolution"]["status"], "unresolved")


class StoryGroupedByDefinitionTests(SynchronousTestCase):
    def setUp(self):
        self.index, _ = busy_index(self)
        self.conn = self.index.reader()

    def story(self, **body):
        return call(self.conn, STORY, {"repo_id": "net", **body}).data

    def test_callers_of_a_shared_name_come_grouped_largest_first(self):
        data = self.story(target="write", direction="incoming", limit=20)
        resolution = data["target_resolution"]
        self.assertEqual(resolution["status"], "ambiguous")
        self.assertEqual(resolution["candidate_count"], 3)
        self.assertIn("entity_id", resolution["how_to_narrow"])
        groups = data["definition_groups"]
        self.assertEqual([g["edge_count"] for g in groups], [150, 8, 0])
        self.assertEqual(groups[0]["entity_id"], self.index.entities["write"])
        self.assertEqual([g["returned"] for g in groups], [20, 0, 0])
        self.assertEqual([g.get("offset") for g in groups], [0, 150, None])
        rows = data["relationships"]
        self.assertEqual(len(rows), 20)
        self.assertEqual({r["definition_entity_id"] for r in rows}, {groups[0]["entity_id"]})
        self.assertTrue(all(r["target_id"] == r["definition_entity_id"] for r in rows))
        self.assertTrue(data["summary"]["truncated"])
        self.assertEqual(data["summary"]["next_offset"], 20)
        self.assertEqual(data["summary"]["definition_count"], 3)
        self.assertEqual(data["summary"]["definitions_with_relationships"], 2)
        # every definition's rows were read: more rows are a page away, none are missing
        self.assertEqual(data["coverage"]["missing_edge_reason"], "truncated_by_limit")

    def test_paging_a_shared_name_serves_every_row_once_in_the_unpaged_order(self):
        whole = self.story(target="write", direction="incoming", limit=200)
        # The response budget cuts the largest page short; its rest is read from next_offset.
        rest = self.story(
            target="write", direction="incoming", limit=200, offset=whole["summary"]["next_offset"]
        )
        self.assertIsNone(rest["summary"]["next_offset"])
        whole["relationships"] += rest["relationships"]
        served, offset, reads = [], 0, 0
        while offset is not None and reads < 100:
            page = self.story(target="write", direction="incoming", limit=7, offset=offset)
            self.assertEqual(
                [g["entity_id"] for g in page["definition_groups"]],
                [g["entity_id"] for g in whole["definition_groups"]],
            )
            served += page["relationships"]
            offset = page["summary"]["next_offset"]
            reads += 1
        self.assertEqual(reads, 23)

        def key(row):
            return (row["source_id"], row["target_id"], row["line_number"])

        self.assertEqual([key(r) for r in served], [key(r) for r in whole["relationships"]])
        stored = self.conn.execute(
            "SELECT source_id, target_id, line_number FROM edges WHERE type = 'CALLS'"
            " AND target_id IN (?, ?)",
            (self.index.entities["write"], self.index.entities["second_write"]),
        ).fetchall()
        self.assertEqual(sorted(map(key, served)), sorted(tuple(row) for row in stored))

    def test_a_page_across_two_groups_takes_the_end_of_one_and_the_start_of_the_next(self):
        data = self.story(target="write", direction="incoming", limit=10, offset=145)
        groups = data["definition_groups"]
        self.assertEqual([g["returned"] for g in groups], [5, 5, 0])
        self.assertEqual(
            [r["definition_entity_id"] for r in data["relationships"]],
            [groups[0]["entity_id"]] * 5 + [groups[1]["entity_id"]] * 5,
        )
        self.assertEqual(data["summary"]["next_offset"], 155)

    def test_grouped_rows_show_ambiguous_resolutions(self):
        data = self.story(target="write", direction="incoming", limit=20, offset=150)
        weak = [
            r
            for r in data["relationships"]
            if r["target_id"] == self.index.entities["second_write"]
        ]
        self.assertEqual(len(weak), 8)
        self.assertIsNone(data["summary"]["next_offset"])
        self.assertEqual(
            {(r["resolution_method"], r["confidence"]) for r in weak}, {("ambiguous", 0.3)}
        )
        self.assertEqual(weak[0]["provenance"]["confidence_tier"], "low")
        self.assertEqual(weak[0]["provenance"]["truth_state"], "heuristic")

    def test_a_group_id_reads_that_definition_alone(self):
        data = self.story(target="write", direction="incoming", limit=20)
        second = data["definition_groups"][1]["entity_handle"]
        alone = self.story(target=second, direction="incoming", limit=20)
        self.assertEqual(alone["target_resolution"]["status"], "resolved")
        self.assertEqual(len(alone["relationships"]), 8)

    def test_the_confidence_floor_applies_to_groups(self):
        data = self.story(target="write", direction="incoming", min_confidence=0.7)
        self.assertEqual([g["edge_count"] for g in data["definition_groups"]], [120, 0, 0])

    def test_transitive_callers_of_a_shared_name_come_grouped_too(self):
        data = self.story(target="write", direction="incoming", include_transitive=True, limit=20)
        groups = data["definition_groups"]
        self.assertEqual([g["returned"] for g in groups], [12, 8, 0])
        self.assertEqual([g["rows_available"] for g in groups], [60, 8, 0])
        self.assertTrue(all(row["depth"] == 1 for row in data["relationships"]))
        self.assertEqual(data["coverage"]["query_shape"], "entity_anchor_bounded_bfs")


class TestCallersLastTests(SynchronousTestCase):
    def test_callers_in_shipped_code_come_before_busier_callers_in_tests(self):
        index = CodeIndex(scratch_dir(self))
        repo = index.repository("lib")
        core = index.file(repo, "lib/core.py", "def compose():\n    pass\n")
        compose = index.entity(core, "Function", "compose", 1, 2)
        app = index.file(repo, "lib/app.py", "def run():\n    pass\n")
        run = index.entity(app, "Function", "run", 1, 2)
        tests = index.file(repo, "tests/test_core.py", "def test_it():\n    pass\n", is_test=1)
        test_it = index.entity(tests, "Function", "test_it", 1, 2)
        for line in (2, 3, 4):
            index.edge("CALLS", test_it, compose, line=line)
        index.edge("CALLS", run, compose, line=2)
        index.writer.execute(  # the indexer records the file holding each call
            "UPDATE edge_rows SET evidence_file_id ="
            " (SELECT file_id FROM entity_rows WHERE rid = edge_rows.src)"
        )
        index.writer.commit()
        data = call(
            index.reader(), STORY, {"entity_id": compose, "direction": "incoming", "limit": 10}
        ).data
        self.assertEqual(
            [(row["source_name"], row["centrality"]) for row in data["relationships"]],
            [("run", 1), ("test_it", 3), ("test_it", 3), ("test_it", 3)],
        )
        self.assertEqual(data["coverage"]["incoming_from_tests"], 3)
        text = summarize_envelope("analyze_code_relationships", {"data": data})
        self.assertIn("4 callers of compose (3 of 4 from tests, listed last)", text)

    def test_sure_callers_come_before_ambiguous_ones_on_every_page(self):
        index = CodeIndex(scratch_dir(self))
        repo = index.repository("lib")
        core = index.file(repo, "lib/core.py", "def compose():\n    pass\n")
        compose = index.entity(core, "Function", "compose", 1, 2)
        examples = index.file(repo, "examples/demo.py", "def demo():\n    pass\n")
        demo = index.entity(examples, "Function", "demo", 1, 2)
        tests = index.file(repo, "tests/test_core.py", "def test_it():\n    pass\n", is_test=1)
        test_it = index.entity(tests, "Function", "test_it", 1, 2)
        for line in range(2, 9):  # the busiest caller, but each call may reach another compose
            index.edge("CALLS", demo, compose, line=line, method="ambiguous", confidence=0.2)
        index.edge("CALLS", test_it, compose, line=2)
        index.writer.execute(
            "UPDATE edge_rows SET evidence_file_id ="
            " (SELECT file_id FROM entity_rows WHERE rid = edge_rows.src)"
        )
        index.writer.commit()
        conn = index.reader()
        first = call(conn, STORY, {"entity_id": compose, "direction": "incoming", "limit": 3})
        rows = first.data["relationships"]
        self.assertEqual(
            [(r["source_name"], r["resolution_method"]) for r in rows],
            [("test_it", "same_file"), ("demo", "ambiguous"), ("demo", "ambiguous")],
        )


class ValueUseTests(SynchronousTestCase):
    def test_a_function_never_called_but_passed_as_a_value_says_so(self):
        index = CodeIndex(scratch_dir(self))
        repo = index.repository("net")
        source = index.file(repo, "net/client.py", "def _cb(r):\n    pass\n\n\ndef go(d):\n")
        callback = index.entity(source, "Function", "_cb", 1, 2)
        user = index.entity(source, "Function", "go", 5, 6)
        index.edge("REFERENCES", user, callback, line=6)
        index.writer.commit()
        conn = index.reader()
        self.addCleanup(conn.close)
        data = call(
            conn,
            STORY,
            {"entity_id": callback, "direction": "incoming", "relationship_type": "CALLS"},
        ).data
        self.assertEqual(data["relationships"], [])
        uses = data["coverage"]["value_uses"]
        self.assertEqual(uses["references"], 1)
        self.assertEqual(data["coverage"]["evidence_explanation"], uses["explanation"])
        self.assertIn("used as a value in 1 place", uses["explanation"])
