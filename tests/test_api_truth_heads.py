"""
A work tree's HEAD read from its git files: only commit ids come back, and no symbolic
link under .git is followed out of the git directory.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.truth_heads import current_head
from tests.test_api_resource import ApiClient, rich_index

SECRET = "root:x:0:0:the-outside-file-says-hello:/root:/bin/bash\n"


def git_tree(parent: Path, name: str = "tree") -> Path:
    """A work tree whose HEAD names refs/heads/main at 'a' * 40."""
    tree = parent / name
    (tree / ".git" / "refs" / "heads").mkdir(parents=True)
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tree / ".git" / "refs" / "heads" / "main").write_text("a" * 40 + "\n")
    return tree


class CurrentHeadTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-heads-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.tree = git_tree(self.tmp)
        self.outside = self.tmp / "outside"
        self.outside.mkdir()
        (self.outside / "passwd").write_text(SECRET)
        (self.outside / "commit").write_text("c" * 40 + "\n")

    def replace_with_link(self, relative: str, target: Path | str) -> None:
        path = self.tree / ".git" / relative
        path.unlink()
        os.symlink(target, path)

    def test_a_head_linked_to_an_outside_file_gives_nothing(self) -> None:
        self.replace_with_link("HEAD", self.outside / "passwd")
        self.assertIsNone(current_head(str(self.tree)))
        self.replace_with_link("HEAD", self.outside / "commit")
        self.assertIsNone(current_head(str(self.tree)))

    def test_a_ref_or_packed_refs_linked_outside_is_not_followed(self) -> None:
        self.replace_with_link("refs/heads/main", self.outside / "commit")
        self.assertIsNone(current_head(str(self.tree)))
        (self.tree / ".git" / "refs" / "heads" / "main").unlink()
        os.symlink(self.outside / "packed", self.tree / ".git" / "packed-refs")
        (self.outside / "packed").write_text("c" * 40 + " refs/heads/main\n")
        self.assertIsNone(current_head(str(self.tree)))

    def test_a_refs_directory_linked_outside_is_not_followed(self) -> None:
        shutil.rmtree(self.tree / ".git" / "refs")
        (self.outside / "refs" / "heads").mkdir(parents=True)
        (self.outside / "refs" / "heads" / "main").write_text("c" * 40 + "\n")
        os.symlink(self.outside / "refs", self.tree / ".git" / "refs")
        self.assertIsNone(current_head(str(self.tree)))

    def test_a_head_that_is_not_a_commit_id_gives_nothing(self) -> None:
        (self.tree / ".git" / "HEAD").write_text(SECRET)
        self.assertIsNone(current_head(str(self.tree)))
        (self.tree / ".git" / "HEAD").write_text("ref: ../../outside/passwd\n")
        self.assertIsNone(current_head(str(self.tree)))

    def test_a_link_inside_the_git_directory_is_still_read(self) -> None:
        self.replace_with_link("HEAD", "refs/heads/main")  # git's old symbolic-link HEAD
        self.assertEqual(current_head(str(self.tree)), "a" * 40)

    def test_a_fifo_head_does_not_block(self) -> None:
        (self.tree / ".git" / "HEAD").unlink()
        os.mkfifo(self.tree / ".git" / "HEAD")
        result: list = []
        reader = threading.Thread(target=lambda: result.append(current_head(str(self.tree))))
        reader.start()
        reader.join(10)
        self.assertFalse(reader.is_alive())
        self.assertEqual(result, [None])

    def test_a_linked_work_tree_reads_its_branch_from_the_common_directory(self) -> None:
        common = self.tree / ".git"
        linked_dir = common / "worktrees" / "feature"
        linked_dir.mkdir(parents=True)
        (linked_dir / "HEAD").write_text("ref: refs/heads/feature\n")
        (linked_dir / "commondir").write_text("../..\n")
        (common / "refs" / "heads" / "feature").write_text("f" * 40 + "\n")
        linked = self.tmp / "feature"
        linked.mkdir()
        (linked / ".git").write_text(f"gitdir: {linked_dir}\n")
        self.assertEqual(current_head(str(linked)), "f" * 40)

    def test_a_dot_git_file_linked_outside_is_not_read(self) -> None:
        shutil.rmtree(self.tree / ".git")
        (self.outside / "gitfile").write_text(f"gitdir: {self.outside}\n")
        (self.outside / "HEAD").write_text("c" * 40 + "\n")
        os.symlink(self.outside / "gitfile", self.tree / ".git")
        self.assertIsNone(current_head(str(self.tree)))


class FreshnessRouteTests(SynchronousTestCase):
    def test_get_repository_freshness_never_returns_an_outside_file(self) -> None:
        ids = rich_index(self.mktemp())
        tree = ids["tree"]
        outside = Path(self.mktemp())
        outside.mkdir()
        (outside / "passwd").write_text(SECRET)
        (tree / ".git" / "HEAD").unlink()
        os.symlink(outside / "passwd", tree / ".git" / "HEAD")
        client = ApiClient(self, ids["index"].path)
        response = client.get(f"/repositories/{ids['repo']}/freshness")
        self.assertEqual(response.status, 200)
        body = response.body.decode()
        self.assertNotIn("the-outside-file-says-hello", body)
        self.assertNotIn("root:x", body)
        self.assertEqual(response.json()["work_tree_commit"], "")
