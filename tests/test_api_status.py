"""Tests for the status routes: plain JSON describing the local indexer."""

from __future__ import annotations

from datetime import UTC, datetime

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.status import index_health
from tests.test_api_resource import ApiClient, ApiIndex, rich_index


class StatusTests(SynchronousTestCase):
    def setUp(self):
        self.ids = rich_index(self.mktemp())
        self.client = ApiClient(self, self.ids["index"].path)

    def test_collectors_report_the_git_indexer_plain(self):
        body = self.client.get("/status/collectors", envelope=True).json()
        self.assertEqual(body["count"], 1)
        row = body["collectors"][0]
        self.assertEqual((row["collector_kind"], row["health"]), ("git", "healthy"))
        self.assertEqual(row["observation_count"], 3)
        self.assertEqual(body, self.client.get("/collectors").json())

    def test_ingesters_and_aliases(self):
        body = self.client.get("/status/ingesters").json()
        self.assertEqual(body["ingesters"][0]["name"], "repository")
        detail = self.client.get("/ingesters/workspace-index").json()
        self.assertEqual(detail["ingester"], "repository")
        self.assertEqual(detail["health"], {"state": "healthy", "reasons": []})
        missing = self.client.get("/status/ingesters/kafka", envelope=True)
        self.assertEqual(missing.status, 404)
        self.assertEqual(
            missing.json(), {"error": "Not Found", "detail": "unknown ingester: kafka"}
        )

    def test_index_status_counts_generations(self):
        body = self.client.get("/index-status").json()
        self.assertEqual(body["status"], "healthy")
        self.assertEqual(body["repository_count"], 2)
        self.assertEqual(body["queue"]["succeeded"], 3)
        self.assertEqual(body, self.client.get("/status/index").json())

    def test_hosted_readiness_json_and_text(self):
        body = self.client.get("/status/hosted-readiness").json()
        self.assertEqual((body["state"], body["ready"]), ("ready", True))
        hosted = next(c for c in body["checks"] if c["name"] == "hosted_collectors")
        self.assertEqual(hosted["state"], "fail")
        text = self.client.get("/status/hosted-readiness", params={"format": "text"})
        self.assertEqual(text.header("content-type"), "text/plain; charset=utf-8")
        self.assertTrue(text.body.startswith(b"state: ready\n"))

    def test_pipeline_is_plain_and_partial(self):
        body = self.client.get("/status/pipeline", envelope=True).json()
        self.assertEqual(body["partial_reasons"], ["embedded_pipeline_only"])


class HealthTests(SynchronousTestCase):
    def health(self, statuses, now="2026-12-02T10:30:00Z"):
        index = ApiIndex(self.mktemp())
        index.repository("r", generations=statuses)
        index.writer.commit()
        conn = index.reader()
        self.addCleanup(conn.close)
        moment = datetime.strptime(now, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        return index_health(conn, moment)

    def test_states_follow_the_latest_generations(self):
        self.assertEqual(self.health(("active",)).state, "healthy")
        self.assertEqual(self.health(("active", "pending")).state, "progressing")
        self.assertEqual(self.health(("active", "failed")).state, "degraded")
        stalled = self.health(("active", "pending"), now="2026-12-02T13:00:00Z")
        self.assertEqual(stalled.state, "stalled")
        self.assertEqual(stalled.queue["oldest_outstanding_age_ms"], 10680000)

    def test_empty_index_is_not_ready(self):
        index = ApiIndex(self.mktemp())
        index.writer.commit()
        client = ApiClient(self, index.path)
        body = client.get("/status/hosted-readiness").json()
        self.assertFalse(body["ready"])
        self.assertEqual(body["failure_classes"], ["index_empty"])
