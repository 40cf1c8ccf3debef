"""
A build told which paths changed looks at those paths only, and still ends with the index
a whole walk would give: edits and deletions applied, new files and ignore rules through a
whole walk.
"""

import shutil
import subprocess
import tempfile
from pathlib import Path
from unittest import mock

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build import indexer
from eshu_mcp.query.local.index.build.changed_walk import walk_changed
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader


def committed_repository(parent: Path) -> Path:
    repo = parent / "alpha"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "lib.py").write_text("def kept(value):\n    return value\n")
    (repo / "pkg" / "other.py").write_text("def other():\n    return 1\n")
    (repo / ".gitignore").write_text("*.tmp.py\n")
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    return repo


class ChangedWalkTests(SynchronousTestCase):
    def setUp(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="eshu-changed-walk-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        self.repo = committed_repository(tmp)
        self.db = tmp / "index.sqlite"
        index_repositories(self.db, [self.repo], workers=1)

    def build(self, *changed: str):
        path = str(self.repo)
        return index_repositories(self.db, [path], workers=1, changed={path: list(changed)})

    def names(self) -> set[str]:
        conn = open_reader(self.db)
        try:
            return {row[0] for row in conn.execute("SELECT entity_name FROM entities")}
        finally:
            conn.close()

    def test_an_edit_is_indexed_without_walking_the_tree(self) -> None:
        with (self.repo / "pkg" / "lib.py").open("a") as source:
            source.write("\n\ndef appended():\n    return 2\n")
        with mock.patch.object(indexer, "walk", side_effect=AssertionError("walked")):
            report = self.build("pkg/lib.py")
        self.assertEqual(report.repositories[0].reparsed, ("pkg/lib.py",))
        self.assertIn("appended", self.names())

    def test_an_edit_reads_back_only_its_own_file_row(self) -> None:
        """The files table is read for the changed path (and counted), not row by row: a
        one-file build at 30,000 files then costs what it costs at 900."""
        with (self.repo / "pkg" / "lib.py").open("a") as source:
            source.write("\n\ndef appended():\n    return 2\n")
        rows = []
        original = indexer._indexed_files

        def counting(conn, repo_id, walked):
            found = original(conn, repo_id, walked)
            rows.append((sorted(found.rows), len(found)))
            return found

        with mock.patch.object(indexer, "_indexed_files", counting):
            report = self.build("pkg/lib.py")
        self.assertEqual(rows, [(["pkg/lib.py"], 3)])  # lib.py, other.py, .gitignore
        (repo,) = report.repositories
        self.assertEqual((repo.files_seen, repo.unchanged, repo.modified), (3, 2, ("pkg/lib.py",)))

    def test_a_deleted_file_leaves_the_index(self) -> None:
        (self.repo / "pkg" / "other.py").unlink()
        report = self.build("pkg/other.py")
        self.assertEqual(report.repositories[0].deleted, ("pkg/other.py",))
        self.assertNotIn("other", self.names())

    def test_a_new_file_goes_through_the_whole_walk_and_its_ignore_rules(self) -> None:
        (self.repo / "pkg" / "new.py").write_text("def brand_new():\n    return 3\n")
        (self.repo / "pkg" / "scratch.tmp.py").write_text("def ignored_one():\n    return 4\n")
        self.build("pkg/new.py", "pkg/scratch.tmp.py")
        names = self.names()
        self.assertIn("brand_new", names)
        self.assertNotIn("ignored_one", names)

    def test_only_known_regular_files_take_the_short_walk(self) -> None:
        conn = open_reader(self.db)
        self.addCleanup(conn.close)
        (repo_id,) = conn.execute("SELECT repo_id FROM repositories").fetchone()
        self.assertIsNone(walk_changed(conn, repo_id, self.repo, [".gitignore"]))
        (self.repo / "pkg" / "unknown.py").write_text("")
        self.assertIsNone(walk_changed(conn, repo_id, self.repo, ["pkg/unknown.py"]))
        known = walk_changed(conn, repo_id, self.repo, ["pkg/gone.py", "pkg/lib.py"])
        self.assertEqual([item.relative_path for item in known.present], ["pkg/lib.py"])
        self.assertEqual(known.gone, frozenset({"pkg/gone.py"}))


class DirtyAfterChangesTests(SynchronousTestCase):
    """A build told which paths changed asks git about those paths again, so an edit undone
    leaves the repository clean, as a whole walk would say."""

    def setUp(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="eshu-changed-dirty-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        self.repo = committed_repository(tmp)
        self.db = tmp / "index.sqlite"
        index_repositories(self.db, [self.repo], workers=1)

    def build(self, *changed: str) -> None:
        path = str(self.repo)
        with mock.patch.object(indexer, "walk", side_effect=AssertionError("walked")):
            report = index_repositories(self.db, [path], workers=1, changed={path: list(changed)})
        self.assertTrue(report.ok)

    def dirty(self) -> tuple[int, str]:
        conn = open_reader(self.db)
        try:
            return conn.execute(
                "SELECT r.dirty, g.freshness_hint FROM repositories r"
                " JOIN generations g ON g.generation_id = r.active_generation_id"
            ).fetchone()
        finally:
            conn.close()

    def test_an_edit_undone_leaves_the_repository_clean(self) -> None:
        lib = self.repo / "pkg" / "lib.py"
        committed = lib.read_text()
        lib.write_text(committed + "\n\ndef edited():\n    return 2\n")
        self.build("pkg/lib.py")
        self.assertEqual(self.dirty()[0], 1)
        self.assertTrue(self.dirty()[1].endswith("-dirty"))
        lib.write_text(committed)
        self.build("pkg/lib.py")
        self.assertEqual(self.dirty()[0], 0)
        self.assertFalse(self.dirty()[1].endswith("-dirty"))

    def test_one_file_undone_while_another_stays_edited_is_still_dirty(self) -> None:
        lib, other = self.repo / "pkg" / "lib.py", self.repo / "pkg" / "other.py"
        committed = lib.read_text()
        lib.write_text(committed + "\n\ndef edited():\n    return 2\n")
        self.build("pkg/lib.py")
        other.write_text(other.read_text() + "\n\ndef also():\n    return 3\n")
        self.build("pkg/other.py")
        lib.write_text(committed)
        self.build("pkg/lib.py")
        self.assertEqual(self.dirty()[0], 1)

    def test_the_last_file_of_an_untracked_directory_deleted_leaves_it_clean(self) -> None:
        (self.repo / "extra").mkdir()
        (self.repo / "extra" / "one.py").write_text("def one():\n    return 1\n")
        (self.repo / "extra" / "two.py").write_text("def two():\n    return 2\n")
        index_repositories(self.db, [self.repo], workers=1)  # new files: a whole walk
        self.assertEqual(self.dirty()[0], 1)
        (self.repo / "extra" / "one.py").unlink()
        self.build("extra/one.py")
        self.assertEqual(self.dirty()[0], 1)  # two.py is still there, untracked
        (self.repo / "extra" / "two.py").unlink()
        self.build("extra/two.py")
        self.assertEqual(self.dirty()[0], 0)
