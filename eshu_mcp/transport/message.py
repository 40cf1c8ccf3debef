"""``POST /mcp/message``: JSON-RPC over plain HTTP, inline or into an SSE session."""

from twisted.logger import Logger
from twisted.web.resource import IResource, Resource

from eshu_mcp.auth import principal_key, principal_of
from eshu_mcp.protocol.jsonrpc import (
    SESSION_OWNER_MISMATCH,
    ProtocolError,
)
from eshu_mcp.protocol.server import CallContext, McpServer
from eshu_mcp.transport.http import (
    answer_later,
    finish_empty,
    finish_json,
    read_frame,
    rpc_error,
)
from eshu_mcp.transport.sse import SseSessionRegistry

log = Logger()


class MessageResource(Resource):
    """
    Answer one JSON-RPC message per POST.

    With the ``sessionId`` of a live SSE session the reply goes onto that
    session's stream and the POST gets 202; without one (or with an unknown
    one) the reply comes back inline, 200 with the JSON, 204 for a
    notification. A client that drops the POST cancels the call it carried.
    """

    isLeaf = True

    def __init__(
        self, server: McpServer, sessions: SseSessionRegistry | None = None, metrics=None
    ) -> None:
        super().__init__()
        self._server = server
        self._sessions = sessions
        self._metrics = metrics

    def render_POST(self, request):
        session = None
        if self._sessions is not None:
            raw_id = request.args.get(b"sessionId", [b""])[0].decode("utf-8", "replace")
            session = self._sessions.get(raw_id)
        owner = session.owner if session is not None else ""
        if owner and principal_key(principal_of(request)) != owner:
            if self._metrics is not None:
                self._metrics.auth_denied("mcp_message", "session_principal_mismatch")
            error = ProtocolError(
                SESSION_OWNER_MISMATCH, "credential does not match the session owner"
            )
            return rpc_error(request, 403, error)
        decoded, refusal = read_frame(request, self._server.max_message_bytes)
        if refusal is not None:
            return refusal
        connection = (
            session.connection
            if session is not None
            else self._server.connection(default_version="2024-11-05")
        )
        context = CallContext(
            authorization=request.getHeader(b"authorization"),
            transport="http+sse",
            principal=principal_of(request),
        )
        expects_reply = _carries_request(decoded)

        def respond(answer) -> None:
            if session is not None and expects_reply:
                if answer is not None and not session.send(answer):
                    if self._metrics is not None:
                        self._metrics.dropped_messages.inc()
                    log.warn(
                        "sse session buffer full or closed, dropping message {session_id}",
                        session_id=session.session_id,
                    )
                finish_empty(request, 202)
            elif answer is None:
                finish_empty(request, 204)
            else:
                finish_json(request, 200, answer)

        return answer_later(request, connection.handle(decoded, context), respond)


def _carries_request(decoded) -> bool:
    """Whether a frame holds at least one message that is owed a reply."""
    messages = decoded if isinstance(decoded, list) else [decoded]
    return any(not isinstance(message, dict) or "id" in message for message in messages)


def in_process_message_handler(
    query_resource: IResource, *, clock=None, settings=None
) -> IResource:
    """
    A Resource answering JSON-RPC POSTs against ``query_resource``, with no
    sessions, routing or authentication: the replay seam. Any path and any
    session id work; every call stands alone (200, 204 for a notification,
    400 for a parse error).

    ``settings`` is an :class:`eshu_mcp.service.ServerSettings` (toolsets,
    deadline, budget); the default serves every tool.
    """
    from eshu_mcp.service import ServerSettings, build_mcp_server

    if clock is None:
        from twisted.internet import reactor as clock
    server = build_mcp_server(
        query_resource, clock=clock, settings=settings or ServerSettings(toolsets="all")
    )
    return MessageResource(server)


__all__ = ["MessageResource", "in_process_message_handler"]
