"""
A repository whose configuration names programs: indexing, watching and freshness never
run any of them (git is read as data).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.work_trees import look
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.walk.git import git_dir_link_out, git_environment, run_git
from eshu_mcp.query.local.index.walk.worktree import (
    WalkError,
    discover,
    walk_files,
    worktree_digest,
)
from tests.test_index_indexer import git

HOOKS = (
    "post-index-change",
    "pre-commit",
    "post-checkout",
    "post-merge",
    "pre-auto-gc",
    "reference-transaction",
    "fsmonitor-watchman",
)


def hostile_repository(parent: Path) -> tuple[Path, Path]:
    """
    A committed repository whose config, an included config, attributes and hooks all
    name a script that appends its name to a marker file; returns (repo, marker).
    """
    repo = parent / "hostile"
    repo.mkdir()
    marker = parent / "marker"
    script = parent / "payload.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat\n')
    script.chmod(0o755)
    (repo / "app.py").write_text("def handler():\n    return 1\n")
    (repo / "notes.txt").write_text("some notes\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fixture")
    hooks = parent / "hooks"
    hooks.mkdir()
    for name in HOOKS:
        shutil.copy(script, hooks / name)
        shutil.copy(script, repo / ".git" / "hooks" / name)
    included = parent / "included.config"
    included.write_text(f'[diff "evil"]\n\ttextconv = {script}\n')
    with (repo / ".git" / "config").open("a") as config:
        config.write(
            f"[core]\n\tfsmonitor = {script}\n\thooksPath = {hooks}\n"
            f'[filter "evil"]\n\tclean = {script}\n\tsmudge = {script}\n\trequired = true\n'
            f"[include]\n\tpath = {included}\n"
            f"[diff]\n\texternal = {script}\n"
            f"[protocol]\n\tallow = always\n"
        )
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=evil diff=evil\n")
    return repo, marker


def make_stat_dirty(repo: Path) -> None:
    """Same bytes, new mtime: git status must compare the content (through the filter)."""
    later = time.time() + 5
    for name in ("app.py", "notes.txt"):
        os.utime(repo / name, (later, later))


class HostileConfigurationTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-hostile-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo, self.marker = hostile_repository(self.tmp)
        self.marker.unlink(missing_ok=True)  # the fixture's own commit may have run hooks
        make_stat_dirty(self.repo)

    def test_the_fixture_runs_its_programs_under_plain_git(self) -> None:
        """Control: the same reads without the overrides do run the repository's script."""
        subprocess.run(
            ["git", "-C", str(self.repo), "status", "--porcelain"],
            capture_output=True,
            timeout=30,
            check=False,
        )
        self.assertTrue(self.marker.exists())

    def test_indexing_runs_nothing_the_repository_names(self) -> None:
        tree = discover(self.repo)
        self.assertTrue(tree.is_git)
        self.assertFalse(tree.dirty)  # the clean filter did not run, and was not needed
        paths = [walked.relative_path for walked in walk_files(tree)]
        self.assertEqual(paths, ["app.py", "notes.txt"])
        report = index_repositories(self.tmp / "index.sqlite", [self.repo], workers=1)
        self.assertTrue(report.ok)
        self.assertFalse(self.marker.exists())

    def test_watching_and_freshness_run_nothing_the_repository_names(self) -> None:
        first = worktree_digest(self.repo)
        (self.repo / "app.py").write_text("def handler():\n    return 2\n")
        self.assertNotEqual(worktree_digest(self.repo), first)
        present, head = look(str(self.repo))
        self.assertTrue(present)
        self.assertEqual(head, git(self.repo, "rev-parse", "HEAD").strip())
        self.assertFalse(self.marker.exists())

    def test_a_work_tree_named_elsewhere_by_core_worktree_is_refused(self) -> None:
        outside = self.tmp / "outside"
        outside.mkdir()
        (outside / "secret.txt").write_text("not the repository's\n")
        git(self.repo, "config", "core.worktree", str(outside))
        with self.assertRaises(WalkError) as caught:
            discover(self.repo)
        self.assertIn("core.worktree", str(caught.exception))


