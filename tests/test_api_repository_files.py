"""Tests for the repository tree, content, branches and freshness routes."""

from __future__ import annotations

import base64
import os

from twisted.trial.unittest import SynchronousTestCase

from tests.test_api_resource import ApiClient, rich_index


class RepositoryFilesCase(SynchronousTestCase):
    def setUp(self):
        self.ids = rich_index(self.mktemp())
        self.index = self.ids["index"]
        self.client = ApiClient(self, self.index.path)
        self.repo = self.ids["repo"]

    def get(self, suffix: str, **params):
        return self.client.get(f"/repositories/payments{suffix}", params=params or None)


class TreeTests(RepositoryFilesCase):
    def test_top_level_lists_directories_with_child_counts(self):
        data = self.get("/tree").json()
        self.assertEqual(data["ref"], "a" * 40)
        self.assertEqual(data["path"], "")
        self.assertEqual(
            [(e["name"], e["type"], e.get("child_count")) for e in data["entries"]],
            [("app", "dir", 2), ("assets", "dir", 1), ("web", "dir", 1)],
        )

    def test_directory_lists_files_with_line_count_as_size(self):
        data = self.get("/tree", path="/app/").json()
        self.assertEqual(data["path"], "app")
        entry = data["entries"][0]
        self.assertEqual(
            entry,
            {
                "name": "api.py",
                "type": "file",
                "path": "app/api.py",
                "size": 5,
                "language": "python",
            },
        )

    def test_recursive_listing_includes_nested_files(self):
        data = self.get("/tree", recursive="true").json()
        paths = [e["path"] for e in data["entries"] if e["type"] == "file"]
        self.assertIn("web/button.tsx", paths)
        self.assertIn("app/service.py", paths)

    def test_language_family_filter_expands_typescript(self):
        data = self.get("/tree", recursive="true", language="typescript").json()
        self.assertEqual(
            [e["path"] for e in data["entries"] if e["type"] == "file"], ["web/button.tsx"]
        )

    def test_unknown_path_is_404(self):
        response = self.get("/tree", path="nope")
        self.assertEqual((response.status, response.json()["detail"]), (404, "path not found"))

    def test_known_but_unindexed_ref_is_409(self):
        response = self.get("/tree", ref="old")
        self.assertEqual(response.status, 409)
        self.assertEqual(response.json()["detail"], "selected ref is not indexed")

    def test_unknown_ref_is_404(self):
        response = self.get("/tree", ref="feature/x")
        self.assertEqual((response.status, response.json()["detail"]), (404, "ref not found"))

    def test_short_indexed_commit_is_accepted(self):
        self.assertEqual(self.get("/tree", ref="aaaaaaa").status, 200)

    def test_ref_without_branch_metadata_is_409(self):
        response = self.client.get("/repositories/ledger/tree", params={"ref": "main2"})
        self.assertEqual(response.status, 409)
        self.assertIn("branch metadata unavailable", response.json()["detail"])

    def test_unknown_repository_is_404_selector_error(self):
        response = self.client.get("/repositories/nope/tree")
        self.assertEqual(response.status, 404)
        self.assertEqual(
            response.json()["detail"],
            'repository selector "nope" did not match any indexed repository;'
            " indexed: ledger, payments",
        )


