"""
Hand-written tests for the routing rules the contract README describes in prose.

The generated contract test covers every tool's plain field mapping; these pin the
special cases one behaviour at a time.
"""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.routes import Route, RouteError, resolve_route

CALL_CHAIN_FORMAT = "call_chain target must use start->end format"
CALL_CHAIN_IDS = (
    "call_chain target must use start->end format or provide start_entity_id and end_entity_id"
)


class RouteErrorMixin:
    def assertRouteError(self, tool: str, args: dict, text: str) -> None:
        error = self.assertRaises(RouteError, resolve_route, tool, args)
        self.assertEqual(str(error), text)


class UnknownToolTests(RouteErrorMixin, SynchronousTestCase):
    def test_unknown_tool_names_the_tool(self) -> None:
        self.assertRouteError("no_such_tool", {}, "unknown tool: no_such_tool")

    def test_missing_arguments_are_an_empty_object(self) -> None:
        self.assertEqual(resolve_route("ask", None), resolve_route("ask", {}))


class RepositoryRouteTests(RouteErrorMixin, SynchronousTestCase):
    def test_get_repository_stats_without_repo_id_lists_repositories(self) -> None:
        for args in ({}, {"repo_id": ""}, {"repo_id": 42}):
            self.assertEqual(
                resolve_route("get_repository_stats", args),
                Route("GET", "/api/v0/repositories", {}, None),
            )

    def test_get_repository_stats_escapes_the_repository_segment(self) -> None:
        route = resolve_route("get_repository_stats", {"repo_id": "org/repo name"})
        self.assertEqual(route.path, "/api/v0/repositories/org%2Frepo%20name/stats")

    def test_get_repo_summary_falls_back_to_repo_name(self) -> None:
        route = resolve_route("get_repo_summary", {"repo_name": "a/b"})
        self.assertEqual(route.path, "/api/v0/repositories/a%2Fb/stats")
        route = resolve_route("get_repo_summary", {"repo_name": "a", "repo_id": "r1"})
        self.assertEqual(route.path, "/api/v0/repositories/r1/stats")

    def test_get_repo_summary_needs_an_identifier(self) -> None:
        self.assertRouteError("get_repo_summary", {}, "repo_id or repo_name is required")

    def test_path_tools_leave_an_empty_segment_for_a_missing_id(self) -> None:
        self.assertEqual(
            resolve_route("get_repo_context", {}).path, "/api/v0/repositories//context"
        )

    def test_path_segments_keep_go_safe_characters(self) -> None:
        route = resolve_route("get_documentation_evidence_packet", {"finding_id": "finding:docs:1"})
        self.assertEqual(
            route.path, "/api/v0/documentation/findings/finding:docs:1/evidence-packet"
        )
        route = resolve_route("get_repo_context", {"repo_id": "org/repo name"})
        self.assertEqual(route.path, "/api/v0/repositories/org%2Frepo%20name/context")

    def test_list_repository_files_sends_recursive_only_when_true(self) -> None:
        route = resolve_route("list_repository_files", {"repo_id": "r", "recursive": True})
        self.assertEqual(route.query, {"recursive": "true"})
        route = resolve_route("list_repository_files", {"repo_id": "r", "recursive": False})
        self.assertEqual(route.query, {})
        self.assertRouteError("list_repository_files", {"path": "src"}, "repo_id is required")

    def test_get_ingester_status_defaults_to_repository(self) -> None:
        for args in ({}, {"ingester": ""}, {"ingester": 3}):
            self.assertEqual(
                resolve_route("get_ingester_status", args).path,
                "/api/v0/status/ingesters/repository",
            )


