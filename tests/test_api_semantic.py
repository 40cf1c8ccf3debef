"""Tests for keyword-mode semantic search."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.code.semantic import query_terms, rank
from tests.test_api_resource import ApiClient, rich_index

BASE = {
    "repo_id": "payments",
    "query": "charge amount",
    "mode": "keyword",
    "limit": 10,
    "timeout_ms": 500,
}


class SemanticTests(SynchronousTestCase):
    def setUp(self):
        self.ids = rich_index(self.mktemp())
        self.client = ApiClient(self, self.ids["index"].path)

    def search(self, envelope=False, **changes):
        return self.client.post("/search/semantic", {**BASE, **changes}, envelope=envelope)

    def test_keyword_mode_ranks_entities_and_files(self):
        body = self.search(envelope=True).json()
        data = body["data"]
        self.assertEqual(data["retrieval_state"], "keyword_only")
        self.assertEqual(data["search_mode"], "keyword")
        ranks = [r["rank"] for r in data["results"]]
        self.assertEqual(ranks, list(range(1, len(ranks) + 1)))
        scores = [r["score"] for r in data["results"]]
        self.assertEqual(scores, sorted(scores, reverse=True))
        kinds = {r["document"]["source_kind"] for r in data["results"]}
        self.assertEqual(kinds, {"code_entity", "repository_file"})
        self.assertEqual(data["indexed_document_count"], 8)
        self.assertEqual(body["truth"]["capability"], "semantic_search.curated_retrieval")

    def test_hybrid_degrades_and_semantic_is_unavailable(self):
        self.assertEqual(self.search(mode="hybrid").json()["retrieval_state"], "hybrid_degraded")
        response = self.search(mode="semantic")
        self.assertEqual(response.status, 503)
        self.assertEqual(response.json()["error_code"], "backend_unavailable")

    def test_errors_use_the_semantic_shape(self):
        response = self.search(repo_id="")
        self.assertEqual(
            response.json(),
            {
                "error_code": "invalid_argument",
                "message": "repo_id is required",
                "capability": "semantic_search.curated_retrieval",
            },
        )
        enveloped = self.search(envelope=True, source_kinds=["tweets"]).json()
        self.assertEqual(
            enveloped["error"]["message"], 'source_kinds contains unsupported value "tweets"'
        )
        self.assertEqual(self.search(limit=0).json()["message"], "limit must be between 1 and 100")
        self.assertEqual(self.search(repo_id="nope").status, 404)

    def test_scope_prefixed_repository_and_language_filter(self):
        data = self.search(
            repo_id="git-repository-scope:" + self.ids["repo"], languages=["go"]
        ).json()
        self.assertEqual(data["results"], [])
        self.assertEqual(data["facets"], {"languages": {}})

    def test_source_kind_filter_keeps_entities(self):
        data = self.search(source_kinds=["code_entity"]).json()
        self.assertTrue(all(r["document"]["source_kind"] == "code_entity" for r in data["results"]))

    def test_terms_and_ranking_helpers(self):
        self.assertEqual(query_terms("Charge, the ab 'amount'"), ["charge", "the", "amount"])
        docs = [{"title": "a", "text": "x"}, {"title": "b", "text": "charge charge"}]
        self.assertEqual([d["title"] for _, d in rank(docs, ["charge"])], ["b"])