class ContentTests(RepositoryFilesCase):
    def test_text_file_is_returned_from_the_index(self):
        data = self.get("/content", path="app/api.py").json()
        self.assertEqual(data["encoding"], "utf-8")
        self.assertTrue(data["content"].startswith("from app.service import"))
        self.assertEqual(data["size"], len(data["content"].encode()))
        self.assertFalse(data["truncated"])

    def test_path_is_required(self):
        response = self.get("/content")
        self.assertEqual((response.status, response.json()["detail"]), (400, "path is required"))

    def test_binary_file_inside_the_tree_is_base64(self):
        target = self.ids["tree"] / "assets"
        target.mkdir()
        (target / "logo.bin").write_bytes(b"\x00\x01png")
        data = self.get("/content", path="assets/logo.bin").json()
        self.assertEqual(data["encoding"], "base64")
        self.assertEqual(base64.b64decode(data["content"]), b"\x00\x01png")

    def test_symlink_leaving_the_tree_is_not_read(self):
        outside = (self.ids["index"].root / "outside-secret.txt").absolute()
        outside.write_bytes(b"TOP SECRET")
        (self.ids["tree"] / "assets").mkdir()
        os.symlink(outside, self.ids["tree"] / "assets" / "logo.bin")
        response = self.get("/content", path="assets/logo.bin")
        self.assertEqual((response.status, response.json()["detail"]), (404, "file not found"))
        self.assertNotIn(b"TOP SECRET", response.body)
        self.assertNotIn(base64.b64encode(b"TOP SECRET"), response.body)

    def swapped_after_the_check(self, swap):
        """Run ``swap`` right after the read has resolved and checked its path (TOCTOU)."""
        real = os.path.realpath

        def resolve_then_swap(path, *args, **kwargs):
            resolved = real(path, *args, **kwargs)
            if str(path).endswith("logo.bin"):
                swap()
            return resolved

        self.patch(os.path, "realpath", resolve_then_swap)

    def outside_secret(self):
        outside = (self.ids["index"].root / "outside").absolute()
        outside.mkdir()
        (outside / "logo.bin").write_bytes(b"TOP SECRET")
        return outside

    def assert_not_served(self, response):
        self.assertEqual((response.status, response.json()["detail"]), (404, "file not found"))
        self.assertNotIn(b"TOP SECRET", response.body)
        self.assertNotIn(base64.b64encode(b"TOP SECRET"), response.body)

    def test_a_file_swapped_for_a_link_after_the_check_is_not_followed(self):
        outside = self.outside_secret()
        logo = self.ids["tree"] / "assets" / "logo.bin"
        logo.parent.mkdir()
        logo.write_bytes(b"\x00\x01png")

        def swap():
            logo.unlink()
            os.symlink(outside / "logo.bin", logo)

        self.swapped_after_the_check(swap)
        self.assert_not_served(self.get("/content", path="assets/logo.bin"))

    def test_a_directory_swapped_for_a_link_after_the_check_is_not_followed(self):
        outside = self.outside_secret()
        assets = self.ids["tree"] / "assets"
        assets.mkdir()
        (assets / "logo.bin").write_bytes(b"\x00\x01png")

        def swap():
            (assets / "logo.bin").unlink()
            assets.rmdir()
            os.symlink(outside, assets)

        self.swapped_after_the_check(swap)
        self.assert_not_served(self.get("/content", path="assets/logo.bin"))

    def test_a_fifo_in_place_of_the_file_is_refused_without_waiting(self):
        (self.ids["tree"] / "assets").mkdir()
        os.mkfifo(self.ids["tree"] / "assets" / "logo.bin")
        response = self.get("/content", path="assets/logo.bin")
        self.assertEqual((response.status, response.json()["detail"]), (404, "file not found"))

    def test_traversal_attempts_are_4xx_json(self):
        for path in ("../../etc/passwd", "/etc/passwd", "app/../../x", "C:/Windows", "a\x00b"):
            response = self.get("/content", path=path)
            self.assertIn(response.status, (400, 404), path)
            self.assertIn("detail", response.json())
            self.assertNotIn(b"root:", response.body)

    def test_nul_in_path_argument_is_400(self):
        response = self.client.get("/repositories/pay%00ments/content", params={"path": "x"})
        self.assertEqual(response.status, 400)


class BranchesTests(RepositoryFilesCase):
    def test_branches_and_tags_mark_default_and_indexed(self):
        data = self.get("/branches").json()
        self.assertEqual(data["default_branch"], "main")
        main = data["branches"][0]
        self.assertEqual((main["name"], main["is_default"], main["indexed"]), ("main", True, True))
        self.assertEqual([t["name"] for t in data["tags"]], ["v1.0"])
        self.assertFalse(data["truncated"])
        self.assertIsNone(data["next_cursor"])

    def test_limit_pages_branches_with_a_cursor(self):
        data = self.get("/branches", limit="1").json()
        self.assertEqual(
            ([b["name"] for b in data["branches"]], data["next_cursor"]), (["main"], "main")
        )
        rest = self.get("/branches", limit="1", cursor="main").json()
        self.assertEqual([b["name"] for b in rest["branches"]], ["old"])


class FreshnessTests(RepositoryFilesCase):
    def test_matching_head_is_current(self):
        body = self.client.get("/repositories/payments/freshness", envelope=True).json()
        self.assertEqual(body["data"]["verdict"], "current")
        self.assertEqual(body["data"]["generation"]["id"], self.ids["active"])
        self.assertEqual(body["truth"]["freshness"]["state"], "fresh")

    def test_moved_head_is_behind_and_stale(self):
        ref = self.ids["tree"] / ".git" / "refs" / "heads" / "main"
        ref.write_text("c" * 40 + "\n")
        body = self.client.get("/repositories/payments/freshness", envelope=True).json()
        self.assertEqual(body["data"]["verdict"], "behind")
        self.assertEqual(body["data"]["work_tree_commit"], "c" * 40)
        self.assertEqual(body["truth"]["freshness"]["state"], "stale")

    def test_unseen_expected_commit_is_unobserved(self):
        data = self.get("/freshness", expected_commit="deadbeef").json()
        self.assertEqual(data["verdict"], "unobserved")
        self.assertEqual(data["unobserved_push"]["target_sha"], "deadbeef")

    def test_pending_generation_is_building(self):
        self.index.hold_writer_lock()  # the indexer writing it is running
        self.index.writer.execute(
            "INSERT INTO generations (generation_id, repo_id, seq, scope_id, status,"
            " observed_at) VALUES ('gen-payments-3', ?, 3, 's', 'pending',"
            " '2026-12-02T10:09:00Z')",
            (self.repo,),
        )
        self.index.writer.commit()
        data = self.get("/freshness").json()
        self.assertEqual(data["verdict"], "building")
        self.assertEqual(data["outstanding_by_stage"][0]["count"], 1)
        self.index.writer_died()
        data = self.get("/freshness").json()
        self.assertEqual(data["verdict"], "current")
        self.assertEqual(data["outstanding_by_stage"][0]["count"], 0)
