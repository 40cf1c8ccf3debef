"""
The embedded query backend: the local index served through :class:`IQueryBackend`.

It owns the bounded reader thread pool the ``/api/v0`` handlers run on, started and
stopped with the service hierarchy, and answers readiness from the index itself.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from twisted.application.service import Service
from twisted.logger import Logger
from twisted.python.threadpool import ThreadPool
from zope.interface import implementer

import eshu_mcp.query.local.api  # noqa: F401  (registers every route family)
from eshu_mcp.query.interfaces import IQueryBackend
from eshu_mcp.query.local.api.resource import LocalQueryResource
from eshu_mcp.query.local.api.routemap import ANSWERED_MODES, route_modes
from eshu_mcp.query.local.first_index import AwaitFirstIndex, BuildProgress

DEFAULT_READER_THREADS = 2


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
        deadline: float = 30.0,
        home_paths: tuple[str, ...] = (),
    ) -> None:
        self.name = "local"
        self.db_path = str(db_path)
        self.unready_reason: str | None = None
        """Why the last readiness check failed, when the index file says (shown by /readyz)."""
        self._index_service = index_service
        self.threadpool = ThreadPool(minthreads=0, maxthreads=reader_threads, name="eshu-query")
        self.home_paths = tuple(home_paths)
        """Un-scoped questions read only the repositories under these paths (empty: all)."""
        self.api = LocalQueryResource(
            self.db_path,
            reactor=reactor,
            threadpool=self.threadpool,
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
            else AwaitFirstIndex(self.api, index_service, self.ready)
        )

    def startService(self) -> None:
        super().startService()
        self.threadpool.start()
        self.log.info(
            "local query backend serving {db_path} on {threads} reader threads",
            db_path=self.db_path,
            threads=self.threadpool.max,
        )

    def stopService(self) -> None:
        super().stopService()
        interrupted = self.api.abandon_all()
        if interrupted:
            self.log.info("interrupted {count} running queries at shutdown", count=interrupted)
        self.threadpool.stop()

    def ready(self) -> bool:
        """True once any repository has an active generation (or the indexer says so)."""
        if self._index_service is not None:
            check = getattr(self._index_service, "ready", None)
            if callable(check) and check():
                return True
        return self._index_has_active_generation()

    def _index_has_active_generation(self) -> bool:
        from eshu_mcp.query.local.index.store import (
            IndexDamaged,
            IndexUnavailable,
            damaged_message,
            is_damage,
            open_reader,
        )

        try:
            conn = open_reader(self.db_path)
        except IndexDamaged as error:
            if self.unready_reason != str(error):
                self.log.error("{reason}", reason=str(error))
            self.unready_reason = str(error)
            return False
        except IndexUnavailable:
            return False
        self.unready_reason = None
        try:
            row = conn.execute(
                "SELECT 1 FROM repositories WHERE active_generation_id IS NOT NULL LIMIT 1"
            ).fetchone()
        except sqlite3.Error as error:
            if isinstance(error, sqlite3.DatabaseError) and is_damage(error):
                self.unready_reason = damaged_message(self.db_path, error)
            return False
        finally:
            conn.close()
        return row is not None

    def answers(self, method: str, path_template: str) -> bool:
        """Whether the route map serves this operation for real or from a catalog."""
        return route_modes().get((method.upper(), path_template)) in ANSWERED_MODES
