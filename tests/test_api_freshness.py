"""Tests for the generation lifecycle and changed-since routes."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from tests.test_api_resource import ApiClient, rich_index


class FreshnessCase(SynchronousTestCase):
    def setUp(self):
        self.ids = rich_index(self.mktemp())
        self.client = ApiClient(self, self.ids["index"].path)

    def get(self, path, envelope=True, **params):
        return self.client.get("/freshness" + path, params=params, envelope=envelope)


class GenerationTests(FreshnessCase):
    def test_generations_newest_first_with_lifecycle_fields(self):
        body = self.get("/generations", repository="payments").json()
        rows = body["data"]["generations"]
        self.assertEqual(
            [r["generation_id"] for r in rows], [self.ids["active"], self.ids["since"]]
        )
        active, old = rows
        self.assertTrue(active["is_active"])
        self.assertEqual(active["current_active_generation_id"], self.ids["active"])
        self.assertEqual(active["queue_status"]["succeeded"], 1)
        self.assertEqual(old["status"], "superseded")
        self.assertEqual(body["truth"]["level"], "exact")
        self.assertEqual(body["truth"]["basis"], "semantic_facts")
        self.assertEqual(body["truth"]["freshness"]["state"], "fresh")

    def test_status_and_limit_are_validated(self):
        bad_status = self.get("/generations", status="done").json()
        self.assertEqual(
            bad_status["detail"],
            "status must be one of pending, active, superseded, completed, failed",
        )
        for limit in ("0", "501", "x"):
            response = self.get("/generations", limit=limit)
            self.assertEqual(response.json()["detail"], "limit must be between 1 and 500")

    def test_limit_truncates(self):
        data = self.get("/generations", limit="1").json()["data"]
        self.assertEqual((data["count"], data["truncated"]), (1, True))

    def test_unknown_repository_is_scope_not_found_envelope(self):
        response = self.get("/generations", repository="nope")
        self.assertEqual(response.status, 404)
        error = response.json()["error"]
        self.assertEqual(error["code"], "scope_not_found")
        self.assertEqual(error["message"], 'no generation lifecycle records for repository "nope"')
        plain = self.get("/generations", envelope=False, scope_id="git-repository-scope:x")
        self.assertEqual(plain.json()["error"], "Not Found")

    def test_unknown_generation_is_not_found(self):
        error = self.get("/generations", generation_id="nope").json()["error"]
        self.assertEqual(error["code"], "not_found")

    def test_pending_generation_marks_truth_building(self):
        self.ids["index"].hold_writer_lock()  # the indexer writing it is running
        writer = self.ids["index"].writer
        writer.execute(
            "INSERT INTO generations (generation_id, repo_id, seq, scope_id, status, observed_at)"
            " VALUES ('p', ?, 3, 's', 'pending', '2026-12-02T10:09:00Z')",
            (self.ids["repo"],),
        )
        writer.commit()
        truth = self.get("/generations", status="pending").json()["truth"]
        self.assertEqual(truth["freshness"]["state"], "building")
        self.assertEqual(
            truth["freshness"]["detail"],
            "at least one returned scope has a pending or in-flight generation",
        )

    def test_pending_generation_of_a_dead_run_is_interrupted_and_truth_fresh(self):
        index = self.ids["index"]
        index.hold_writer_lock()
        index.writer.execute(
            "INSERT INTO generations (generation_id, repo_id, seq, scope_id, status, observed_at)"
            " VALUES ('p', ?, 3, 's', 'pending', '2026-12-02T10:09:00Z')",
            (self.ids["repo"],),
        )
        index.writer.commit()
        index.writer_died()
        self.assertEqual(self.get("/generations", status="pending").json()["data"]["count"], 0)
        body = self.get("/generations", repository="payments").json()
        self.assertEqual(body["truth"]["freshness"]["state"], "fresh")
        dead = body["data"]["generations"][0]
        self.assertEqual((dead["generation_id"], dead["status"]), ("p", "failed"))
        self.assertEqual(dead["latest_failure"]["failure_class"], "interrupted")
        self.assertEqual(dead["queue_status"]["outstanding"], 0)
        failed = self.get("/generations", status="failed").json()["data"]["generations"]
        self.assertEqual([row["generation_id"] for row in failed], ["p"])


class ChangedSinceTests(FreshnessCase):
    def test_counts_and_samples_per_category(self):
        body = self.get(
            "/changed-since", repository="payments", since_generation_id=self.ids["since"]
        ).json()
        data = body["data"]
        self.assertEqual(data["current_active_generation_id"], self.ids["active"])
        self.assertEqual(data["scope_id"], "git-repository-scope:" + self.ids["repo"])
        files, entities, facts = data["categories"]
        self.assertEqual(
            files["counts"],
            {"added": 1, "updated": 1, "unchanged": 0, "retired": 1, "superseded": 0},
        )
        self.assertEqual(
            [s["stable_fact_key"] for s in files["samples"]["retired"]],
            [f"file:{self.ids['repo']}:app/gone.py"],
        )
        self.assertEqual(
            entities["counts"],
            {"added": 0, "updated": 0, "unchanged": 1, "retired": 0, "superseded": 1},
        )
        self.assertEqual(facts["counts"]["updated"], 1)
        self.assertFalse(data["unavailable"])
        self.assertEqual(body["truth"]["capability"], "freshness.changed_since")

    def test_samples_are_capped_with_truncation_flags(self):
        data = self.get(
            "/changed-since",
            scope_id="git-repository-scope:" + self.ids["repo"],
            since_generation_id=self.ids["since"],
            sample_limit="1",
        ).json()["data"]
        files = data["categories"][0]
        self.assertEqual(len(files["samples"]["added"]), 1)
        self.assertNotIn("truncated", files)

    def test_since_observed_at_picks_the_generation_observed_before(self):
        data = self.get(
            "/changed-since", repository="payments", since_observed_at="2026-12-02T10:01:30Z"
        ).json()["data"]
        self.assertEqual(data["since_generation_id"], self.ids["since"])
        self.assertEqual(data["since_observed_at"], "2026-12-02T10:01:30Z")

    def test_validation_messages(self):
        cases = [
            ({}, "scope_id or repository is required"),
            (
                {"repository": "payments", "since_observed_at": "yesterday"},
                "since_observed_at must be an RFC3339 timestamp",
            ),
            (
                {"repository": "payments", "since_generation_id": "g", "sample_limit": "0"},
                "sample_limit must be between 1 and 200",
            ),
        ]
        for params, detail in cases:
            response = self.get("/changed-since", envelope=False, **params)
            self.assertEqual((response.status, response.json()["detail"]), (400, detail))

    def test_unknown_since_generation_is_not_found(self):
        response = self.get("/changed-since", repository="payments", since_generation_id="zzz")
        self.assertEqual(response.status, 404)
        self.assertEqual(response.json()["error"]["code"], "not_found")

    def test_expired_retention_is_unavailable(self):
        writer = self.ids["index"].writer
        writer.execute(
            "INSERT INTO meta (key, value) VALUES (?, '2')",
            ("fact_retention_min_seq:" + self.ids["repo"],),
        )
        writer.commit()
        data = self.get(
            "/changed-since", repository="payments", since_generation_id=self.ids["since"]
        ).json()["data"]
        self.assertTrue(data["unavailable"])
        self.assertEqual(data["unavailable_reason"], "retention_expired")
        self.assertTrue(all(c["unavailable"] for c in data["categories"]))
