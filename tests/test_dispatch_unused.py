"""
An argument the schema advertises is never refused: it narrows the answer where the
embedded API can use it, and is otherwise named in the answer as not used by the route.
"""

from __future__ import annotations

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.catalog.contract import load_contract
from eshu_mcp.dispatch import run_read_only_tool
from eshu_mcp.dispatch.unused import unused_arguments
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from tests.test_api_code_indexed import indexed_repository
from tests.test_api_resource import InlinePool, ThreadReactor

NOTE = "accepted but not used by this route"


def test_a_default_value_or_an_honoured_argument_is_not_reported():
    assert unused_arguments("find_dead_code", {"scope": "auto"}) == ()
    assert unused_arguments("find_dead_code", {"scope": "repo"}) == ("scope",)
    assert unused_arguments("calculate_cyclomatic_complexity", {"path": "a.py"}) == ()
    assert unused_arguments("analyze_code_relationships", {"query_type": "find_callers"}) == ()


def test_a_route_variant_reports_what_it_ignores():
    args = {"query_type": "call_chain", "target": "a->b", "limit": 3, "min_confidence": 0.5}
    assert unused_arguments("analyze_code_relationships", args) == ("limit", "min_confidence")
    # start_entity_id anchors a one-target query (dispatch reads it)
    args = {"query_type": "find_callers", "start_entity_id": "content-entity:e_1"}
    assert unused_arguments("analyze_code_relationships", args) == ()


class AdvertisedArgumentTests(SynchronousTestCase):
    def setUp(self):
        db, self.repo = indexed_repository(self)
        self.resource = LocalQueryResource(db, reactor=ThreadReactor(), threadpool=InlinePool())

    def ask(self, tool: str, args: dict) -> dict:
        return self.successResultOf(run_read_only_tool(self.resource, tool, args, clock=Clock()))

    def test_path_picks_the_function_in_that_file(self):
        args = {"function_name": "fmt", "path": "pkg/helpers.py", "repo_id": self.repo}
        result = self.ask("calculate_cyclomatic_complexity", args)
        self.assertFalse(result.get("isError"))
        self.assertEqual(result["structuredContent"]["data"]["file_path"], "pkg/helpers.py")
        self.assertNotIn(NOTE, result["content"][0]["text"])
        args["path"] = "pkg/api.py"
        result = self.ask("calculate_cyclomatic_complexity", args)
        self.assertTrue(result["isError"])
        self.assertIn('no function named "fmt" in "pkg/api.py"', result["content"][0]["text"])

    def test_path_alone_narrows_the_most_complex_functions_to_a_folder(self):
        args = {"path": "pkg/service.py", "repo_id": self.repo}
        data = self.ask("calculate_cyclomatic_complexity", args)["structuredContent"]["data"]
        self.assertEqual({row["file_path"] for row in data["results"]}, {"pkg/service.py"})

    def test_every_ignored_argument_is_answered_and_named(self):
        for tool, args, named in (
            ("find_dead_code", {"scope": "repo", "repo_id": self.repo}, "scope"),
            ("find_code", {"query": "charge", "edit_distance": 1}, "edit_distance"),
            (
                "calculate_cyclomatic_complexity",
                {"function_name": "fmt", "scope": "repo"},
                "scope",
            ),
        ):
            result = self.ask(tool, args)
            self.assertFalse(result.get("isError"), result["content"][0]["text"])
            self.assertIn(f"({named} was {NOTE}", result["content"][0]["text"])

    def test_no_tool_refuses_an_argument_it_advertises_as_having_no_effect(self):
        for record in load_contract():
            if record["route"].get("ignored_args"):
                for name in record["route"]["ignored_args"]:
                    result = self.ask(
                        record["name"], _required(record) | {name: _value(record, name)}
                    )
                    self.assertNotIn("has no effect", result["content"][0]["text"])


def _required(record: dict) -> dict:
    props = record["input_schema"].get("properties", {})
    return {
        name: _value(record, name)
        for name in record["input_schema"].get("required", ())
        if name in props
    }


def _value(record: dict, name: str):
    schema = record["input_schema"]["properties"][name]
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][-1]
    return {"integer": 3, "number": 1, "boolean": True, "array": ["x"]}.get(kind, "charge")
