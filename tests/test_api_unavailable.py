"""Tests for the empty "collector not configured" pages and the 501 fallbacks."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, RouteTable
from eshu_mcp.query.local.api.platform.routemap import load_route_map
from eshu_mcp.query.local.api.platform.unavailable import empty_handler, evidence_source
from tests.test_api_resource import ApiClient, small_index


class EmptyPageTests(SynchronousTestCase):
    def setUp(self):
        self.index, _ = small_index(self)
        self.client = ApiClient(self, self.index.path)

    def test_image_identity_inventory_is_empty_with_unavailable_truth(self):
        body = self.client.get(
            "/supply-chain/container-images/identities/inventory", envelope=True
        ).json()
        self.assertEqual(body["data"]["buckets"], [])
        truth = body["truth"]
        self.assertEqual(truth["level"], "fallback")
        self.assertEqual(truth["freshness"]["state"], "unavailable")
        self.assertEqual(
            truth["freshness"]["detail"], "no supply-chain collector runs in the embedded backend"
        )
        self.assertEqual(
            truth["reason"],
            "embedded backend: supply-chain collector not configured; empty is not evidence"
            " of absence",
        )

    def test_plain_status_page_says_unavailable(self):
        body = self.client.get("/status/semantic-extraction", envelope=True).json()
        self.assertNotIn("truth", body)
        self.assertEqual(body["state"], "unavailable")
        self.assertFalse(body["provider_configured"])

    def test_post_page_echoes_body_paging(self):
        body = self.client.post(
            "/iac/terraform-import-plan/candidates", {"limit": 4, "offset": 8}
        ).json()
        self.assertEqual((body["limit"], body["offset"]), (4, 8))
        self.assertEqual(body["candidates"], [])

    def test_null_template_stays_null(self):
        self.assertEqual(self.client.get("/collector-readiness").body, b"null\n")

    def test_every_empty_route_names_a_source(self):
        for spec in load_route_map():
            if spec.mode == "serve-empty-unavailable":
                self.assertNotEqual(evidence_source(spec.relative_path), "", spec.path)

    def test_pages_are_fresh_copies(self):
        spec = next(s for s in load_route_map() if s.path == "/api/v0/iac/dead")
        routes = RouteTable()
        routes.add("POST", "/iac/dead", empty_handler(spec))
        client = ApiClient(self, self.index.path, routes)
        client.post("/iac/dead", {"limit": 3})
        self.assertEqual(spec.empty_data_template["limit"], 0)


class UnsupportedTests(SynchronousTestCase):
    def setUp(self):
        self.index, _ = small_index(self)
        self.client = ApiClient(self, self.index.path)

    def test_cypher_is_unsupported_capability(self):
        body = self.client.post(
            "/code/cypher", {"cypher_query": "MATCH (n) RETURN n"}, envelope=True
        ).json()
        self.assertEqual(body["error"]["code"], "unsupported_capability")
        self.assertEqual(body["error"]["capability"], "graph_query.read_only_cypher")

    def test_admin_routes_require_production(self):
        response = self.client.post("/admin/reindex", {})
        self.assertEqual(response.status, 501)
        self.assertEqual(response.json()["error"], "Not Implemented")

    def test_a_real_handler_replaces_the_fallback(self):
        fallback = ROUTES.find("POST", "/code/cypher")
        self.assertTrue(fallback.fallback)
        routes = RouteTable()
        routes.add("POST", "/code/cypher", fallback.handler, fallback=True)
        routes.add("POST", "/code/cypher", lambda ctx: Answer({"rows": []}))
        client = ApiClient(self, self.index.path, routes)
        self.assertEqual(client.post("/code/cypher", {}).json(), {"rows": []})
