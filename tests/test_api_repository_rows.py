"""Tests for repository catalog rows, grouping evidence and language families."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.grants import readable
from eshu_mcp.query.local.api.repository.rows import catalog_row, language_family, repository_refs
from tests.test_api_resource import ApiIndex


class RowTests(SynchronousTestCase):
    def setUp(self):
        self.index = ApiIndex(self.mktemp())

    def row(self, name, remote=None, slug=None):
        repo = self.index.repository(name, remote=remote)
        self.index.writer.execute(
            "UPDATE repositories SET repo_slug = ? WHERE repo_id = ?", (slug, repo)
        )
        return self.index.writer.execute(
            "SELECT * FROM repositories WHERE repo_id = ?", (repo,)
        ).fetchone()

    def test_slug_namespace_groups_first(self):
        item = catalog_row(self.row("a", "https://github.com/acme/a", "acme/a"))
        self.assertEqual((item["group_key"], item["group_source"]), ("Acme", "repo_slug_namespace"))
        self.assertTrue(item["has_remote"])
        self.assertEqual(item["path"], item["local_path"])

    def test_remote_owner_groups_without_a_slug(self):
        item = catalog_row(self.row("b", "https://gitlab.example/platform/b"))
        self.assertEqual(
            (item["group_key"], item["group_source"]), ("Platform", "remote_url_owner")
        )

    def test_missing_evidence_is_explicit(self):
        item = catalog_row(self.row("c"))
        self.assertEqual(
            (item["group_source"], item["group_kind"]), ("missing_evidence", "unknown")
        )
        self.assertEqual((item["remote_url"], item["repo_slug"]), ("", ""))

    def test_language_families(self):
        self.assertEqual(language_family("TS"), ["typescript", "tsx"])
        self.assertEqual(language_family("terraform"), ["terraform", "hcl", "tfvars"])
        self.assertEqual(language_family("Go"), ["go"])

    def test_readable_without_principal_and_with_grants(self):
        class Grants:
            def may_read_repository(self, repo_id):
                return repo_id == "r1"

        self.assertTrue(readable(None, "anything"))
        self.assertTrue(readable(Grants(), "r1"))
        self.assertFalse(readable(Grants(), "r2"))

    def test_refs_are_sorted_by_kind_then_name(self):
        repo = self.index.repository("d")
        for name, kind in (("z", "branch"), ("a", "tag"), ("b", "branch")):
            self.index.writer.execute(
                "INSERT INTO repository_refs (repo_id, ref_name, ref_kind, commit_sha)"
                " VALUES (?, ?, ?, 'c')",
                (repo, name, kind),
            )
        names = [(r["ref_kind"], r["ref_name"]) for r in repository_refs(self.index.writer, repo)]
        self.assertEqual(names, [("branch", "b"), ("branch", "z"), ("tag", "a")])
