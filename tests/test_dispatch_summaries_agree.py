"""
Every tool's text block agrees with its structured content, on a real index.

Three repositories (the polyglot fixture, the grants test's ``zqbravo`` and ``gamma``,
written here with enough rows to page) are indexed by the real indexer, and every tool of
the catalog is called through the dispatch with several argument sets (names, paths and
entity ids that find something, a name that finds nothing, and ``limit=1`` pages with and
without an offset). Each answer's text is read by ``tests.summary_agreement``: the counts
its headline states, the ``path:line name`` rows it lists (present, in order, none dropped
without "... K more"), what it says was left out, and an empty answer said as empty.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.catalog import read_only_tools
from eshu_mcp.dispatch import run_read_only_tool
from eshu_mcp.dispatch.summaries.text import COMPLETED
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader
from tests.summary_agreement import (
    answer_data,
    checks_read,
    disagreements,
    headline_of,
    row_lists,
)
from tests.test_api_grants import BRAVO_SOURCES, arguments, profile, work_tree
from tests.test_api_resource import InlinePool, ThreadReactor

GAMMA_SOURCES = {
    "ledger/__init__.py": "",
    "ledger/rules.py": "".join(
        f"def rule_{n}(amount):\n    if amount > {n}:\n        return settle(amount)\n"
        f"    return {n}\n\n\n"
        for n in range(12)
    )
    + "def settle(amount):\n    return round(amount, 2)\n",
    "ledger/books.py": (
        "from ledger.rules import rule_0, rule_1, rule_2, rule_3, settle\n"
        "from ledger import rules\n\n\n"
        "class Book:\n"
        "    def close(self, amount):\n"
        "        return rule_0(amount) + rule_1(amount) + rule_2(amount) + rule_3(amount)\n\n"
        "    def settle(self, amount):\n"
        "        return settle(amount)\n\n\n"
        "class Journal(Book):\n"
        "    def close(self, amount):\n"
        "        return super().close(amount)\n"
    ),
    "ledger/loop_a.py": "from ledger import loop_b\n\n\ndef ping():\n    return loop_b.pong()\n",
    "ledger/loop_b.py": "from ledger import loop_a\n\n\ndef pong():\n    return loop_a.ping()\n",
    "web/ledger.ts": "".join(
        f"export function view{n}(id: string): string {{\n  return settle(id);\n}}\n"
        for n in range(7)
    )
    + "function settle(id: string): string {\n  return id;\n}\n",
    "docs/ledger.md": "# Ledger\n\nCall `settle` from `Book.close`; `rule_0` guards it.\n",
}

NOTHING = "zz_nothing_here"

EXTRA_ARGUMENTS: dict[str, list[dict[str, Any]]] = {
    "resolve_query_playbook": [{"playbook_id": "code.locate_symbol", "inputs": {"symbol": "x"}}],
    "resolve_investigation_workflow": [
        {"workflow_id": "guided_repository_onboarding"},
        {"workflow_id": "guided_repository_onboarding", "inputs": {"repo_id": "gamma"}},
    ],
    "list_package_registry_packages": [{"limit": 5}, {"limit": 5, "ecosystem": "pypi"}],
    "list_package_registry_dependencies": [{"package_id": "pkg:pypi/zqpackage"}],
    "get_iac_management_status": [{"resource_id": "zq_bucket"}],
    "count_documentation_findings": [{}],
    "get_documentation_finding_inventory": [{}, {"limit": 1}],
    "get_service_story": [{"service_name": "zq-ledger-api"}],
    "get_service_intelligence_report": [{"service_name": "zq-ledger-api"}],
    "investigate_import_dependencies": [
        {"query_type": "imports_by_file"},
        {"query_type": "imports_by_file", "limit": 1},
        {"query_type": "importers", "target_module": "ledger.rules"},
        {"query_type": "module_dependencies"},
        {"query_type": "package_imports"},
        {"query_type": "file_import_cycles"},
        {"query_type": "file_import_cycles", "limit": 1},
        {"query_type": "cross_module_calls"},
    ],
    "find_function_call_chain": [{"start": "close", "end": "settle"}],
    "build_evidence_citation_packet": [
        {"handles": handles, "limit": limit}
        for handles in (
            [{"kind": "file", "relative_path": f"ledger/{name}.py", "repo_id": "gamma"}]
            for name in ("rules", "books", "missing")
        )
        for limit in (1, 10)
    ]
    + [
        {
            "handles": [
                {"kind": "file", "relative_path": "ledger/rules.py", "repo_id": "gamma"},
                {"kind": "file", "relative_path": "ledger/books.py", "repo_id": "gamma"},
            ],
            "limit": 1,
        }
    ],
    "inspect_code_inventory": [
        {"inventory_kind": kind}
        for kind in ("entity", "top_level", "documented", "function_count_by_file")
    ],
    "find_symbol": [{"symbol": "rule", "match_mode": "fuzzy", "limit": 3, "offset": 3}],
    "analyze_code_relationships": [
        {"query_type": "class_hierarchy", "target": "Book"},
        {"query_type": "find_callers", "target": "settle", "limit": 2},
        {"query_type": "find_all_callers", "target": "settle", "limit": 2},
        {"query_type": "find_callees", "target": "close"},
    ],
}
"""Arguments the generic builder cannot guess: ids the catalog lists, narrower kinds."""

NO_TOTAL = {
    "search_entity_content": "reads limit+1 rows; a total would count every match",
    "search_file_content": "reads limit+1 files; a total would scan every file",
    "search_semantic_context": "ranks a bounded corpus; no total beyond it",
    "investigate_code_topic": "ranks a bounded candidate set (the topic-search work owns it)",
}
"""Paged answers whose structured content has no total for the headline to state: their
text says "more" and how to read on instead (checked), and the route says why not."""

ERROR_ONLY = {
    "execute_cypher_query": "no Cypher engine in the embedded backend (501)",
    "visualize_graph_query": "no Cypher engine in the embedded backend (501)",
    "list_dead_letter_work_items": "no administration surface (501)",
    "list_reducer_input_invalid_facts": "no administration surface (501)",
    "analyze_infra_relationships": "no platform deployment graph: every target is not found",
    "get_service_context": "no workloads in the embedded backend",
    "get_workload_context": "no workloads in the embedded backend",
    "get_workload_story": "no workloads in the embedded backend",
    "get_service_story": "no workloads in the embedded backend: no service name matches",
}
"""Tools that answer only errors here: their text must be the error, with no rows."""


def _said(text: str, *parts: str) -> list[str]:
    return [f"the text does not say {part!r}" for part in parts if part not in text]


def _changed_since(text: str, data: dict) -> list[str]:
    """The generations compared, and each category's counts (or "no changes")."""
    problems = _said(
        headline_of(text),
        f"since generation {data['since_generation_id'][:12]}",
        f"(now {data['current_active_generation_id'][:12]})",
    )
    lines = text.split("\n")
    for category in data["categories"]:
        name = category["category"]
        line = next((line for line in lines if line.startswith(f"{name}: ")), "")
        changed = {k: n for k, n in category["counts"].items() if n and k != "unchanged"}
        expected = [f"{n} {kind}" for kind, n in changed.items()] or ["no changes"]
        problems += _said(line or f"(no {name} line)", *expected)
    return problems


