"""Tests for eshu_mcp.query.local.index.walk.worktree and .ignore: which files get indexed."""

import io
import json
import os
import shutil
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build import command
from eshu_mcp.query.local.index.walk.ignore import is_ignored, parse_rules
from eshu_mcp.query.local.index.walk.worktree import (
    UntrustedRepository,
    WalkError,
    WorkTree,
    discover,
    recheck_dirty,
    walk,
    walk_files,
    worktree_digest,
)
from tests.test_index_indexer import fixture_repository, git


def paths(tree) -> list[str]:
    return [w.relative_path for w in walk_files(tree)]


class GitWalkTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-walk-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = fixture_repository(self.tmp)

    def test_untracked_files_count_and_gitignored_ones_do_not(self) -> None:
        (self.repo / ".gitignore").write_text("*.tmp\n")
        (self.repo / "new.py").write_text("x = 1\n")
        (self.repo / "scratch.tmp").write_text("junk\n")
        found = paths(discover(self.repo))
        self.assertIn("new.py", found)
        self.assertNotIn("scratch.tmp", found)

    def test_eshuignore_and_default_skips_apply(self) -> None:
        (self.repo / "app" / "bundle.min.js").write_text("x\n")
        found = paths(discover(self.repo))
        self.assertNotIn("generated/ignored.py", found)
        self.assertNotIn("node_modules/leftpad/index.js", found)
        self.assertNotIn("app/bundle.min.js", found)
        self.assertIn("app/fees.py", found)

    def test_symlinks_leaving_the_repository_are_not_recorded(self) -> None:
        outside = self.tmp / "secret.txt"
        outside.write_text("outside\n")
        os.symlink(outside, self.repo / "escape.txt")
        os.symlink(self.tmp, self.repo / "escape_dir")
        os.symlink("app/fees.py", self.repo / "inside.py")
        found = paths(discover(self.repo))
        self.assertNotIn("escape.txt", found)
        self.assertNotIn("escape_dir", found)
        self.assertIn("inside.py", found)

    def test_deleted_tracked_file_is_not_listed(self) -> None:
        (self.repo / "app" / "fees.py").unlink()
        self.assertNotIn("app/fees.py", paths(discover(self.repo)))

    def test_discover_reads_git_facts(self) -> None:
        git(self.repo, "remote", "add", "origin", "git@github.com:Acme/Polyglot.git")
        git(self.repo, "tag", "v1")
        tree = discover(self.repo / "app")
        self.assertEqual(tree.root, self.repo.resolve())
        self.assertEqual(tree.remote_url, "https://github.com/acme/polyglot")
        self.assertEqual((tree.head_ref, tree.dirty), ("main", False))
        self.assertEqual({(r.name, r.kind) for r in tree.refs}, {("main", "branch"), ("v1", "tag")})
        (self.repo / "app" / "fees.py").write_text("changed\n")
        self.assertTrue(discover(self.repo).dirty)

    def test_dirty_is_asked_again_for_the_changed_paths(self) -> None:
        fees = self.repo / "app" / "fees.py"
        committed = fees.read_text()
        fees.write_text("changed\n")
        tree = discover(self.repo)
        self.assertEqual((tree.dirty, tree.dirty_paths), (True, frozenset({"app/fees.py"})))
        fees.write_text(committed)
        self.assertFalse(recheck_dirty(tree, ["app/fees.py"]).dirty)
        self.assertTrue(recheck_dirty(tree, ["app/other.py"]).dirty)  # fees.py not asked

    def test_a_staged_rename_has_the_whole_tree_asked_again(self) -> None:
        git(self.repo, "mv", "app/fees.py", "app/moved.py")
        tree = discover(self.repo)
        self.assertEqual((tree.dirty, tree.dirty_paths), (True, None))
        git(self.repo, "mv", "app/moved.py", "app/fees.py")
        again = recheck_dirty(tree, ["app/moved.py"])
        self.assertEqual((again.dirty, again.dirty_paths), (False, frozenset()))

    def test_digest_changes_when_a_dirty_file_is_edited_again(self) -> None:
        first = worktree_digest(self.repo)
        target = self.repo / "app" / "fees.py"
        target.write_text("one\n")
        second = worktree_digest(self.repo)
        target.write_text("two, longer\n")
        third = worktree_digest(self.repo)
        self.assertEqual(len({first, second, third}), 3)
        self.assertEqual(third, worktree_digest(self.repo))

    def test_missing_path_is_a_walk_error(self) -> None:
        with self.assertRaises(WalkError):
            discover(self.tmp / "nope")


