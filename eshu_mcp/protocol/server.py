"""
The MCP method table and per-connection protocol state.

:class:`McpServer` holds what every client shares (the tool catalog, the
dispatcher, server identity); :class:`McpConnection` holds what one client
negotiated and which of its calls are in flight. Transports decode frames,
hand them to :meth:`McpConnection.handle` and write back what it returns; nothing
here knows which transport a message came from.
"""

from collections.abc import Callable
from typing import Any, Protocol

from attrs import frozen
from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure

from eshu_mcp import SERVER_NAME, __version__
from eshu_mcp.protocol import versions
from eshu_mcp.protocol.admission import (
    DEFAULT_MAX_CONCURRENT_CALLS,
    DEFAULT_MAX_QUEUED_CALLS,
    CallSlots,
)
from eshu_mcp.protocol.cursors import decode_cursor, encode_cursor
from eshu_mcp.protocol.jsonrpc import (
    DEFAULT_MAX_BATCH,
    DEFAULT_MAX_MESSAGE_BYTES,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    ProtocolError,
    Request,
    batch_too_long,
    error_response,
    message_id,
    parse_message,
    result_response,
)
from eshu_mcp.protocol.notices import (
    LOG_LEVEL_META_KEY,
    LOG_LEVELS,
    LogFeed,
    Notify,
    ProgressReporter,
    is_log_level,
    repository_reader,
)
from eshu_mcp.protocol.tool_results import (
    adapt_tool_result,
    shutdown_tool_result,
    unknown_tool_result,
)

log = Logger()

INSTRUCTIONS = (
    "Eshu answers questions about indexed code: search and symbols, callers, callees and call "
    "chains, dead code, complexity, imports, repository stories, file content and freshness. "
    "Every tool is read-only. Answers carry a truth block (exact/derived/fallback and "
    "freshness): an empty answer with freshness 'unavailable' means the data source is not "
    "configured, not that nothing exists. Narrow large questions with repo_id, limit and "
    "offset."
)
DEFAULT_PAGE_SIZE = 50
LIST_TTL_MS = 60_000


class ToolDispatcher(Protocol):
    """What the protocol needs from dispatch: one tool call, as a cancellable Deferred."""

    def call(
        self, tool_name: str, args: dict, authorization: bytes | None, *, caller: object = None
    ) -> defer.Deferred:
        """Fire with the MCP tool result (a dict) for this call, its log events ``caller``'s."""