def _entity_content(text: str, data: dict) -> list[str]:
    """The entity where it is, then the first lines of its own source."""
    path = data.get("relative_path") or data["file_path"]
    where = f"{path}:{data['start_line']}-{data['end_line']}"
    problems = _said(headline_of(text), f"({data['entity_type']}) {where}", data["entity_name"])
    source = max((v for v in data.values() if isinstance(v, str)), key=len)
    shown = text.split("\n")[1:]
    if shown and shown[0] and shown[0] not in source:
        problems.append("the source lines shown are not the entity's source")
    return problems


def _freshness(text: str, data: dict) -> list[str]:
    """The verdict, both commits and the active generation the answer holds."""
    return _said(
        headline_of(text),
        f"{data['repository']['name']}: index is {data['verdict']}",
        f"work tree {data['work_tree_commit'][:12]}",
        f"indexed {data['observed_commit'][:12]}",
        f"generation {data['generation']['id'][:12]} {data['generation']['status']}",
    )


FAMILY_CHECKS = {
    "get_changed_since": _changed_since,
    "get_entity_content": _entity_content,
    "get_repository_freshness": _freshness,
    "get_hosted_readiness": lambda text, data: _said(text, f"hosted readiness: {data['state']}"),
    "get_ingester_status": lambda text, data: _said(
        text, f"ingester {data['ingester']}: {data['health']['state']}"
    ),
}
"""Answers with no count, row or emptiness for the generic reader: what each must say."""


