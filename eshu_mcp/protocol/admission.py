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
from twisted.internet.interfaces import IDelayedCall, IReactorTime
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


class _Call:
    """One admitted call: what starts it, what runs, and what its caller holds."""

    def __init__(self, start: Callable[[], defer.Deferred], slots: "CallSlots") -> None:
        self.start = start
        self.running: defer.Deferred | None = None
        self.cancelled = False
        self.result = defer.Deferred(self._cancel)
        self._slots = slots

    def _cancel(self, _result: defer.Deferred) -> None:
        self.cancelled = True
        if self.running is not None:
            self.running.cancel()
        else:
            self._slots._waiting.remove(self)

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
        clock: IReactorTime | None = None,
    ) -> None:
        self.limit = limit
        self.queue_limit = queue_limit
        self.running = 0
        # A queue is made when a call first has to wait: most clients never need one.
        self._waiting: deque[_Call] | tuple = ()
        self._clock = clock
        self._next_turn: IDelayedCall | None = None

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
        entry = _Call(start, self)
        if self.running < self.limit and not self._waiting:
            self._start(entry)
        elif len(self._waiting) >= self.queue_limit:
            raise client_busy(self.queue_limit)
        else:
            if not self._waiting:
                self._waiting = deque()
            self._waiting.append(entry)
        return entry.result

    def _start(self, entry: _Call) -> None:
        self.running += 1
        entry.running = defer.maybeDeferred(entry.start)
        entry.running.addBoth(self._released, entry).addBoth(entry.deliver)

    def _released(self, outcome, entry: _Call):
        self.running -= 1
        if entry.cancelled:
            # Cancellations come in runs (a client gone, a batch dropped): start the next
            # call on the next turn, once the run has taken the waiting calls out too.
            self._next_soon()
        else:
            self._next()
        return outcome

    def _next_soon(self) -> None:
        if self._clock is None:
            self._next()
        elif self._next_turn is None:
            self._next_turn = self._clock.callLater(0, self._next)

    def _next(self) -> None:
        self._next_turn = None
        while self._waiting and self.running < self.limit:
            self._start(self._waiting.popleft())
