"""Tests for eshu_mcp.query.local.index.store.identity: Eshu's id formulas."""

import hashlib

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.store.identity import (
    entity_id,
    entity_ids_in,
    generation_id,
    go_json,
    normalize_remote_url,
    repository_id,
    scope_id,
)

REPO = "repository:r_aa6e8afe"


class IdentityTests(SynchronousTestCase):
    def test_repository_id_of_a_normalized_remote_matches_eshu(self) -> None:
        remote = normalize_remote_url("git@GitHub.com:Acme/Payments.git")
        self.assertEqual(remote, "https://github.com/acme/payments")
        self.assertEqual(repository_id(remote), REPO)

    def test_remote_forms_normalize_alike(self) -> None:
        for url in (
            "https://user:pw@github.com/acme/payments.git",
            "ssh://git@github.com:22/acme//payments",
            "https://GITHUB.com/Acme/Payments/",
        ):
            self.assertEqual(normalize_remote_url(url), "https://github.com/acme/payments", url)
        self.assertIsNone(normalize_remote_url("not a url"))

    def test_entity_ids_match_eshus_fixture_ids(self) -> None:
        cases = [
            ("app/service.py", "Function", "charge", 12, "content-entity:e_d412691e5b63"),
            ("app/api.py", "Function", "create_charge", 20, "content-entity:e_b5d6da1b8928"),
            ("app/service.py", "Class", "PaymentService", 5, "content-entity:e_c4f8967272d9"),
            ("app/legacy.py", "Function", "old_refund", 3, "content-entity:e_e8d77ab897ac"),
        ]
        for path, kind, name, line, expected in cases:
            self.assertEqual(entity_id(REPO, path, kind, name, line), expected)

    def test_one_files_entity_ids_match_eshus_fixture_ids(self) -> None:
        of_service = entity_ids_in(REPO, "app/service.py")
        self.assertEqual(of_service("Function", "charge", 12), "content-entity:e_d412691e5b63")
        self.assertEqual(of_service("Class", "PaymentService", 5), "content-entity:e_c4f8967272d9")
        for repo, path, kind, name, line in (
            (f" {REPO}\t", " odd/päth.py ", " METHOD ", "  spaced\n", 1),
            (REPO, "a.go", "Struct", "Ünïcode", 123456),
        ):
            self.assertEqual(
                entity_ids_in(repo, path)(kind, name, line), entity_id(repo, path, kind, name, line)
            )

    def test_generation_id_hashes_go_style_json(self) -> None:
        payload = (
            '{"fact_type":"GitRepositorySnapshot","identity":'
            '{"repo_path":"/r/a\\u003cb","source_run_id":"run-1"}}'
        )
        self.assertEqual(go_json({"b": 1, "a": "<"}), '{"a":"\\u003c","b":1}')
        self.assertEqual(
            generation_id("/r/a<b", "run-1"), hashlib.sha256(payload.encode()).hexdigest()
        )

    def test_scope_id(self) -> None:
        self.assertEqual(scope_id(REPO), "git-repository-scope:" + REPO)
