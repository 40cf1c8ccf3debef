"""
The daemon's index keeper: builds the index in a child process when the service starts
and, in watch mode, rebuilds it when a work tree changes.

Indexing runs as ``python -m eshu_mcp.query.local.index.command`` spawned through the
injected reactor, so parsing never holds the reactor's GIL and a crash of the indexer
cannot take the daemon down; the previous generation keeps serving meanwhile.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from twisted.application.service import Service
from twisted.internet import defer, error, protocol, task
from twisted.logger import Logger
from twisted.python.failure import Failure

from .walk import worktree_digest

STATES = ("building", "ready", "failed")
KILL_GRACE_SECONDS = 5.0
STDERR_TAIL_BYTES = 4096


class IndexFailed(Exception):
    """The indexer child process exited unsuccessfully."""


class _IndexerProtocol(protocol.ProcessProtocol):
    """Collects the child's JSON progress lines and stderr, reports the exit."""

    def __init__(
        self, on_event: Callable[[dict], None], on_exit: Callable[[int | None, str], None]
    ):
        self._buffer = b""
        self._stderr = b""
        self._on_event = on_event
        self._on_exit = on_exit

    def outReceived(self, data: bytes) -> None:
        """Parse complete JSON lines from the child."""
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                self._on_event(event)

    def errReceived(self, data: bytes) -> None:
        """Keep the tail of the child's stderr for the error message."""
        self._stderr = (self._stderr + data)[-STDERR_TAIL_BYTES:]

    def processEnded(self, reason: Failure) -> None:
        """Report the exit status (0 for a clean exit)."""
        code = getattr(reason.value, "exitCode", None)
        if reason.check(error.ProcessDone):
            code = 0
        self._on_exit(code, self._stderr.decode("utf-8", "replace").strip())


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
    ) -> None:
        self.db_path = str(db_path)
        self.repo_paths = [str(p) for p in repo_paths]
        self.watch = watch
        self.reactor = reactor
        self.interval = interval
        self.executable = executable
        self._digest = digest or self._thread_digest
        self.state = "building"
        self.last_error: str | None = None
        self.last_event: dict | None = None
        self.runs = 0
        self._process: Any = None
        self._ended: defer.Deferred | None = None
        self._waiting: list[defer.Deferred] = []
        self._poller: task.LoopingCall | None = None
        self._attempted: dict[str, str] | None = None
        self._rerun = False
        self._listeners: list[Callable[[dict], None]] = []

    # -- lifecycle -------------------------------------------------------------------------

    def startService(self) -> None:
        """Start the first build (after reading the trees when watching) and the poller."""
        super().startService()
        self.state = "building"
        if not self.watch:
            self._start_run(None)
            return
        self._current_digests().addCallback(self._start_run).addErrback(self._digest_failed)
        self._poller = task.LoopingCall(self._poll)
        self._poller.clock = self.reactor
        self._poller.start(self.interval, now=False)

    def stopService(self) -> defer.Deferred | None:
        """Stop polling; terminate a running indexer (KILL after a grace period)."""
        super().stopService()
        if self._poller is not None and self._poller.running:
            self._poller.stop()
        self._poller = None
        if self._process is None:
            return None
        ended = self._ended
        self._signal("TERM")
        killer = self.reactor.callLater(KILL_GRACE_SECONDS, self._signal, "KILL")

        def stop_killer(result: object) -> object:
            """Cancel the pending KILL once the child has gone."""
            if killer.active():
                killer.cancel()
            return None

        return ended.addBoth(stop_killer)

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
        """Whether an indexer child process is running now."""
        return self._process is not None

    # -- runs --------------------------------------------------------------------------------

    def _argv(self) -> list[str]:
        return [
            self.executable,
            "-m",
            "eshu_mcp.query.local.index.command",
            *self.repo_paths,
            "--db",
            self.db_path,
            "--json",
        ]

    def _start_run(self, digests: dict[str, str] | None) -> None:
        if not self.running or self._process is not None:
            return
        self.state = "building"
        self.runs += 1
        self._attempted = digests
        self._ended = defer.Deferred()
        self.log.info("index build {run} started for {paths}", run=self.runs, paths=self.repo_paths)
        child = _IndexerProtocol(self._on_event, self._on_exit)
        self._process = self.reactor.spawnProcess(
            child, self.executable, self._argv(), env=dict(os.environ)
        )

    def _on_event(self, event: dict) -> None:
        self.last_event = event
        if event.get("phase") == "failed":
            self.last_error = str(event.get("error") or event)
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                self.log.failure("index progress listener failed")

    def _on_exit(self, code: int | None, stderr: str) -> None:
        self._process = None
        ended, self._ended = self._ended, None
        if code != 0 and not self.running:
            self.log.info("index build {run} stopped with the service", run=self.runs)
        elif code == 0:
            self.state = "ready"
            self.last_error = None
            self.log.info("index build {run} finished", run=self.runs)
            waiters, self._waiting = self._waiting, []
            for waiter in waiters:
                waiter.callback(self)
        else:
            self.state = "failed"
            if stderr:
                self.last_error = stderr.splitlines()[-1]
            elif not self.last_error:
                self.last_error = f"indexer exited with status {code}"
            self.log.warn("index build {run} failed: {error}", run=self.runs, error=self.last_error)
            waiters, self._waiting = self._waiting, []
            for waiter in waiters:
                waiter.errback(IndexFailed(self.last_error))
        if ended is not None:
            ended.callback(code)
        if self._rerun and self.running:
            self._rerun = False
            self._poll()

    def _signal(self, name: str) -> None:
        if self._process is None:
            return
        with contextlib.suppress(error.ProcessExitedAlready):
            self._process.signalProcess(name)

    # -- watching ----------------------------------------------------------------------------

    def _thread_digest(self, path: str) -> defer.Deferred:
        from twisted.internet import threads

        return threads.deferToThreadPool(
            self.reactor, self.reactor.getThreadPool(), worktree_digest, path
        )

    @defer.inlineCallbacks
    def _current_digests(self):
        current = {}
        for path in self.repo_paths:
            current[path] = yield self._digest(path)
        return current

    def _digest_failed(self, failure: Failure) -> None:
        self.log.warn("index watch cannot read the work trees: {error}", error=failure.value)
        if self._process is None and self._attempted is None:
            self._start_run(None)

    def _poll(self) -> defer.Deferred | None:
        if self._process is not None:
            self._rerun = True
            return None
        return (
            self._current_digests().addCallback(self._maybe_rebuild).addErrback(self._digest_failed)
        )

    def _maybe_rebuild(self, current: dict[str, str]) -> None:
        if current != self._attempted and self._process is None and self.running:
            self.log.info("index watch saw changes in {paths}; rebuilding", paths=self.repo_paths)
            self._start_run(current)
