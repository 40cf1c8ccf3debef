"""Tests for entity resolution, entity context, the entity inventory and citations."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from tests.test_api_resource import ApiClient, rich_index


class EntityCase(SynchronousTestCase):
    def setUp(self):
        self.ids = rich_index(self.mktemp())
        self.client = ApiClient(self, self.ids["index"].path)


class ResolveTests(EntityCase):
    def resolve(self, body, **kwargs):
        return self.client.post("/entities/resolve", body, **kwargs)

    def test_exact_name_with_type_resolves_globally(self):
        body = self.resolve({"name": "PaymentService", "type": "class"}, envelope=True).json()
        entity = body["data"]["entities"][0]
        self.assertEqual(entity["id"], self.ids["class"])
        self.assertEqual(entity["labels"], ["Class"])
        self.assertEqual((entity["repo_name"], entity["file_path"]), ("payments", "app/service.py"))
        self.assertEqual(body["data"]["matches"], body["data"]["entities"])
        self.assertEqual((body["truth"]["basis"], body["truth"]["level"]), ("hybrid", "derived"))

    def test_substring_fallback_within_a_repository(self):
        data = self.resolve({"name": "refund", "repo_id": "payments"}).json()
        self.assertEqual([e["name"] for e in data["entities"]], ["old_refund"])

    def test_a_qualified_name_resolves_to_the_method_it_names(self):
        for name in ("PaymentService.charge", "service.PaymentService.charge()"):
            data = self.resolve({"name": name, "type": "function"}).json()
            self.assertEqual([e["id"] for e in data["entities"]], [self.ids["charge"]], name)

    def test_canonical_id_resolves_directly(self):
        data = self.resolve({"name": self.ids["charge"], "repo_id": "payments"}).json()
        self.assertEqual(data["entities"][0]["name"], "charge")

    def test_validation_errors(self):
        cases = [
            ({}, "name is required"),
            ({"name": "x"}, "global entity resolution requires type or repo_id"),
            ({"name": "x", "type": "widget"}, 'unknown entity type "widget"'),
        ]
        for body, detail in cases:
            response = self.resolve(body)
            self.assertEqual((response.status, response.json()["detail"]), (400, detail))
        self.assertEqual(self.resolve({"name": "x", "repo_id": "nope"}).status, 404)

    def test_limit_truncates(self):
        data = self.resolve({"name": "a", "repo_id": "payments", "limit": 1}).json()
        self.assertEqual((data["count"], data["truncated"]), (1, True))


class ContextTests(EntityCase):
    def test_context_lists_incoming_and_outgoing_edges(self):
        body = self.client.get(f"/entities/{self.ids['charge']}/context", envelope=True).json()
        data = body["data"]
        self.assertEqual(data["name"], "charge")
        kinds = sorted(
            (r["type"], r["source_name"], r["target_name"]) for r in data["relationships"]
        )
        self.assertEqual(
            kinds, [("CALLS", "create_charge", "charge"), ("CONTAINS", "PaymentService", "charge")]
        )
        call = next(r for r in data["relationships"] if r["type"] == "CALLS")
        self.assertEqual(call["source_file_path"], "app/api.py")
        self.assertEqual(call["provenance"]["confidence_tier"], "high")
        self.assertTrue(data["relationships_complete"])
        self.assertEqual(body["truth"]["freshness"]["state"], "fresh")

    def test_entity_handle_prefix_is_accepted(self):
        response = self.client.get(f"/entities/entity:{self.ids['charge']}/context")
        self.assertEqual(response.status, 200)

    def test_unknown_entity_is_404(self):
        response = self.client.get("/entities/content-entity:e_nothere/context")
        self.assertEqual((response.status, response.json()["detail"]), (404, "entity not found"))


class InventoryTests(EntityCase):
    def test_facets_and_filters(self):
        data = self.client.get("/graph/entities", params={"repo_id": "payments"}).json()
        self.assertEqual(data["facets"]["entity_types"], {"Class": 1, "Function": 3})
        self.assertEqual(data["total"], 4)
        functions = self.client.get(
            "/graph/entities", params={"entity_type": "function", "limit": "2"}
        ).json()
        self.assertEqual((functions["count"], functions["truncated"]), (2, True))
