"""
Tests for noticing work-tree changes: the debouncer (task.Clock), the polling watcher, and
the inotify watcher on real directories with the real reactor (bounded waits).
"""

import os
import shutil

import pytest
import pytest_twisted
from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.inotify_watch import InotifyWatcher, inotify_available
from eshu_mcp.query.local.index.build.watching import Debouncer, PollingWatcher, watched_directories

WAIT_SECONDS = 5.0


class DebouncerTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.clock = Clock()
        self.batches: list[dict] = []
        self.debouncer = Debouncer(self.clock, self.batches.append, quiet=0.05, longest=1.0)

    def test_a_burst_of_writes_becomes_one_batch_after_a_quiet_moment(self) -> None:
        for name in ("a.py", "b.py", "a.py"):
            self.debouncer.add("/repo", name)
            self.clock.advance(0.03)
        self.assertEqual(self.batches, [])
        self.clock.advance(0.05)
        self.assertEqual(self.batches, [{"/repo": {"a.py", "b.py"}}])

    def test_a_change_without_a_path_asks_for_the_whole_tree(self) -> None:
        self.debouncer.add("/repo", "a.py")
        self.debouncer.add("/repo", None)
        self.debouncer.add("/repo", "b.py")
        self.debouncer.add("/other", "c.py")
        self.clock.advance(0.05)
        self.assertEqual(self.batches, [{"/repo": None, "/other": {"c.py"}}])

    def test_a_steady_stream_of_writes_is_still_built_within_the_longest_delay(self) -> None:
        for _ in range(60):
            self.debouncer.add("/repo", "log.py")
            self.clock.advance(0.04)
        self.assertEqual(len(self.batches), 2)  # at 1.0 s and 2.0 s, not never

    def test_cancel_drops_what_was_collected(self) -> None:
        self.debouncer.add("/repo", "a.py")
        self.debouncer.cancel()
        self.clock.advance(5)
        self.assertEqual(self.batches, [])
        self.assertEqual(self.clock.getDelayedCalls(), [])


class PollingWatcherTests(SynchronousTestCase):
    def test_a_new_digest_is_reported_once_as_an_unknown_change(self) -> None:
        clock, digests, changes = Clock(), {"/repo": "one"}, []
        watcher = PollingWatcher(
            clock,
            ["/repo"],
            lambda root, path: changes.append((root, path)),
            interval=2.0,
            digest=lambda root: defer.succeed(digests[root]),
        )
        watcher.start()
        clock.advance(2.0)
        digests["/repo"] = "two"
        clock.advance(2.0)
        clock.advance(2.0)
        self.assertEqual(changes, [("/repo", None)])
        watcher.stop()
        self.assertEqual(clock.getDelayedCalls(), [])


def test_watched_directories_skip_git_internals_and_tool_folders(tmp_path) -> None:
    for folder in ("src/pkg", ".git/objects/ab", ".git/refs/heads", "node_modules/x"):
        (tmp_path / folder).mkdir(parents=True)
    found = {os.path.relpath(path, tmp_path) for path in watched_directories(str(tmp_path))}
    assert found == {".", "src", "src/pkg", ".git", ".git/refs", ".git/refs/heads"}


needs_inotify = pytest.mark.skipif(not inotify_available(), reason="inotify is Linux-only")


class Changes:
    """What a watcher reported, and a way to wait (boundedly) for a given report."""

    def __init__(self, reactor) -> None:
        self.reactor = reactor
        self.seen: list[tuple[str, str | None]] = []
        self._waiting: list[tuple[object, defer.Deferred]] = []

    def __call__(self, root: str, path: str | None) -> None:
        self.seen.append((root, path))
        for wanted, waiter in list(self._waiting):
            if wanted == path:
                self._waiting.remove((wanted, waiter))
                waiter.callback(None)

    def wait_for(self, path: str | None) -> defer.Deferred:
        if any(seen == path for _, seen in self.seen):
            return defer.succeed(None)
        waiter: defer.Deferred = defer.Deferred()
        self._waiting.append((path, waiter))
        return waiter.addTimeout(WAIT_SECONDS, self.reactor)


async def started_watcher(tmp_path, ignored=()):
    from twisted.internet import reactor

    changes = Changes(reactor)
    watcher = InotifyWatcher(reactor, [str(tmp_path)], changes, ignored=ignored)
    await watcher.start()
    return watcher, changes


@needs_inotify
@pytest_twisted.ensureDeferred
async def test_inotify_reports_a_written_file_by_its_path(tmp_path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / ".git" / "objects").mkdir(parents=True)
    watcher, changes = await started_watcher(tmp_path, ignored=[str(tmp_path / "index.sqlite")])
    try:
        (tmp_path / ".git" / "objects" / "blob").write_text("x")
        (tmp_path / "index.sqlite").write_text("x")
        (tmp_path / "pkg" / ".mod.py.swp").write_text("x")
        (tmp_path / "pkg" / "mod.py").write_text("def f():\n    pass\n")
        await changes.wait_for("pkg/mod.py")
        assert all(
            path == "pkg/mod.py" for _, path in changes.seen
        )  # git objects, db, swap file: ignored
    finally:
        watcher.stop()


@needs_inotify
@pytest_twisted.ensureDeferred
async def test_inotify_watches_new_directories_and_survives_deleted_ones(tmp_path) -> None:
    (tmp_path / "old").mkdir()
    watcher, changes = await started_watcher(tmp_path)
    try:
        shutil.rmtree(tmp_path / "old")  # Twisted closes its descriptor on this
        await changes.wait_for(None)
        (tmp_path / "new").mkdir()
        await changes.wait_for(None)
        for _ in range(50):  # the new directory is watched once listed on a thread
            if watcher.watches >= 2:
                break
            await deferLater(0.05)
        (tmp_path / "new" / "later.py").write_text("x = 1\n")
        await changes.wait_for("new/later.py")
        (tmp_path / "top.py").write_text("y = 2\n")
        await changes.wait_for("top.py")
    finally:
        watcher.stop()


def deferLater(seconds: float) -> defer.Deferred:
    from twisted.internet import reactor, task

    return task.deferLater(reactor, seconds, lambda: None)
