"""Tool definitions rendered as MCP Tool objects for each protocol revision."""

from jsonschema.validators import validator_for
from mcp_types import Tool
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.catalog import read_only_tools
from eshu_mcp.catalog.contract import load_contract
from eshu_mcp.catalog.tools import (
    ENVELOPE_OUTPUT_SCHEMA,
    PROTOCOL_REVISIONS,
    ToolDefinition,
    route_templates,
    tool_title,
)

READ_ONLY_HINTS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}
PLAIN_STATUS_TOOLS = {
    "list_collectors",
    "list_ingesters",
    "get_ingester_status",
    "get_index_status",
    "get_hosted_readiness",
}


def _tool(name: str) -> ToolDefinition:
    return next(tool for tool in read_only_tools() if tool.name == name)


class DefinitionTests(SynchronousTestCase):
    def test_read_only_tools_lists_all_162_in_contract_order(self):
        tools = read_only_tools()
        self.assertEqual(len(tools), 162)
        self.assertEqual([tool.name for tool in tools], [r["name"] for r in load_contract()])

    def test_definitions_carry_the_contract_record_fields(self):
        for tool, record in zip(read_only_tools(), load_contract(), strict=True):
            self.assertEqual(tool.input_schema, record["input_schema"])
            self.assertEqual(tool.route, record["route"])
            self.assertEqual(
                (tool.group, tool.domain, tool.data_source, tool.toolset),
                (record["group"], record["domain"], record["data_source"], record["toolset"]),
            )

    def test_only_the_plain_json_status_tools_are_not_envelope_tools(self):
        plain = {tool.name for tool in read_only_tools() if not tool.envelope}
        self.assertEqual(plain, PLAIN_STATUS_TOOLS)

    def test_analyze_code_relationships_reaches_every_variant_route(self):
        routes = _tool("analyze_code_relationships").routes
        self.assertEqual(
            set(routes),
            {
                ("POST", "/api/v0/code/relationships/story"),
                ("POST", "/api/v0/code/relationships"),
                ("POST", "/api/v0/code/dead-code"),
                ("POST", "/api/v0/code/call-chain"),
            },
        )
        self.assertEqual(len(routes), len(set(routes)))

    def test_fallback_routes_for_missing_arguments_are_not_listed(self):
        route = _tool("get_repository_stats").route
        self.assertEqual(route_templates(route), (("GET", "/api/v0/repositories/{repo_id}/stats"),))

    def test_definitions_are_hashable_values(self):
        tools = read_only_tools()
        self.assertEqual(len(set(tools)), 162)
        self.assertEqual(ToolDefinition.from_record(load_contract()[0]), tools[0])

    def test_titles_read_as_words_with_acronyms_kept(self):
        self.assertEqual(tool_title("find_code"), "Find code")
        self.assertEqual(tool_title("list_ci_cd_run_correlations"), "List CI/CD run correlations")
        self.assertEqual(tool_title("get_iac_management_status"), "Get IaC management status")
        self.assertEqual(
            tool_title("list_aws_runtime_drift_findings"), "List AWS runtime drift findings"
        )
        self.assertEqual(tool_title("ask"), "Ask")


class RevisionRenderingTests(SynchronousTestCase):
    def test_2024_11_05_tools_have_only_name_description_and_input_schema(self):
        for tool in read_only_tools():
            rendered = tool.to_mcp("2024-11-05")
            self.assertEqual(list(rendered), ["name", "description", "inputSchema"])

    def test_every_advertised_input_schema_equals_the_contract_schema(self):
        for revision in PROTOCOL_REVISIONS:
            for tool, record in zip(read_only_tools(), load_contract(), strict=True):
                self.assertEqual(tool.to_mcp(revision)["inputSchema"], record["input_schema"])

    def test_2025_03_26_annotations_carry_the_title_and_read_only_hints(self):
        rendered = _tool("find_code").to_mcp("2025-03-26")
        self.assertNotIn("title", rendered)
        self.assertNotIn("outputSchema", rendered)
        self.assertEqual(
            rendered["annotations"],
            {"title": "Find code", **READ_ONLY_HINTS, "openWorldHint": False},
        )

    def test_2025_06_18_and_later_put_the_title_on_the_tool(self):
        for revision in ("2025-06-18", "2025-11-25", "2026-07-28"):
            rendered = _tool("list_kubernetes_correlations").to_mcp(revision)
            self.assertEqual(rendered["title"], "List kubernetes correlations")
            self.assertEqual(rendered["annotations"], {**READ_ONLY_HINTS, "openWorldHint": True})

    def test_open_world_hint_is_false_only_for_static_tools(self):
        for tool in read_only_tools():
            hint = tool.to_mcp("2025-11-25")["annotations"]["openWorldHint"]
            self.assertEqual(hint, tool.data_source != "static", tool.name)

    def test_output_schema_only_on_envelope_tools_from_2025_06_18(self):
        for tool in read_only_tools():
            for revision in PROTOCOL_REVISIONS:
                rendered = tool.to_mcp(revision)
                expected = tool.envelope and revision >= "2025-06-18"
                self.assertEqual("outputSchema" in rendered, expected, (tool.name, revision))
        self.assertNotIn("outputSchema", _tool("get_index_status").to_mcp("2025-11-25"))

    def test_rendered_tools_parse_as_sdk_tool_objects(self):
        for revision in PROTOCOL_REVISIONS:
            for tool in read_only_tools():
                parsed = Tool.model_validate(tool.to_mcp(revision))
                self.assertEqual(parsed.name, tool.name)

    def test_rendering_is_cached_per_revision(self):
        tool = _tool("find_symbol")
        self.assertIs(tool.to_mcp("2025-11-25"), tool.to_mcp("2025-11-25"))
        self.assertIsNot(tool.to_mcp("2025-11-25"), tool.to_mcp("2024-11-05"))

    def test_unknown_revision_is_refused_naming_the_known_ones(self):
        with self.assertRaises(ValueError) as caught:
            _tool("find_code").to_mcp("2023-01-01")
        self.assertIn("2025-11-25", str(caught.exception))


class OutputSchemaTests(SynchronousTestCase):
    def setUp(self):
        validator_class = validator_for(ENVELOPE_OUTPUT_SCHEMA)
        validator_class.check_schema(ENVELOPE_OUTPUT_SCHEMA)
        self.validator = validator_class(ENVELOPE_OUTPUT_SCHEMA)

    def test_real_envelope_shapes_validate(self):
        envelopes = [
            {
                "data": {"results": [{"entity_id": "e1"}], "count": 1, "truncated": False},
                "truth": {"level": "derived", "freshness": {"state": "fresh"}},
                "error": None,
            },
            {"data": [], "truth": None, "error": None},
            {"data": "plain text", "truth": None, "error": None},
            {
                "data": None,
                "truth": None,
                "error": {
                    "code": "mcp_response_over_budget",
                    "message": 'MCP tool "big" response exceeds the budget',
                    "details": {"budget_bytes": 262144},
                },
            },
        ]
        for envelope in envelopes:
            self.assertEqual(list(self.validator.iter_errors(envelope)), [], envelope)

    def test_partial_or_mistyped_envelopes_do_not_validate(self):
        for bad in (
            {"data": {}, "truth": None},
            {"data": {}, "truth": "derived", "error": None},
            {"data": {}, "truth": None, "error": "boom"},
            [1, 2],
        ):
            self.assertTrue(list(self.validator.iter_errors(bad)), bad)
