"""Server-Sent Event streams over twisted.web, with backpressure and keepalives."""

from collections import deque
from collections.abc import Callable

from twisted.internet.interfaces import IPushProducer, IReactorTime
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.web.http_headers import Headers
from twisted.web.iweb import IRequest
from zope.interface import implementer

log = Logger()

DEFAULT_KEEPALIVE = 30.0
DEFAULT_QUEUE_BYTES = 1024 * 1024
KEEPALIVE_FRAME = b": keepalive\n\n"

SSE_HEADERS = (
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
)


def slow_reader_counter(metrics, transport: str) -> Callable[[], None] | None:
    """What a stream calls when it drops a slow reader: count it under ``transport``."""
    if metrics is None:
        return None
    return metrics.slow_readers_dropped.labels(transport).inc


def event_frame(event: str, data: str) -> bytes:
    """One SSE event; every line of ``data`` becomes a ``data:`` line."""
    lines = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"event: {event}\n{lines}\n".encode()


def json_event_frame(event: str, body: bytes) -> bytes:
    """
    :func:`event_frame` for compact JSON bytes, which hold no line break (JSON escapes
    them inside strings): one ``data:`` line, with no text round trip.
    """
    return b"event: %s\ndata: %s\n\n" % (event.encode("ascii"), body)


class _Keepalives:
    """
    One timer per clock and interval writing a keepalive to every stream open on it.

    A timer per stream would cost each idle session a ``LoopingCall`` and a delayed
    call; here a stream costs an entry in a dict. The timer runs only while it has
    streams, so a stream opened alone is pinged ``interval`` seconds after it opened,
    and one opened later within the interval its timer already counts.
    """

    _running: dict[tuple[int, float], "_Keepalives"] = {}

    def __init__(self, clock: IReactorTime, interval: float) -> None:
        self._key = (id(clock), interval)
        self._streams: dict[SseStream, None] = {}
        self._loop = LoopingCall(self._ping_all)
        self._loop.clock = clock
        self._interval = interval

    @classmethod
    def join(cls, stream: "SseStream", clock: IReactorTime, interval: float) -> "_Keepalives":
        """The timer (started if need be) that now pings ``stream``."""
        # Keyed by id(clock): an entry lives only while its timer runs, holding the clock.
        timer = cls._running.get((id(clock), interval))
        if timer is None:
            timer = cls._running[(id(clock), interval)] = cls(clock, interval)
            timer._loop.start(interval, now=False)
        timer._streams[stream] = None
        return timer

    def leave(self, stream: "SseStream") -> None:
        """Stop pinging ``stream``; the last stream to leave stops the timer."""
        self._streams.pop(stream, None)
        if not self._streams and self._running.get(self._key) is self:
            del self._running[self._key]
            if self._loop.running:
                self._loop.stop()

    def _ping_all(self) -> None:
        for stream in list(self._streams):
            stream._ping()


@implementer(IPushProducer)
class SseStream:
    """
    One open ``text/event-stream`` response.

    Frames are written straight to the connection while it accepts them. When
    the transport pushes back (``pauseProducing``) frames wait, up to
    ``queue_bytes`` of them; a frame that would go beyond that means the client
    reads too slowly to be worth the memory, so the stream is dropped (its
    connection aborted, ``on_overflow()`` called) and a slow reader costs at
    most ``queue_bytes`` plus the transport's own buffer. Keepalive comments go
    out every ``keepalive`` seconds on ``clock`` (one timer for every stream).
    :meth:`close` is idempotent and safe after the client has gone.
    """

    def __init__(
        self,
        request: IRequest,
        clock: IReactorTime,
        *,
        keepalive: float = DEFAULT_KEEPALIVE,
        queue_bytes: int = DEFAULT_QUEUE_BYTES,
        on_overflow: Callable[[], None] | None = None,
    ) -> None:
        self._request = request
        # Made when a frame first has to wait: most streams never need one.
        self._queue: deque[bytes] | None = None
        self._queue_bytes = queue_bytes
        self._queued_bytes = 0
        self._on_overflow = on_overflow
        self._paused = False
        self.closed = False
        self._on_close: list = []
        for name, value in SSE_HEADERS:
            request.setHeader(name, value)
        request.notifyFinish().addBoth(self._finished)
        request.registerProducer(self, True)
        self._clock = clock
        self._keepalive_interval = keepalive
        self._keepalive: _Keepalives | None = None

    def start(self, first_frame: bytes = b"") -> None:
        """Send the status line, headers and an optional first frame; start keepalives."""
        self._request.write(first_frame)
        if self._request.startedWriting:
            # The status line and headers are on the wire and the request was routed:
            # neither header set is read again, so an idle stream does not keep them.
            self._request.requestHeaders = Headers()
            self._request.responseHeaders = Headers()
        if not self.closed and self._keepalive_interval > 0:
            self._keepalive = _Keepalives.join(self, self._clock, self._keepalive_interval)

    def on_close(self, callback) -> None:
        """Call ``callback()`` once, when the stream ends for any reason."""
        if self.closed:
            callback()
        else:
            self._on_close.append(callback)

    @property
    def queued(self) -> int:
        """Messages waiting for the client to read."""
        return len(self._queue) if self._queue else 0

    @property
    def queued_bytes(self) -> int:
        """Bytes waiting for the client to read."""
        return self._queued_bytes

    def send(self, frame: bytes) -> bool:
        """Deliver or queue one frame; False when the stream is closed or had to be dropped."""
        if self.closed:
            return False
        if self._paused or self._queue:
            if self._queued_bytes + len(frame) > self._queue_bytes:
                self._overflow()
                return False
            if self._queue is None:
                self._queue = deque()
            self._queue.append(frame)
            self._queued_bytes += len(frame)
            return True
        self._request.write(frame)
        return True

    def _overflow(self) -> None:
        log.warn(
            "sse stream dropped: the client reads too slowly "
            "({queued_bytes} bytes waiting; see --max-queued-bytes)",
            queued_bytes=self._queued_bytes,
        )
        self._shutdown()
        if self._on_overflow is not None:
            self._on_overflow()
        transport = getattr(getattr(self._request, "channel", None), "transport", None)
        if transport is not None:
            transport.abortConnection()

    def _ping(self) -> None:
        if not self._paused and not self._queue:
            self._request.write(KEEPALIVE_FRAME)

    def pauseProducing(self) -> None:
        self._paused = True

    def resumeProducing(self) -> None:
        self._paused = False
        while self._queue and not self._paused and not self.closed:
            frame = self._queue.popleft()
            self._queued_bytes -= len(frame)
            self._request.write(frame)
        if not self._queue:
            self._queue = None

    def stopProducing(self) -> None:
        self._shutdown()

    def close(self) -> None:
        """End the response (if the client is still there) and release everything."""
        if self.closed:
            return
        disconnected = getattr(self._request, "_disconnected", False)
        self._shutdown()
        if not disconnected and not self._request.finished:
            self._request.unregisterProducer()
            self._request.finish()

    def _finished(self, result) -> None:
        self._shutdown()

    def _shutdown(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._queue = None
        self._queued_bytes = 0
        if self._keepalive is not None:
            self._keepalive.leave(self)
            self._keepalive = None
        callbacks, self._on_close = self._on_close, []
        for callback in callbacks:
            try:
                callback()
            except Exception:
                log.failure("sse close callback failed")
