"""
A work tree compared with its indexed generation: "current" only when they match, tracked
edits and untracked files included; a touch that changes no byte is no change.
"""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.keeper_view import KeeperView
from eshu_mcp.query.local.api.platform.tree_changes import TREE_CHANGES
from eshu_mcp.query.local.api.platform.truth import index_freshness, repository_freshness
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.build.tree_compare import TreeDifference, compare_work_tree
from eshu_mcp.query.local.index.store.database import open_reader

SOURCE = "def shared_name(value):\n    return value\n"


def committed_repository(parent: Path) -> Path:
    repo = parent / "alpha"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "lib.py").write_text(SOURCE)
    (repo / "pkg" / "other.py").write_text("X = 1\n")
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    return repo


class TreeCompareTests(SynchronousTestCase):
    def setUp(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="eshu-tree-compare-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        self.repo = committed_repository(tmp)
        self.db = tmp / "index.sqlite"
        report = index_repositories(self.db, [self.repo], workers=1)
        self.repo_id = report.repositories[0].repo_id
        self.conn = open_reader(self.db)
        self.addCleanup(self.conn.close)
        self.addCleanup(TREE_CHANGES.forget)

    def difference(self) -> TreeDifference:
        return compare_work_tree(self.conn, self.repo_id, str(self.repo), True)

    def row(self):
        return self.conn.execute(
            "SELECT * FROM repositories WHERE repo_id = ?", (self.repo_id,)
        ).fetchone()

    def test_a_just_indexed_tree_has_no_difference(self) -> None:
        self.assertEqual(self.difference(), TreeDifference(0, ()))

    def test_an_uncommitted_edit_an_untracked_file_and_a_deletion_are_each_counted(self) -> None:
        with (self.repo / "pkg" / "lib.py").open("a") as source:
            source.write("\n\ndef appended():\n    return 1\n")
        (self.repo / "pkg" / "new.py").write_text("Y = 2\n")
        (self.repo / "pkg" / "other.py").unlink()
        self.assertEqual(
            self.difference(), TreeDifference(3, ("pkg/lib.py", "pkg/new.py", "pkg/other.py"))
        )

    def test_a_touch_that_changes_no_byte_is_no_change(self) -> None:
        lib = self.repo / "pkg" / "lib.py"
        stat = lib.stat()
        os.utime(lib, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
        self.assertEqual(self.difference().changed, 0)

    def test_an_index_older_than_its_tree_is_stale_not_current(self) -> None:
        self.assertEqual(repository_freshness(self.conn, self.row())["state"], "fresh")
        with (self.repo / "pkg" / "lib.py").open("a") as source:
            source.write("\n\ndef appended():\n    return 1\n")
        TREE_CHANGES.forget()
        freshness = repository_freshness(self.conn, self.row())
        self.assertEqual(
            (freshness["state"], freshness["changed_paths"], freshness["rebuilding"]),
            ("stale", 1, False),
        )
        self.assertIn("pkg/lib.py", freshness["detail"])
        self.assertEqual(index_freshness(self.conn)["state"], "stale")

    def test_a_watched_tree_is_judged_by_its_keeper_not_compared(self) -> None:
        (self.repo / "pkg" / "new.py").write_text("Y = 2\n")
        watched = KeeperView(watched=(str(self.repo),))
        self.assertEqual(repository_freshness(self.conn, self.row(), watched)["state"], "fresh")
        rebuilding = KeeperView(watched=(str(self.repo),), pending={str(self.repo): (1, True)})
        freshness = repository_freshness(self.conn, self.row(), rebuilding)
        self.assertEqual((freshness["state"], freshness["rebuilding"]), ("stale", True))
        self.assertIn("a rebuild is under way", freshness["detail"])

    def test_a_build_a_reader_already_sees_committed_is_not_under_way(self) -> None:
        """The keeper hears of a commit a moment after readers can see it: a reader that
        sees the generation the running build writes is answered as current."""
        (self.repo / "pkg" / "new.py").write_text("Y = 2\n")
        active = self.row()["active_generation_id"]
        root = str(self.repo)

        def keeper(writing: str, queued: int | None) -> KeeperView:
            return KeeperView(
                watched=(root,), pending={root: (1, True)}, landing={root: (writing, queued)}
            )

        committed = repository_freshness(self.conn, self.row(), keeper(active, 0))
        self.assertEqual(committed["state"], "fresh")
        still_writing = repository_freshness(self.conn, self.row(), keeper("another", 0))
        self.assertEqual((still_writing["state"], still_writing["rebuilding"]), ("stale", True))
        self.assertIn("a rebuild is under way", still_writing["detail"])
        more_after = repository_freshness(self.conn, self.row(), keeper(active, 2))
        self.assertEqual(
            (more_after["state"], more_after["changed_paths"], more_after["rebuilding"]),
            ("stale", 2, False),
        )
        self.assertIn("a rebuild is queued", more_after["detail"])

    def test_an_answer_that_waited_for_an_edit_says_so(self) -> None:
        waited = KeeperView(watched=(str(self.repo),), waited=0.25)
        freshness = repository_freshness(self.conn, self.row(), waited)
        self.assertEqual(freshness["state"], "fresh")
        self.assertIn("waited 0.25s", freshness["detail"])

    def test_the_freshness_tool_says_stale_with_the_count_never_current(self) -> None:
        from tests.test_api_resource import ApiClient

        client = ApiClient(self, str(self.db))
        path = f"/repositories/{self.repo_id}/freshness"
        self.assertEqual(client.get(path).json()["verdict"], "current")
        (self.repo / "pkg" / "untracked.py").write_text("Z = 3\n")
        TREE_CHANGES.forget()
        data = client.get(path).json()
        self.assertEqual(
            (data["verdict"], data["changed_paths"], data["rebuilding"]), ("stale", 1, False)
        )
