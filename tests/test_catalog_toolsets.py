"""Toolset selection: what one server lists and lets clients call."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.catalog import read_only_tools
from eshu_mcp.catalog.toolsets import (
    CORE_TOOLS,
    TOOLSETS,
    ToolCatalog,
    available_toolsets,
    embedded_backend_answers,
    embedded_route_modes,
)

FULL_ORDER = [tool.name for tool in read_only_tools()]
# External-data domains the embedded backend's local collectors answer from repository files.
LOCALLY_COLLECTED_DOMAINS = {
    "package_registry",
    "documentation",
    "cloud",
    "kubernetes",
    "cicd",
    "container_images",
}


def _in_contract_order(names) -> bool:
    positions = [FULL_ORDER.index(name) for name in names]
    return positions == sorted(positions)


class MembershipTests(SynchronousTestCase):
    def test_every_tool_belongs_to_exactly_one_toolset(self):
        full = ToolCatalog.full()
        seen: list[str] = []
        for name in available_toolsets():
            seen.extend(full.select(name).names)
        self.assertEqual(sorted(seen), sorted(FULL_ORDER))

    def test_available_toolsets_are_the_documented_ones(self):
        self.assertEqual(available_toolsets(), tuple(TOOLSETS))
        self.assertNotIn("all", TOOLSETS)
        self.assertNotIn("available", TOOLSETS)
        self.assertNotIn("core", TOOLSETS)

    def test_code_toolset_holds_search_and_entity_resolution(self):
        names = ToolCatalog.full().select("code").names
        self.assertIn("find_code", names)
        self.assertIn("resolve_entity", names)
        self.assertNotIn("get_file_content", names)


class SelectionTests(SynchronousTestCase):
    def setUp(self):
        self.full = ToolCatalog.full()

    def test_all_selects_the_162_tools_in_contract_order(self):
        self.assertEqual(list(self.full.select("all").names), FULL_ORDER)
        self.assertEqual(len(self.full), 162)

    def test_named_toolsets_are_unioned_and_keep_contract_order(self):
        chosen = self.full.select(" content ,freshness")
        expected = [t.name for t in read_only_tools() if t.toolset in {"content", "freshness"}]
        self.assertEqual(list(chosen.names), expected)
        self.assertTrue(_in_contract_order(chosen.names))

    def test_available_keeps_tools_with_an_answered_route(self):
        chosen = self.full.select(
            "available", answers=lambda method, path: path == "/api/v0/code/call-chain"
        )
        self.assertEqual(chosen.names, ("analyze_code_relationships", "find_function_call_chain"))

    def test_available_on_the_embedded_backend_drops_collector_fed_tools(self):
        chosen = self.full.select("available", answers=embedded_backend_answers)
        for name in (
            "find_code",
            "analyze_code_relationships",
            "list_collectors",
            "get_repo_story",
        ):
            self.assertIn(name, chosen)
        for name in ("list_container_image_tag_history", "execute_cypher_query", "ask"):
            self.assertNotIn(name, chosen)
        self.assertTrue(_in_contract_order(chosen.names))
        # Tools documented as fed by external systems are offered only where the local
        # collectors answer them from repository files.
        self.assertTrue(
            all(
                t.data_source != "external" or t.domain in LOCALLY_COLLECTED_DOMAINS for t in chosen
            )
        )
        for name in (
            "list_codeowners_ownership",
            "list_package_registry_packages",
            "list_kubernetes_correlations",
            "list_container_image_identities",
            "list_ci_cd_run_correlations",
        ):
            self.assertIn(name, chosen)
        self.assertEqual(len(chosen), 79)

    def test_available_can_be_combined_with_named_toolsets(self):
        chosen = self.full.select("available,kubernetes", answers=lambda m, p: False)
        self.assertEqual(chosen.names, ("list_kubernetes_correlations",))

    def test_available_without_a_backend_answer_function_is_refused(self):
        self.assertRaises(ValueError, self.full.select, "available")

    def test_excluded_tools_are_neither_listed_nor_callable(self):
        chosen = self.full.select("code", exclude=["find_code"])
        self.assertNotIn("find_code", chosen.names)
        self.assertIsNone(chosen.get("find_code"))
        self.assertNotIn("find_code", [tool["name"] for tool in chosen.mcp_tools("2025-11-25")])
        self.assertIsNotNone(chosen.get("find_symbol"))

    def test_exclude_accepts_toolset_names_and_comma_lists(self):
        chosen = self.full.select("all", exclude=["cloud, iam", "ask"])
        toolsets = {tool.toolset for tool in chosen}
        self.assertFalse(toolsets & {"cloud", "iam", "ask"})
        self.assertEqual(len(chosen), 162 - 11 - 5 - 1)

    def test_unknown_toolset_names_the_valid_choices(self):
        with self.assertRaises(ValueError) as caught:
            self.full.select("code,kubernets")
        message = str(caught.exception)
        self.assertIn("'kubernets'", message)
        for choice in ("all", "available", "core", "kubernetes", "supply_chain"):
            self.assertIn(choice, message)

    def test_empty_toolset_list_is_refused(self):
        self.assertRaises(ValueError, self.full.select, " , ")

    def test_unknown_excluded_name_suggests_close_tool_names(self):
        with self.assertRaises(ValueError) as caught:
            self.full.select("all", exclude=["find_cod"])
        message = str(caught.exception)
        self.assertIn("find_code", message)
        self.assertIn("relationships", message)

    def test_selecting_from_a_selection_narrows_it_further(self):
        code = self.full.select("code,content")
        self.assertEqual(code.select("all"), code)
        self.assertEqual(code.select("content").names, self.full.select("content").names)
        self.assertRaises(ValueError, code.select, "all", exclude=["list_collectors"])


# One question of each family an assistant asks about code, and the core tool (with
# the argument value that picks the question, where one tool asks several) that
# answers it.
CORE_QUESTIONS = {
    "where is a name defined": ("find_symbol", None, None),
    "where does a behaviour live": ("investigate_code_topic", None, None),
    "which files mention a text": ("search_file_content", None, None),
    "which function contains a text": ("search_entity_content", None, None),
    "who calls it": ("analyze_code_relationships", "query_type", "find_callers"),
    "what does it call": ("analyze_code_relationships", "query_type", "find_callees"),
    "everything that reaches it": ("analyze_code_relationships", "query_type", "find_all_callers"),
    "how does a reach b": ("analyze_code_relationships", "query_type", "call_chain"),
    "class hierarchy": ("analyze_code_relationships", "query_type", "class_hierarchy"),
    "overrides": ("analyze_code_relationships", "query_type", "overrides"),
    "what a file imports": ("investigate_import_dependencies", "query_type", "imports_by_file"),
    "who imports a module": ("investigate_import_dependencies", "query_type", "importers"),
    "import cycles": ("investigate_import_dependencies", "query_type", "file_import_cycles"),
    "classes defining a method": ("inspect_code_inventory", "inventory_kind", "class_with_method"),
    "decorated functions": ("inspect_code_inventory", "inventory_kind", "decorated"),
    "unused code": ("find_dead_code", None, None),
    "worst complexity": ("find_most_complex_functions", None, None),
    "one function's complexity": ("calculate_cyclomatic_complexity", None, None),
    "hard-coded secrets": ("investigate_hardcoded_secrets", None, None),
    "which repositories": ("list_indexed_repositories", None, None),
    "repository summary": ("get_repo_summary", None, None),
    "repository story": ("get_repo_story", None, None),
    "file tree": ("list_repository_files", None, None),
    "whole file": ("get_file_content", None, None),
    "file lines": ("get_file_lines", None, None),
    "one symbol's source": ("get_entity_content", None, None),
    "what changed since": ("get_changed_since", None, None),
    "is the index current": ("get_repository_freshness", None, None),
    "indexing status": ("get_index_status", None, None),
}


class CoreSelectionTests(SynchronousTestCase):
    def setUp(self):
        self.core = ToolCatalog.full().select("core")

    def test_core_names_only_catalog_tools_and_keeps_contract_order(self):
        self.assertEqual(set(self.core.names), set(CORE_TOOLS))
        self.assertTrue(_in_contract_order(self.core.names))

    def test_every_code_question_has_a_core_tool(self):
        for question, (name, argument, value) in CORE_QUESTIONS.items():
            tool = self.core.get(name)
            self.assertIsNotNone(tool, question)
            if argument is not None:
                choices = tool.input_schema["properties"][argument]["enum"]
                self.assertIn(value, choices, question)

    def test_every_core_tool_is_answered_by_the_embedded_backend(self):
        for tool in self.core:
            self.assertTrue(
                all(embedded_backend_answers(*route) for route in tool.routes), tool.name
            )

    def test_core_is_smaller_than_available(self):
        available = ToolCatalog.full().select("available", answers=embedded_backend_answers)
        self.assertLess(set(self.core.names), set(available.names))
        self.assertLess(len(self.core), len(available) // 2)

    def test_core_combines_with_toolsets_and_exclusions(self):
        chosen = ToolCatalog.full().select("core,kubernetes", exclude=["get_repo_story"])
        self.assertIn("list_kubernetes_correlations", chosen)
        self.assertNotIn("get_repo_story", chosen)
        self.assertEqual(len(chosen), len(self.core))

    def test_core_needs_no_backend_answer_function(self):
        self.assertEqual(ToolCatalog.full().select("core").names, self.core.names)


class ListingTests(SynchronousTestCase):
    def test_mcp_tools_follow_catalog_order_and_are_cached(self):
        catalog = ToolCatalog.full().select("repository")
        listing = catalog.mcp_tools("2025-06-18")
        self.assertEqual([tool["name"] for tool in listing], list(catalog.names))
        self.assertIs(catalog.mcp_tools("2025-06-18"), listing)

    def test_lookup_by_name(self):
        catalog = ToolCatalog.full()
        self.assertEqual(catalog.get("find_code").name, "find_code")
        self.assertIsNone(catalog.get("no_such_tool"))
        self.assertIn("ask", catalog)


class EmbeddedRouteTests(SynchronousTestCase):
    def test_embedded_route_table_holds_only_answered_modes(self):
        modes = set(embedded_route_modes().values())
        self.assertEqual(modes, {"serve-real", "serve-real-partial", "serve-static-catalog"})

    def test_embedded_backend_answers_code_routes_but_not_collector_routes(self):
        self.assertTrue(embedded_backend_answers("POST", "/api/v0/code/search"))
        self.assertTrue(embedded_backend_answers("GET", "/api/v0/capabilities"))
        self.assertFalse(embedded_backend_answers("GET", "/api/v0/images/tag-history"))
        self.assertFalse(embedded_backend_answers("GET", "/api/v0/code/search"))
