"""
The daemon's index keeper: builds the index when the service starts and, in watch mode,
again whenever a work tree changes.

Builds run in one long-lived child process (:mod:`.builder`, driven through
:mod:`.builder_process`), started with the service and fed build requests, so parsing never
holds the reactor's GIL, a crash of the indexer cannot take the daemon down, and a one-file
change costs its build rather than an interpreter start. The previous generation keeps
serving while a build runs. If the child dies it is restarted, after a growing delay when it
keeps dying. Changes are noticed with inotify where available (polling otherwise) and
debounced, so a burst of writes becomes one build.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from attrs import frozen
from twisted.application.service import Service
from twisted.internet import defer
from twisted.logger import Logger

from eshu_mcp.query.local.index.build.builder import BUILT
from eshu_mcp.query.local.index.build.builder_process import TERM_GRACE_SECONDS, BuilderProcess
from eshu_mcp.query.local.index.build.inotify_watch import InotifyWatcher, inotify_available
from eshu_mcp.query.local.index.build.watching import (
    DEBOUNCE_QUIET_SECONDS,
    Debouncer,
    PollingWatcher,
)
from eshu_mcp.query.local.index.parse.credentials import SERVE_ENV

STATES = ("building", "ready", "failed")
KILL_GRACE_SECONDS = TERM_GRACE_SECONDS
RESTART_DELAYS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
"""Seconds before restarting a child that died: the n-th death in a row waits the n-th."""
OWN_FILE_SUFFIXES = ("", "-wal", "-shm", "-journal", ".lock")


@frozen
class PendingChange:
    """A work tree's changes the index has not caught up with yet (as the keeper knows them)."""

    changed_paths: int | None
    """How many changed paths are known; None when the whole tree is being walked again."""
    rebuilding: bool
    """Whether a build covering them runs now (False: it is queued or being debounced)."""
    writing: str | None = None
    """The generation the running build writes for the repository, once it has begun it:
    a reader that sees it active sees those changes indexed."""
    queued: int | None = 0
    """While rebuilding: how many of them the running build does not cover (None: unknown)."""


class IndexFailed(Exception):
    """An index build failed (or the indexer child died during the first one)."""


