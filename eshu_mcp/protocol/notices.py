"""
Server-to-client notifications: progress of one tool call, and the server's log.

A :class:`ProgressReporter` numbers one call's ``notifications/progress``; a
:class:`LogFeed` keeps the sessions that asked for the server's log
(``logging/setLevel``) and hands each of them the events at or above its level
through a small bounded queue, so a slow or silent client costs bounded memory. A
session hears only what it may read: the events of its own tool calls (never another
session's) and the index events of repositories its grants cover; events naming no
repository go only to sessions whose grants are unrestricted.
:class:`LogBridge` is the ``twisted.logger`` observer that feeds it, taking
only the events of the namespaces that describe the service (index builds,
dispatch deadlines, budget hits, refused arguments), never request bodies or
credentials.
"""

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from twisted.logger import ILogObserver, LogLevel, formatEvent
from twisted.python import threadable
from zope.interface import implementer

from eshu_mcp.dispatch.attribution import calling

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""RFC 5424 severities, least severe first, as MCP names them."""

LOG_LEVEL_META_KEY = "io.modelcontextprotocol/logLevel"
LOG_QUEUE_LIMIT = 16
"""Log notifications that may wait for one session before newer ones are dropped."""

LOGGED_NAMESPACES = (
    "eshu_mcp.query.local.index.build.service",
    "eshu_mcp.dispatch.inprocess",
    "eshu_mcp.dispatch.results",
)
"""Whose events a session may read: the index keeper and the dispatcher."""

_TWISTED_LEVELS = {
    LogLevel.debug: "debug",
    LogLevel.info: "info",
    LogLevel.warn: "warning",
    LogLevel.error: "error",
    LogLevel.critical: "critical",
}

Notify = Callable[[dict], Any]
MayRead = Callable[[str], bool]


def repository_reader(principal: Any) -> MayRead | None:
    """
    What a session's caller may read: None when every repository (no principal, the
    shared key, a token granted all scopes), else its ``may_read_repository`` check.
    """
    if principal is None or getattr(principal, "all_scopes", False):
        return None
    return getattr(principal, "may_read_repository", None)


def notification(method: str, params: dict) -> dict:
    """A JSON-RPC notification."""
    return {"jsonrpc": "2.0", "method": method, "params": params}


def is_log_level(value: Any) -> bool:
    """Whether ``value`` names an MCP log level."""
    return isinstance(value, str) and value in LOG_LEVELS


def admits(threshold: str, level: str) -> bool:
    """Whether a session at ``threshold`` wants an event at ``level``."""
    return LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)


class ProgressReporter:
    """``notifications/progress`` for one call: each step's ``progress`` exceeds the last."""

    def __init__(self, token: Any, send: Notify, *, with_message: bool = True) -> None:
        self.token = token
        self._send = send
        self._with_message = with_message
        self.progress = 0
        self.closed = False

    def step(self, message: str, *, total: int | None = None) -> None:
        """Report one more step (nothing once the call has been answered)."""
        if self.closed:
            return
        self.progress += 1
        params: dict = {"progressToken": self.token, "progress": self.progress}
        if total is not None:
            params["total"] = max(total, self.progress)
        if self._with_message:
            params["message"] = message
        self._send(notification("notifications/progress", params))

    def close(self) -> None:
        """The call has been answered: nothing more may be sent for it."""
        self.closed = True


class LogSubscriber:
    """One session's share of the log: its level, its sink and its bounded queue."""

    def __init__(self, clock, level: str, send: Notify, may_read: MayRead | None = None) -> None:
        self._clock = clock
        self.level = level
        self._send = send
        self.may_read = may_read
        self._queue: deque[dict] = deque()
        self._flushing = None
        self.dropped = 0

    def offer(self, level: str, logger: str, text: str) -> None:
        """Queue one event if the session wants it; drop it when the queue is full."""
        if not admits(self.level, level):
            return
        if len(self._queue) >= LOG_QUEUE_LIMIT:
            self.dropped += 1
            return
        self._queue.append(
            notification("notifications/message", {"level": level, "logger": logger, "data": text})
        )
        if self._flushing is None:
            self._flushing = self._clock.callLater(0, self._flush)

    def _flush(self) -> None:
        self._flushing = None
        while self._queue:
            self._send(self._queue.popleft())

    def cancel(self) -> None:
        """Forget what is queued; nothing more is sent."""
        self._queue.clear()
        if self._flushing is not None and self._flushing.active():
            self._flushing.cancel()
        self._flushing = None


class LogFeed:
    """The sessions that asked for the server's log."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self._subscribers: dict[object, LogSubscriber] = {}

    def __len__(self) -> int:
        return len(self._subscribers)

    def subscribe(
        self, owner: object, level: str, send: Notify, may_read: MayRead | None = None
    ) -> LogSubscriber:
        """
        Send ``owner`` the events at or above ``level`` (replacing any earlier level) that
        it may read: ``may_read`` says which repositories (None: all of them).
        """
        self.unsubscribe(owner)
        subscriber = LogSubscriber(self.clock, level, send, may_read)
        self._subscribers[owner] = subscriber
        return subscriber

    def unsubscribe(self, owner: object) -> None:
        """Stop sending ``owner`` anything."""
        subscriber = self._subscribers.pop(owner, None)
        if subscriber is not None:
            subscriber.cancel()

    def publish(
        self,
        level: str,
        logger: str,
        text: str,
        *,
        caller: object | None = None,
        repository: str | None = None,
    ) -> None:
        """
        Offer one event to the subscribers that may hear it (reactor thread only): the event
        of a ``caller``'s tool call to that caller alone, an event about ``repository`` to
        those that may read it, any other event to those that may read everything.
        """
        if caller is not None:
            subscriber = self._subscribers.get(caller)
            if subscriber is not None:
                subscriber.offer(level, logger, text)
            return
        for subscriber in list(self._subscribers.values()):
            check = subscriber.may_read
            if check is None or (repository is not None and check(repository)):
                subscriber.offer(level, logger, text)


@implementer(ILogObserver)
class LogBridge:
    """A ``twisted.logger`` observer feeding the service's own events to a :class:`LogFeed`."""

    def __init__(
        self, feed: LogFeed, reactor, namespaces: Iterable[str] = LOGGED_NAMESPACES
    ) -> None:
        self._feed = feed
        self._reactor = reactor
        self._namespaces = tuple(namespaces)

    def __call__(self, event: dict) -> None:
        namespace = event.get("log_namespace") or ""
        if not namespace.startswith(self._namespaces) or not len(self._feed):
            return
        level = _TWISTED_LEVELS.get(event.get("log_level"), "info")
        if event.get("log_failure") is not None:
            level = "error"
        text = formatEvent(event)
        logger = namespace.rsplit(".", 1)[-1]
        repository = event.get("repo_id")
        where = (
            event.get("mcp_caller", calling()),
            repository if isinstance(repository, str) else None,
        )
        if threadable.isInIOThread():
            self._deliver(level, logger, text, *where)
        else:
            self._reactor.callFromThread(self._deliver, level, logger, text, *where)

    def _deliver(
        self, level: str, logger: str, text: str, caller: object, repository: str | None
    ) -> None:
        self._feed.publish(level, logger, text, caller=caller, repository=repository)
