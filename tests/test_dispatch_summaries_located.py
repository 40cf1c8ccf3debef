"""
Every tool's text block states its answer as ``path:line name`` wherever its rows say
where they are: each tool the embedded backend serves is asked about a small indexed
repository (code, manifests, a Dockerfile, a workflow, Terraform, documentation) and a
text whose rows carry a file and line must name one that way.
"""

from __future__ import annotations

import re
from pathlib import Path

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.catalog.toolsets import ToolCatalog, embedded_backend_answers
from eshu_mcp.dispatch import run_read_only_tool
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from eshu_mcp.query.local.index.build.indexer import index_repositories
from tests.test_api_code_indexed import SOURCES as CODE
from tests.test_api_code_indexed import indexed_repository
from tests.test_api_collected_builds import SOURCES as BUILDS
from tests.test_api_resource import InlinePool, ThreadReactor

SOURCES = {
    **CODE,
    **BUILDS,
    "infra/main.tf": 'resource "aws_s3_bucket" "logs" {\n  bucket = "logs"\n}\n',
    "docs/guide.md": "# Guide\n\nCall `charge` in pkg/service.py.\n",
    ".github/CODEOWNERS": "/pkg/ @acme/payments\n",
}

#: Topic and semantic search are another change's (their summaries are rewritten there).
ELSEWHERE = frozenset({"search_semantic_context", "investigate_code_topic"})

QUESTIONS = {
    "find_code": {"query": "charge"},
    "find_symbol": {"symbol": "charge"},
    "resolve_entity": {"query": "charge"},
    "search_file_content": {"pattern": "charge"},
    "search_entity_content": {"pattern": "charge"},
    "investigate_import_dependencies": {"query_type": "importers", "target_module": "pkg.service"},
    "get_code_relationship_story": {"target": "charge"},
    "analyze_code_relationships": {"query_type": "find_callers", "target": "charge"},
    "inspect_code_quality": {"check": "complexity", "min_complexity": 1},
    "execute_language_query": {"language": "python", "entity_type": "function"},
    "find_function_call_chain": {"start": "create_charge", "end": "fmt"},
    "count_repositories_by_language": {"language": "python"},
    "list_repositories_by_language": {"language": "python"},
    "find_infra_resources": {"query": "logs"},
    "analyze_infra_relationships": {"query_type": "what_deploys", "target": "api"},
    "find_change_surface": {"target": "charge"},
    "analyze_pre_change_impact": {"target": "charge"},
    "calculate_cyclomatic_complexity": {"function_name": "create_charge"},
    "get_file_content": {"relative_path": "pkg/api.py"},
    "get_file_lines": {"relative_path": "pkg/api.py", "start_line": 1, "end_line": 3},
    "get_workload_context": {"workload_id": "api"},
    "get_service_context": {"workload_id": "api"},
}

PATHS = ("file_path", "relative_path", "config_path", "source_file_path", "source_uri")
LINES = ("start_line", "line_number", "line", "source_start_line")
LOCATED = re.compile(r"[\w./-]+:\d+ \S")


def located_rows(value, depth: int = 0) -> bool:
    """Whether an answer holds rows that say which file and line they are at."""
    if depth > 7:
        return False
    if isinstance(value, dict):
        if any(value.get(p) for p in PATHS) and any(
            isinstance(value.get(n), int) and value[n] > 0 for n in LINES
        ):
            return depth > 0  # a row, not the answer itself
        return any(located_rows(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(located_rows(v, depth + 1) for v in value[:20])
    return False


class LocatedTextTests(SynchronousTestCase):
    def setUp(self):
        db, name = indexed_repository(self, SOURCES)
        self.home = str(Path(db).parent / name)
        helpers = Path(self.home) / "pkg" / "helpers.py"
        helpers.write_text(helpers.read_text() + "\n\ndef added():\n    return 2\n")
        self.assertTrue(index_repositories(db, [self.home], workers=1).ok)
        self.resource = LocalQueryResource(
            db, reactor=ThreadReactor(), threadpool=InlinePool(), home_paths=(self.home,)
        )

    def ask(self, tool: str, args: dict) -> dict:
        return self.successResultOf(
            run_read_only_tool(
                self.resource, tool, args, clock=Clock(), default_repository=self.home
            )
        )

    def test_every_served_answer_with_located_rows_names_one_as_path_line_name(self):
        served = ToolCatalog.full().select("available", answers=embedded_backend_answers)
        symbol = self.ask("find_symbol", {"symbol": "charge"})
        entity = symbol["structuredContent"]["data"]["results"][0]["entity_id"]
        questions = {
            **QUESTIONS,
            "get_entity_context": {"entity_id": entity},
            "get_entity_content": {"entity_id": entity},
        }
        checked = []
        for tool in served.names:
            if tool in ELSEWHERE:
                continue
            result = self.ask(tool, questions.get(tool, {}))
            if result.get("isError"):
                continue
            data = result["structuredContent"].get("data", result["structuredContent"])
            if located_rows(data):
                checked.append(tool)
                text = result["content"][0]["text"]
                self.assertRegex(text, LOCATED, tool)
        for tool in (
            "get_changed_since",
            "list_container_image_identities",
            "find_infra_resources",
        ):
            self.assertIn(tool, checked)

    def test_what_changed_names_the_first_changed_definition(self):
        text = self.ask("get_changed_since", {})["content"][0]["text"]
        self.assertIn("first added: pkg/helpers.py:12 added (Function)", text.splitlines()[0])
