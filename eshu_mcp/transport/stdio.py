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
    ProtocolError,
    decode_frame,
    encode,
    error_response,
    message_too_large,
)
from eshu_mcp.protocol.server import CallContext, McpServer

log = Logger()


@implementer(IHalfCloseableProtocol)
class StdioTransport(LineReceiver):
    """One MCP client on a byte stream (normally the process's stdin/stdout)."""

    delimiter = b"\n"

    def __init__(self, server: McpServer) -> None:
        self._server = server
        self.MAX_LENGTH = server.max_message_bytes
        self._skipping = False
        self._resume = b""
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

    def dataReceived(self, data: bytes) -> None:
        # A line over the limit is answered once and skipped up to its newline,
        # however many reads it spans; the lines after it are served as usual.
        while data:
            if self._skipping:
                _, found, data = data.partition(self.delimiter)
                if not found:
                    return
                self._skipping = False
            super().dataReceived(data)
            data, self._resume = self._resume, b""

    def lineLengthExceeded(self, line: bytes) -> None:
        log.warn("stdin message over {limit} bytes skipped", limit=self.MAX_LENGTH)
        self._write(error_response(None, message_too_large(self.MAX_LENGTH)))
        _, found, rest = line.partition(self.delimiter)
        if found:
            self._resume = rest
        else:
            self._skipping = True

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
