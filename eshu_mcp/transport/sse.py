"""
Legacy HTTP+SSE transport (protocol 2024-11-05): ``GET /sse`` opens a session.

The stream's first event names the endpoint to POST messages to
(``/mcp/message?sessionId=...``); replies to those POSTs travel back as
``message`` events on the stream.
"""

import secrets
from collections import Counter
from functools import partial

from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET

from eshu_mcp.auth import principal_key, principal_of
from eshu_mcp.protocol.jsonrpc import encode
from eshu_mcp.protocol.server import McpConnection, McpServer
from eshu_mcp.transport.http import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_SESSIONS_PER_CLIENT,
    client_key,
    too_many_client_sessions,
    too_many_sessions,
)
from eshu_mcp.transport.stream import (
    DEFAULT_KEEPALIVE,
    DEFAULT_QUEUE_BYTES,
    SseStream,
    event_frame,
    json_event_frame,
    slow_reader_counter,
)

log = Logger()


def new_session_id() -> str:
    """``sess_`` and 20 random digits: the reference's shape, but not guessable."""
    return "sess_" + "".join(secrets.choice("0123456789") for _ in range(20))


class SseSession:
    """One legacy SSE client: its stream, its protocol state and its owner."""

    def __init__(
        self,
        session_id: str,
        stream: SseStream,
        connection: McpConnection,
        owner: str,
        now: float = 0.0,
        client: str = "",
    ):
        self.session_id = session_id
        self.stream = stream
        self.connection = connection
        self.owner = owner
        self.last_seen = now
        self.client = client
        """Whom the session counts against (:func:`~eshu_mcp.transport.http.client_key`)."""

    def send(self, reply) -> bool:
        """Queue one JSON-RPC reply on the stream; False when it had to be dropped."""
        return self.stream.send(json_event_frame("message", encode(reply)))

    def shutdown(self) -> None:
        """Close the stream and cancel the session's calls; safe to call twice."""
        self.stream.close()
        self.connection.close()


class SseSessionRegistry(Service):
    """
    The live SSE sessions, at most ``max_sessions``; stopping the service closes every stream.

    A session that has sent no message for ``idle_timeout`` seconds and has no call
    running is reaped: its stream is closed (the open stream alone does not keep it).
    """

    def __init__(
        self,
        clock: IReactorTime | None = None,
        *,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        max_sessions_per_client: int = DEFAULT_MAX_SESSIONS_PER_CLIENT,
        metrics=None,
    ) -> None:
        if clock is None:
            from twisted.internet import reactor as clock
        self._clock = clock
        self._sessions: dict[str, SseSession] = {}
        self.idle_timeout = idle_timeout
        self.max_sessions = max_sessions
        self.max_sessions_per_client = max_sessions_per_client
        self._per_client: Counter[str] = Counter()
        self._metrics = metrics
        self._sweeper = LoopingCall(self.expire_idle)
        self._sweeper.clock = clock

    def __len__(self) -> int:
        return len(self._sessions)

    @property
    def full(self) -> bool:
        """Whether a new session would go beyond ``max_sessions``."""
        return len(self._sessions) >= self.max_sessions

    def client_full(self, client: str) -> bool:
        """Whether ``client`` already holds ``max_sessions_per_client`` sessions."""
        return self._per_client[client] >= self.max_sessions_per_client

    def get(self, session_id: str | None) -> SseSession | None:
        """The session with this id (touching it), or None."""
        session = self._sessions.get(session_id) if session_id else None
        if session is not None:
            session.last_seen = self._clock.seconds()
        return session

    def add(self, session: SseSession) -> None:
        """Track a session until its stream ends."""
        session.last_seen = self._clock.seconds()
        self._sessions[session.session_id] = session
        self._per_client[session.client] += 1
        self._gauge(1)
        session.stream.on_close(partial(self._remove, session))

    def _remove(self, session: SseSession) -> None:
        if self._sessions.pop(session.session_id, None) is not None:
            self._per_client[session.client] -= 1
            if not self._per_client[session.client]:
                del self._per_client[session.client]
            self._gauge(-1)
            session.connection.close()
            log.info("sse session closed {session_id}", session_id=session.session_id)

    def expire_idle(self) -> None:
        """Close sessions idle for longer than the timeout with no call running."""
        cutoff = self._clock.seconds() - self.idle_timeout
        for session in list(self._sessions.values()):
            if session.last_seen < cutoff and session.connection.in_flight == 0:
                log.info("sse session reaped {session_id}", session_id=session.session_id)
                session.shutdown()
                if self._metrics is not None:
                    self._metrics.sessions_reaped.labels("sse").inc()

    def _gauge(self, delta: int) -> None:
        if self._metrics is not None:
            self._metrics.sessions.labels("sse").inc(delta)

    def startService(self) -> None:
        super().startService()
        self._sweeper.start(min(60.0, self.idle_timeout), now=False)

    def stopService(self):
        if self._sweeper.running:
            self._sweeper.stop()
        for session in list(self._sessions.values()):
            session.shutdown()
        return defer.maybeDeferred(super().stopService)


class SseResource(Resource):
    """``GET /sse``: open a session and keep its stream."""

    isLeaf = True

    def __init__(
        self,
        server: McpServer,
        sessions: SseSessionRegistry,
        clock: IReactorTime,
        *,
        message_path: str = "/mcp/message",
        keepalive: float = DEFAULT_KEEPALIVE,
        queue_bytes: int = DEFAULT_QUEUE_BYTES,
        metrics=None,
    ) -> None:
        super().__init__()
        self._server = server
        self._sessions = sessions
        self._clock = clock
        self._message_path = message_path
        self._keepalive = keepalive
        self._queue_bytes = queue_bytes
        self._metrics = metrics

    def render_GET(self, request):
        if self._sessions.full:
            return too_many_sessions(request, self._sessions.idle_timeout)
        client = client_key(request)
        if self._sessions.client_full(client):
            return too_many_client_sessions(request, self._sessions.idle_timeout)
        session_id = new_session_id()
        while self._sessions.get(session_id) is not None:
            session_id = new_session_id()
        stream = SseStream(
            request,
            self._clock,
            keepalive=self._keepalive,
            queue_bytes=self._queue_bytes,
            on_overflow=slow_reader_counter(self._metrics, "sse"),
        )
        session = SseSession(
            session_id,
            stream,
            self._server.connection(default_version="2024-11-05"),
            principal_key(principal_of(request)),
            client=client,
        )
        session.connection.attach(session.send)
        self._sessions.add(session)
        log.info("sse session started {session_id}", session_id=session_id)
        stream.start(event_frame("endpoint", f"{self._message_path}?sessionId={session_id}"))
        return NOT_DONE_YET
