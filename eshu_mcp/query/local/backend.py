"""
The embedded query backend: the local index served through :class:`IQueryBackend`.

It owns the bounded reader thread pool the ``/api/v0`` handlers run on, started and
stopped with the service hierarchy, and answers readiness from memory: the index keeper's
events and looks at the index file on that pool keep it current, so no request ever opens
SQLite on the reactor thread. The same pool refreshes the work trees' states (answers'
freshness inputs) every second, so answers read them from memory.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet.task import Clock, LoopingCall
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.python.threadpool import ThreadPool
from zope.interface import implementer

import eshu_mcp.query.local.api  # noqa: F401  (registers every route family)
from eshu_mcp.query.interfaces import IQueryBackend
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from eshu_mcp.query.local.api.platform.routemap import ANSWERED_MODES, route_modes
from eshu_mcp.query.local.api.platform.work_trees import REFRESH_SECONDS, WORK_TREES, WorkTreeStates
from eshu_mcp.query.local.first_index import AwaitFirstIndex, BuildProgress

DEFAULT_READER_THREADS = 2
DEFAULT_SCAN_THREADS = 2
# How old the in-memory readiness may get before a look at the index file refreshes it.
READY_RECHECK_SECONDS = 5.0
UNREADY_RECHECK_SECONDS = 1.0


@implementer(IQueryBackend)
class LocalQueryBackend(Service):
    """The ``local`` backend: an embedded SQLite index behind the ``/api/v0`` Resource."""

    log = Logger()

    def __init__(
        self,
        db_path: str,
        *,
        reactor: Any,
        index_service: Any | None = None,
        reader_threads: int = DEFAULT_READER_THREADS,
        scan_threads: int = DEFAULT_SCAN_THREADS,
        deadline: float = 30.0,
        home_paths: tuple[str, ...] = (),
        threadpool: Any | None = None,
        work_trees: WorkTreeStates = WORK_TREES,
    ) -> None:
        self.name = "local"
        self.db_path = str(db_path)
        self.unready_reason: str | None = None
        """Why the last readiness check failed, when the index file says (shown by /readyz)."""
        self._index_service = index_service
        self.threadpool = threadpool or ThreadPool(
            minthreads=0, maxthreads=reader_threads, name="eshu-query"
        )
        # Repository-wide reads get threads of their own: point lookups never queue behind them.
        self.scan_threadpool = (
            None
            if threadpool is not None
            else ThreadPool(minthreads=0, maxthreads=scan_threads, name="eshu-query-scan")
        )
        self.home_paths = tuple(home_paths)
        """Un-scoped questions read only the repositories under these paths (empty: all)."""
        self._reactor = reactor
        self._clock = reactor if reactor is not None else Clock()
        self._ready = False
        self._checked_at = float("-inf")
        self._marks = 0
        self._readiness_waiters: list[defer.Deferred] = []
        self._became_ready: list[defer.Deferred] = []
        subscribe = getattr(index_service, "subscribe", None)
        if callable(subscribe):
            subscribe(self._index_event)
        # Answers read the work trees' HEADs from memory; this keeps them current.
        self._work_trees = work_trees
        self._work_tree_refresher = LoopingCall(self._refresh_work_trees)
        self._work_tree_refresher.clock = self._clock
        self._refreshing: defer.Deferred | None = None
        self.api = LocalQueryResource(
            self.db_path,
            reactor=reactor,
            threadpool=self.threadpool,
            scan_threadpool=self.scan_threadpool,
            deadline=deadline,
            home_paths=self.home_paths,
        )
        self.build_progress = (
            None if index_service is None else BuildProgress(index_service, self.ready)
        )
        # What /api/v0 serves: with an indexer attached, early queries wait for its first build.
        self.resource = (
            self.api
            if index_service is None
            else AwaitFirstIndex(
                self.api, index_service, self.ready, self.when_ready, clock=self._clock
            )
        )

    def startService(self) -> None:
        super().startService()
        self.threadpool.start()
        if self.scan_threadpool is not None:
            self.scan_threadpool.start()
        self.check_readiness()
        self._work_tree_refresher.start(REFRESH_SECONDS, now=False)
        self.log.info(
            "local query backend serving {db_path} on {threads} reader threads"
            " (and {scans} for repository-wide reads)",
            db_path=self.db_path,
            threads=self.threadpool.max,
            scans=self.scan_threadpool.max if self.scan_threadpool is not None else 0,
        )

    def stopService(self) -> None:
        super().stopService()
        if self._work_tree_refresher.running:
            self._work_tree_refresher.stop()
        self._work_trees.forget()
        interrupted = self.api.abandon_all()
        if interrupted:
            self.log.info("interrupted {count} running queries at shutdown", count=interrupted)
        self.threadpool.stop()
        if self.scan_threadpool is not None:
            self.scan_threadpool.stop()

    def _refresh_work_trees(self) -> None:
        if self._refreshing is not None:
            return  # the previous look is still running
        self._refreshing = deferToThreadPool(
            self._reactor, self.threadpool, self._work_trees.refresh
        )

        def done(result: Any) -> None:
            self._refreshing = None
            if isinstance(result, Failure):
                self.log.failure("work tree refresh failed", result)

        self._refreshing.addBoth(done)

    # -- readiness: state in memory, refreshed on the reader pool ----------------------------

    def ready(self) -> bool:
        """
        Whether any repository has an active generation, from memory (never I/O here).

        The answer is kept up to date by the index keeper's events (a committed generation
        makes it true at once) and by checks of the index file on the reader pool; a stale
        answer schedules one such check and is returned meanwhile.
        """
        check = getattr(self._index_service, "ready", None)
        if callable(check) and check():
            return True
        age = self._clock.seconds() - self._checked_at
        if not self._readiness_waiters and age >= (
            READY_RECHECK_SECONDS if self._ready else UNREADY_RECHECK_SECONDS
        ):
            self.check_readiness()
        return self._ready

    def check_readiness(self) -> defer.Deferred:
        """Look at the index file on the reader pool; fires with the fresh answer."""
        waiter: defer.Deferred = defer.Deferred()
        self._readiness_waiters.append(waiter)
        if len(self._readiness_waiters) == 1:
            self._checked_at = self._clock.seconds()
            marks = self._marks
            checking = deferToThreadPool(self._reactor, self.threadpool, probe_index, self.db_path)
            checking.addBoth(self._readiness_checked, marks)
        return waiter

    def when_ready(self) -> defer.Deferred:
        """Fires once the index has an active generation (at once if it has one now)."""
        if self._ready:
            return defer.succeed(True)
        waiter: defer.Deferred = defer.Deferred()
        self._became_ready.append(waiter)
        return waiter

    def mark_ready(self) -> None:
        """A generation became active (the index keeper committed one)."""
        self._marks += 1
        self._checked_at = self._clock.seconds()
        self._set_ready(True, None)

    def _index_event(self, event: dict) -> None:
        if event.get("phase") == "committed":
            self.mark_ready()
            if event.get("repo_id") and self.scan_threadpool is not None and self.running:
                self._keep_answers(str(event["repo_id"]))

    def _keep_answers(self, repo_id: str) -> None:
        """On a repository-wide reader: count the new generation's stats before anyone asks."""
        kept = deferToThreadPool(
            self._reactor, self.scan_threadpool, keep_generation_answers, self.db_path, repo_id
        )
        kept.addErrback(
            lambda failure: self.log.failure(
                "keeping {repo_id}'s answers failed", failure, repo_id=repo_id
            )
        )

    def _readiness_checked(self, result: Any, marks: int) -> None:
        if isinstance(result, Failure):
            self.log.failure("index readiness check failed", result)
            ready, reason = False, None
        else:
            ready, reason = result
        if not ready and marks != self._marks:
            ready, reason = True, None  # a commit seen meanwhile is newer than this look
        if reason is not None and reason != self.unready_reason:
            self.log.error("{reason}", reason=reason)
        self._set_ready(ready, reason)
        waiters, self._readiness_waiters = self._readiness_waiters, []
        for waiter in waiters:
            waiter.callback(ready)

    def _set_ready(self, ready: bool, reason: str | None) -> None:
        self._ready = ready
        self.unready_reason = reason
        if ready:
            waiters, self._became_ready = self._became_ready, []
            for waiter in waiters:
                waiter.callback(True)

    def answers(self, method: str, path_template: str) -> bool:
        """Whether the route map serves this operation for real or from a catalog."""
        return route_modes().get((method.upper(), path_template)) in ANSWERED_MODES


