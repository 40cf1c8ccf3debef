"""
The default surface has no dead ends: connected as the README says (``eshu-mcp stdio
--repo PATH``, the ``core`` toolset, the embedded backend), every served tool answers
an everyday question about the one repository without being told which, and no answer
or error names a tool the client cannot call.
"""

from __future__ import annotations

import re
from pathlib import Path

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.catalog.toolsets import CORE, CORE_TOOLS, ToolCatalog, embedded_backend_answers
from eshu_mcp.dispatch import run_read_only_tool
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from tests.test_api_code_indexed import SOURCES, indexed_repository
from tests.test_api_resource import InlinePool, ThreadReactor

#: One everyday question per served tool, none naming the repository (some several:
#: a question whose answer is an error must name served tools too).
QUESTIONS: dict[str, list[dict]] = {
    "find_symbol": [{"symbol": "charge"}, {"symbol": "run"}, {"symbol": "no_such_name"}],
    "investigate_code_topic": [{"topic": "payment charge"}],
    "search_file_content": [{"pattern": "charge"}],
    "search_entity_content": [{"pattern": "fmt"}],
    "analyze_code_relationships": [
        {"query_type": "find_callers", "target": "charge"},
        {"query_type": "find_callees", "target": "create_charge"},
        {"query_type": "find_callers", "target": "run"},
        {"query_type": "find_callers", "target": "no_such_name"},
        {"query_type": "call_chain", "target": "create_charge->fmt"},
        {"query_type": "class_hierarchy", "target": "Base"},
        {"query_type": "dead_code"},
    ],
    "analyze_pre_change_impact": [{"target": "charge"}, {"changed_paths": ["pkg/service.py"]}],
    "investigate_import_dependencies": [
        {"query_type": "imports_by_file", "source_file": "pkg/api.py"},
        {"query_type": "importers", "target_module": "pkg.service"},
    ],
    "inspect_code_inventory": [{}, {"inventory_kind": "function_count_by_file"}],
    "find_dead_code": [{}],
    "find_most_complex_functions": [{}],
    "calculate_cyclomatic_complexity": [
        {"function_name": "create_charge"},
        {"function_name": "run"},
        {"function_name": "charge", "path": "pkg/service.py"},
    ],
    "investigate_hardcoded_secrets": [{}],
    "list_indexed_repositories": [{}],
    "get_repo_summary": [{}],
    "get_repo_story": [{}],
    "list_repository_files": [{}],
    "get_file_content": [{"relative_path": "pkg/api.py"}, {"relative_path": "api.py"}],
    "get_file_lines": [{"relative_path": "pkg/api.py", "start_line": 1, "end_line": 4}],
    "get_entity_content": [{"entity_id": "content-entity:e_000000000000"}],
    "get_changed_since": [{}],
    "get_repository_freshness": [{}],
    "get_index_status": [{}],
}

#: Answers that may be errors (the question names nothing that exists).
EXPECTED_ERRORS = {
    ("get_entity_content", "content-entity:e_000000000000"),
    ("get_file_content", "api.py"),
    ("calculate_cyclomatic_complexity", "run"),  # Base.run or Child.run: it names both
}


class DefaultSurfaceTests(SynchronousTestCase):
    def setUp(self):
        # a private module's function nothing calls: cleanup-ready beside the public ones
        sources = {**SOURCES, "pkg/_leftovers.py": "def leftover():\n    return 1\n"}
        self.db, name = indexed_repository(self, sources)
        self.home = str(Path(self.db).parent / name)
        self.resource = LocalQueryResource(
            self.db, reactor=ThreadReactor(), threadpool=InlinePool(), home_paths=(self.home,)
        )
        self.served = ToolCatalog.full().select(CORE, answers=embedded_backend_answers)
        every = ToolCatalog.full().names
        self.unserved = re.compile(
            r"\b("
            + "|".join(sorted(set(every) - set(self.served.names), key=len, reverse=True))
            + r")\b"
        )

    def ask(self, tool: str, args: dict) -> dict:
        return self.successResultOf(
            run_read_only_tool(
                self.resource, tool, args, clock=Clock(), default_repository=self.home
            )
        )

    def test_every_served_tool_has_an_everyday_question_here(self):
        self.assertEqual(set(QUESTIONS), set(self.served.names))

    def test_change_impact_is_served_by_default(self):
        self.assertIn("analyze_pre_change_impact", CORE_TOOLS)

    def test_every_served_tool_answers_without_a_repository_and_names_only_served_tools(self):
        for tool, questions in QUESTIONS.items():
            for args in questions:
                result = self.ask(tool, args)
                text = "\n".join(block.get("text", "") for block in result["content"])
                if not any(value in EXPECTED_ERRORS for value in _pairs(tool, args)):
                    self.assertFalse(result.get("isError"), (tool, args, text))
                found = self.unserved.findall(text)
                self.assertEqual(found, [], (tool, args, text))

    def test_the_answers_are_about_the_one_repository(self):
        text = self.ask("get_repo_summary", {})["content"][0]["text"]
        self.assertIn("payments: 6 files", text)
        text = self.ask("get_changed_since", {})["content"][0]["text"]
        self.assertIn("files: no changes", text)
        text = self.ask("get_file_lines", QUESTIONS["get_file_lines"][0])["content"][0]["text"]
        self.assertIn("def create_charge(req):", text)

    def test_the_importers_of_a_file_are_asked_the_way_the_description_says(self):
        description = self.served.get("investigate_import_dependencies").description
        self.assertIn("target_file, the imports resolved to it", description)
        self.assertIn("find_importers", description)
        by_file = self.ask(
            "investigate_import_dependencies",
            {"query_type": "importers", "target_file": "pkg/service.py"},
        )
        self.assertFalse(by_file.get("isError"))
        self.assertIn("pkg/helpers.py", by_file["content"][0]["text"])
        answer = self.ask(
            "analyze_code_relationships",
            {"query_type": "find_importers", "target": "pkg/service.py"},
        )
        self.assertFalse(answer.get("isError"))
        self.assertIn("pkg/helpers.py", answer["content"][0]["text"])


def _pairs(tool: str, args: dict) -> list[tuple[str, str]]:
    return [(tool, value) for value in args.values() if isinstance(value, str)]