class PlainDirectoryWalkTests(SynchronousTestCase):
    def test_plain_directory_uses_gitignore_and_eshuignore_rules(self) -> None:
        root = Path(tempfile.mkdtemp(prefix="eshu-plain-"))
        self.addCleanup(shutil.rmtree, root, True)
        (root / "src" / "local").mkdir(parents=True)
        (root / "src" / "local" / "__init__.py").write_text("")
        (root / "bin").mkdir()
        (root / "bin" / "tool.py").write_text("")
        (root / "src" / "a.py").write_text("")
        (root / "src" / "b.log").write_text("")
        (root / "src" / "keep.txt").write_text("")
        (root / "src" / "drop.txt").write_text("")
        (root / ".gitignore").write_text("*.txt\n!keep.txt\n")
        (root / "src" / ".eshuignore").write_text("/a.py\n")
        tree = discover(root)
        self.assertFalse(tree.is_git)
        self.assertEqual(
            paths(tree), [".gitignore", "src/.eshuignore", "src/keep.txt", "src/local/__init__.py"]
        )


class IgnoreRuleTests(SynchronousTestCase):
    def test_anchoring_directories_globstar_and_negation(self) -> None:
        rules = parse_rules("/top.py\nbuild/\n**/gen/*.go\n*.log\n!keep.log\n", "")
        self.assertTrue(is_ignored(rules, "top.py", False))
        self.assertFalse(is_ignored(rules, "sub/top.py", False))
        self.assertTrue(is_ignored(rules, "a/build", True))
        self.assertFalse(is_ignored(rules, "a/build", False))
        self.assertTrue(is_ignored(rules, "x/y/gen/z.go", False))
        self.assertTrue(is_ignored(rules, "deep/a.log", False))
        self.assertFalse(is_ignored(rules, "deep/keep.log", False))

    def test_nested_rules_apply_below_their_directory_only(self) -> None:
        rules = parse_rules("*.py\n", "pkg")
        self.assertTrue(is_ignored(rules, "pkg/a.py", False))
        self.assertFalse(is_ignored(rules, "other/a.py", False))


class UntrustedRepositoryTests(SynchronousTestCase):
    """A work tree owned by another user: git refuses it ('dubious ownership')."""

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-untrusted-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = fixture_repository(self.tmp)
        self.global_config = self.tmp / "gitconfig"
        self.global_config.write_text("")
        saved = dict(os.environ)
        self.addCleanup(lambda: (os.environ.clear(), os.environ.update(saved)))
        # git's own switch for its ownership test, and a private global config for the fix
        os.environ["GIT_TEST_ASSUME_DIFFERENT_OWNER"] = "1"
        os.environ["GIT_CONFIG_GLOBAL"] = str(self.global_config)

    def run_index(self, path: Path) -> tuple[int, list[dict]]:
        out, err = io.StringIO(), io.StringIO()
        db = str(self.tmp / "index.sqlite")
        code = command.main([str(path), "--db", db, "--json"], stdout=out, stderr=err)
        return code, [json.loads(line) for line in out.getvalue().splitlines()]

    def test_is_reported_with_the_safe_directory_fix_not_walked_as_a_plain_directory(self):
        with self.assertRaises(UntrustedRepository) as caught:
            discover(self.repo / "app")
        fix = f"git config --global --add safe.directory {self.repo.resolve()}"
        self.assertIn(fix, str(caught.exception))
        self.assertIn("owned by another user", str(caught.exception))
        code, events = self.run_index(self.repo)
        self.assertEqual(code, 1)
        (failed,) = [event for event in events if event["phase"] == "failed"]
        self.assertIn(fix, failed["error"])

    def test_the_fix_it_names_works(self) -> None:
        git(self.tmp, "config", "--global", "--add", "safe.directory", str(self.repo.resolve()))
        tree = discover(self.repo)
        self.assertTrue(tree.is_git)
        code, events = self.run_index(self.repo)
        self.assertEqual(code, 0)
        self.assertIn("committed", [event["phase"] for event in events])