class EveryToolSummaryAgreesTests(SynchronousTestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = Path(tempfile.mkdtemp(prefix="eshu-agree-")).resolve()
        trees = [
            work_tree(cls.base / "alpha"),
            work_tree(cls.base / "zqbravo", BRAVO_SOURCES),
            work_tree(cls.base / "gamma", GAMMA_SOURCES),
        ]
        cls.db = str(cls.base / "index.sqlite")
        assert index_repositories(cls.db, [str(tree) for tree in trees], workers=1).ok
        conn = open_reader(cls.db)
        try:
            ids = dict(conn.execute("SELECT name, repo_id FROM repositories").fetchall())
            alpha = profile(conn, ids["alpha"], "compute_fee")
            cls.profiles = (
                alpha,
                profile(conn, ids["alpha"], "BaseService"),
                profile(conn, ids["zqbravo"], "compute_fee"),
                profile(conn, ids["gamma"], "settle"),
                {**alpha, "name": NOTHING, "path": "no/such/file.py"},
            )
            cls.gamma = ids["gamma"]
        finally:
            conn.close()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base, ignore_errors=True)

    def setUp(self):
        self.resource = LocalQueryResource(
            self.db, reactor=ThreadReactor(), threadpool=InlinePool()
        )

    def call(self, tool: str, args: dict) -> dict:
        return self.successResultOf(
            run_read_only_tool(self.resource, tool, args, clock=Clock(), timeout=60)
        )

    def calls(self, tool: Any) -> list[dict]:
        """Argument sets for ``tool``: each profile's, pages of them, and its extras."""
        paged = "limit" in tool.input_schema.get("properties", {})
        sets = []
        for values in self.profiles:
            for args in arguments(tool, values):
                sets.append(args)
                if paged and values is self.profiles[0]:
                    sets += [{**args, "limit": 1}, {**args, "limit": 1, "offset": 1}]
        for extra in EXTRA_ARGUMENTS.get(tool.name, ()):
            repo = {"repo_id": self.gamma} if "repo_id" in tool.input_schema["properties"] else {}
            sets.append({**repo, **extra})
        return sets

    def test_every_tools_text_agrees_with_its_structured_content(self):
        self.maxDiff = None
        tools = read_only_tools()
        self.assertEqual(len(tools), 162)
        found: dict[str, list[str]] = defaultdict(list)
        answered, with_rows, errors_only, no_total = set(), set(), set(), set()
        covered: dict[str, set[str]] = defaultdict(set)  # check -> the tools it read
        for tool in tools:
            for args in self.calls(tool):
                result = self.call(tool.name, args)
                text = result["content"][0]["text"]
                if result.get("isError"):
                    if not text.strip() or text.startswith(COMPLETED):
                        found[tool.name].append(f"{args}: an error with no message")
                    if any(
                        rows for _, rows in row_lists(answer_data(result.get("structuredContent")))
                    ):
                        found[tool.name].append(f"{args}: an error with rows")
                    errors_only.add(tool.name)
                    continue
                answered.add(tool.name)
                structured = result["structuredContent"]
                data = answer_data(structured)
                if any(rows for _, rows in row_lists(data)):
                    with_rows.add(tool.name)
                for check in checks_read(text, structured):
                    covered[check].add(tool.name)
                family = FAMILY_CHECKS.get(tool.name)
                if family is not None:
                    covered["family"].add(tool.name)
                    found[tool.name] += [f"{args}: {p}" for p in family(text, data)]
                for problem in disagreements(text, structured):
                    if problem.endswith("gives no total") and tool.name in NO_TOTAL:
                        no_total.add(tool.name)
                        continue
                    found[tool.name].append(f"{args}: {problem} | {headline_of(text)}")
        self.assertEqual([f"{name}: {p}" for name, ps in sorted(found.items()) for p in ps], [])
        # Every tool is covered: by answers read by the checks, or (named here, with the
        # reason) by the error it gives on an embedded index.
        self.assertEqual(errors_only - answered, set(ERROR_ONLY))
        covered["error"] = set(ERROR_ONLY)
        # each check read some answers, and together they read an answer of every tool
        self.assertEqual(
            {check: len(names) for check, names in covered.items() if len(names) < 5}, {}
        )
        self.assertEqual(set().union(*covered.values()), {tool.name for tool in tools})
        self.assertEqual(covered["family"], set(FAMILY_CHECKS))
        self.assertEqual(
            answered - set().union(*(covered[c] for c in covered if c != "error")), set()
        )
        self.assertEqual(no_total, set(NO_TOTAL))
        # 48 tools answer rows on this index; the rest have no collector here (empty answers)
        self.assertGreaterEqual(len(with_rows), 45, sorted(answered - with_rows))

    def test_a_paged_headline_states_the_total_of_the_structured_content(self):
        for tool, args, rows_key in (
            ("find_most_complex_functions", {"repo_id": self.gamma, "limit": 2}, "results"),
            ("get_repository_language_inventory", {"limit": 1}, "languages"),
            ("get_capability_catalog", {"limit": 3}, "capabilities"),
            ("find_dead_code", {"repo_id": self.gamma, "limit": 1}, "results"),
        ):
            result = self.call(tool, args)
            data = answer_data(result["structuredContent"])
            total = data.get("total", data.get("active_candidates"))
            self.assertGreater(total, len(data[rows_key]), tool)
            headline = headline_of(result["content"][0]["text"])
            self.assertTrue(headline.startswith(f"{len(data[rows_key])} of {total} "), headline)

    def test_a_page_after_the_last_row_says_how_many_there_are(self):
        args = {"symbol": "settle", "repo_id": self.gamma, "limit": 1, "offset": 5}
        result = self.call("find_symbol", args)
        data = answer_data(result["structuredContent"])
        self.assertEqual(data["results"], [])
        headline = headline_of(result["content"][0]["text"])
        self.assertTrue(headline.startswith(f'0 of {data["total"]} definitions for "settle"'))
        self.assertIn("offset=5 is past the last row", headline)


