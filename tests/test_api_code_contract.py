"""
The code routes through the real ``LocalQueryResource``: every route answers its sample
request with the canonical envelope, a ``local_lightweight`` truth block and the keys and
types the packaged OpenAPI skeleton documents; errors keep Eshu's wire shapes.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.routemap import load_openapi
from tests.test_api_code_common import shop_index
from tests.test_api_resource import ApiClient
from tests.test_api_routemap import OPTIONAL_KEYS, schema_problems

SAMPLES = {
    "/code/search": {"query": "charge", "repo_id": "shop"},
    "/code/symbols/search": {"symbol": "charge", "repo_id": "shop"},
    "/code/language-query": {"language": "python", "entity_type": "function", "query": "ch"},
    "/code/relationships": {"name": "charge", "repo_id": "shop"},
    "/code/relationships/story": {"target": "charge", "repo_id": "shop"},
    "/code/call-chain": {"start": "batch", "end": "helper", "repo_id": "shop"},
    "/code/dead-code": {"repo_id": "shop"},
    "/code/dead-code/investigate": {"repo_id": "shop"},
    "/code/dead-code/cross-repo": {"repo_id": "shop"},
    "/code/complexity": {"repo_id": "shop"},
    "/code/quality/inspect": {"repo_id": "shop", "min_complexity": 1},
    "/code/imports/investigate": {"repo_id": "shop"},
    "/code/call-graph/metrics": {"repo_id": "shop"},
    "/code/topics/investigate": {"topic": "charge helper", "repo_id": "shop"},
    "/code/security/secrets/investigate": {"repo_id": "shop"},
    "/code/structure/inventory": {"repo_id": "shop"},
}
# Keys the skeleton documents for a single-function complexity answer, absent from the
# list form (Eshu returns one or the other).
COMPLEXITY_SINGLE_KEYS = {
    "entity_id",
    "name",
    "labels",
    "file_path",
    "repo_name",
    "language",
    "start_line",
    "end_line",
    "metadata",
    "outgoing_count",
    "incoming_count",
    "total_relationships",
}
# Route-specific keys documented for other branches of the same operation.
BRANCH_KEYS = {
    "/code/complexity": COMPLEXITY_SINGLE_KEYS,
    "/code/relationships": {"metadata"},
    "/code/relationships/story": {"class_hierarchy", "override_story"},
    "/code/imports/investigate": {"modules", "cycles", "cross_module_calls"},
}


class CodeContractTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = shop_index(self)
        self.client = ApiClient(self, self.index.path)

    def test_every_code_route_matches_the_skeleton(self):
        openapi = load_openapi()
        for path, body in SAMPLES.items():
            response = self.client.post(path, body, envelope=True)
            self.assertEqual(response.status, 200, (path, response.body))
            payload = response.json()
            self.assertEqual(list(payload), ["data", "truth", "error"], path)
            self.assertEqual(payload["truth"]["profile"], "local_lightweight", path)
            self.assertIn(payload["truth"]["level"], ("derived", "exact"), path)
            operation = openapi.get(f"POST /api/v0{path}")
            if operation is None:
                continue
            schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
            documented = set(schema.get("properties") or {})
            missing = (
                documented - set(payload["data"]) - OPTIONAL_KEYS - BRANCH_KEYS.get(path, set())
            )
            self.assertEqual(missing, set(), path)
            self.assertEqual(schema_problems(payload["data"], schema), [], path)

    def test_plain_answer_without_the_envelope(self):
        response = self.client.post("/code/search", SAMPLES["/code/search"])
        self.assertEqual(response.status, 200)
        self.assertEqual(response.json()["source"], "content")

    def test_validation_error_is_plain_even_when_enveloped(self):
        response = self.client.post("/code/search", {"query": ""}, envelope=True)
        self.assertEqual(response.status, 400)
        self.assertEqual(response.json(), {"error": "Bad Request", "detail": "query is required"})

    def test_wrong_json_type_is_a_400(self):
        response = self.client.post("/code/search", {"query": "charge", "limit": "5"})
        self.assertEqual(response.status, 400)
        self.assertTrue(response.json()["detail"].startswith("invalid JSON: "))

    def test_complexity_ambiguity_envelope_and_plain_forms(self):
        body = {"function_name": "run", "repo_id": "shop"}
        enveloped = self.client.post("/code/complexity", body, envelope=True)
        self.assertEqual(enveloped.status, 409)
        payload = enveloped.json()
        self.assertIsNone(payload["data"])
        self.assertEqual(payload["truth"]["capability"], "code_quality.complexity")
        self.assertEqual(payload["error"]["code"], "ambiguous")
        self.assertEqual(payload["error"]["details"]["function_name"], "run")
        plain = self.client.post("/code/complexity", body).json()
        self.assertEqual(plain["status"], "ambiguous")
        self.assertEqual(plain["detail"], payload["error"]["message"])

    def test_metrics_past_the_pair_ceiling_are_answered_with_their_total(self):
        from eshu_mcp.query.local.api.platform.generation_answers import GENERATION_ANSWERS
        from eshu_mcp.query.local.api.quality import call_graph_metrics

        self.addCleanup(GENERATION_ANSWERS.forget)
        self.patch(call_graph_metrics, "EDGE_SCOPE_LIMIT", 2)
        body = {"repo_id": "shop", "limit": 1}
        response = self.client.post("/code/call-graph/metrics", body, envelope=True)
        self.assertEqual(response.status, 200)
        data = response.json()["data"]
        self.assertEqual(data["count"], 1)
        self.assertGreater(data["total"], 2)
        self.assertTrue(data["truncated"])
