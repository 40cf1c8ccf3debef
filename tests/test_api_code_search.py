"""Tests for /code/search, /code/symbols/search and /code/language-query."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from tests.test_api_code_common import CodeIndex, call, error_of, scratch_dir

SERVICE = """\
class PaymentService:
    def charge(self, amount):
        return amount

    def refund(self, amount):
        return -amount
"""

API = """\
from app.service import PaymentService


def create_charge(req):
    # the handler delegates to charge
    return PaymentService().charge(req)
"""

UI = "export function ChargeButton() { return null; }\n"


def build(case: SynchronousTestCase) -> tuple[CodeIndex, str]:
    index = CodeIndex(scratch_dir(case))
    repo = index.repository("payments", remote="https://github.com/acme/payments")
    service = index.file(repo, "app/service.py", SERVICE)
    index.entity(service, "Class", "PaymentService", 1, 6)
    index.entity(service, "Function", "charge", 2, 3, class_context="PaymentService")
    index.entity(service, "Function", "refund", 5, 6, class_context="PaymentService")
    api = index.file(repo, "app/api.py", API)
    index.entity(api, "Function", "create_charge", 4, 6, metadata={"decorators": []})
    ui = index.file(repo, "web/button.tsx", UI, language="tsx")
    index.entity(ui, "Function", "ChargeButton", 1, 1)
    other = index.repository("ledger")
    index.entity(
        index.file(other, "ledger.py", "def charge():\n    pass\n"), "Function", "charge", 1, 2
    )
    index.writer.commit()
    return index, repo


class CodeSearchTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = build(self)
        self.conn = self.index.reader()

    def test_substring_search_is_case_sensitive_and_shaped(self):
        answer = call(self.conn, "/code/search", {"query": "charge", "repo_id": "payments"})
        data = answer.data
        names = [row["entity_name"] for row in data["results"]]
        self.assertEqual(names, ["charge", "create_charge"])  # the whole-name match leads
        self.assertEqual(data["source"], "content")
        self.assertEqual(data["source_backend"], "sqlite_content_store")
        self.assertEqual(data["repo_id"], self.repo)
        self.assertEqual(data["matches"], data["results"])
        self.assertEqual(data["count"], 2)
        self.assertFalse(data["truncated"])
        row = data["results"][0]
        self.assertEqual(row["name"], "charge")
        self.assertEqual(row["labels"], ["Function"])
        self.assertEqual(
            row["source_cache"], "    def charge(self, amount):\n        return amount"
        )
        self.assertEqual(answer.truth["capability"], "code_search.fuzzy_symbol")
        self.assertEqual(answer.truth["level"], "derived")

    def test_whole_name_matches_lead_types_first_and_tests_last(self):
        index = CodeIndex(scratch_dir(self))
        repo = index.repository("deferreds")
        tests = index.file(repo, "pkg/test/test_defer.py", "class Deferred:\n    pass\n")
        index.entity(tests, "Class", "Deferred", 1, 2)
        helpers = index.file(repo, "pkg/a_helpers.py", "def Deferred():\n    pass\n")
        index.entity(helpers, "Function", "Deferred", 1, 2)
        index.entity(helpers, "Function", "maybeDeferred", 1, 2)
        defer = index.file(repo, "pkg/defer.py", "class Deferred:\n    pass\n")
        index.entity(defer, "Class", "Deferred", 1, 2)
        index.writer.commit()
        data = call(index.reader(), "/code/search", {"query": "Deferred"}).data
        rows = [(row["file_path"], row["entity_name"]) for row in data["results"]]
        self.assertEqual(
            rows,
            [
                ("pkg/defer.py", "Deferred"),
                ("pkg/test/test_defer.py", "Deferred"),
                ("pkg/a_helpers.py", "Deferred"),
                ("pkg/a_helpers.py", "maybeDeferred"),
            ],
        )
        self.assertEqual(data["count"], 4)

    def test_limit_probe_marks_truncation(self):
        data = call(self.conn, "/code/search", {"query": "charge", "limit": 1}).data
        self.assertEqual(data["count"], 1)
        self.assertTrue(data["truncated"])

    def test_exact_search_keeps_equal_names_only(self):
        data = call(self.conn, "/code/search", {"query": "charge", "exact": True}).data
        self.assertEqual(
            {row["repo_id"] for row in data["results"]},
            {
                self.repo,
                self.index.writer.execute(
                    "SELECT repo_id FROM repositories WHERE name='ledger'"
                ).fetchone()[0],
            },
        )
        self.assertTrue(all(row["entity_name"] == "charge" for row in data["results"]))

    def test_repo_scoped_fallback_finds_source_matches_case_insensitively(self):
        data = call(self.conn, "/code/search", {"query": "DELEGATES", "repo_id": self.repo}).data
        self.assertEqual([row["entity_name"] for row in data["results"]], ["create_charge"])

    def test_query_is_required(self):
        error = error_of(self.conn, "/code/search", {"query": "  "})
        self.assertEqual((error.status, error.detail), (400, "query is required"))

    def test_short_global_substring_is_refused(self):
        error = error_of(self.conn, "/code/search", {"query": "ch"})
        self.assertEqual(
            error.detail, "global substring code search requires at least 3 Unicode characters"
        )

    def test_unknown_repository_selector_is_400(self):
        error = error_of(self.conn, "/code/search", {"query": "charge", "repo_id": "nope"})
        self.assertEqual(error.status, 400)
        self.assertIn('repository selector "nope" did not match', error.detail)

    def test_missing_body_is_invalid_json(self):
        error = error_of(self.conn, "/code/search", None)
        self.assertEqual(error.detail, "invalid JSON: EOF")


class SymbolSearchTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = build(self)
        self.conn = self.index.reader()

    def test_exact_symbol_across_repositories_is_ambiguous(self):
        data = call(self.conn, "/code/symbols/search", {"symbol": "charge"}).data
        self.assertEqual(data["count"], 2)
        self.assertEqual(
            data["ambiguity"],
            {"ambiguous": True, "reason": "multiple definitions matched the symbol"},
        )
        first = data["results"][0]
        self.assertEqual(first["classification"], "definition")
        self.assertEqual(first["rank"], 1)
        self.assertEqual(first["definition_kind"], "Function")
        self.assertEqual(
            set(first["source_handle"]), {"repo_id", "file_path", "start_line", "end_line"}
        )

    def test_fuzzy_is_case_insensitive_and_filters_types(self):
        data = call(
            self.conn,
            "/code/symbols/search",
            {
                "symbol": "CHARGE",
                "match_mode": "fuzzy",
                "repo_id": self.repo,
                "entity_types": ["function"],
                "language": "typescript",
            },
        ).data
        self.assertEqual([r["name"] for r in data["results"]], ["ChargeButton"])
        self.assertEqual(data["entity_types"], ["Function"])
        self.assertEqual(data["results"][0]["match_kind"], "fuzzy")

    def test_paging_reports_more_results(self):
        data = call(
            self.conn,
            "/code/symbols/search",
            {"query": "charge", "match_mode": "fuzzy", "limit": 1, "offset": 1},
        ).data
        self.assertEqual(data["results"][0]["rank"], 2)
        self.assertTrue(data["truncated"])
        self.assertEqual(
            data["ambiguity"]["reason"], "more results are available; use offset to page"
        )

    def test_validation_errors(self):
        cases = [
            ({}, "symbol is required"),
            ({"symbol": "x", "offset": -1}, "offset must be >= 0"),
            ({"symbol": "x", "offset": 10001}, "offset must be <= 10000"),
            ({"symbol": "x", "match_mode": "regex"}, "match_mode must be exact or fuzzy"),
        ]
        for body, detail in cases:
            self.assertEqual(error_of(self.conn, "/code/symbols/search", body).detail, detail)


class ShortNeedleTests(SynchronousTestCase):
    def test_two_character_source_match_uses_the_source_view(self):
        index, repo = build(self)
        conn = index.reader()
        data = call(conn, "/code/search", {"query": "-a", "repo_id": repo}).data
        self.assertEqual([r["entity_name"] for r in data["results"]], ["PaymentService", "refund"])


class ManyNameMatchesTests(SynchronousTestCase):
    """More names contain the query than the in-memory name path keeps (was a 500)."""

    def test_a_query_contained_in_thousands_of_names_answers_a_page(self):
        from eshu_mcp.query.local.api.code.names import MAX_IN_MEMORY_HITS

        index = CodeIndex(scratch_dir(self))
        repo = index.repository("suite")
        source = index.file(repo, "tests/test_many.py", "def test_0():\n    pass\n")
        for number in range(MAX_IN_MEMORY_HITS + 5):
            index.entity(source, "Function", f"test_case_{number:05d}", 1, 2)
        index.writer.commit()
        conn = index.reader()
        answer = call(conn, "/code/search", {"query": "test", "repo_id": "suite", "limit": 10})
        self.assertEqual(answer.status, 200)
        self.assertEqual(len(answer.data["results"]), 10)
        self.assertTrue(answer.data["truncated"])
        self.assertTrue(all("test" in row["entity_name"] for row in answer.data["results"]))
