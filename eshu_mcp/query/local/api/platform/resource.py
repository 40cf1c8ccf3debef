"""
The twisted.web Resource mounted at ``/api/v0/`` for the embedded index.

It routes the path below the mount point through the route table, runs the handler on a
bounded reader thread pool with its own SQLite connection, and renders the handler's
answer with Eshu's envelope/plain rules. A client that goes away (or a dispatch that is
cancelled or times out) interrupts the running SQLite statement; nothing is written after
a disconnect.
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote_to_bytes

from attrs import evolve
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET

from eshu_mcp.encoding import dumps
from eshu_mcp.query.compact import ANSWER_DETAIL_HEADER, compact_answer, wants_compact
from eshu_mcp.query.local.api.platform.framework import (
    ENVELOPE_MEDIA_TYPE,
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    Route,
    RouteTable,
)
from eshu_mcp.query.local.api.platform.grants import grant, restricted, shadow
from eshu_mcp.query.local.api.platform.keeper_view import KEEPER_ATTRIBUTE
from eshu_mcp.query.local.api.platform.lanes import POINT, SCAN, LaneBusy, LaneQueues, lane_of

JSON_CONTENT_TYPE = b"application/json; charset=utf-8"

_SURROGATES = re.compile("[\ud800-\udfff]")

# Request bodies larger than this are refused before any JSON decoding.
MAX_BODY_BYTES = 1 << 20

# Where the authenticating guard in front of this Resource leaves the caller's Principal
# (eshu_mcp.auth.guard stores it under this name; this layer must not import auth).
PRINCIPAL_ATTRIBUTE = "_eshu_mcp_principal"


def _busy_error(busy: LaneBusy) -> ApiError:
    what = "repository-wide queries" if busy.lane == SCAN else "queries"
    return ApiError(
        503,
        f"the index is busy: {busy.queued} {what} are waiting for a reader; try again shortly",
        code="backend_busy",
    )


class _Abandoned(Exception):
    """The request went away before its handler started."""


class QueryCall:
    """
    The link between one request and the SQLite connection serving it.

    ``abandon`` and ``expire`` may run on the reactor thread while the handler runs on a
    pool thread; the lock makes sure an interrupt only ever reaches an open connection.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self.abandoned = False
        self.expired = False
        self.stopped = False
        self.budget = 0.0
        self.timer: Any = None
        """The deadline's delayed call, armed when the query starts running."""
        self.waiting_in: str | None = None
        """The lane whose queue the query waits in until a thread takes it."""

    def attach(self, conn: sqlite3.Connection) -> None:
        with self._lock:
            if self.abandoned or self.expired:
                raise _Abandoned()
            self._conn = conn

    def detach(self) -> None:
        with self._lock:
            self._conn = None

    def _interrupt(self) -> None:
        if self._conn is not None:
            self._conn.interrupt()

    def abandon(self, reason: Any = None) -> None:
        """The client disconnected or the dispatch was cancelled: stop the statement."""
        with self._lock:
            self.abandoned = True
            self._interrupt()

    def expire(self) -> None:
        """The read deadline passed: stop the statement and answer 504."""
        with self._lock:
            self.expired = True
            self._interrupt()


def open_index_reader(db_path: str) -> sqlite3.Connection:
    """A read connection to the index, from the index store's public API."""
    from eshu_mcp.query.local.index.store.database import (
        IndexDamaged,
        IndexUnavailable,
        open_reader,
    )

    try:
        return open_reader(db_path)
    except IndexDamaged as error:
        raise ApiError(503, str(error), code="backend_unavailable") from error
    except IndexUnavailable as error:
        raise ApiError(
            503,
            f"local index is unavailable: {error}; build it with `eshu-mcp index PATH`"
            " or start the server with --repo PATH",
            code="backend_unavailable",
        ) from error


class _NonFiniteNumber(ValueError):
    """NaN, an infinity or a number beyond float64: JSON has none of them."""


def _refuse_constant(name: str) -> float:
    raise _NonFiniteNumber(f"invalid character {name[0]!r} looking for beginning of value")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _NonFiniteNumber(
            f"json: cannot unmarshal number {text} into Go value of type float64"
        )
    return number


