"""Tests for the static catalogs: capabilities, surfaces, playbooks, workflows, OpenAPI."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.catalog.contract import load_contract
from eshu_mcp.query.local.api.platform.catalogs import load_catalog, surfaces
from tests.test_api_resource import ApiClient, small_index


class CatalogCase(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = small_index(self)
        self.client = ApiClient(self, self.index.path)


class CapabilityTests(CatalogCase):
    def test_catalog_pages_and_filters_by_maturity(self):
        body = self.client.get("/capabilities", params={"limit": "5"}, envelope=True).json()
        data = body["data"]
        self.assertEqual(len(data["capabilities"]), 5)
        self.assertTrue(data["truncated"])
        self.assertEqual(body["truth"]["capability"], "capability_catalog.list")
        self.assertEqual(body["truth"]["level"], "exact")
        served = self.client.get(
            "/capabilities", params={"maturity": "general_availability"}
        ).json()["capabilities"]
        self.assertIn("query.playbooks", {c["capability"] for c in served})

    def test_strict_paging_errors(self):
        self.assertEqual(
            self.client.get("/capabilities", params={"limit": "0"}).json()["detail"],
            "limit must be an integer in [1, 500]",
        )
        self.assertEqual(
            self.client.get("/capabilities", params={"offset": "-1"}).json()["detail"],
            "offset must be a non-negative integer",
        )

    def test_collector_capabilities_are_not_implemented(self):
        entries = {c["capability"]: c for c in load_catalog("capabilities")["capabilities"]}
        self.assertEqual(entries["graph_query.read_only_cypher"]["maturity"], "not_implemented")
        self.assertEqual(entries["code_search.symbol_lookup"]["maturity"], "general_availability")


class SurfaceTests(CatalogCase):
    def test_surfaces_cover_routes_and_tools(self):
        items = surfaces()
        self.assertEqual(sum(1 for s in items if s["category"] == "api_route"), 255)
        self.assertEqual(sum(1 for s in items if s["category"] == "mcp_tool"), len(load_contract()))
        data = self.client.get(
            "/surface-inventory", params={"category": "mcp_tool", "readiness": "implemented"}
        ).json()
        self.assertIn("find_code", {s["name"] for s in data["surfaces"]})
        bad = self.client.get("/surface-inventory", params={"category": "x"})
        self.assertEqual(bad.status, 400)


class PlaybookTests(CatalogCase):
    def test_listing_has_versions(self):
        data = self.client.get("/query-playbooks").json()
        self.assertEqual(data["schema_version"], "query-playbooks.v1")
        self.assertEqual(data["count"], len(data["playbooks"]))
        self.assertEqual(data["versions"][0]["id"], data["playbooks"][0]["id"])

    def test_resolve_binds_inputs_and_constants(self):
        data = self.client.post(
            "/query-playbooks/resolve",
            {"playbook_id": "code.locate_symbol", "inputs": {"symbol": "charge"}},
        ).json()
        step = data["resolved"]["steps"][0]
        self.assertEqual(step["params"], {"symbol": "charge", "match_mode": "exact", "limit": 25})

    def test_resolve_errors_are_enveloped_with_the_capability(self):
        missing = self.client.post("/query-playbooks/resolve", {}, envelope=True).json()["error"]
        self.assertEqual(
            (missing["code"], missing["message"]), ("invalid_argument", "playbook_id is required")
        )
        self.assertEqual(missing["capability"], "query.playbooks")
        unknown = self.client.post("/query-playbooks/resolve", {"playbook_id": "x"})
        self.assertEqual(
            (unknown.status, unknown.json()["detail"]), (404, "query playbook not found")
        )
        needs = self.client.post("/query-playbooks/resolve", {"playbook_id": "code.who_calls"})
        self.assertEqual(needs.json()["detail"], "missing required inputs: target")

    def test_every_playbook_and_workflow_names_real_tools(self):
        names = {tool["name"] for tool in load_contract()}
        for playbook in load_catalog("query_playbooks")["playbooks"]:
            for step in playbook["steps"]:
                self.assertIn(step["tool"], names)
        for workflow in load_catalog("investigation_workflows")["workflows"]:
            for route in workflow["missing_evidence_routes"]:
                for call in route["calls"]:
                    self.assertIn(call["tool"], names)


class WorkflowTests(CatalogCase):
    def test_resolve_binds_calls_for_missing_evidence(self):
        data = self.client.post(
            "/investigation-workflows/resolve",
            {
                "workflow_id": "guided_code_change_impact",
                "inputs": {"target": "charge", "repo_id": "payments"},
                "missing_evidence": ["callers"],
            },
        ).json()
        calls = data["resolved"]["calls"]
        self.assertEqual([c["id"] for c in calls], ["find_callers"])
        self.assertEqual(calls[0]["params"]["target"], "charge")

    def test_calls_missing_inputs_are_reported_unbound(self):
        data = self.client.post(
            "/investigation-workflows/resolve", {"workflow_id": "guided_code_change_impact"}
        ).json()
        self.assertEqual(data["resolved"]["calls"], [])
        self.assertEqual(len(data["resolved"]["unbound_calls"]), 3)

    def test_unknown_workflow_is_404(self):
        response = self.client.post("/investigation-workflows/resolve", {"workflow_id": "x"})
        self.assertEqual(response.status, 404)


class OpenApiTests(CatalogCase):
    def test_document_lists_only_answered_operations(self):
        doc = self.client.get("/openapi.json", envelope=True).json()
        self.assertEqual(doc["openapi"], "3.0.3")
        self.assertIn("post", doc["paths"]["/api/v0/code/search"])
        self.assertIn("get", doc["paths"]["/api/v0/repositories"])