def _rows(count: int) -> list[dict]:
    return [{"name": f"f{n}", "file_path": "a.py", "start_line": n} for n in range(1, count + 1)]


class AgreementReaderTests(SynchronousTestCase):
    """The reader itself: each kind of disagreement it must catch, and an agreeing pair."""

    def envelope(self, data: dict) -> dict:
        return {"data": data, "truth": {"level": "derived"}, "error": None}

    def test_an_agreeing_page_reads_clean(self):
        data = {"results": _rows(7), "count": 7, "total": 9, "truncated": True, "next_offset": 7}
        text = "derived/fresh \u2014 7 of 9 matches; more: call again with offset=7\n" + "\n".join(
            f"a.py:{n} f{n} (Function)" for n in range(1, 6)
        )
        self.assertEqual(
            disagreements(text + "\n... 2 more rows in the structured content", data), []
        )

    def test_a_page_read_as_its_total_or_its_total_left_out_is_caught(self):
        data = {"results": _rows(2), "total": 120, "truncated": True}
        found = disagreements("120 results; more\na.py:1 f1\na.py:2 f2", self.envelope(data))
        self.assertIn("as if it were the page", " ".join(found))
        found = disagreements("2 results; more\na.py:1 f1\na.py:2 f2", self.envelope(data))
        self.assertIn("not the total 120", " ".join(found))

    def test_rows_missing_misordered_misnamed_or_dropped_are_caught(self):
        data = self.envelope({"results": _rows(3), "count": 3})
        self.assertIn("in no structured row", " ".join(disagreements("3 results\nb.py:1 f1", data)))
        found = disagreements("3 results\na.py:2 f2\na.py:1 f1\na.py:3 f3", data)
        self.assertIn("out of the order", " ".join(found))
        found = disagreements("3 results\na.py:1 invented\na.py:2 f2\na.py:3 f3", data)
        self.assertIn("names invented", " ".join(found))
        found = disagreements("3 results\na.py:1 f1\na.py:2 f2", data)
        self.assertIn("no '... 1 more'", " ".join(found))

    def test_truncation_and_emptiness_said_one_way_only_are_caught(self):
        cut = self.envelope({"results": _rows(1), "count": 1, "truncated": True})
        self.assertIn("does not say so", " ".join(disagreements("1 result\na.py:1 f1", cut)))
        whole = self.envelope({"results": _rows(1), "count": 1, "truncated": False})
        found = disagreements("1 result; more: call again with offset=1\na.py:1 f1", whole)
        self.assertIn("the answer is complete", " ".join(found))
        found = disagreements("No results found", self.envelope({"results": _rows(1), "count": 1}))
        self.assertIn("headline says empty", " ".join(found))
        found = disagreements("Eshu query completed.", self.envelope({"results": [], "count": 0}))
        self.assertIn("does not say so", " ".join(found))
