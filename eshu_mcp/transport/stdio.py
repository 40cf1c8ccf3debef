"""
The stdio transport: newline-delimited JSON-RPC on stdin and stdout.

Messages are handled as they arrive, so a ``notifications/cancelled`` can
reach a call still in flight. stdout carries nothing but replies; logs go to
stderr. At end of input the last line is accepted even without a newline, the
calls still running finish (within their deadline), and the transport closes.
"""

from twisted.internet import defer
from twisted.internet.interfaces import IHalfCloseableProtocol
from twisted.logger import Logger
from twisted.protocols.basic import LineReceiver
from zope.interface import implementer

from eshu_mcp.protocol.jsonrpc import (
    INVALID_REQUEST,
    ProtocolError,
    decode_frame,
    encode,
    error_response,
)
from eshu_mcp.protocol.server import CallContext, McpServer

log = Logger()

MAX_LINE_BYTES = 64 * 1024 * 1024


@implementer(IHalfCloseableProtocol)
class StdioTransport(LineReceiver):
    """One MCP client on a byte stream (normally the process's stdin/stdout)."""

    delimiter = b"\n"
    MAX_LENGTH = MAX_LINE_BYTES

    def __init__(self, server: McpServer) -> None:
        self._server = server
        self._connection = server.connection(default_version="2024-11-05")
        self._context = CallContext(authorization=None, transport="stdio")
        self._connection.attach(self._write)
        self._pending: set[defer.Deferred] = set()
        self.done = defer.Deferred()

    def lineReceived(self, line: bytes) -> None:
        line = line.rstrip(b"\r")
        if not line.strip():
            return
        try:
            decoded = decode_frame(line)
        except ProtocolError as error:
            log.warn("invalid json-rpc on stdin: {error}", error=error.message)
            self._write(error_response(None, error))
            return
        handling = self._connection.handle(decoded, self._context)
        self._pending.add(handling)
        handling.addCallback(self._write)
        handling.addErrback(lambda failure: log.failure("stdio reply failed", failure))
        handling.addBoth(lambda _: self._pending.discard(handling))

    def lineLengthExceeded(self, line: bytes) -> None:
        error = ProtocolError(INVALID_REQUEST, "invalid request: message larger than 64 MiB")
        self._write(error_response(None, error))
        self.clearLineBuffer()

    def _write(self, reply) -> None:
        if reply is None or self.transport is None:
            return
        self.transport.write(encode(reply, escape_html=False) + b"\n")

    def readConnectionLost(self) -> None:
        leftover = self._buffer
        self._buffer = b""
        if leftover.strip():
            self.lineReceived(leftover)
        defer.DeferredList(list(self._pending)).addBoth(lambda _: self.transport.loseConnection())

    def writeConnectionLost(self) -> None:
        self._connection.close()

    def connectionLost(self, reason) -> None:
        self._connection.close()
        if not self.done.called:
            self.done.callback(None)
