"""Tests for the repository list, language and stats/coverage routes."""

from __future__ import annotations

from attrs import frozen
from treq.testing import StubTreq
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.resource import Resource

from eshu_mcp.query.local.api.platform.resource import PRINCIPAL_ATTRIBUTE
from tests.test_api_resource import ApiClient, mount, rich_index


@frozen
class OnlyLedger:
    repo_id: str

    def may_read_repository(self, repo_id: str) -> bool:
        return repo_id == self.repo_id


class RepositoriesCase(SynchronousTestCase):
    def setUp(self):
        self.ids = rich_index(self.mktemp())
        self.client = ApiClient(self, self.ids["index"].path)


class ListTests(RepositoriesCase):
    def test_list_is_sorted_with_group_evidence(self):
        body = self.client.get("/repositories", envelope=True).json()
        data = body["data"]
        self.assertEqual([r["name"] for r in data["repositories"]], ["ledger", "payments"])
        ledger, payments = data["repositories"]
        self.assertEqual(
            (payments["group_key"], payments["group_source"]), ("Acme", "repo_slug_namespace")
        )
        self.assertEqual(ledger["group_source"], "missing_evidence")
        self.assertEqual(data["partial_reasons"], ["repository_group_evidence_missing"])
        self.assertEqual(data["result_limits"]["drilldown_tool"], "get_repository_stats")
        self.assertEqual(body["truth"]["capability"], "platform_impact.context_overview")

    def test_a_repository_whose_directory_is_gone_is_flagged_missing(self):
        import shutil

        from eshu_mcp.query.local.api.platform.work_trees import WORK_TREES

        shutil.rmtree(self.ids["tree"])
        self.addCleanup(WORK_TREES.forget)
        data = self.client.get("/repositories").json()
        rows = {row["name"]: row for row in data["repositories"]}
        self.assertTrue(rows["payments"]["missing"])
        self.assertIn("index --forget", rows["payments"]["missing_reason"])
        self.assertNotIn("missing", rows["ledger"])
        self.assertIn("repository_directory_missing", data["partial_reasons"])

    def test_limit_truncates_and_bad_values_fall_back(self):
        data = self.client.get("/repositories", params={"limit": "1"}).json()
        self.assertEqual((data["count"], data["total"], data["truncated"]), (1, 2, True))
        self.assertIn("repository_inventory_truncated", data["partial_reasons"])
        fallback = self.client.get("/repositories", params={"limit": "x", "offset": "99999"})
        self.assertEqual((fallback.json()["limit"], fallback.json()["offset"]), (100, 10000))

    def test_scoped_principal_sees_only_granted_repositories(self):
        principal = OnlyLedger(self.ids["other"])

        class WithPrincipal(Resource):
            """Stands in for the auth guard, which stores the caller's principal on the request."""

            isLeaf = True

            def render(inner, request):  # noqa: N805
                setattr(request, PRINCIPAL_ATTRIBUTE, principal)
                return self.client.resource.render(request)

        stub = StubTreq(mount(WithPrincipal()))
        response = self.successResultOf(stub.get("http://127.0.0.1/api/v0/repositories"))
        body = self.successResultOf(stub.json_content(response))
        self.assertEqual([r["name"] for r in body["repositories"]], ["ledger"])


class LanguageTests(RepositoriesCase):
    def test_by_language_expands_the_family(self):
        data = self.client.get("/repositories/by-language", params={"language": "ts"}).json()
        self.assertEqual(data["normalized_languages"], ["typescript", "tsx"])
        self.assertEqual((data["repository_count"], data["file_count"]), (1, 1))
        self.assertEqual(
            data["repositories"][0]["languages"][0], {"language": "python", "file_count": 2}
        )

    def test_limit_zero_counts_only(self):
        data = self.client.get(
            "/repositories/by-language", params={"language": "python", "limit": "0"}
        ).json()
        self.assertEqual((data["repository_count"], data["repositories"]), (1, []))

    def test_language_is_required(self):
        response = self.client.get("/repositories/by-language")
        self.assertEqual(
            (response.status, response.json()["detail"]), (400, "language is required")
        )

    def test_inventory_counts_repositories_and_files(self):
        data = self.client.get("/repositories/language-inventory").json()
        rows = {row["language"]: row for row in data["languages"]}
        self.assertEqual(rows["python"]["file_count"], 2)
        self.assertEqual(rows["go"]["repository_count"], 1)
        self.assertEqual(data["languages"][0]["language"], "python")


class StatsTests(RepositoriesCase):
    def test_stats_count_files_entities_and_types(self):
        data = self.client.get("/repositories/payments/stats").json()
        self.assertEqual((data["file_count"], data["entity_count"]), (4, 4))
        self.assertEqual(data["entity_types"], ["Function", "Class"])
        self.assertEqual(data["languages"], ["python", "tsx"])
        self.assertEqual(data["coverage"]["query_shape"], "content_store_repository_coverage")
        self.assertEqual(data["result_limits"]["drilldown_tool"], "get_repository_coverage")

    def test_stats_are_counted_once_per_generation(self):
        from eshu_mcp.query.local.api.platform.generation_answers import GENERATION_ANSWERS

        self.addCleanup(GENERATION_ANSWERS.forget)
        before = GENERATION_ANSWERS.computed
        first = self.client.get("/repositories/payments/stats").json()
        again = self.client.get("/repositories/payments/stats").json()
        self.assertEqual((first["file_count"], GENERATION_ANSWERS.computed), (4, before + 1))
        self.assertEqual(again, first)
        writer = self.ids["index"].writer
        writer.execute(
            "UPDATE repositories SET active_generation_id = 'next' WHERE repo_id = ?",
            (self.ids["repo"],),
        )
        writer.commit()
        self.client.get("/repositories/payments/stats")
        self.assertEqual(GENERATION_ANSWERS.computed, before + 2)

    def test_stats_kept_when_a_generation_commits_answer_the_first_call(self):
        from eshu_mcp.query.local.api.platform.generation_answers import GENERATION_ANSWERS
        from eshu_mcp.query.local.backend import keep_generation_answers

        self.addCleanup(GENERATION_ANSWERS.forget)
        keep_generation_answers(self.ids["index"].path, self.ids["repo"])
        computed = GENERATION_ANSWERS.computed
        data = self.client.get("/repositories/payments/stats").json()
        self.assertEqual(data["file_count"], 4)
        self.assertEqual(GENERATION_ANSWERS.computed, computed)

    def test_coverage_is_complete_for_an_indexed_repository(self):
        data = self.client.get(f"/repositories/{self.ids['repo']}/coverage").json()
        self.assertEqual(data["completeness_state"], "complete")
        self.assertTrue(data["graph_available"])
        self.assertEqual(data["summary"]["content_entity_count"], 4)

    def test_failed_latest_generation_is_partial(self):
        writer = self.ids["index"].writer
        writer.execute(
            "INSERT INTO generations (generation_id, repo_id, seq, scope_id, status,"
            " observed_at, failure_class, failure_message) VALUES ('f', ?, 3, 's', 'failed',"
            " '2026-12-02T11:00:00Z', 'index_error', 'disk full')",
            (self.ids["repo"],),
        )
        writer.commit()
        data = self.client.get("/repositories/payments/coverage").json()
        self.assertEqual(data["completeness_state"], "content_partial")
        self.assertEqual(data["last_error"], "index_error: disk full")

    def test_unknown_repository_is_404(self):
        self.assertEqual(self.client.get("/repositories/nope/stats").status, 404)
