"""
How many of one client's tool calls run at once, and how many may wait.

A client (a session, or one message when it has no session) gets at most
``limit`` calls running; the rest of a batch waits its turn in arrival order,
so one client's 100-call batch takes ``limit`` places in the query pool, not
all of them, and every other client's calls are dispatched meanwhile. Beyond
``queue_limit`` waiting calls the client is told the server is busy.
"""

from collections import deque
from collections.abc import Callable

from twisted.internet import defer
from twisted.python.failure import Failure

from eshu_mcp.protocol.jsonrpc import SERVER_BUSY, ProtocolError

DEFAULT_MAX_CONCURRENT_CALLS = 4
DEFAULT_MAX_QUEUED_CALLS = 256


def client_busy(queue_limit: int) -> ProtocolError:
    """The error for a call that finds its client's queue full."""
    return ProtocolError(
        SERVER_BUSY,
        f"server busy: this client already has {queue_limit} tool calls waiting "
        "(--max-queued-calls); send more once replies arrive",
    )


class _Waiting:
    """A call waiting for a slot: what starts it, and what its caller holds."""

    def __init__(self, start: Callable[[], defer.Deferred], queue: deque) -> None:
        self.start = start
        self.running: defer.Deferred | None = None
        self.result = defer.Deferred(self._cancel)
        self._queue = queue

    def _cancel(self, _result: defer.Deferred) -> None:
        if self.running is not None:
            self.running.cancel()
        else:
            self._queue.remove(self)

    def deliver(self, outcome) -> None:
        if self.result.called:
            return
        if isinstance(outcome, Failure):
            self.result.errback(outcome)
        else:
            self.result.callback(outcome)


class CallSlots:
    """At most ``limit`` calls running; up to ``queue_limit`` more waiting, first come first run."""

    def __init__(
        self,
        limit: int = DEFAULT_MAX_CONCURRENT_CALLS,
        queue_limit: int = DEFAULT_MAX_QUEUED_CALLS,
    ) -> None:
        self.limit = limit
        self.queue_limit = queue_limit
        self.running = 0
        self._waiting: deque[_Waiting] = deque()

    @property
    def waiting(self) -> int:
        """Calls admitted but not started yet."""
        return len(self._waiting)

    def run(self, start: Callable[[], defer.Deferred]) -> defer.Deferred:
        """
        ``start()`` now if a slot is free, else once one is; the Deferred fires with its
        result and cancelling it cancels the call or takes it out of the queue.
        Raises :class:`ProtocolError` (server busy) when the queue is full.
        """
        if self.running < self.limit and not self._waiting:
            return self._start(start)
        if self.waiting >= self.queue_limit:
            raise client_busy(self.queue_limit)
        entry = _Waiting(start, self._waiting)
        self._waiting.append(entry)
        return entry.result

    def _start(self, start: Callable[[], defer.Deferred]) -> defer.Deferred:
        self.running += 1
        return defer.maybeDeferred(start).addBoth(self._released)

    def _released(self, outcome):
        self.running -= 1
        self._next()
        return outcome

    def _next(self) -> None:
        while self._waiting and self.running < self.limit:
            entry = self._waiting.popleft()
            entry.running = self._start(entry.start)
            entry.running.addBoth(entry.deliver)