def keep_generation_answers(db_path: str, repo_id: str) -> None:
    """Compute the answers kept per generation that a first call would otherwise wait for
    (blocking: run it on the repository-wide reader pool)."""
    from eshu_mcp.query.local.api.repository.catalog import keep_repository_stats
    from eshu_mcp.query.local.index.store.database import open_reader

    conn = open_reader(db_path)
    try:
        keep_repository_stats(conn, repo_id)
    finally:
        conn.close()


def probe_index(db_path: str) -> tuple[bool, str | None]:
    """
    Whether the index file has an active generation, and why not when it says so.

    Blocking: run it on a thread pool, never on the reactor.
    """
    from eshu_mcp.query.local.index.store.database import (
        IndexDamaged,
        IndexUnavailable,
        damaged_message,
        is_damage,
        open_reader,
    )

    try:
        conn = open_reader(db_path)
    except IndexDamaged as error:
        return False, str(error)
    except IndexUnavailable:
        return False, None
    try:
        row = conn.execute(
            "SELECT 1 FROM repositories WHERE active_generation_id IS NOT NULL LIMIT 1"
        ).fetchone()
    except sqlite3.Error as error:
        if isinstance(error, sqlite3.DatabaseError) and is_damage(error):
            return False, damaged_message(db_path, error)
        return False, None
    finally:
        conn.close()
    return row is not None, None