class BuildProgress(Protocol):
    """What the protocol needs from an index keeper: whether a build runs, and its news."""

    def building(self) -> bool:
        """Whether a build is running that calls may be waiting for."""

    def subscribe(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(message)`` for each step of the build; returns the unsubscriber."""


class ToolCatalogView(Protocol):
    """What the protocol needs from the catalog."""

    tools: tuple

    def get(self, name: str) -> Any:
        """The enabled tool called ``name``, or None."""

    def mcp_tools(self, revision: str) -> tuple[dict, ...]:
        """The ``tools/list`` entries for a revision, in catalog order."""


@frozen
class CallContext:
    """Where a message came from, as far as the protocol cares."""

    authorization: bytes | None = None
    transport: str = "stdio"
    notify: Notify | None = None
    """Where notifications about this request go (its own SSE stream), if it has one."""
    principal: Any = None
    """Who the transport's guard says is calling (None: unauthenticated or stdio)."""


class McpServer:
    """The daemon-wide half of the protocol: catalog, dispatcher and identity."""

    def __init__(
        self,
        catalog: ToolCatalogView,
        dispatcher: ToolDispatcher,
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
        instructions: str = INSTRUCTIONS,
        max_batch: int = DEFAULT_MAX_BATCH,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        max_concurrent_calls: int = DEFAULT_MAX_CONCURRENT_CALLS,
        max_queued_calls: int = DEFAULT_MAX_QUEUED_CALLS,
        clock=None,
        build_progress: BuildProgress | None = None,
    ) -> None:
        self.catalog = catalog
        self.dispatcher = dispatcher
        self.page_size = page_size
        self.instructions = instructions
        self.max_batch = max_batch
        self.max_message_bytes = max_message_bytes
        self.max_concurrent_calls = max_concurrent_calls
        self.max_queued_calls = max_queued_calls
        if clock is None:
            from twisted.internet import reactor as clock
        self.clock = clock
        self.log_feed = LogFeed(clock)
        self.build_progress = build_progress
        self.server_info = {"name": SERVER_NAME, "version": __version__}
        self._busy: set[McpConnection] = set()

    def answer_calls_at_shutdown(self) -> int:
        """
        Stop every tool call still running or queued, each answered with an error result
        (never left without a reply); returns how many were stopped.
        """
        return sum(connection.stop_calls() for connection in list(self._busy))

    def _call_started(self, connection: "McpConnection") -> None:
        self._busy.add(connection)

    def _calls_settled(self, connection: "McpConnection") -> None:
        self._busy.discard(connection)

    def connection(self, *, default_version: str = "2024-11-05") -> "McpConnection":
        """Protocol state for one client."""
        return McpConnection(self, default_version=default_version)


# The MCP methods and the McpConnection method answering each (a table per class, not
# one of bound methods per connection: idle sessions stay small).
METHOD_HANDLERS = {
    "initialize": "_initialize",
    "ping": "_ping",
    "tools/list": "_tools_list",
    "tools/call": "_tools_call",
    "server/discover": "_discover",
    "logging/setLevel": "_set_log_level",
}


class McpConnection:
    """One client's protocol state: negotiated revision and in-flight calls."""

    def __init__(self, server: McpServer, *, default_version: str) -> None:
        self._server = server
        self.default_version = default_version
        self.protocol_version: str | None = None
        self.client_info: dict | None = None
        self.initialized = False
        self.closed = False
        self._in_flight: dict[str, defer.Deferred] = {}
        # Ids of calls the client cancelled (a dict as a set: an empty one is smaller).
        self._cancelled: dict[str, None] = {}
        # Ids of calls the server stopped at shutdown: answered with an error result.
        self._stopped: dict[str, None] = {}
        self._slots = CallSlots(
            server.max_concurrent_calls, server.max_queued_calls, clock=server.clock
        )
        self.notify: Notify | None = None
        self.log_level: str | None = None

    @property
    def version(self) -> str:
        """The revision this connection speaks now."""
        return self.protocol_version or self.default_version

    @property
    def in_flight(self) -> int:
        """How many tool calls are running or waiting for a slot for this client."""
        return len(self._in_flight)

    def handle(self, decoded: Any, context: CallContext) -> defer.Deferred:
        """
        Answer one decoded frame.

        Fires with the reply to write (a response dict, or a list for a batch),
        or None when nothing is owed (notifications, cancelled calls). Never
        fails: every problem becomes a JSON-RPC error reply.
        """
        if isinstance(decoded, list):
            return self._handle_batch(decoded, context)
        return self._handle_one(decoded, context)

    def attach(self, notify: Notify | None) -> None:
        """Send this client's unsolicited notifications (its log) through ``notify``."""
        self.notify = notify

    def _send(self, message: dict) -> None:
        if self.notify is not None and not self.closed:
            self.notify(message)

    def close(self) -> None:
        """The client is gone: cancel everything it started."""
        self.closed = True
        self._server.log_feed.unsubscribe(self)
        self._server._calls_settled(self)
        for key, call in list(self._in_flight.items()):
            self._cancelled[key] = None
            call.cancel()

    def stop_calls(self) -> int:
        """The server is stopping: answer each running call with an error; how many."""
        calls = [(key, call) for key, call in self._in_flight.items() if key not in self._cancelled]
        for key, call in calls:
            self._stopped[key] = None
            call.cancel()
        return len(calls)

    def _handle_batch(self, batch: list, context: CallContext) -> defer.Deferred:
        if not versions.accepts_batches(self.version):
            error = ProtocolError(
                INVALID_REQUEST,
                f"invalid request: JSON-RPC batches are not part of protocol {self.version}",
            )
            return defer.succeed(error_response(None, error))
        if not batch:
            error = ProtocolError(INVALID_REQUEST, "invalid request: empty batch")
            return defer.succeed(error_response(None, error))
        too_long = batch_too_long(len(batch), self._server.max_batch)
        if too_long is not None:
            return defer.succeed(error_response(None, too_long))
        replies = [self._handle_one(message, context, in_batch=True) for message in batch]

        def collect(results: list) -> list | None:
            answered = [reply for reply in results if reply is not None]
            return answered or None

        return defer.gatherResults(replies).addCallback(collect)

    def _handle_one(
        self, message: Any, context: CallContext, *, in_batch: bool = False
    ) -> defer.Deferred:
        try:
            request = parse_message(message)
        except ProtocolError as error:
            return defer.succeed(error_response(message_id(message), error))
        if request.is_notification:
            self._notify(request)
            return defer.succeed(None)
        if in_batch and request.method == "initialize":
            error = ProtocolError(INVALID_REQUEST, "invalid request: initialize cannot be batched")
            return defer.succeed(error_response(request.id, error))
        return self._answer(request, context)

    def _answer(self, request: Request, context: CallContext) -> defer.Deferred:
        try:
            version = self._request_version(request)
            name = METHOD_HANDLERS.get(request.method)
            handler = None if name is None else getattr(self, name)
            if handler is None or not self._method_exists(request.method, version):
                raise ProtocolError(METHOD_NOT_FOUND, f"method not found: {request.method}")
            outcome = handler(request, version, context)
        except ProtocolError as error:
            return defer.succeed(error_response(request.id, error))
        except Exception:
            log.failure("mcp method {method} failed", method=request.method)
            error = ProtocolError(INTERNAL_ERROR, "internal error")
            return defer.succeed(error_response(request.id, error))
        return defer.maybeDeferred(lambda: outcome).addCallbacks(
            lambda result: None if result is _NO_REPLY else self._reply(request, version, result),
            lambda failure: self._failed(request, failure),
        )

    def _reply(self, request: Request, version: str, result: dict) -> dict:
        if versions.is_modern(version):
            result = {
                "resultType": "complete",
                **result,
                "_meta": {versions.SERVER_INFO_META_KEY: self._server.server_info},
            }
        return result_response(request.id, result)

    def _failed(self, request: Request, failure) -> dict | None:
        if failure.check(defer.CancelledError):
            return None  # a call still waiting for a slot when its client gave up
        if failure.check(ProtocolError):
            return error_response(request.id, failure.value)
        log.failure("mcp method {method} failed", failure, method=request.method)
        return error_response(request.id, ProtocolError(INTERNAL_ERROR, "internal error"))

    def _method_exists(self, method: str, version: str) -> bool:
        if versions.is_modern(version):
            return method not in ("ping", "initialize", "logging/setLevel")
        return method != "server/discover"

    def _request_version(self, request: Request) -> str:
        meta = request.params.get("_meta") if isinstance(request.params, dict) else None
        if request.method == "server/discover" and not (
            isinstance(meta, dict) and versions.PROTOCOL_VERSION_META_KEY in meta
        ):
            raise ProtocolError(
                INVALID_PARAMS,
                "params._meta must carry "
                f"{versions.PROTOCOL_VERSION_META_KEY!r} and "
                f"{versions.CLIENT_CAPABILITIES_META_KEY!r}",
            )
        if not isinstance(meta, dict) or versions.PROTOCOL_VERSION_META_KEY not in meta:
            return self.version
        requested = meta[versions.PROTOCOL_VERSION_META_KEY]
        if requested in versions.HANDSHAKE_VERSIONS and self.protocol_version:
            return self.version
        if requested not in versions.MODERN_VERSIONS:
            raise ProtocolError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "unsupported protocol version",
                data={"supported": list(versions.MODERN_VERSIONS), "requested": requested},
            )
        if versions.CLIENT_CAPABILITIES_META_KEY not in meta:
            raise ProtocolError(
                INVALID_PARAMS,
                "params._meta is missing the required envelope key(s): "
                + versions.CLIENT_CAPABILITIES_META_KEY,
            )
        return requested

    def _notify(self, request: Request) -> None:
        if request.method == "notifications/initialized":
            self.initialized = True
        elif request.method == "notifications/cancelled":
            params = request.params if isinstance(request.params, dict) else {}
            self.cancel_call(params.get("requestId"), params.get("reason"))
        else:
            log.debug("ignoring notification {method}", method=request.method)

    def cancel_call(self, request_id: Any, reason: Any = None) -> bool:
        """Cancel the in-flight call with this request id; no reply will be sent for it."""
        key = Request(method="", params=None, id=request_id).id_key
        call = self._in_flight.get(key)
        if call is None:
            return False
        log.info(
            "tool call {request_id} cancelled by the client: {reason}",
            request_id=request_id,
            reason=reason if isinstance(reason, str) else "",
        )
        self._cancelled[key] = None
        call.cancel()
        return True

    # Methods

    def _initialize(self, request: Request, version: str, context: CallContext) -> dict:
        params = request.params if isinstance(request.params, dict) else {}
        self.protocol_version = versions.negotiate(params.get("protocolVersion"))
        client_info = params.get("clientInfo")
        self.client_info = client_info if isinstance(client_info, dict) else None
        log.info(
            "mcp client initialized {client} with protocol {version} over {transport}",
            client=(self.client_info or {}).get("name", "unknown"),
            version=self.protocol_version,
            transport=context.transport,
        )
        return {
            "protocolVersion": self.protocol_version,
            "capabilities": self._capabilities(),
            "serverInfo": self._server.server_info,
            "instructions": self._server.instructions,
        }

    def _discover(self, request: Request, version: str, context: CallContext) -> dict:
        return {
            "supportedVersions": list(versions.MODERN_VERSIONS),
            "capabilities": self._capabilities(),
            "instructions": self._server.instructions,
            "ttlMs": LIST_TTL_MS,
            "cacheScope": "public",
        }

    def _capabilities(self) -> dict:
        return {"tools": {"listChanged": False}, "logging": {}}

    def _set_log_level(self, request: Request, version: str, context: CallContext) -> dict:
        params = request.params if isinstance(request.params, dict) else {}
        level = params.get("level")
        if not is_log_level(level):
            raise ProtocolError(
                INVALID_PARAMS, f'invalid params: "level" must be one of {", ".join(LOG_LEVELS)}'
            )
        self.log_level = level
        self._server.log_feed.subscribe(
            self, level, self._send, repository_reader(context.principal)
        )
        return {}

    def follow_request_log(self, message: Any, notify: Notify, principal: Any = None) -> bool:
        """
        In the stateless revision a request names its own log level in ``_meta``;
        subscribe this (one-request) connection at that level. False when it names none.
        """
        params = message.get("params") if isinstance(message, dict) else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        level = meta.get(LOG_LEVEL_META_KEY) if isinstance(meta, dict) else None
        if not is_log_level(level):
            return False
        self.attach(notify)
        self.log_level = level
        self._server.log_feed.subscribe(self, level, self._send, repository_reader(principal))
        return True

    def _ping(self, request: Request, version: str, context: CallContext) -> dict:
        return {}

    def _tools_list(self, request: Request, version: str, context: CallContext) -> dict:
        params = request.params if isinstance(request.params, dict) else {}
        tools = self._server.catalog.mcp_tools(version)
        start = decode_cursor(params.get("cursor"), len(tools))
        end = start + self._server.page_size
        result: dict = {"tools": list(tools[start:end])}
        if end < len(tools):
            result["nextCursor"] = encode_cursor(end)
        if versions.is_modern(version):
            result["ttlMs"] = LIST_TTL_MS
            result["cacheScope"] = "public"
        return result

    def _tools_call(self, request: Request, version: str, context: CallContext):
        params = request.params
        if not isinstance(params, dict):
            raise ProtocolError(INVALID_PARAMS, "invalid params: tools/call takes an object")
        name = params.get("name")
        if not isinstance(name, str):
            raise ProtocolError(INVALID_PARAMS, 'invalid params: "name" must be a string')
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ProtocolError(INVALID_PARAMS, 'invalid params: "arguments" must be an object')
        progress = self._progress_reporter(params, version, context)
        tool = self._server.catalog.get(name)
        if tool is None:
            if progress is not None:
                progress.step(f"accepted {name}", total=3)
                progress.step(f"refused: no tool named {name}", total=3)
                progress.step("done", total=3)
                progress.close()
            return adapt_tool_result(unknown_tool_result(name), version)
        envelope_tool = bool(getattr(tool, "envelope", False))
        key = request.id_key
        if key in self._in_flight:
            raise ProtocolError(INVALID_REQUEST, "invalid request: this id is already in flight")
        dispatcher = self._server.dispatcher
        call = self._slots.run(
            lambda: dispatcher.call(name, arguments, context.authorization, caller=self)
        )
        unfollow = self._report_start(progress, name, context)
        self._in_flight[key] = call
        self._server._call_started(self)

        def settle(result):
            self._in_flight.pop(key, None)
            if not self._in_flight:
                self._server._calls_settled(self)
            unfollow()
            if key in self._stopped:
                del self._stopped[key]
                if progress is not None:
                    progress.close()
                return adapt_tool_result(shutdown_tool_result(name), version)
            if key in self._cancelled:
                del self._cancelled[key]
                if progress is not None:
                    progress.close()
                return _NO_REPLY
            if progress is not None:
                progress.step("done", total=progress.progress + 1)
                progress.close()
            if isinstance(result, Failure):
                return result
            return adapt_tool_result(result, version, envelope_tool=envelope_tool)

        return call.addBoth(settle)

    def _progress_reporter(
        self, params: dict, version: str, context: CallContext
    ) -> ProgressReporter | None:
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if not isinstance(token, (str, int)) or isinstance(token, bool):
            return None
        send = context.notify or self._send
        if context.notify is None and self.notify is None:
            return None
        return ProgressReporter(token, send, with_message=version >= "2025-03-26")

    def _report_start(
        self, progress: ProgressReporter | None, name: str, context: CallContext
    ) -> Callable[[], None]:
        """
        Report acceptance, the first build's steps while it runs (to callers that may read
        every repository: the steps count other repositories' files), and dispatch.
        """
        if progress is None:
            return _nothing
        build = self._server.build_progress
        if build is None or not build.building():
            progress.step(f"accepted {name}", total=3)
            progress.step(f"dispatched {name}", total=3)
            return _nothing
        progress.step(f"accepted {name}")
        progress.step(f"dispatched {name}; waiting for the index build")
        if repository_reader(context.principal) is not None:
            return _nothing
        return build.subscribe(progress.step)


_NO_REPLY = object()


def _nothing() -> None:
    return None
