"""
Streamable HTTP on ``/mcp``, for both protocol eras.

Handshake-era clients (2024-11-05 .. 2025-11-25) ``initialize`` and get an
``Mcp-Session-Id``; every later POST names it, ``GET`` opens the session's
event stream and ``DELETE`` ends it. Requests carrying
``MCP-Protocol-Version: 2026-07-28`` are served statelessly: each POST is
complete in itself, its ``_meta`` and routing headers are checked, and GET and
DELETE are not part of that revision.
"""

import base64
import secrets
from collections import Counter

import attrs
from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET

from eshu_mcp.auth import principal_key, principal_of
from eshu_mcp.protocol import versions
from eshu_mcp.protocol.jsonrpc import (
    HEADER_MISMATCH,
    INVALID_REQUEST,
    ProtocolError,
    encode,
    message_id,
)
from eshu_mcp.protocol.notices import LOG_LEVEL_META_KEY
from eshu_mcp.protocol.server import CallContext, McpConnection, McpServer
from eshu_mcp.transport.http import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_SESSIONS_PER_CLIENT,
    answer_later,
    client_key,
    finish_empty,
    finish_json,
    header,
    http_error,
    read_frame,
    rpc_error,
    too_many_client_sessions,
    too_many_sessions,
)
from eshu_mcp.transport.stream import (
    DEFAULT_KEEPALIVE,
    DEFAULT_QUEUE_BYTES,
    SseStream,
    json_event_frame,
    slow_reader_counter,
)

log = Logger()

SESSION_HEADER = b"mcp-session-id"
VERSION_HEADER = b"mcp-protocol-version"
_BAD_REQUEST_CODES = {-32700, -32600, -32602, -32020, -32021, -32022}
_NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class StreamableSession:
    """A handshake-era client on ``/mcp``: protocol state, owner and optional GET stream."""

    client = ""
    """Whom the session counts against (:func:`~eshu_mcp.transport.http.client_key`)."""

    def __init__(self, session_id: str, connection: McpConnection, owner: str, now: float):
        self.session_id = session_id
        self.connection = connection
        self.owner = owner
        self.last_seen = now
        self.stream: SseStream | None = None

    def send_on_stream(self, message: dict) -> None:
        """Send one unsolicited message on the session's GET stream (if one is open)."""
        if self.stream is not None:
            self.stream.send(_message_frame(message))

    def stream_closed(self) -> None:
        """The GET stream ended: unsolicited messages have nowhere to go."""
        self.connection.attach(None)

    def end(self) -> None:
        """Cancel the session's calls and close its stream."""
        self.connection.close()
        if self.stream is not None:
            self.stream.close()


class StreamableSessionRegistry(Service):
    """Live ``/mcp`` sessions, expired after ``idle_timeout`` seconds without a request."""

    def __init__(
        self,
        clock: IReactorTime,
        *,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        max_sessions_per_client: int = DEFAULT_MAX_SESSIONS_PER_CLIENT,
        metrics=None,
    ) -> None:
        self._clock = clock
        self._sessions: dict[str, StreamableSession] = {}
        self.idle_timeout = idle_timeout
        self.max_sessions = max_sessions
        self.max_sessions_per_client = max_sessions_per_client
        self._per_client: Counter[str] = Counter()
        self._metrics = metrics
        self._sweeper = LoopingCall(self.expire_idle)
        self._sweeper.clock = clock

    def __len__(self) -> int:
        return len(self._sessions)

    def client_full(self, client: str) -> bool:
        """Whether ``client`` already holds ``max_sessions_per_client`` sessions."""
        return self._per_client[client] >= self.max_sessions_per_client

    def create(
        self, connection: McpConnection, owner: str, client: str = ""
    ) -> StreamableSession | None:
        """A new session for ``client``, or None when the server holds ``max_sessions``."""
        if len(self._sessions) >= self.max_sessions:
            return None
        session_id = secrets.token_urlsafe(24)
        session = StreamableSession(session_id, connection, owner, self._clock.seconds())
        session.client = client
        self._per_client[client] += 1
        self._sessions[session_id] = session
        self._gauge(1)
        return session

    def get(self, session_id: str | None) -> StreamableSession | None:
        """The live session with this id (touching it), or None."""
        session = self._sessions.get(session_id) if session_id else None
        if session is not None:
            session.last_seen = self._clock.seconds()
        return session

    def end(self, session_id: str) -> bool:
        """End a session; False when it did not exist."""
        session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        self._per_client[session.client] -= 1
        if not self._per_client[session.client]:
            del self._per_client[session.client]
        self._gauge(-1)
        session.end()
        log.info("mcp session ended {session_id}", session_id=session_id)
        return True

    def expire_idle(self) -> None:
        """End sessions idle for longer than the timeout (open streams keep them alive)."""
        cutoff = self._clock.seconds() - self.idle_timeout
        for session in list(self._sessions.values()):
            streaming = session.stream is not None and not session.stream.closed
            busy = session.connection.in_flight > 0
            if session.last_seen < cutoff and not streaming and not busy:
                self.end(session.session_id)
                if self._metrics is not None:
                    self._metrics.sessions_reaped.labels("streamable-http").inc()

    def _gauge(self, delta: int) -> None:
        if self._metrics is not None:
            self._metrics.sessions.labels("streamable-http").inc(delta)

    def startService(self) -> None:
        super().startService()
        self._sweeper.start(min(60.0, self.idle_timeout), now=False)

    def stopService(self):
        if self._sweeper.running:
            self._sweeper.stop()
        for session_id in list(self._sessions):
            self.end(session_id)
        return defer.maybeDeferred(super().stopService)