class DefaultTests(SynchronousTestCase):
    def test_trace_deployment_chain_defaults_direct_only_and_zero_depth(self) -> None:
        route = resolve_route("trace_deployment_chain", {"service_name": "payments"})
        self.assertEqual(
            route.body,
            {
                "direct_only": True,
                "include_related_module_usage": False,
                "max_depth": 0,
                "service_name": "payments",
            },
        )
        route = resolve_route("trace_deployment_chain", {"direct_only": False, "max_depth": 3.7})
        self.assertEqual((route.body["direct_only"], route.body["max_depth"]), (False, 3))

    def test_search_semantic_context_sends_zero_limit_and_timeout(self) -> None:
        route = resolve_route("search_semantic_context", {"query": "retry"})
        self.assertEqual((route.body["limit"], route.body["timeout_ms"]), (0, 0))
        route = resolve_route("search_semantic_context", {"limit": 5, "timeout_ms": 900})
        self.assertEqual((route.body["limit"], route.body["timeout_ms"]), (5, 900))

    def test_int_or_truncates_and_ignores_strings_and_bools(self) -> None:
        self.assertEqual(resolve_route("find_code", {"limit": 2.9}).body["limit"], 2)
        self.assertEqual(resolve_route("find_code", {"limit": "10"}).body["limit"], 10)
        self.assertEqual(resolve_route("find_code", {"limit": True}).body["limit"], 10)
        route = resolve_route("list_indexed_repositories", {"limit": 2.9, "offset": "4"})
        self.assertEqual(route.query, {"limit": "2", "offset": "0"})

    def test_non_empty_query_default_replaces_empty_or_wrong_values(self) -> None:
        for value in ("", 7, None):
            route = resolve_route("get_infra_resource_inventory", {"group_by": value})
            self.assertEqual(route.query["group_by"], "provider")
        route = resolve_route("get_infra_resource_inventory", {"group_by": "label"})
        self.assertEqual(route.query["group_by"], "label")

    def test_include_suppressed_is_sent_only_for_a_bool(self) -> None:
        tool = "list_supply_chain_impact_findings"
        self.assertNotIn("include_suppressed", resolve_route(tool, {}).query)
        self.assertNotIn("include_suppressed", resolve_route(tool, {"include_suppressed": 1}).query)
        route = resolve_route(tool, {"include_suppressed": False})
        self.assertEqual(route.query["include_suppressed"], "false")

    def test_unadvertised_fallbacks_fill_their_fields(self) -> None:
        route = resolve_route("list_ci_cd_run_correlations", {"run_id": "9"})
        self.assertEqual((route.query["provider_run_id"], route.query["run_id"]), ("9", "9"))
        route = resolve_route("get_incident_context", {"incident_id": "P1/2"})
        self.assertEqual(route.path, "/api/v0/incidents/P1%2F2/context")

    def test_integral_floats_in_bodies_are_integers(self) -> None:
        route = resolve_route("get_code_relationship_story", {"min_confidence": 1.0})
        self.assertIs(type(route.body["min_confidence"]), int)
        route = resolve_route("get_code_relationship_story", {"min_confidence": 0.5})
        self.assertEqual(route.body["min_confidence"], 0.5)
        self.assertNotIn("min_confidence", resolve_route("get_code_relationship_story", {}).body)

    def test_whole_argument_object_is_the_body_for_passthrough_tools(self) -> None:
        args = {"repo_id": "r", "start_line": 1.0, "end_line": 3, "extra": {"x": 2.0}}
        route = resolve_route("get_file_lines", args)
        self.assertEqual(
            route.body, {"repo_id": "r", "start_line": 1, "end_line": 3, "extra": {"x": 2}}
        )
        self.assertIs(type(route.body["start_line"]), int)

    def test_get_code_relationship_story_reads_cross_repo_and_scope(self) -> None:
        tool = "get_code_relationship_story"
        self.assertTrue(resolve_route(tool, {"cross_repo": True}).body["cross_repo"])
        self.assertTrue(resolve_route(tool, {"scope": "cross_repo"}).body["cross_repo"])
        self.assertFalse(resolve_route(tool, {"scope": "auto"}).body["cross_repo"])


