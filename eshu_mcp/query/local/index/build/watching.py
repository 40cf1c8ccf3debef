"""
Noticing that a work tree changed: inotify where the platform has it (Linux), polling a
cheap digest of each tree otherwise, and a debouncer that turns a burst of changes into one
request to re-index.

Both watchers report ``on_change(repo_path, relative_path_or_None)``; ``None`` means
"something changed, the path is unknown" (a poll saw a new digest, inotify overflowed).
Directory listings and digests run on the reactor's thread pool, never on its thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from twisted.internet import defer, task, threads
from twisted.logger import Logger
from twisted.python.failure import Failure

from eshu_mcp.query.local.index.walk.worktree import worktree_digest

OnChange = Callable[[str, "str | None"], None]
SKIPPED_DIRECTORIES = frozenset(
    {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", ".tox", ".mypy_cache"}
)
"""Directories never watched (their changes never change what the index holds)."""
GIT_STATE_FILES = frozenset({"HEAD", "packed-refs"})
"""Files in ``.git`` whose change means a commit or a checkout."""
DEBOUNCE_QUIET_SECONDS = 0.05
DEBOUNCE_LONGEST_SECONDS = 1.0


class Debouncer:
    """
    Collects changes and hands them over as one batch once none arrived for ``quiet``
    seconds, or ``longest`` seconds after the first of the batch (a steady stream of
    writes still gets indexed). The batch maps repository path to changed relative paths,
    or to None when some change had no known path.
    """

    def __init__(
        self,
        clock: Any,
        fire: Callable[[dict[str, set[str] | None]], None],
        *,
        quiet: float = DEBOUNCE_QUIET_SECONDS,
        longest: float = DEBOUNCE_LONGEST_SECONDS,
    ) -> None:
        self.clock = clock
        self.quiet = quiet
        self.longest = longest
        self._fire = fire
        self._batch: dict[str, set[str] | None] = {}
        self._timer: Any = None
        self._first: float | None = None

    def add(self, repo: str, relative: str | None) -> None:
        """Note one change; (re)arm the timer."""
        if repo not in self._batch:
            self._batch[repo] = set()
        known = self._batch[repo]
        if relative is None:
            self._batch[repo] = None
        elif known is not None:
            known.add(relative)
        now = self.clock.seconds()
        if self._first is None:
            self._first = now
        delay = max(0.0, min(self.quiet, self._first + self.longest - now))
        if self._timer is not None and self._timer.active():
            self._timer.reset(delay)
        else:
            self._timer = self.clock.callLater(delay, self._flush)

    def held(self, repo: str) -> set[str] | None:
        """What is collected for ``repo`` and not handed over yet (None: unknown paths)."""
        if repo not in self._batch:
            return set()
        known = self._batch[repo]
        return None if known is None else set(known)

    def cancel(self) -> None:
        """Drop what was collected (the service is stopping)."""
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        self._batch = {}
        self._first = None

    def _flush(self) -> None:
        batch, self._batch = self._batch, {}
        self._timer = None
        self._first = None
        if batch:
            self._fire(batch)


def watched_directories(root: str, ignored: Iterable[str] = ()) -> list[str]:
    """Directories to watch under ``root`` (blocking: run it on a thread)."""
    skip = {os.path.realpath(path) for path in ignored}
    found = []
    for current, dirs, _ in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRECTORIES]
        if os.path.realpath(current) not in skip:
            found.append(current)
    git = os.path.join(root, ".git")
    if os.path.isdir(git):
        found.append(git)
        for current, _, _ in os.walk(os.path.join(git, "refs")):
            found.append(current)
    return found


class PollingWatcher:
    """Every ``interval`` seconds, compares each tree's digest (git HEAD + status) with the last."""

    log = Logger()

    def __init__(
        self,
        reactor: Any,
        roots: list[str],
        on_change: OnChange,
        *,
        interval: float = 2.0,
        digest: Callable[[str], defer.Deferred] | None = None,
    ) -> None:
        self.reactor = reactor
        self.roots = roots
        self.on_change = on_change
        self.interval = interval
        self._digest = digest or self._thread_digest
        self._seen: dict[str, str] = {}
        self._loop: task.LoopingCall | None = None
        self._polling = False

    def start(self) -> defer.Deferred:
        """Record the trees' current digests, then poll."""
        self._loop = task.LoopingCall(self.poll)
        self._loop.clock = self.reactor
        first = self._digests().addCallback(self._seen.update)
        first.addErrback(self._failed)
        first.addCallback(lambda _: self._loop and self._loop.start(self.interval, now=False))
        return first

    def stop(self) -> None:
        """Stop polling."""
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self._loop = None

    def poll(self) -> defer.Deferred | None:
        """Compare the digests once (skipped while the previous comparison runs)."""
        if self._polling:
            return None
        self._polling = True

        def compare(current: dict[str, str]) -> None:
            for root, value in current.items():
                if self._seen.get(root) != value:
                    self._seen[root] = value
                    self.on_change(root, None)

        def done(result: object) -> object:
            self._polling = False
            return result

        return self._digests().addCallback(compare).addErrback(self._failed).addBoth(done)

    @defer.inlineCallbacks
    def _digests(self):
        current = {}
        for root in self.roots:
            current[root] = yield self._digest(root)
        return current

    def _thread_digest(self, root: str) -> defer.Deferred:
        return threads.deferToThreadPool(
            self.reactor, self.reactor.getThreadPool(), worktree_digest, root
        )

    def _failed(self, failure: Failure) -> None:
        self.log.warn("index watch cannot read the work trees: {error}", error=failure.value)