def _decode_header_value(value: str | None) -> str | None:
    """Routing headers carry non-ASCII values as ``=?base64?...?=``."""
    if value and value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2]).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
    return value


def _accepts(request, media_type: bytes) -> bool:
    accept = request.getHeader(b"accept")
    if not accept:
        return True
    accept = accept.lower()
    major = media_type.split(b"/")[0]
    return media_type in accept or b"*/*" in accept or major + b"/*" in accept


class StreamableResource(Resource):
    """The ``/mcp`` endpoint."""

    isLeaf = True

    def __init__(
        self,
        server: McpServer,
        sessions: StreamableSessionRegistry,
        clock: IReactorTime,
        *,
        keepalive: float = DEFAULT_KEEPALIVE,
        queue_bytes: int = DEFAULT_QUEUE_BYTES,
        metrics=None,
    ) -> None:
        super().__init__()
        self._server = server
        self._sessions = sessions
        self._clock = clock
        self._keepalive = keepalive
        self._queue_bytes = queue_bytes
        self._on_overflow = slow_reader_counter(metrics, "streamable-http")

    def _stream(self, request) -> SseStream:
        return SseStream(
            request,
            self._clock,
            keepalive=self._keepalive,
            queue_bytes=self._queue_bytes,
            on_overflow=self._on_overflow,
        )

    def _requested_version(self, request) -> str | None:
        return header(request, VERSION_HEADER)

    def render_POST(self, request):
        version = self._requested_version(request)
        if version is not None and version not in versions.SUPPORTED_VERSIONS:
            error = ProtocolError(
                INVALID_REQUEST,
                f"unsupported MCP-Protocol-Version {version!r}; "
                f"supported: {', '.join(versions.SUPPORTED_VERSIONS)}",
            )
            return rpc_error(request, 400, error)
        if not _accepts(request, b"application/json"):
            return http_error(request, 406, "this endpoint answers with application/json")
        decoded, refusal = read_frame(request, self._server.max_message_bytes)
        if refusal is not None:
            return refusal
        if version is not None and versions.is_modern(version):
            return self._modern_post(request, version, decoded)
        return self._handshake_post(request, version, decoded)

    def _context(self, request) -> CallContext:
        return CallContext(
            authorization=request.getHeader(b"authorization"),
            transport="streamable-http",
            principal=principal_of(request),
        )

    def _handshake_post(self, request, version: str | None, decoded):
        is_initialize = isinstance(decoded, dict) and decoded.get("method") == "initialize"
        owner = principal_key(principal_of(request))
        if is_initialize:
            connection = self._server.connection(
                default_version=version or versions.DEFAULT_HTTP_VERSION
            )
            client = client_key(request)
            if self._sessions.client_full(client):
                return too_many_client_sessions(request, self._sessions.idle_timeout)
            session = self._sessions.create(connection, owner, client)
            if session is None:
                return too_many_sessions(request, self._sessions.idle_timeout)
            request.setHeader(SESSION_HEADER, session.session_id.encode("ascii"))
            log.info("mcp session started {session_id}", session_id=session.session_id)
        else:
            session_id = header(request, SESSION_HEADER)
            if not session_id:
                error = ProtocolError(INVALID_REQUEST, "missing Mcp-Session-Id header")
                return rpc_error(request, 400, error, message_id(decoded))
            session = self._sessions.get(session_id)
            if session is None:
                error = ProtocolError(INVALID_REQUEST, "session not found")
                return rpc_error(request, 404, error, message_id(decoded))
            if session.owner and session.owner != owner:
                error = ProtocolError(-32001, "credential does not match the session owner")
                return rpc_error(request, 403, error, message_id(decoded))
        return self._respond(request, session.connection, decoded, modern=False)

    def _modern_post(self, request, version: str, decoded):
        if isinstance(decoded, dict) and "method" in decoded and "id" not in decoded:
            request.setResponseCode(202)
            return b""
        if not isinstance(decoded, dict):
            error = ProtocolError(INVALID_REQUEST, "invalid request: one request per POST")
            return rpc_error(request, 400, error)
        mismatch = _header_mismatch(request, version, decoded)
        if mismatch is not None:
            return rpc_error(
                request, 400, ProtocolError(HEADER_MISMATCH, mismatch), decoded.get("id")
            )
        connection = self._server.connection(default_version=version)
        return self._respond(request, connection, decoded, modern=True)

    def _respond(self, request, connection: McpConnection, decoded, *, modern: bool):
        if _wants_stream(decoded, modern=modern) and _asks_for_events(request):
            return self._respond_streaming(request, connection, decoded, modern=modern)

        def respond(answer) -> None:
            if answer is None:
                finish_empty(request, 202)
                return
            status = 200
            if modern and isinstance(answer, dict) and "error" in answer:
                code = answer["error"]["code"]
                status = 400 if code in _BAD_REQUEST_CODES else 404 if code == -32601 else 200
            finish_json(request, status, answer)

        return answer_later(request, connection.handle(decoded, self._context(request)), respond)

    def _respond_streaming(self, request, connection: McpConnection, decoded, *, modern: bool):
        """
        Answer one request as its own event stream: the notifications about it
        (progress, and in the stateless revision the log it asked for), then its reply.
        """
        stream = self._stream(request)

        def notify(message: dict) -> None:
            stream.send(_message_frame(message))

        if modern:
            connection.follow_request_log(decoded, notify, principal_of(request))
        context = attrs.evolve(self._context(request), notify=notify)
        stream.start()
        handling = connection.handle(decoded, context)
        request.notifyFinish().addErrback(lambda _: handling.cancel())

        def deliver(answer) -> None:
            if answer is not None:
                notify(answer)
            stream.close()

        def failed(failure) -> None:
            if not failure.check(defer.CancelledError):
                log.failure("mcp reply to {uri} failed", failure, uri=request.uri)
            stream.close()

        def ended(_) -> None:
            if modern:
                connection.close()

        handling.addCallbacks(deliver, failed).addBoth(ended)
        return NOT_DONE_YET

    def render_GET(self, request):
        version = self._requested_version(request)
        if version is not None and versions.is_modern(version):
            request.setHeader(b"allow", b"POST")
            return http_error(request, 405, "protocol 2026-07-28 has no GET stream")
        if not _accepts(request, b"text/event-stream"):
            return http_error(request, 406, "GET /mcp answers with text/event-stream")
        session, refusal = self._session_for(request)
        if refusal is not None:
            return refusal
        if session.stream is not None and not session.stream.closed:
            return http_error(request, 409, "this session already has an open stream")
        stream = self._stream(request)
        session.stream = stream
        # Bound methods, not closures: an idle session keeps the least it can.
        session.connection.attach(session.send_on_stream)
        stream.on_close(session.stream_closed)
        stream.start()
        return NOT_DONE_YET

    def render_DELETE(self, request):
        version = self._requested_version(request)
        if version is not None and versions.is_modern(version):
            request.setHeader(b"allow", b"POST")
            return http_error(request, 405, "protocol 2026-07-28 has no sessions to delete")
        session, refusal = self._session_for(request)
        if refusal is not None:
            return refusal
        self._sessions.end(session.session_id)
        request.setResponseCode(204)
        return b""

    def _session_for(self, request):
        session_id = header(request, SESSION_HEADER)
        if not session_id:
            return None, http_error(request, 400, "missing Mcp-Session-Id header")
        session = self._sessions.get(session_id)
        if session is None:
            return None, http_error(request, 404, "session not found")
        if session.owner and session.owner != principal_key(principal_of(request)):
            return None, http_error(request, 403, "credential does not match the session owner")
        return session, None