class RequiredNumberTests(RouteErrorMixin, SynchronousTestCase):
    def test_dead_letter_limits_must_be_positive_after_truncation(self) -> None:
        tool = "list_dead_letter_work_items"
        self.assertRouteError(tool, {"limit": 0.5, "timeout_ms": 10}, "limit is required")
        self.assertRouteError(tool, {"limit": "10", "timeout_ms": 10}, "limit is required")
        self.assertRouteError(tool, {"limit": 10, "timeout_ms": -1}, "timeout_ms is required")

    def test_dead_letter_body_carries_truncated_numbers_and_trimmed_filters(self) -> None:
        args = {"limit": 3.9, "timeout_ms": 100, "domain": " code ", "scope_id": "  "}
        route = resolve_route("list_dead_letter_work_items", args)
        self.assertEqual(route.body, {"domain": "code", "limit": 3, "timeout_ms": 100})

    def test_invalid_fact_checks_run_in_contract_order(self) -> None:
        tool = "list_reducer_input_invalid_facts"
        self.assertRouteError(tool, {"limit": 0, "generation_id": "g"}, "scope_id is required")
        self.assertRouteError(
            tool, {"scope_id": "s", "generation_id": " "}, "generation_id is required"
        )
        self.assertRouteError(tool, {"scope_id": "s", "generation_id": "g"}, "limit is required")
        args = {"scope_id": "s", "generation_id": "g", "limit": 1}
        self.assertRouteError(tool, args, "timeout_ms is required")

    def test_trimmed_required_path_values(self) -> None:
        self.assertRouteError(
            "get_fact_schema_version", {"fact_kind": "  "}, "fact_kind is required"
        )
        route = resolve_route("get_fact_schema_version", {"fact_kind": " k ", "candidate": " "})
        self.assertEqual((route.path, route.query), ("/api/v0/fact-schema-versions/k", {}))


class ContentSearchTests(SynchronousTestCase):
    def body(self, **args: object) -> dict:
        return resolve_route("search_file_content", args).body

    def test_no_repo_ids_uses_the_repo_id_argument(self) -> None:
        self.assertEqual(self.body(pattern="p", repo_id="r")["repo_id"], "r")
        self.assertEqual(self.body(pattern="p"), {"limit": 10, "offset": 0, "query": "p"})

    def test_one_repo_id_is_sent_as_repo_id(self) -> None:
        body = self.body(pattern="p", repo_ids=["only"], repo_id="ignored")
        self.assertEqual((body.get("repo_id"), "repo_ids" in body), ("only", False))
        self.assertNotIn("repo_id", self.body(pattern="p", repo_ids=[3]))

    def test_two_repo_ids_are_sent_unchanged(self) -> None:
        body = resolve_route("search_entity_content", {"pattern": "p", "repo_ids": ["a", "b"]}).body
        self.assertEqual((body["repo_ids"], "repo_id" in body), (["a", "b"], False))

    def test_query_wins_over_pattern(self) -> None:
        self.assertEqual(self.body(query="q", pattern="p")["query"], "q")
        self.assertEqual(self.body(query="", pattern="p")["query"], "p")


class ResolveEntityTests(SynchronousTestCase):
    def test_body_takes_name_then_query_and_type_then_types(self) -> None:
        args = {"name": "n", "query": "q", "types": ["function", "class"], "environment": "prod"}
        self.assertEqual(
            resolve_route("resolve_entity", args).body,
            {"limit": 10, "name": "n", "type": "function"},
        )
        args = {"query": "q", "type": "class", "types": ["function"], "repo_id": "r"}
        self.assertEqual(
            resolve_route("resolve_entity", args).body,
            {"limit": 10, "name": "q", "repo_id": "r", "type": "class"},
        )


