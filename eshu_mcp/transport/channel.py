"""HTTP/1.1 connections that bound how many requests a client pipelines."""

from collections.abc import Callable

from twisted.logger import Logger
from twisted.web.http import HTTPChannel

from eshu_mcp.encoding import dumpb

log = Logger()

DEFAULT_MAX_PIPELINED = 16


def _refusal(limit: int) -> bytes:
    body = (
        dumpb(
            {
                "error": "Too Many Requests",
                "detail": f"more than {limit} pipelined requests on one connection; "
                "wait for each response before sending the next (--max-pipelined)",
            }
        )
        + b"\n"
    )
    head = (
        b"HTTP/1.1 429 Too Many Requests\r\n"
        b"Content-Type: application/json\r\n"
        b"Connection: close\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body)
    )
    return head + body


class PipelineBoundedChannel(HTTPChannel):
    """
    An HTTP/1.1 connection answering at most ``max_pipelined`` requests in a row
    that the client sent before the previous response was complete.

    Twisted answers pipelined requests one after another, and each answer goes
    into the connection's send buffer whether or not the client reads it; a
    client that pipelines hundreds of tool calls without reading would make the
    daemon hold every answer. Past the bound the next request gets a 429 that
    names the option, and the connection is closed.
    """

    max_pipelined = DEFAULT_MAX_PIPELINED
    on_refused: Callable[[], None] | None = None
    _pipelined = 0

    def requestDone(self, request) -> None:
        # Twisted keeps what arrived while ``request`` was answered in _dataBuffer,
        # to parse once it is done: anything there was pipelined behind it.
        waiting = any(self._dataBuffer)
        self._pipelined = self._pipelined + 1 if waiting else 0
        if self._pipelined <= self.max_pipelined:
            super().requestDone(request)
            return
        log.warn(
            "connection from {peer} refused: more than {limit} pipelined requests",
            peer=str(self.transport.getPeer()),
            limit=self.max_pipelined,
        )
        if self.on_refused is not None:
            self.on_refused()
        self._dataBuffer = []
        self.transport.write(_refusal(self.max_pipelined))
        self.persistent = False
        super().requestDone(request)


def pipeline_bounded_channel(
    max_pipelined: int = DEFAULT_MAX_PIPELINED, metrics=None
) -> Callable[[], HTTPChannel]:
    """A ``Site.protocol`` whose connections refuse pipelining beyond ``max_pipelined``."""
    on_refused = metrics.pipelining_refused.inc if metrics is not None else None

    def build() -> HTTPChannel:
        channel = PipelineBoundedChannel()
        channel.max_pipelined = max_pipelined
        channel.on_refused = on_refused
        return channel

    return build