def _message_frame(message: dict) -> bytes:
    return json_event_frame("message", encode(message))


def _wants_stream(message, *, modern: bool) -> bool:
    """Whether a request asked for notifications about itself (progress, or its own log)."""
    if not isinstance(message, dict) or "id" not in message:
        return False
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        return False
    if message.get("method") == "tools/call" and "progressToken" in meta:
        return True
    return modern and LOG_LEVEL_META_KEY in meta


def _asks_for_events(request) -> bool:
    accept = (request.getHeader(b"accept") or b"").lower()
    return b"text/event-stream" in accept


def _header_mismatch(request, version: str, message: dict) -> str | None:
    """Why the 2026-07-28 routing headers disagree with the body, or None."""
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    body_version = meta.get(versions.PROTOCOL_VERSION_META_KEY)
    if body_version is not None and body_version != version:
        return "MCP-Protocol-Version header does not match the request envelope's protocol version"
    if header(request, b"mcp-method") != message.get("method"):
        return "Mcp-Method header does not match the request body's method"
    name_key = _NAME_BEARING.get(message.get("method"))
    named = params.get(name_key) if name_key is not None else None
    if named is not None and _decode_header_value(header(request, b"mcp-name")) != named:
        return f"Mcp-Name header does not match the request body's {name_key!r} parameter"
    return None