class ServiceSelectorTests(RouteErrorMixin, SynchronousTestCase):
    def test_workload_selector_is_stripped_for_the_path_and_sent_as_service_id(self) -> None:
        route = resolve_route("get_service_story", {"workload_id": " workload:payments "})
        self.assertEqual(route.path, "/api/v0/services/payments/story")
        self.assertEqual(route.query, {"service_id": "workload:payments"})

    def test_story_and_report_fall_back_to_trimmed_service_name(self) -> None:
        for tool, suffix in (
            ("get_service_story", "story"),
            ("get_service_intelligence_report", "intelligence-report"),
        ):
            args = {"service_name": " checkout ", "repository_id": " r1 ", "environment": "prod"}
            route = resolve_route(tool, args)
            self.assertEqual(route.path, f"/api/v0/services/checkout/{suffix}")
            self.assertEqual(route.query, {"environment": "prod", "repo": "r1"})

    def test_other_qualifiers_are_stripped_without_service_id(self) -> None:
        route = resolve_route("get_service_story", {"workload_id": "service:pay"})
        self.assertEqual((route.path, route.query), ("/api/v0/services/pay/story", {}))

    def test_missing_selector_errors(self) -> None:
        self.assertRouteError(
            "get_service_story",
            {"workload_id": " "},
            "get_service_story requires workload_id or service_name",
        )
        self.assertRouteError(
            "get_service_intelligence_report",
            {"repo": "r"},
            "get_service_intelligence_report requires workload_id or service_name",
        )

    def test_service_context_needs_workload_id_and_sends_no_service_id(self) -> None:
        self.assertRouteError(
            "get_service_context",
            {"service_name": "pay"},
            "get_service_context requires workload_id",
        )
        route = resolve_route("get_service_context", {"workload_id": "workload:pay"})
        self.assertEqual((route.path, route.query), ("/api/v0/services/pay/context", {}))

    def test_investigate_service_uses_untrimmed_service_name_and_always_sends_filters(self) -> None:
        route = resolve_route(
            "investigate_service", {"service_name": "workload:pay", "repo_id": "r"}
        )
        self.assertEqual(route.path, "/api/v0/investigations/services/pay")
        self.assertEqual(
            route.query,
            {
                "environment": "",
                "intent": "",
                "question": "",
                "repo": "r",
                "service_id": "workload:pay",
            },
        )
        route = resolve_route("investigate_service", {"service_name": " pay "})
        self.assertEqual(route.path, "/api/v0/investigations/services/%20pay%20")


class CallChainTests(RouteErrorMixin, SynchronousTestCase):
    def chain(self, **args: object) -> dict:
        return resolve_route(
            "analyze_code_relationships", {"query_type": "call_chain", **args}
        ).body

    def test_target_is_split_at_the_first_arrow_and_trimmed(self) -> None:
        body = self.chain(target=" handle -> save->db ")
        self.assertEqual((body["start"], body["end"]), ("handle", "save->db"))
        self.assertEqual((body["start_entity_id"], body["end_entity_id"]), ("", ""))

    def test_entity_ids_replace_the_target(self) -> None:
        body = self.chain(start_entity_id="e1", end_entity_id="e2", context="7")
        self.assertEqual(
            body,
            {
                "cross_repo": False,
                "end": "",
                "end_entity_id": "e2",
                "end_repo_id": "",
                "max_depth": 7,
                "repo_id": "",
                "start": "",
                "start_entity_id": "e1",
                "start_repo_id": "",
            },
        )
        self.assertEqual(self.chain(target="->b", start_entity_id="e1")["end"], "b")

    def test_target_without_arrow_is_rejected(self) -> None:
        args = {
            "query_type": "call_chain",
            "target": "a",
            "start_entity_id": "e",
            "end_entity_id": "f",
        }
        self.assertRouteError("analyze_code_relationships", args, CALL_CHAIN_FORMAT)

    def test_a_name_given_as_end_entity_id_gets_a_hint_beside_the_contract_text(self) -> None:
        args = {
            "query_type": "call_chain",
            "target": "Console.print",
            "end_entity_id": "Segment.split_and_crop_lines",
        }
        error = self.assertRaises(RouteError, resolve_route, "analyze_code_relationships", args)
        self.assertEqual(str(error), CALL_CHAIN_FORMAT)
        self.assertEqual(
            error.hint,
            "'Console.print' has no '->'; start_entity_id and end_entity_id take entity ids"
            " (content-entity:e_..., as find_symbol gives them), with target left empty;"
            " to name both ends write target='Console.print->Segment.split_and_crop_lines'",
        )
        args["end_entity_id"] = "content-entity:e_0123456789ab"
        error = self.assertRaises(RouteError, resolve_route, "analyze_code_relationships", args)
        self.assertTrue(
            error.hint.endswith("or write target='Console.print->END' with the end's name")
        )
        del args["end_entity_id"]
        error = self.assertRaises(RouteError, resolve_route, "analyze_code_relationships", args)
        self.assertEqual(error.hint, "")

    def test_a_side_with_neither_half_nor_entity_id_is_rejected(self) -> None:
        for args in ({}, {"target": "a->"}, {"start_entity_id": "e"}, {"target": " -> b"}):
            self.assertRouteError(
                "analyze_code_relationships", {"query_type": "call_chain", **args}, CALL_CHAIN_IDS
            )

    def test_cross_repo_call_chain_forces_cross_repo(self) -> None:
        args = {"query_type": "find_cross_repo_call_chain", "target": "a->b", "cross_repo": False}
        route = resolve_route("analyze_code_relationships", args)
        self.assertEqual((route.path, route.body["cross_repo"]), ("/api/v0/code/call-chain", True))


