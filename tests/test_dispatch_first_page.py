"""
The compact first page: a call that names no ``limit`` gets ``answer_rows`` rows and the
offset of the rest, on a real index, and paging on reaches every row the full page has.
"""

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.first_page import DEFAULT_ANSWER_ROWS, first_page_arguments
from eshu_mcp.dispatch.inprocess import InProcessDispatcher
from eshu_mcp.encoding import dumps
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from tests.test_api_code_indexed import indexed_repository
from tests.test_api_resource import InlinePool, ThreadReactor

CALLERS = 14
SOURCES = {
    "app/core.py": "def settle(amount):\n    return amount * 2\n",
    "app/callers.py": "from app.core import settle\n\n\n"
    + "".join(
        f"def caller_{n:02d}(value):\n    return settle(value + {n})\n\n\n" for n in range(CALLERS)
    ),
}


class FirstPageTests(SynchronousTestCase):
    def setUp(self):
        db, self.repo = indexed_repository(self, SOURCES, name="ledger")
        self.resource = LocalQueryResource(db, reactor=ThreadReactor(), threadpool=InlinePool())

    def call(self, tool: str, args: dict, **settings) -> dict:
        dispatcher = InProcessDispatcher(self.resource, Clock(), **settings)
        result = self.successResultOf(dispatcher.call(tool, args))
        self.assertFalse(result.get("isError"), result["content"][0].get("text"))
        return result

    def callers(self, **args) -> tuple[str, list[str], dict]:
        """The text, the callers' names in order, and the whole result."""
        ask = {"query_type": "find_callers", "target": "settle", "repo_id": self.repo, **args}
        knobs = ("answer_detail", "answer_rows", "answer_page")
        settings = {key: args.pop(key) for key in knobs if key in args}
        ask = {key: value for key, value in ask.items() if key not in settings}
        result = self.call("analyze_code_relationships", ask, **settings)
        rows = result["structuredContent"]["data"]["relationships"]
        return result["content"][0]["text"], [row["source_name"] for row in rows], result

    def test_a_call_without_limit_gets_a_first_page_and_the_offset_of_the_rest(self):
        text, first, result = self.callers()
        self.assertEqual(len(first), DEFAULT_ANSWER_ROWS)
        self.assertIn(f"more: call again with offset={DEFAULT_ANSWER_ROWS}", text)
        self.assertIn(f"a compact first page of {DEFAULT_ANSWER_ROWS}", text)
        self.assertIn("pass limit, up to 200, for longer pages", text)
        data = result["structuredContent"]["data"]
        self.assertEqual(data["summary"]["next_offset"], DEFAULT_ANSWER_ROWS)
        # The top caller is named in the text, where it was called.
        self.assertIn(f"{first[0]} -> settle", text)

    def test_a_first_page_the_answer_page_cuts_says_where_the_next_page_starts(self):
        text, first, result = self.callers(answer_page=1600)
        data = result["structuredContent"]["data"]
        kept = len(first)
        self.assertLess(kept, DEFAULT_ANSWER_ROWS)
        self.assertEqual(data["next_offset"], kept)
        self.assertIn(f"call again with offset={kept}", text)
        self.assertIn(f"the next page starts at offset={kept}", text)
        self.assertNotIn("pass limit", text)
        _, rest, _ = self.callers(offset=kept, limit=CALLERS)
        _, whole, _ = self.callers(answer_detail="full")
        self.assertEqual(first + rest, whole)

    def test_paging_on_reaches_every_row_of_the_tools_default_page(self):
        _, first, _ = self.callers()
        text, rest, _ = self.callers(offset=DEFAULT_ANSWER_ROWS)
        _, whole, _ = self.callers(answer_detail="full")
        self.assertEqual(len(whole), CALLERS)
        self.assertEqual(first + rest, whole)
        self.assertNotIn("more: call again", text)
        self.assertNotIn("compact first page", text)

    def test_a_call_that_names_its_limit_gets_exactly_that(self):
        text, rows, _ = self.callers(limit=25)
        self.assertEqual(len(rows), CALLERS)
        self.assertNotIn("compact first page", text)
        _, rows, _ = self.callers(limit=3)
        self.assertEqual(len(rows), 3)

    def test_answer_rows_zero_keeps_the_tools_default_page(self):
        text, rows, _ = self.callers(answer_rows=0)
        self.assertEqual(len(rows), CALLERS)
        self.assertNotIn("compact first page", text)

    def test_the_first_page_is_smaller_than_the_default_page(self):
        _, _, first = self.callers()
        _, _, whole = self.callers(answer_rows=0)
        self.assertLess(len(dumps(first)), len(dumps(whole)))

    def test_full_detail_asks_for_eshus_default_page(self):
        _, rows, result = self.callers(answer_detail="full")
        self.assertEqual(len(rows), CALLERS)
        self.assertEqual(result["structuredContent"]["data"]["scope"]["limit"], 25)
        self.assertNotIn("compact first page", result["content"][0]["text"])

    def test_dead_code_pages_the_same_way(self):
        args = {"repo_id": self.repo}
        first = self.call("find_dead_code", args)["structuredContent"]["data"]
        rest = self.call("find_dead_code", {**args, "offset": first["next_offset"]})
        whole = self.call("find_dead_code", args, answer_rows=0)["structuredContent"]["data"]
        names = [row["name"] for row in first["results"]]
        names += [row["name"] for row in rest["structuredContent"]["data"]["results"]]
        self.assertEqual(len(first["results"]), DEFAULT_ANSWER_ROWS)
        self.assertEqual(names, [row["name"] for row in whole["results"]])


class FirstPageArgumentTests(SynchronousTestCase):
    def test_only_tools_paging_by_offset_with_a_longer_default_are_asked_for_less(self):
        self.assertEqual(
            first_page_arguments("find_symbol", {"symbol": "x"}, 10),
            ({"symbol": "x", "limit": 10}, 10),
        )
        # search_file_content's default page is 10 already; find_code has no offset; a
        # change's impact weighs all of its rows.
        unchanged = (
            ("search_file_content", {"pattern": "x"}),
            ("find_code", {"query": "x"}),
            ("analyze_pre_change_impact", {"changed_paths": ["a.py"]}),
        )
        for tool, args in unchanged:
            self.assertEqual(first_page_arguments(tool, args, 10), (args, None))

    def test_a_given_limit_and_a_zero_row_setting_change_nothing(self):
        args = {"symbol": "x", "limit": 50}
        self.assertEqual(first_page_arguments("find_symbol", args, 10), (args, None))
        self.assertEqual(first_page_arguments("find_symbol", {"symbol": "x"}, 0)[1], None)
