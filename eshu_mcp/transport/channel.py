"""
HTTP/1.1 connections that bound how many requests a client pipelines, how large a body
it may send (refused from its ``Content-Length`` before a byte of it is read), and how
long it may stay silent.
"""

from collections.abc import Callable

from twisted.logger import Logger
from twisted.web.http import HTTPChannel

from eshu_mcp.encoding import dumpb

log = Logger()

DEFAULT_MAX_PIPELINED = 16
DEFAULT_REQUEST_TIMEOUT = 30.0
"""Seconds a client has to send a whole request (headers and body) once it may send one."""


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


def _too_large(limit: int) -> bytes:
    body = (
        dumpb(
            {
                "error": "Request Entity Too Large",
                "detail": f"request body exceeds {limit} bytes (--max-message-bytes)",
            }
        )
        + b"\n"
    )
    head = (
        b"HTTP/1.1 413 Request Entity Too Large\r\n"
        b"Content-Type: application/json\r\n"
        b"Connection: close\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body)
    )
    return head + body


def _too_slow(limit: float) -> bytes:
    body = (
        dumpb(
            {
                "error": "Request Timeout",
                "detail": f"the request was not complete within {limit:g} seconds"
                " (--request-timeout)",
            }
        )
        + b"\n"
    )
    head = (
        b"HTTP/1.1 408 Request Timeout\r\n"
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
    max_body_bytes: int | None = None
    """Largest request body accepted; a larger one is answered 413 and the connection closed."""
    _body_refused = False
    request_timeout: float | None = None
    """
    Seconds a client has to send each whole request, counted from the connection (or the
    previous answer): a slowloris client trickling a byte at a time resets the idle
    timeout forever, but not this. Answers that stream (SSE) are not bounded by it.
    """
    _request_deadline = None

    def connectionMade(self) -> None:
        super().connectionMade()
        self._await_request()

    def _await_request(self) -> None:
        if self.request_timeout is not None and self._request_deadline is None:
            self._request_deadline = self.callLater(self.request_timeout, self._too_slow)

    def _request_arrived(self) -> None:
        if self._request_deadline is not None:
            if self._request_deadline.active():
                self._request_deadline.cancel()
            self._request_deadline = None

    def _too_slow(self) -> None:
        self._request_deadline = None
        if self._handlingRequest:
            return  # a whole request arrived and is being answered: not slow
        log.info(
            "connection from {peer} closed: no whole request within {seconds}s",
            peer=str(self.transport.getPeer()),
            seconds=self.request_timeout,
        )
        self.transport.write(_too_slow(self.request_timeout))
        self.persistent = False
        self.timeoutConnection()  # closes, and aborts if the client will not read

    def allContentReceived(self) -> None:
        self._request_arrived()
        super().allContentReceived()

    def connectionLost(self, reason) -> None:
        self._request_arrived()
        super().connectionLost(reason)

    def allHeadersReceived(self) -> None:
        limit = self.max_body_bytes
        if limit is not None and self.length is not None and self.length > limit:
            self._refuse_body(limit)  # before the request spools a byte of it
            return
        super().allHeadersReceived()
        decoder = self._transferDecoder
        if limit is not None and self.length is None and decoder is not None:
            self._bound_chunks(decoder, limit)

    def _bound_chunks(self, decoder, limit: int) -> None:
        """A chunked body has no length to refuse up front: count it as it arrives."""
        deliver = decoder.dataCallback
        received = 0

        def bounded(data: bytes) -> None:
            nonlocal received
            received += len(data)
            if received > limit:
                self._refuse_body(limit)
            elif not self._body_refused:
                deliver(data)

        decoder.dataCallback = bounded

    def _refuse_body(self, limit: int) -> None:
        if self._body_refused:
            return
        self._body_refused = True
        log.info(
            "request from {peer} refused: body over {limit} bytes",
            peer=str(self.transport.getPeer()),
            limit=limit,
        )
        self.transport.write(_too_large(limit))
        self.persistent = False
        self.loseConnection()

    def rawDataReceived(self, data: bytes) -> None:
        if self._body_refused:
            return  # the rest of a refused body: never read into memory
        super().rawDataReceived(data)

    def requestDone(self, request) -> None:
        # Twisted keeps what arrived while ``request`` was answered in _dataBuffer,
        # to parse once it is done: anything there was pipelined behind it.
        waiting = any(self._dataBuffer)
        self._pipelined = self._pipelined + 1 if waiting else 0
        if self._pipelined <= self.max_pipelined:
            if self.persistent:
                # Armed first: a pipelined request replayed below disarms it once whole.
                self._await_request()
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
    max_pipelined: int = DEFAULT_MAX_PIPELINED,
    metrics=None,
    *,
    max_body_bytes: int | None = None,
    request_timeout: float | None = None,
) -> Callable[[], HTTPChannel]:
    """
    A ``Site.protocol`` whose connections refuse pipelining beyond ``max_pipelined``,
    bodies beyond ``max_body_bytes`` and requests not whole within ``request_timeout``
    seconds (None: no such bound).
    """
    on_refused = metrics.pipelining_refused.inc if metrics is not None else None

    def build() -> HTTPChannel:
        channel = PipelineBoundedChannel()
        channel.max_pipelined = max_pipelined
        channel.on_refused = on_refused
        channel.max_body_bytes = max_body_bytes
        channel.request_timeout = request_timeout
        return channel

    return build