class GitEnvironmentTests(SynchronousTestCase):
    def setUp(self) -> None:
        saved = dict(os.environ)
        self.addCleanup(lambda: (os.environ.clear(), os.environ.update(saved)))

    def test_inherited_redirections_are_dropped_and_transports_refused(self) -> None:
        os.environ["GIT_DIR"] = "/elsewhere/.git"
        os.environ["GIT_SSH_COMMAND"] = "touch /tmp/never"
        os.environ["GIT_CONFIG_KEY_0"] = "core.fsmonitor"
        env = git_environment()
        self.assertNotIn("GIT_DIR", env)
        self.assertNotIn("GIT_SSH_COMMAND", env)
        self.assertEqual(env["GIT_CONFIG_KEY_0"], "core.fsmonitor")
        self.assertEqual(env["GIT_CONFIG_VALUE_0"], "false")
        self.assertEqual(env["GIT_OPTIONAL_LOCKS"], "0")
        self.assertNotIn(env["GIT_ALLOW_PROTOCOL"], ("file", "ssh", "ext", "http", "https"))

    def test_a_driver_name_holding_an_equals_sign_cannot_set_a_program(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="eshu-driver-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        marker = tmp / "marker"
        script = tmp / "payload.sh"
        script.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
        repo = tmp / "repo"
        repo.mkdir()
        (repo / "a.txt").write_text("a\n")
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "a")
        with (repo / ".git" / "config").open("a") as config:
            config.write(f'[filter "x.clean={script}"]\n\tclean = {script}\n')
            config.write(f'[filter "x"]\n\tclean = {script}\n')
        (repo / ".gitattributes").write_text("* filter=x\n")
        make_stat_dirty_one(repo / "a.txt")
        done = run_git(repo, "status", "--porcelain", neutralise_drivers=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertFalse(marker.exists())


def make_stat_dirty_one(path: Path) -> None:
    """Same bytes, new mtime."""
    later = time.time() + 5
    os.utime(path, (later, later))


OUTSIDE_LINE = "root:x:0:0:outside-bytes-zq7741:/root:/bin/bash"


class LinksOutOfGitTests(SynchronousTestCase):
    """A file git reads as data that links out of ``.git``: the repository is read without git."""

    def setUp(self) -> None:
        self.parent = Path(tempfile.mkdtemp(prefix="eshu-git-links-"))
        self.addCleanup(shutil.rmtree, self.parent, True)
        self.outside = self.parent / "outside.txt"
        self.outside.write_text(OUTSIDE_LINE + "\n")
        self.repo = self.parent / "repo"
        self.repo.mkdir()
        (self.repo / "app.py").write_text("def handler():\n    return 1\n")
        git(self.repo, "init", "-q", "-b", "main")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "fixture")

    def test_an_ordinary_repository_and_links_inside_git_are_read_with_git(self) -> None:
        self.assertIsNone(git_dir_link_out(self.repo))
        os.symlink(self.repo / ".git" / "HEAD", self.repo / ".git" / "HEAD-copy")
        self.assertIsNone(git_dir_link_out(self.repo))
        self.assertTrue(discover(self.repo).is_git)

    def test_packed_refs_or_a_ref_linking_out_is_named(self) -> None:
        os.symlink(self.outside, self.repo / ".git" / "packed-refs")
        self.assertEqual(git_dir_link_out(self.repo), ".git/packed-refs")
        os.remove(self.repo / ".git" / "packed-refs")
        os.symlink(self.outside, self.repo / ".git" / "refs" / "heads" / "feature")
        self.assertEqual(git_dir_link_out(self.repo), ".git/refs/heads/feature")

    def test_the_repository_still_indexes_and_no_outside_byte_is_stored(self) -> None:
        os.symlink(self.outside, self.repo / ".git" / "packed-refs")
        tree = discover(self.repo)
        self.assertFalse(tree.is_git)
        self.assertEqual(
            tree.git_refused,
            ".git/packed-refs is a symbolic link out of the repository; read without git",
        )
        db_path = self.parent / "index.sqlite"
        events: list[dict] = []
        report = index_repositories(db_path, [self.repo], progress=events.append, workers=1)
        self.assertEqual([repo.status for repo in report.repositories], ["indexed"])
        self.assertNotIn("outside-bytes", repr(events))
        self.assertNotIn(b"outside-bytes", db_path.read_bytes())
        self.assertEqual([repo.error for repo in report.repositories], [None])
