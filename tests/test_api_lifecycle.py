"""Freshness and status answers for a repository whose directory was deleted."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from tests.test_api_resource import ApiClient
from tests.test_index_lifecycle import small_repository


class MissingDirectoryTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-missing-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.alpha = small_repository(self.tmp, "alpha")
        self.beta = small_repository(self.tmp, "beta")
        db = self.tmp / "index.sqlite"
        report = index_repositories(db, [self.alpha, self.beta], workers=1)
        self.alpha_id, self.beta_id = (repo.repo_id for repo in report.repositories)
        self.client = ApiClient(self, str(db))

    def freshness(self, repo_id: str) -> dict:
        return self.client.get(f"/repositories/{repo_id}/freshness", envelope=True).json()

    def test_a_present_repository_is_current_and_fresh(self) -> None:
        body = self.freshness(self.alpha_id)
        self.assertEqual(body["data"]["verdict"], "current")
        self.assertEqual(body["truth"]["freshness"]["state"], "fresh")
        health = self.client.get("/status/index").json()
        self.assertEqual(health["status"], "healthy")

    def test_a_deleted_directory_is_missing_never_current_or_fresh(self) -> None:
        shutil.rmtree(self.alpha)
        body = self.freshness(self.alpha_id)
        self.assertEqual(body["data"]["verdict"], "missing")
        freshness = body["truth"]["freshness"]
        self.assertEqual((freshness["state"], freshness["cause"]), ("stale", "repository_missing"))
        self.assertIn(f"repository directory {self.alpha} is missing", freshness["detail"])
        self.assertIn("eshu-mcp index --prune", freshness["detail"])
        self.assertEqual(self.freshness(self.beta_id)["data"]["verdict"], "current")

    def test_unscoped_answers_and_index_status_name_the_missing_directory(self) -> None:
        shutil.rmtree(self.alpha)
        generations = self.client.get("/freshness/generations", envelope=True).json()
        self.assertNotEqual(generations["truth"]["freshness"]["state"], "fresh")
        repos = self.client.get("/repositories", envelope=True).json()
        self.assertEqual(repos["truth"]["freshness"]["cause"], "repository_missing")
        health = self.client.get("/status/index").json()
        self.assertEqual(health["status"], "degraded")
        self.assertIn(f"directories are missing ({self.alpha})", health["reasons"][0])
        readiness = self.client.get("/status/hosted-readiness").json()
        self.assertTrue(readiness["ready"])
