"""Tests for evidence citation packets."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from tests.test_api_resource import ApiClient, rich_index


class CitationTests(SynchronousTestCase):
    def setUp(self):
        self.ids = rich_index(self.mktemp())
        self.client = ApiClient(self, self.ids["index"].path)

    def test_citations_rank_by_question_terms(self):
        body = self.client.post(
            "/evidence/citations",
            {
                "handles": [
                    {
                        "kind": "file",
                        "repo_id": "payments",
                        "relative_path": "app/api.py",
                        "start_line": 4,
                        "end_line": 5,
                    },
                    "entity:" + self.ids["refund"],
                ],
                "question": "where is old_refund",
            },
            envelope=True,
        ).json()
        citations = body["data"]["citations"]
        self.assertEqual([c["kind"] for c in citations], ["entity", "file"])
        self.assertEqual(citations[0]["rank"], 1)
        self.assertIn("def old_refund", citations[0]["excerpt"])
        self.assertEqual(
            citations[1]["excerpt"],
            "def create_charge(req):\n    return PaymentService().charge(req)",
        )
        self.assertEqual(body["truth"]["capability"], "evidence_citation.packet")

    def test_a_cut_packet_states_how_many_citations_resolved(self):
        file_handle = {"kind": "file", "repo_id": "payments", "relative_path": "app/api.py"}
        handles = [file_handle, "entity:" + self.ids["refund"], "entity:content-entity:e_no"]
        data = self.client.post("/evidence/citations", {"handles": handles, "limit": 1}).json()
        self.assertEqual((data["count"], data["total"], data["truncated"]), (1, 2, True))

    def test_unresolved_handles_are_reported_not_fatal(self):
        data = self.client.post(
            "/evidence/citations",
            {
                "handles": [
                    "entity:content-entity:e_missing",
                    {"repo_id": "nope", "relative_path": "a.py"},
                ]
            },
        ).json()
        self.assertEqual(data["citations"], [])
        self.assertEqual([m["index"] for m in data["missing_handles"]], [0, 1])

    def test_handles_are_required_and_paths_checked(self):
        self.assertEqual(self.client.post("/evidence/citations", {}).status, 400)
        response = self.client.post(
            "/evidence/citations",
            {"handles": [{"kind": "file", "repo_id": "payments", "relative_path": "../x"}]},
        )
        self.assertEqual(response.status, 400)
