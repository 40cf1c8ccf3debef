"""Work tree states (answers' freshness inputs): from memory while a refresher runs."""

from __future__ import annotations

import shutil
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.work_trees import (
    MAX_AGE_SECONDS,
    REFRESH_SECONDS,
    WorkTreeStates,
)
from eshu_mcp.query.local.backend import LocalQueryBackend
from tests.test_api_backend import DeferredPool
from tests.test_api_resource import ThreadReactor

FIRST = "1" * 40
SECOND = "2" * 40


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def work_tree(root: Path, commit: str) -> Path:
    """A directory whose git files say HEAD is ``commit`` on main."""
    (root / ".git" / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    commit_to(root, commit)
    return root


def commit_to(root: Path, commit: str) -> None:
    (root / ".git" / "refs" / "heads" / "main").write_text(commit + "\n")


class WorkTreeStatesTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.clock = Clock()
        self.states = WorkTreeStates(self.clock)
        self.tree = work_tree(Path(self.mktemp()), FIRST)
        self.path = str(self.tree)

    def test_without_a_refresher_every_answer_looks_at_the_files(self):
        self.assertEqual(self.states.state(self.path), (True, FIRST))
        commit_to(self.tree, SECOND)
        self.assertEqual(self.states.state(self.path), (True, SECOND))

    def test_a_refreshed_state_is_served_from_memory_until_the_next_refresh(self):
        self.states.state(self.path)
        self.states.refresh()
        commit_to(self.tree, SECOND)
        self.assertEqual(self.states.state(self.path), (True, FIRST))
        self.clock.now += REFRESH_SECONDS
        self.states.refresh()
        self.assertEqual(self.states.state(self.path), (True, SECOND))

    def test_a_refresher_that_stalls_is_not_trusted(self):
        self.states.state(self.path)
        self.states.refresh()
        shutil.rmtree(self.tree)
        self.clock.now += MAX_AGE_SECONDS + 1
        self.assertEqual(self.states.state(self.path), (False, None))

    def test_forget_goes_back_to_looking_at_the_files(self):
        self.states.state(self.path)
        self.states.refresh()
        self.states.forget()
        commit_to(self.tree, SECOND)
        self.assertEqual(self.states.state(self.path), (True, SECOND))

    def test_a_real_path_is_resolved_now_without_a_refresher(self):
        link = Path(self.mktemp())
        link.symlink_to(self.tree.resolve())
        self.assertEqual(self.states.real_path(str(link)), str(self.tree.resolve()))
        other = work_tree(Path(self.mktemp()), FIRST)
        link.unlink()
        link.symlink_to(other.resolve())
        self.assertEqual(self.states.real_path(str(link)), str(other.resolve()))

    def test_a_refreshed_real_path_is_served_from_memory_until_the_next_refresh(self):
        link = Path(self.mktemp())
        link.symlink_to(self.tree.resolve())
        self.states.real_path(str(link))
        self.states.refresh()
        other = work_tree(Path(self.mktemp()), FIRST)
        link.unlink()
        link.symlink_to(other.resolve())
        self.assertEqual(self.states.real_path(str(link)), str(self.tree.resolve()))
        self.clock.now += REFRESH_SECONDS
        self.states.refresh()
        self.assertEqual(self.states.real_path(str(link)), str(other.resolve()))


class BackendRefresherTests(SynchronousTestCase):
    def test_the_running_backend_refreshes_work_trees_on_its_pool_every_second(self):
        clock = Clock()
        states = WorkTreeStates(clock)
        tree = work_tree(Path(self.mktemp()), FIRST)
        states.state(str(tree))
        reactor, pool = ThreadReactor(), DeferredPool()
        pool.start = pool.stop = lambda: None
        pool.max = 1
        backend = LocalQueryBackend(
            str(Path(self.mktemp()) / "none.sqlite"),
            reactor=reactor,
            threadpool=pool,
            work_trees=states,
        )
        backend.startService()
        pool.run_all()  # the first readiness look
        commit_to(tree, SECOND)
        reactor.advance(REFRESH_SECONDS)
        reactor.advance(REFRESH_SECONDS)  # a look still queued is not started twice
        self.assertEqual(len(pool.jobs), 1)
        pool.run_all()
        clock.now += 0.5
        self.assertEqual(states.state(str(tree)), (True, SECOND))
        backend.stopService()
        commit_to(tree, FIRST)
        self.assertEqual(states.state(str(tree)), (True, FIRST))
