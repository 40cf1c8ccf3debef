"""Tests for /code/dead-code and /code/dead-code/investigate: roots, reachability, buckets."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.deadcode.roots import (
    is_framework_decorator,
    is_generated_path,
    is_test_path,
)
from tests.test_api_code_common import call, error_of, shop_index

EXTRA = """\
@app.get("/health")
def health():
    return "ok"


@internal_api
def tooling_hook():
    return 1


@_keyGenerator("rsa")
def generate_rsa(options):
    return 3


@lru_cache(maxsize=4)
def cached_unused():
    return 4


@frozen(repr=False)
class UnusedRecord:
    pass


def weakly_used():
    return 2
"""

TEST_FILE = "def test_charge():\n    assert True\n"
TS_FILE = "function unusedWidget() {\n  return 1;\n}\n"


def dead_index(case: SynchronousTestCase):
    index, repo = shop_index(case)
    extra = index.file(repo, "shop/extra.py", EXTRA)
    index.entity(
        extra, "Function", "health", 2, 3, metadata={"decorators": ['@app.get("/health")']}
    )
    index.entity(
        extra, "Function", "tooling_hook", 7, 8, metadata={"decorators": ["@internal_api"]}
    )
    index.entity(extra, "Function", "weakly_used", 26, 27)
    index.entity(
        extra,
        "Function",
        "generate_rsa",
        11,
        13,
        metadata={"decorators": ['@_keyGenerator("rsa")']},
    )
    index.entity(
        extra,
        "Function",
        "cached_unused",
        16,
        18,
        metadata={"decorators": ["@lru_cache(maxsize=4)"]},
    )
    index.entity(
        extra,
        "Class",
        "UnusedRecord",
        21,
        23,
        metadata={"decorators": ["@frozen(repr=False)"]},
    )
    index.calls("batch", "weakly_used", method="repo_unique_name", confidence=0.5)
    tests = index.file(repo, "tests/test_service.py", TEST_FILE, is_test=1)
    index.entity(tests, "Function", "test_charge", 1, 2)
    ts = index.file(repo, "web/widget.ts", TS_FILE, language="typescript")
    index.entity(ts, "Function", "unusedWidget", 1, 3)
    index.writer.commit()
    return index, repo


class InvestigateDeadCodeTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = dead_index(self)
        self.conn = self.index.reader()

    def investigate(self, **body):
        return call(self.conn, "/code/dead-code/investigate", {"repo_id": "shop", **body})

    def test_buckets_sort_dead_ambiguous_and_suppressed(self):
        answer = self.investigate()
        data = answer.data
        buckets = {
            name: {row["name"] for row in rows} for name, rows in data["candidate_buckets"].items()
        }
        self.assertIn("old_refund", buckets["cleanup_ready"])
        self.assertIn("loop", buckets["cleanup_ready"])  # only calls itself
        self.assertNotIn("charge", buckets["cleanup_ready"] | buckets["ambiguous"])
        self.assertNotIn("ping", buckets["cleanup_ready"])  # called by pong
        self.assertIn("weakly_used", buckets["ambiguous"])
        self.assertIn("unusedWidget", buckets["ambiguous"])
        self.assertIn("health", buckets["suppressed"])
        self.assertIn("test_charge", buckets["suppressed"])
        self.assertIn("tooling_hook", buckets["cleanup_ready"])
        # A keyed decorator factory registers the function; a caching wrapper does not.
        self.assertIn("generate_rsa", buckets["suppressed"])
        self.assertIn("cached_unused", buckets["cleanup_ready"])
        self.assertIn("UnusedRecord", buckets["cleanup_ready"])  # an attrs class maker
        rsa = next(
            r for r in data["candidate_buckets"]["suppressed"] if r["name"] == "generate_rsa"
        )
        self.assertEqual(rsa["suppression_reasons"], ["modeled_root:python.registering_decorator"])
        weak = next(r for r in data["candidate_buckets"]["ambiguous"] if r["name"] == "weakly_used")
        self.assertEqual(weak["ambiguity_reasons"], ["weak_incoming_edge:repo_unique_name"])
        widget = next(
            r for r in data["candidate_buckets"]["ambiguous"] if r["name"] == "unusedWidget"
        )
        self.assertEqual(
            widget["ambiguity_reasons"], ["typescript_dead_code_precision_unvalidated"]
        )
        health = next(r for r in data["candidate_buckets"]["suppressed"] if r["name"] == "health")
        self.assertEqual(health["classification"], "excluded")
        self.assertEqual(health["suppression_reasons"], ["modeled_root:python.framework_decorator"])
        old = next(
            r for r in data["candidate_buckets"]["cleanup_ready"] if r["name"] == "old_refund"
        )
        self.assertEqual(old["classification"], "unused")
        self.assertEqual(old["source_handle"]["relative_path"], "shop/service.py")
        self.assertEqual(
            data["bucket_counts"]["cleanup_ready"], len(data["candidate_buckets"]["cleanup_ready"])
        )
        self.assertFalse(data["candidate_scan_truncated"])  # the whole repository is read
        self.assertEqual(data["candidate_scan_files"], data["scope_files"])
        self.assertEqual(data["coverage"]["query_shape"], "bounded_dead_code_investigation")
        self.assertEqual(data["language_maturity"]["python"], "derived")
        self.assertEqual(answer.truth["capability"], "code_quality.dead_code")
        self.assertEqual(answer.truth["level"], "derived")

    def test_exclude_decorated_with_suppresses_user_roots(self):
        data = self.investigate(exclude_decorated_with=["internal_api"]).data
        tooling = next(
            r for r in data["candidate_buckets"]["suppressed"] if r["name"] == "tooling_hook"
        )
        self.assertEqual(tooling["suppression_reasons"], ["user_decorator_exclusion"])
        self.assertTrue(data["analysis"]["user_overrides_applied"])

    def test_offset_pages_active_candidates(self):
        first = self.investigate(limit=1).data
        second = self.investigate(limit=1, offset=1).data
        self.assertTrue(first["truncated"])
        self.assertEqual(first["next_offset"], 1)
        first_rows = (
            first["candidate_buckets"]["cleanup_ready"] + first["candidate_buckets"]["ambiguous"]
        )
        second_rows = (
            second["candidate_buckets"]["cleanup_ready"] + second["candidate_buckets"]["ambiguous"]
        )
        self.assertNotEqual(first_rows[0]["entity_id"], second_rows[0]["entity_id"])

    def test_language_filter_keeps_python_only(self):
        data = self.investigate(language="python").data
        names = {r["name"] for r in data["candidate_buckets"]["ambiguous"]}
        self.assertNotIn("unusedWidget", names)

    def test_offset_bounds(self):
        route = "/code/dead-code/investigate"
        self.assertEqual(error_of(self.conn, route, {"offset": -1}).detail, "offset must be >= 0")
        self.assertEqual(
            error_of(self.conn, route, {"offset": 2001}).detail, "offset must be <= 2000"
        )


class FindDeadCodeTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = dead_index(self)
        self.conn = self.index.reader()

    def test_results_list_unused_and_ambiguous_only(self):
        data = call(
            self.conn, "/code/dead-code", {"repo_id": "shop", "exclude_decorated_with": None}
        )
        rows = {r["name"]: r["classification"] for r in data.data["results"]}
        self.assertEqual(rows["old_refund"], "unused")
        self.assertEqual(rows["weakly_used"], "ambiguous")
        self.assertNotIn("health", rows)
        self.assertNotIn("create_charge", rows)
        self.assertEqual(data.data["candidate_scan_pages"], 1)

    def test_candidate_kind_filters_and_validates(self):
        data = call(self.conn, "/code/dead-code", {"repo_id": "shop", "candidate_kind": "Class"})
        self.assertEqual([r["name"] for r in data.data["results"]], ["UnusedRecord", "Child"])
        error = error_of(self.conn, "/code/dead-code", {"candidate_kind": "Variable"})
        self.assertEqual(error.detail, "unsupported candidate_kind")


class PathRuleTests(SynchronousTestCase):
    def test_test_and_generated_paths(self):
        self.assertTrue(is_test_path("pkg/server_test.go"))
        self.assertTrue(is_test_path("src/__tests__/a.ts"))
        self.assertTrue(is_test_path("web/button.spec.tsx"))
        self.assertFalse(is_test_path("pkg/testing_utils.go"))
        self.assertTrue(is_generated_path("api/v1/service.pb.go"))
        self.assertFalse(is_generated_path("api/v1/service.go"))

    def test_framework_decorators_by_callee_with_or_without_at(self):
        self.assertTrue(is_framework_decorator('app.get("/x")'))
        self.assertTrue(is_framework_decorator("@pytest.fixture"))
        self.assertTrue(is_framework_decorator("property"))
        self.assertFalse(is_framework_decorator("@widget_registry"))
        self.assertFalse(is_framework_decorator("implementer(IWorker)"))