class HostileWorkTreeTests(SynchronousTestCase):
    """Names that are not UTF-8 and links out of the repository never reach the index."""

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-hostile-tree-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = fixture_repository(self.tmp)
        self.outside = self.tmp / "outside"
        self.outside.mkdir()
        (self.outside / "secret.txt").write_text("outside bytes\n")

    def test_a_name_that_is_not_utf8_is_skipped_and_counted(self) -> None:
        bad = os.fsencode(str(self.repo)) + b"/bad-\xff\xfe.py"
        with open(bad, "wb") as handle:
            handle.write(b"x = 1\n")
        (self.repo / "caf\u00e9.py").write_text("y = 2\n")
        for tree in (discover(self.repo), WorkTree(root=self.repo.resolve(), is_git=False)):
            walked = walk(tree)
            names = [w.relative_path for w in walked.files]
            self.assertIn("caf\u00e9.py", names)  # valid UTF-8 beyond ASCII is kept
            self.assertEqual(len(walked.undecodable), 1)
            self.assertEqual(walked.undecodable_example(), "bad-\\xff\\xfe.py")
            self.assertTrue(all(name.encode("utf-8") for name in names))

    def test_a_tracked_file_under_a_directory_link_out_of_the_repository_is_not_kept(self):
        (self.repo / "conf").mkdir()
        (self.repo / "conf" / "secret.txt").write_text("tracked\n")
        git(self.repo, "add", "conf/secret.txt")
        git(self.repo, "commit", "-q", "-m", "conf")
        shutil.rmtree(self.repo / "conf")
        os.symlink(self.outside, self.repo / "conf")  # the index still lists conf/secret.txt
        self.assertNotIn("conf/secret.txt", paths(discover(self.repo)))

    def test_a_file_link_inside_is_kept_by_its_target_and_one_outside_is_not(self) -> None:
        os.symlink(self.outside / "secret.txt", self.repo / "leak.txt")
        os.symlink("app/fees.py", self.repo / "fees_link.py")
        walked = {w.relative_path: w for w in walk_files(discover(self.repo))}
        self.assertNotIn("leak.txt", walked)
        self.assertEqual(
            walked["fees_link.py"].absolute_path, str((self.repo / "app" / "fees.py").resolve())
        )

    def test_a_fifo_is_not_kept(self) -> None:
        os.mkfifo(self.repo / "pipe.py")
        self.assertNotIn("pipe.py", paths(discover(self.repo)))


class IgnoreFileTests(SynchronousTestCase):
    def test_an_ignore_file_linked_outside_or_a_fifo_is_not_read(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="eshu-ignore-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        outside = tmp / "outside.rules"
        outside.write_text("*.py\n")
        tree = tmp / "plain"
        (tree / "sub").mkdir(parents=True)
        (tree / "a.py").write_text("x = 1\n")
        (tree / "sub" / "b.py").write_text("y = 2\n")
        os.symlink(outside, tree / ".eshuignore")
        os.mkfifo(tree / "sub" / ".gitignore")
        found = paths(WorkTree(root=tree.resolve(), is_git=False))
        self.assertIn("a.py", found)
        self.assertIn("sub/b.py", found)
