"""Tests for repository scope: selectors, unindexed canonical ids and scoped-token grants."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.auth.principal import Principal
from tests.test_api_code_common import CodeIndex, call, error_of, scratch_dir


class RepositoryGrantTests(SynchronousTestCase):
    """A scoped caller sees only the repositories its grants name, on every code route."""

    def setUp(self):
        index = CodeIndex(scratch_dir(self))
        self.payments = index.repository("payments")
        self.ledger = index.repository("ledger")
        text = 'def charge():\n    return 1\nTOKEN = "abcdef123456"\n'
        for repo in (self.payments, self.ledger):
            file_id = index.file(repo, "app.py", text)
            index.entity(file_id, "Function", "charge", 1, 2)
            index.secret(file_id, 3, "api_token", 'TOKEN = "[REDACTED]"')
        self.hidden_charge = index.writer.execute(
            "SELECT entity_id FROM entities WHERE repo_id = ?", (self.payments,)
        ).fetchone()[0]
        index.writer.commit()
        self.conn = index.reader()
        self.scoped = Principal(mode="scoped", allowed_repository_ids=(self.ledger,))

    def test_unscoped_searches_only_return_granted_repositories(self):
        for pattern, body in (
            ("/code/search", {"query": "charge"}),
            ("/code/symbols/search", {"symbol": "charge"}),
            ("/code/security/secrets/investigate", {}),
        ):
            data = call(self.conn, pattern, body, principal=self.scoped).data
            rows = data.get("results", data.get("findings"))
            self.assertEqual({row["repo_id"] for row in rows}, {self.ledger}, pattern)
            self.assertEqual(data.get("repo_id", data.get("scope", {}).get("repo_id")), "")

    def test_entity_in_an_ungranted_repository_is_not_found(self):
        error = error_of(
            self.conn, "/code/relationships", {"entity_id": self.hidden_charge}, self.scoped
        )
        self.assertEqual((error.status, error.detail), (404, "entity not found"))
        data = call(
            self.conn,
            "/code/relationships/story",
            {"entity_id": self.hidden_charge},
            principal=self.scoped,
        ).data
        self.assertEqual(data["target_resolution"]["status"], "unresolved")

    def test_naming_an_ungranted_repository_is_a_selector_error(self):
        error = error_of(
            self.conn, "/code/search", {"query": "charge", "repo_id": "payments"}, self.scoped
        )
        self.assertEqual(error.status, 400)
        self.assertIn("did not match any indexed repository", error.detail)

    def test_unindexed_canonical_id_finds_nothing(self):
        data = call(
            self.conn, "/code/search", {"query": "charge", "repo_id": "repository:r_00000000"}
        ).data
        self.assertEqual((data["repo_id"], data["count"]), ("repository:r_00000000", 0))