class IndexService(Service):
    """Keeps the embedded index of ``repo_paths`` in ``db_path`` built (and fresh if watching)."""

    log = Logger()

    def __init__(
        self,
        db_path: str | os.PathLike[str],
        repo_paths: list[str],
        *,
        watch: bool,
        reactor: Any,
        interval: float = 2.0,
        digest: Callable[[str], defer.Deferred] | None = None,
        executable: str = sys.executable,
        use_inotify: bool | None = None,
        debounce: float = DEBOUNCE_QUIET_SECONDS,
        restart_delays: tuple[float, ...] = RESTART_DELAYS,
        serve_credential_files: bool = False,
    ) -> None:
        self.db_path = str(db_path)
        self.serve_credential_files = serve_credential_files
        self.repo_paths = [str(p) for p in repo_paths]
        self.watch = watch
        self.reactor = reactor
        self.interval = interval
        self.executable = executable
        self.restart_delays = restart_delays
        self.use_inotify = inotify_available() if use_inotify is None else use_inotify
        self._digest = digest
        self.state = "building"
        self.last_error: str | None = None
        self.last_event: dict | None = None
        self.last_build: dict | None = None
        """The ``built`` summary of the last finished build (per-repository counts, seconds)."""
        self.runs = 0
        self.children_started = 0
        self._child: BuilderProcess | None = None
        self._in_flight: tuple[int, dict[str, set[str] | None]] | None = None
        self._pending: dict[str, set[str] | None] = {}
        self._deaths = 0
        self._restart: Any = None
        self._waiting: list[defer.Deferred] = []
        self._listeners: list[Callable[[dict], None]] = []
        self._debouncer = Debouncer(reactor, self._request, quiet=debounce)
        self._watcher: InotifyWatcher | PollingWatcher | None = None
        # Change notices are numbered; a build covers those noticed before it was requested.
        self._noticed = 0
        self._requested_upto = 0
        self._in_flight_upto = 0
        self._indexed_upto = 0
        self._unindexed: dict[str, set[str] | None] = {}
        """Per repository: changed paths noticed and not yet indexed (None: unknown)."""
        self._catch_up: list[tuple[int, defer.Deferred]] = []
        self._roots: dict[str, str] = {}
        """Repository id -> the requested path the running build found it at."""
        self._writing: dict[str, str] = {}
        """Root -> the generation the running build writes for it."""
        self._landed: set[str] = set()
        """Roots whose part of the running build is indexed (committed, or nothing to do)."""

    # -- lifecycle -------------------------------------------------------------------------

    def startService(self) -> None:
        """Start the indexer child with a full build, and the watcher when watching."""
        super().startService()
        self.state = "building"
        self._spawn()
        self._request({path: None for path in self.repo_paths})
        if self.watch:
            self._start_watcher()

    def stopService(self) -> defer.Deferred | None:
        """Stop watching; stop the child and its workers (SIGTERM, then SIGKILL: bounded)."""
        super().stopService()
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        self._debouncer.cancel()
        self._release_caught_up(everything=True)
        if self._restart is not None and self._restart.active():
            self._restart.cancel()
        self._restart = None
        child, self._child = self._child, None
        if child is None or not child.alive:
            return None
        if self._in_flight is not None:
            self.log.info(
                "index build {run} stopped with the service: the previous generation stays"
                " unless it was committing",
                run=self._in_flight[0],
            )
        return child.stop()

    def whenReady(self) -> defer.Deferred:
        """Fires (with this service) once an index build has succeeded; errbacks if it failed."""
        if self.state == "ready":
            return defer.succeed(self)
        if self.state == "failed":
            return defer.fail(IndexFailed(self.last_error or "indexing failed"))
        waiter: defer.Deferred = defer.Deferred()
        self._waiting.append(waiter)
        return waiter

    def subscribe(self, listener: Callable[[dict], None]) -> Callable[[], None]:
        """Call ``listener(event)`` with each progress event of the builds; returns the undo."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    @property
    def running_indexer(self) -> bool:
        """Whether a build is running in the indexer child now."""
        return self._in_flight is not None

    @property
    def child_pid(self) -> int | None:
        """The indexer child's process id (None while none runs)."""
        return None if self._child is None or not self._child.alive else self._child.pid

    def pending_changes(self) -> dict[str, PendingChange]:
        """The repositories whose noticed changes are not indexed yet (from memory)."""
        if not self.running:
            return {}
        in_flight = self._in_flight[1] if self._in_flight is not None else {}
        found = {}
        for root in {*self._unindexed, *in_flight}:
            noticed = self._unindexed.get(root, set())
            queued = None if noticed is None else len(noticed)
            if root not in in_flight or root in self._landed:
                if queued != 0:
                    found[root] = PendingChange(queued, rebuilding=False)
                continue
            building = in_flight[root]
            count = None if noticed is None or building is None else len(noticed | building)
            found[root] = PendingChange(count, True, self._writing.get(root), queued)
        return found

    def when_caught_up(self) -> defer.Deferred | None:
        """
        A Deferred firing once every change noticed so far has been indexed (or its build
        failed), or None when nothing is outstanding. Cancelling it just stops the wait.
        """
        if not self.running or self._indexed_upto >= self._noticed:
            return None
        waiter: defer.Deferred = defer.Deferred()
        self._catch_up.append((self._noticed, waiter))
        return waiter

    def _note(self, root: str, relative: str | None) -> None:
        self._noticed += 1
        self._merge_unindexed(root, None if relative is None else {relative})

    def _merge_unindexed(self, root: str, changed: set[str] | None) -> None:
        known = self._unindexed.get(root, set())
        self._unindexed[root] = None if changed is None or known is None else known | changed

    def _release_caught_up(self, *, everything: bool = False) -> None:
        waiting, self._catch_up = self._catch_up, []
        for target, waiter in waiting:
            if waiter.called:
                continue
            if everything or self._indexed_upto >= target:
                waiter.callback(None)
            else:
                self._catch_up.append((target, waiter))

    # -- the child -------------------------------------------------------------------------

    def _spawn(self) -> None:
        self.children_started += 1
        self._child = BuilderProcess(
            self.reactor,
            self.db_path,
            on_event=self._on_event,
            on_exit=self._on_exit,
            executable=self.executable,
            env={**os.environ, SERVE_ENV: "1"} if self.serve_credential_files else None,
        )
        self.log.info(
            "index builder {pid} started for {db_path}", pid=self._child.pid, db_path=self.db_path
        )

    def _restart_child(self) -> None:
        self._restart = None
        if self.running and self._child is None:
            self._spawn()
            self._send_next()

    def _on_exit(self, code: int | None, signal_number: int | None, stderr: str) -> None:
        if not self.running:
            self.log.info("index builder exited with the service")
            return
        self._child = None
        how = f"signal {signal_number}" if signal_number else f"status {code}"
        detail = stderr.splitlines()[-1] if stderr else ""
        delay = self.restart_delays[min(self._deaths, len(self.restart_delays) - 1)]
        self._deaths += 1
        self.log.warn(
            "index builder exited unexpectedly ({how}){detail}; restarting in {delay}s",
            how=how,
            detail=f": {detail}" if detail else "",
            delay=delay,
        )
        if self._in_flight is not None:
            _, batch = self._in_flight
            self._in_flight = None
            for path in batch:
                self._pending[path] = None  # what it had done is unknown: walk the trees again
                self._merge_unindexed(path, None)
            if self.state == "building":
                self._fail(f"indexer exited unexpectedly ({how}){': ' + detail if detail else ''}")
        self._restart = self.reactor.callLater(delay, self._restart_child)

    # -- builds ----------------------------------------------------------------------------

    def _request(self, batch: dict[str, set[str] | None]) -> None:
        """Queue a build of these repositories (changed paths, or None for a full walk)."""
        for path, changed in batch.items():
            if changed is None:
                self._note(path, None)
            else:
                for relative in changed:
                    self._note(path, relative)
        self._requested_upto = self._noticed
        for path, changed in batch.items():
            known = self._pending.get(path, set())
            if changed is None or known is None:
                self._pending[path] = None
            else:
                self._pending[path] = known | changed
        self._send_next()

    def _send_next(self) -> None:
        child = self._child
        if not self.running or child is None or not child.alive or self._in_flight is not None:
            return
        if not self._pending:
            return
        batch, self._pending = self._pending, {}
        self.runs += 1
        self._in_flight = (self.runs, batch)
        self._in_flight_upto = self._requested_upto
        for root, changed in batch.items():
            known = self._unindexed.pop(root, set())
            if changed is None:
                known = self._debouncer.held(root)  # noticed after the walk may start
            elif known is not None:
                known = known - changed
            if known is None or known:
                self._unindexed[root] = known
        self.state = "building"
        self._roots, self._writing, self._landed = {}, {}, set()
        paths = [path for path in self.repo_paths if path in batch]
        paths += [path for path in batch if path not in paths]
        changed = sum(len(v) for v in batch.values() if v is not None)
        self.log.debug(
            "index build {run} started for {paths} ({changed} changed paths known)",
            run=self.runs,
            paths=paths,
            changed=changed,
        )
        child.send(
            {
                "build": self.runs,
                "paths": paths,
                "changed": {p: None if v is None else sorted(v) for p, v in batch.items()},
            }
        )

    def _on_event(self, event: dict) -> None:
        self.last_event = event
        if event.get("phase") == "failed":
            self.last_error = str(event.get("error") or event)
        if event.get("phase") == "discover" and event.get("git_refused"):
            self.log.warn(
                "index of {repo_id}: {reason}",
                repo_id=event.get("repo_id"),
                reason=event.get("git_refused"),
            )
        if event.get("phase") == "skipped":
            self.log.warn(
                "index of {repo_id} skipped {count} files whose names are not valid UTF-8"
                " (first: {example})",
                repo_id=event.get("repo_id"),
                count=event.get("undecodable_names"),
                example=event.get("example"),
            )
        if event.get("phase") in ("discover", "write", "committed", "fresh"):
            self._progress(event)
        if event.get("phase") == BUILT:
            self._built(event)
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                self.log.failure("index progress listener failed")

    def _progress(self, event: dict) -> None:
        """Follow the running build repository by repository: the generation it writes for
        each, and once each is indexed (committed, or found with nothing to do), count its
        changes indexed and release the requests waiting for them, without waiting for the
        child's summary of the whole build."""
        if self._in_flight is None or event.get("build") != self._in_flight[0]:
            return
        batch = self._in_flight[1]
        repo_id = str(event.get("repo_id"))
        if event["phase"] == "discover":
            requested = event.get("requested")
            if requested in batch:
                self._roots[repo_id] = requested
            return
        root = self._roots.get(repo_id)
        if root is None:
            return
        if event["phase"] == "write":
            self._writing[root] = str(event.get("generation_id"))
            return
        self._landed.add(root)
        if all(path in self._landed for path in batch):
            self._indexed_upto = max(self._indexed_upto, self._in_flight_upto)
            self._release_caught_up()

    def _built(self, event: dict) -> None:
        if self._in_flight is None or event.get("build") != self._in_flight[0]:
            return
        run, batch = self._in_flight
        self._in_flight = None
        landed = self._landed
        self._roots, self._writing, self._landed = {}, {}, set()
        self.last_build = event
        if not event.get("ok"):
            for root, changed in batch.items():  # still not indexed
                if root not in landed:
                    self._merge_unindexed(root, changed)
        self._indexed_upto = max(self._indexed_upto, self._in_flight_upto)
        self._release_caught_up()
        self._log_build(run, event)
        if event.get("ok"):
            self._deaths = 0
            self.state = "ready"
            self.last_error = None
            waiters, self._waiting = self._waiting, []
            for waiter in waiters:
                waiter.callback(self)
        else:
            self._fail(str(event.get("error") or "indexing failed"))
        self._send_next()

    def _fail(self, message: str) -> None:
        self.state = "failed"
        self.last_error = message
        waiters, self._waiting = self._waiting, []
        for waiter in waiters:
            waiter.errback(IndexFailed(message))

    def _log_build(self, run: int, event: dict) -> None:
        """One line per repository of the build (and the total when there were several)."""
        repositories = event.get("repositories") or []
        for repo in repositories:
            if repo.get("status") == "failed":
                self.log.warn(
                    "index build {run}: {path} failed after {seconds}s: {error}",
                    run=run,
                    path=repo.get("path"),
                    repo_id=repo.get("repo_id"),
                    seconds=repo.get("seconds"),
                    error=repo.get("error"),
                )
                continue
            # a build that found nothing to do (an editor's scratch write) is not news
            emit = self.log.debug if repo.get("status") == "fresh" else self.log.info
            emit(
                "index build {run}: {path} {status} in {seconds}s: {parsed} files parsed,"
                " {deleted} deleted; now {files} files, {entities} entities, {edges} edges",
                run=run,
                path=repo.get("path"),
                repo_id=repo.get("repo_id"),
                status=repo.get("status"),
                seconds=repo.get("seconds"),
                parsed=repo.get("parsed"),
                deleted=repo.get("deleted"),
                files=repo.get("files"),
                entities=repo.get("entities"),
                edges=repo.get("edges"),
            )
        if not repositories and event.get("error"):
            self.log.warn("index build {run} failed: {error}", run=run, error=event.get("error"))
        elif len(repositories) > 1:
            self.log.info(
                "index build {run} finished {count} repositories in {seconds}s",
                run=run,
                count=len(repositories),
                seconds=event.get("seconds"),
            )

    # -- watching --------------------------------------------------------------------------

    def _changed(self, root: str, relative: str | None) -> None:
        if self.running:
            self._note(root, relative)
            self._debouncer.add(root, relative)

    def _start_watcher(self) -> None:
        if self.use_inotify:
            ignored = [self.db_path + suffix for suffix in OWN_FILE_SUFFIXES]
            watcher = InotifyWatcher(self.reactor, self.repo_paths, self._changed, ignored=ignored)
            self._watcher = watcher
            watcher.start().addCallbacks(
                lambda _: self.log.info(
                    "index watch: inotify on {count} directories", count=watcher.watches
                ),
                self._inotify_failed,
            )
            return
        self._start_polling()

    def _inotify_failed(self, failure) -> None:
        self.log.warn("index watch cannot use inotify ({error}); polling", error=failure.value)
        if self._watcher is not None:
            self._watcher.stop()
        if self.running:
            self._start_polling()

    def _start_polling(self) -> None:
        self._watcher = PollingWatcher(
            self.reactor,
            self.repo_paths,
            self._changed,
            interval=self.interval,
            digest=self._digest,
        )
        self._watcher.start()
        self.log.info("index watch: polling every {interval}s", interval=self.interval)