def _go_json_error(error: json.JSONDecodeError, text: str) -> str:
    """A decoder message in the words Go's encoding/json uses."""
    if error.pos >= len(text.rstrip()):
        return "unexpected EOF"
    char = text[error.pos]
    if error.msg.startswith("Extra data"):
        return f"invalid character {char!r} after top-level value"
    return f"invalid character {char!r} looking for beginning of value"


def _go_strings(value: Any) -> Any:
    """
    ``value`` with every lone surrogate (a ``\\ud800`` escape without its pair) replaced by
    U+FFFD, as Go's decoder does: such text cannot be bound to SQLite or sent as UTF-8.
    """
    if isinstance(value, str):
        return _SURROGATES.sub("\ufffd", value)
    if isinstance(value, list):
        return [_go_strings(item) for item in value]
    if isinstance(value, dict):
        return {_go_strings(key): _go_strings(item) for key, item in value.items()}
    return value


class LocalQueryResource(Resource):
    """Answers ``/api/v0/*`` from the embedded SQLite index."""

    isLeaf = True
    log = Logger()

    def __init__(
        self,
        db_path: str,
        *,
        reactor: Any,
        threadpool: Any,
        routes: RouteTable = ROUTES,
        connect: Callable[[str], sqlite3.Connection] = open_index_reader,
        deadline: float = 30.0,
        home_paths: tuple[str, ...] = (),
        scan_threadpool: Any = None,
        queues: LaneQueues | None = None,
    ) -> None:
        super().__init__()
        self._db_path = db_path
        self._pools = {POINT: threadpool, SCAN: scan_threadpool or threadpool}
        self._queues = queues or LaneQueues()
        self._home_paths = tuple(home_paths)
        self._reactor = reactor
        self._threadpool = threadpool
        self._routes = routes
        self._connect = connect
        self._deadline = deadline
        self._active: set[QueryCall] = set()
        # Each pool thread keeps its read connection: opening one parses the schema
        # (most of a small query's cost). It is reopened when the file is replaced.
        self._readers = threading.local()

    def abandon_all(self) -> int:
        """
        Interrupt every running query (shutdown), each still-connected client answered 503;
        returns how many were running.
        """
        calls = list(self._active)
        for call in calls:
            call.stopped = True
            call.abandon()
        return len(calls)

    # ---------------------------------------------------------------- rendering

    def render(self, request):
        call = QueryCall()
        # Register first: notifyFinish after a disconnect never fires (twisted#4899).
        request.notifyFinish().addErrback(call.abandon)
        try:
            route, params = self._prepare(request)
        except ApiError as error:
            return self._error_bytes(request, error, self._accepts_envelope(request))
        lane = lane_of(route.method, route.pattern, params["body"])
        try:
            self._queues.enter(lane)
        except LaneBusy as busy:
            request.setHeader(b"retry-after", b"1")
            return self._error_bytes(request, _busy_error(busy), params["envelope"])
        call.waiting_in = lane
        self._active.add(call)
        # The deadline counts from when the query starts running, not from its arrival:
        # a query that waited for a thread still gets its whole budget.
        call.budget = min(self._deadline, route.deadline or self._deadline)
        compact = wants_compact(request.getHeader(ANSWER_DETAIL_HEADER))
        if compact:
            # Says the answer is already compact, so dispatch does not compact it again.
            request.setHeader(ANSWER_DETAIL_HEADER, b"compact")
        result = deferToThreadPool(
            self._reactor, self._pools[lane], self._execute, call, route, params, compact
        )
        result.addBoth(self._finish, request, call, route, params["envelope"])
        return NOT_DONE_YET

    def _started(self, call: QueryCall) -> None:
        """On a pool thread: the query leaves its queue and its deadline starts."""
        lane, call.waiting_in = call.waiting_in, None
        if lane is not None:
            self._queues.leave(lane)
        self._reactor.callFromThread(self._arm, call)

    def _arm(self, call: QueryCall) -> None:
        if call in self._active and call.timer is None and not call.abandoned:
            call.timer = self._reactor.callLater(call.budget, call.expire)

    @staticmethod
    def _accepts_envelope(request) -> bool:
        accept = request.getHeader(b"accept") or b""
        if isinstance(accept, bytes):
            accept = accept.decode("latin-1")
        return ENVELOPE_MEDIA_TYPE in accept

    def _prepare(self, request) -> tuple[Route, dict[str, Any]]:
        method = request.method.decode("ascii", "replace").upper()
        segments = list(request.postpath)
        if len(segments) > 1 and segments[-1] == b"":
            segments.pop()
        try:
            parts = [unquote_to_bytes(s).decode("utf-8") for s in segments]
        except UnicodeDecodeError as error:
            raise ApiError(400, "request path is not valid UTF-8") from error
        match = self._routes.resolve(method, parts)
        if match.route is None:
            display = "/api/v0/" + "/".join(s.decode("ascii", "replace") for s in segments)
            if match.allowed:
                request.setHeader(b"allow", ", ".join(match.allowed).encode("ascii"))
                raise ApiError(405, f"method {method} not allowed for {display}")
            raise ApiError(404, f"no route for {display}")
        for value in match.path_args.values():
            if "\x00" in value:
                raise ApiError(400, "path arguments must not contain NUL bytes")
        envelope = self._accepts_envelope(request)
        query = {
            key.decode("utf-8", "replace"): values[-1].decode("utf-8", "replace")
            for key, values in (getattr(request, "args", None) or {}).items()
            if values
        }
        params = {
            "method": method,
            "path_args": match.path_args,
            "query": query,
            "body": self._read_body(request) if method in ("POST", "PUT", "PATCH") else None,
            "envelope": envelope,
            "principal": getattr(request, PRINCIPAL_ATTRIBUTE, None),
            "home_paths": self._home_paths,
            "keeper": getattr(request, KEEPER_ATTRIBUTE, None),
        }
        return match.route, params

    @staticmethod
    def _read_body(request) -> Any:
        content = request.content
        if content is None:
            return None
        content.seek(0)
        raw = content.read(MAX_BODY_BYTES + 1)
        if len(raw) > MAX_BODY_BYTES:
            raise ApiError(413, f"request body exceeds {MAX_BODY_BYTES} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ApiError(400, "invalid JSON: invalid UTF-8 in request body") from error
        if not text.strip():
            return None
        try:
            return _go_strings(
                json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
            )
        except json.JSONDecodeError as error:
            raise ApiError(400, f"invalid JSON: {_go_json_error(error, text)}") from error
        except _NonFiniteNumber as error:
            raise ApiError(400, f"invalid JSON: {error}") from error
        except RecursionError as error:
            raise ApiError(400, "invalid JSON: exceeded max depth") from error

    # ---------------------------------------------------------------- execution

    def _execute(
        self, call: QueryCall, route: Route, params: dict[str, Any], compact: bool = False
    ) -> Answer:
        """Run one handler on a pool thread with its own connection (compact view if asked)."""
        self._started(call)
        if call.abandoned or call.expired:
            raise _Abandoned()
        try:
            conn = self._reader(params.get("principal"))
        except sqlite3.Error as error:
            raise ApiError(
                503, f"local index is unavailable: {error}", code="backend_unavailable"
            ) from error
        try:
            call.attach(conn)
            ctx = ApiContext(conn=conn, **params)
            answer = route.handler(ctx)
            if compact and answer.content_type is None:
                request_args = (
                    params["body"] if isinstance(params["body"], dict) else params["query"]
                )
                answer = evolve(answer, data=compact_answer(answer.data, request_args))
            return answer
        except sqlite3.OperationalError as error:
            if call.abandoned or call.expired:
                raise
            if "no such table" in str(error):
                raise ApiError(
                    503,
                    "local index is unavailable: run `eshu-mcp index` first",
                    code="backend_unavailable",
                ) from error
            raise
        except sqlite3.DatabaseError as error:
            call.detach()
            self._drop_reader()  # closes conn: nothing below may touch it
            conn = None
            from eshu_mcp.query.local.index.store.database import damaged_message, is_damage

            if is_damage(error):
                self.log.error("{message}", message=damaged_message(self._db_path, error))
                raise ApiError(
                    503, damaged_message(self._db_path, error), code="backend_unavailable"
                ) from error
            raise
        finally:
            call.detach()
            if conn is not None:
                conn.set_progress_handler(None, 0)

    def _reader(self, principal: Any = None) -> sqlite3.Connection:
        """
        This thread's connection, opened again when the index file was replaced; a caller
        whose grants leave repositories out gets the thread's granted reader, limited to
        what it may read (:mod:`.grants`).
        """
        try:
            identity = os.stat(self._db_path).st_ino
        except OSError:
            identity = None
        if getattr(self._readers, "identity", None) != identity:
            self._drop_reader()
        self._readers.identity = identity
        if not restricted(principal):
            if getattr(self._readers, "conn", None) is None:
                self._readers.conn = self._connect(self._db_path)
            return self._readers.conn
        granted = getattr(self._readers, "granted", None)
        if granted is None:
            granted = self._readers.granted = shadow(self._connect(self._db_path))
        grant(granted, principal)
        return granted

    def _drop_reader(self) -> None:
        for name in ("conn", "granted"):
            cached = getattr(self._readers, name, None)
            setattr(self._readers, name, None)
            if cached is not None:
                cached.close()

    def _finish(
        self,
        result: Answer | Failure,
        request,
        call: QueryCall,
        route: Route,
        envelope: bool,
    ) -> None:
        self._active.discard(call)
        if call.waiting_in is not None:  # never reached a thread
            self._queues.leave(call.waiting_in)
            call.waiting_in = None
        if call.timer is not None and call.timer.active():
            call.timer.cancel()
        gone = request.finished or getattr(request, "_disconnected", False)
        if call.stopped and not gone:
            error = ApiError(
                503,
                "the server is shutting down; ask again once it is back",
                code="backend_unavailable",
            )
            self._write(
                request, error.status, dumps(error.body(envelope and not route.plain)) + "\n"
            )
            return
        if call.abandoned or gone:
            if isinstance(result, Failure) and not result.check(
                _Abandoned, sqlite3.OperationalError, ApiError
            ):
                self.log.failure("query handler failed after client left", result)
            return
        if isinstance(result, Failure):
            error = self._failure_to_error(result, call, route)
            body = error.body(envelope and not route.plain)
            self._write(request, error.status, dumps(body, escape_html=False) + "\n")
            return
        if result.content_type is not None:
            request.setResponseCode(result.status)
            request.setHeader(b"content-type", result.content_type.encode("ascii"))
            request.write(str(result.data).encode("utf-8"))
            request.finish()
            return
        if envelope and not route.plain:
            payload: Any = {"data": result.data, "truth": result.truth, "error": None}
        else:
            payload = result.data
        self._write(request, result.status, dumps(payload, escape_html=False) + "\n")

    def _failure_to_error(self, failure: Failure, call: QueryCall, route: Route) -> ApiError:
        if failure.check(ApiError):
            return failure.value
        if failure.check(OverflowError):
            # A number of the request beyond what SQLite stores (64 bits): the client's.
            return ApiError(400, "a number in the request is out of range (64-bit integers only)")
        if call.expired:
            return ApiError(
                504,
                f"query exceeded the {call.budget:g}s read deadline",
                code="backend_timeout",
            )
        self.log.failure(
            "query handler {method} {pattern} failed",
            failure,
            method=route.method,
            pattern=route.pattern,
        )
        return ApiError(500, "internal error", code="internal_error")

    @staticmethod
    def _write(request, status: int, text: str) -> None:
        body = text.encode("utf-8")
        request.setResponseCode(status)
        request.setHeader(b"content-type", JSON_CONTENT_TYPE)
        request.setHeader(b"content-length", b"%d" % len(body))
        request.write(body)
        request.finish()

    @staticmethod
    def _error_bytes(request, error: ApiError, envelope: bool) -> bytes:
        request.setResponseCode(error.status)
        request.setHeader(b"content-type", JSON_CONTENT_TYPE)
        return (dumps(error.body(envelope), escape_html=False) + "\n").encode("utf-8")