class AnalyzeCodeRelationshipsTests(SynchronousTestCase):
    def route(self, **args: object) -> Route:
        return resolve_route("analyze_code_relationships", args)

    def test_find_callers_uses_the_story_route_with_fixed_fields(self) -> None:
        route = self.route(query_type="find_callers", target="main", max_depth=2, limit=9.5)
        self.assertEqual((route.method, route.path), ("POST", "/api/v0/code/relationships/story"))
        self.assertEqual(
            route.body,
            {
                "cross_repo": False,
                "direction": "incoming",
                "include_transitive": False,
                "limit": 9,
                "max_depth": 2,
                "offset": 0,
                "relationship_type": "CALLS",
                "relationship_types": None,
                "repo_id": "",
                "target": "main",
                "token_budget": 0,
            },
        )

    def test_transitive_and_cross_repo_types(self) -> None:
        self.assertTrue(self.route(query_type="find_all_callees").body["include_transitive"])
        body = self.route(query_type="find_cross_repo_importers").body
        self.assertEqual((body["cross_repo"], body["relationship_type"]), (True, "IMPORTS"))
        self.assertTrue(
            self.route(query_type="find_callers", scope="CROSS_REPO").body["cross_repo"]
        )

    def test_dead_code_uses_the_dead_code_route(self) -> None:
        route = self.route(query_type="dead_code", exclude_decorated_with=["app.route"], target="x")
        self.assertEqual(
            (route.path, route.body),
            (
                "/api/v0/code/dead-code",
                {"exclude_decorated_with": ["app.route"], "limit": 100, "repo_id": ""},
            ),
        )

    def test_class_hierarchy_sends_the_typed_story_body(self) -> None:
        route = self.route(query_type="class_hierarchy", target="Base", language="python")
        self.assertEqual(route.path, "/api/v0/code/relationships/story")
        self.assertEqual(
            {
                k: route.body[k]
                for k in ("direction", "language", "query_type", "relationship_type")
            },
            {
                "direction": "both",
                "language": "python",
                "query_type": "class_hierarchy",
                "relationship_type": "INHERITS",
            },
        )
        self.assertNotIn("include_transitive", route.body)

    def test_unlisted_and_generic_types_use_the_relationships_route(self) -> None:
        for query_type in ("made_up", "who_modifies", ""):
            route = self.route(query_type=query_type, target="t", limit=3)
            self.assertEqual(
                route,
                Route(
                    "POST",
                    "/api/v0/code/relationships",
                    {},
                    {"entity_id": "t", "query_type": query_type},
                ),
            )


class VocabularyTests(RouteErrorMixin, SynchronousTestCase):
    def test_source_tool_is_trimmed_and_lower_cased(self) -> None:
        route = resolve_route(
            "list_relationship_edges", {"verb": "DEPLOYS", "source_tool": " HeLm "}
        )
        self.assertEqual(route.body, {"limit": 50, "source_tool": "helm", "verb": "DEPLOYS"})

    def test_blank_source_tool_is_not_sent(self) -> None:
        route = resolve_route("list_relationship_edges", {"source_tool": "  "})
        self.assertNotIn("source_tool", route.body)

    def test_unknown_source_tool_is_an_error(self) -> None:
        self.assertRouteError(
            "list_relationship_edges",
            {"source_tool": " Bogus "},
            'unknown source_tool "bogus": must be one of the canonical vocabulary values',
        )
