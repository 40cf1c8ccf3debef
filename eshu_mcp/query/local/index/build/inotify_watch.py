"""
Watching work trees with Linux inotify (``twisted.internet.inotify``): each directory of a
tree is watched on its own (skipping ``.git`` internals other than HEAD and refs, and tool
directories), new directories are added as they appear, and an overflow or the loss of the
inotify descriptor (Twisted closes it when any watched directory is deleted) is reported
as an unknown change and the watches are set up again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from twisted.internet import defer, task, threads
from twisted.logger import Logger
from twisted.python.filepath import FilePath

from eshu_mcp.query.local.index.build.watching import (
    GIT_STATE_FILES,
    SKIPPED_DIRECTORIES,
    OnChange,
    watched_directories,
)

try:
    from twisted.internet import inotify
except ImportError:  # not Linux
    inotify = None  # type: ignore[assignment]

_Q_OVERFLOW = 0x00004000
EDITOR_SCRATCH_SUFFIXES = ("~", ".swp", ".swx", ".swo", ".tmp")


def _editor_scratch(name: str) -> bool:
    """Editors' swap, backup and lock files (vim, emacs): never source, often rewritten."""
    return name.endswith(EDITOR_SCRATCH_SUFFIXES) or name.startswith(".#") or name == "4913"


def inotify_available() -> bool:
    """Whether this platform has inotify (Twisted imports it on Linux only)."""
    return inotify is not None


if inotify is not None:

    class _Notifier(inotify.INotify):
        """Twisted's inotify descriptor, telling its owner when it is closed."""

        def __init__(self, reactor: Any, on_lost) -> None:
            super().__init__(reactor)
            self._on_lost = on_lost

        def connectionLost(self, reason) -> None:
            super().connectionLost(reason)
            self._on_lost(self)

    MASK = (
        inotify.IN_CLOSE_WRITE
        | inotify.IN_MOVED_TO
        | inotify.IN_MOVED_FROM
        | inotify.IN_DELETE
        | inotify.IN_CREATE
        | inotify.IN_DELETE_SELF
    )


class InotifyWatcher:
    """Reports file changes under ``roots`` as ``on_change(root, relative_path)``."""

    log = Logger()

    def __init__(
        self,
        reactor: Any,
        roots: list[str],
        on_change: OnChange,
        *,
        ignored: Iterable[str] = (),
    ) -> None:
        if inotify is None:
            raise RuntimeError("inotify is not available on this platform")
        self.reactor = reactor
        self.roots = [os.path.realpath(root) for root in roots]
        self.on_change = on_change
        self.ignored = frozenset(os.path.realpath(path) for path in ignored)
        self._notifier: Any = None
        self._running = False

    @property
    def watches(self) -> int:
        """How many directories are watched now."""
        return 0 if self._notifier is None else len(self._notifier._watchpaths)

    def start(self) -> defer.Deferred:
        """Open the inotify descriptor and watch every directory (listed on a thread)."""
        self._running = True
        self._notifier = _Notifier(self.reactor, self._lost)
        self._notifier.startReading()
        trees = [self._watch_tree(root) for root in self.roots]
        listed = defer.DeferredList(trees, fireOnOneErrback=True, consumeErrors=True)
        return listed.addErrback(lambda failure: failure.value.subFailure)

    def stop(self) -> None:
        """Close the descriptor (its watches go with it)."""
        self._running = False
        notifier, self._notifier = self._notifier, None
        if notifier is not None:
            notifier.loseConnection()

    def _watch_tree(self, top: str) -> defer.Deferred:
        listing = threads.deferToThreadPool(
            self.reactor, self.reactor.getThreadPool(), watched_directories, top, self.ignored
        )
        return listing.addCallback(self._add_watches)

    def _add_watches(self, directories: list[str]) -> defer.Deferred:
        """Add the watches a few at a time, so a huge tree never holds the reactor up."""
        failed: list[str] = []
        adding = task.cooperate(self._adding(directories, failed)).whenDone()
        return adding.addCallback(lambda _: self._check_failures(failed))

    def _adding(self, directories: list[str], failed: list[str]):
        for directory in directories:
            notifier = self._notifier
            if notifier is None:
                return
            try:
                notifier.watch(FilePath(directory), mask=MASK, callbacks=[self._notified])
            except inotify.INotifyError:
                failed.append(directory)
            yield None

    def _check_failures(self, failed: list[str]) -> defer.Deferred | None:
        """A directory gone since it was listed is fine; one still there is not (a limit)."""
        if not failed:
            return None
        present = threads.deferToThreadPool(
            self.reactor,
            self.reactor.getThreadPool(),
            lambda: [path for path in failed if os.path.isdir(path)],
        )

        def judge(still_there: list[str]) -> None:
            if still_there:
                raise RuntimeError(
                    f"cannot watch {len(still_there)} directories such as {still_there[0]}"
                    " (fs.inotify.max_user_watches?)"
                )

        return present.addCallback(judge)

    def _root_of(self, path: str) -> str | None:
        for root in self.roots:
            if path == root or path.startswith(root + os.sep):
                return root
        return None

    def _notified(self, watch: Any, filepath: FilePath, mask: int) -> None:
        path = os.fsdecode(filepath.path)
        if mask & _Q_OVERFLOW:
            for root in self.roots:
                self.on_change(root, None)
            return
        root = self._root_of(path)
        # watched paths are built from the real roots, so no realpath (file I/O) here
        if root is None or path in self.ignored:
            return
        relative = os.path.relpath(path, root)
        parts = relative.split(os.sep)
        if parts[0] == ".git":
            state = (len(parts) == 2 and parts[1] in GIT_STATE_FILES) or parts[1:2] == ["refs"]
            if state and not relative.endswith(".lock"):
                self.on_change(root, None)
            return
        if any(part in SKIPPED_DIRECTORIES for part in parts) or _editor_scratch(parts[-1]):
            return
        if mask & inotify.IN_ISDIR:
            if mask & (inotify.IN_CREATE | inotify.IN_MOVED_TO):
                self._watch_tree(path).addErrback(self._watch_failed)
            self.on_change(root, None)  # a directory came or went: walk the tree
            return
        if mask & inotify.IN_DELETE_SELF:
            return
        self.on_change(root, relative.replace(os.sep, "/"))

    def _watch_failed(self, failure) -> None:
        self.log.warn("index watch cannot watch a new directory: {error}", error=failure.value)

    def _lost(self, notifier: Any) -> None:
        if not self._running or notifier is not self._notifier:
            return
        # Twisted closes the descriptor when a watched directory is deleted: start again.
        self.log.info("index watch lost its inotify descriptor; watching the trees again")
        for root in self.roots:
            self.on_change(root, None)
        self._notifier = None
        self.start().addErrback(self._watch_failed)
