"""
Holding queries that arrive before the first index build has finished, or while a change
the watcher saw is being indexed (for a short, bounded time).
"""

from collections.abc import Callable
from typing import Any

from twisted.internet import defer
from twisted.web.resource import IResource, Resource
from twisted.web.server import NOT_DONE_YET

from eshu_mcp.query.local.api.platform.keeper_view import KEEPER_ATTRIBUTE, KeeperView

CATCH_UP_WAIT_SECONDS = 2.0
"""Longest a call waits for a change being indexed before it answers from the generation
before it (and its freshness says so)."""


class AwaitFirstIndex(Resource):
    """
    Let requests wait for the first index build instead of failing.

    An editor starts ``eshu-mcp stdio --repo .`` and asks its first question
    within a second; answering "index unavailable" then would be useless. Until
    the backend is ready, requests wait for the index service (a client that goes
    away, or a tool call's deadline, ends the wait); if the build fails they go
    through and get the backend's own error. ``is_ready`` must answer from memory (it runs
    on the reactor for every request); ``became_ready``, when given, returns a Deferred
    that fires as soon as the backend sees an active generation (an index left by an
    earlier run), so a request need not wait for the build under way.

    Once the index is ready, a request arriving while noticed changes are not indexed yet
    waits for them up to ``catch_up_wait`` seconds on ``clock`` (when given). Every request
    going through carries a :class:`KeeperView` (what is still outstanding, how long it
    waited) for its answer's freshness.
    """

    isLeaf = True

    def __init__(
        self,
        inner: IResource,
        index_service,
        is_ready: Callable[[], bool],
        became_ready: Callable[[], defer.Deferred] | None = None,
        *,
        clock: Any = None,
        catch_up_wait: float = CATCH_UP_WAIT_SECONDS,
    ) -> None:
        super().__init__()
        self._clock = clock
        self._catch_up_wait = catch_up_wait
        self._inner = inner
        self._index_service = index_service
        self._is_ready = is_ready
        self._became_ready = became_ready

    def render(self, request):
        if self._is_ready() or self._index_service.state == "failed":
            return self._catch_up(request)
        waiting = defer.Deferred()

        def release(result: object) -> None:
            if not waiting.called:
                waiting.callback(None)

        self._index_service.whenReady().addBoth(release)
        if self._became_ready is not None:
            self._became_ready().addBoth(release)
        request.notifyFinish().addErrback(lambda _: waiting.cancel())

        def go(_) -> None:
            self._pass(request, None)

        waiting.addCallbacks(go, lambda failure: failure.trap(defer.CancelledError))
        return NOT_DONE_YET

    def _catch_up(self, request):
        """Wait (bounded) for the changes noticed so far to be indexed, then answer."""
        when_caught_up = getattr(self._index_service, "when_caught_up", None)
        caught_up = when_caught_up() if callable(when_caught_up) and self._clock else None
        if caught_up is None:
            return self._render(request, None)
        started = self._clock.seconds()
        bound = self._clock.callLater(self._catch_up_wait, caught_up.cancel)
        request.notifyFinish().addErrback(lambda _: caught_up.cancel())

        def go(result: object) -> None:
            if bound.active():
                bound.cancel()
            if request.finished or getattr(request, "_disconnected", False):
                return None
            self._pass(request, self._clock.seconds() - started)
            return None

        caught_up.addBoth(go)
        return NOT_DONE_YET

    def _view(self, waited: float | None) -> KeeperView:
        pending = getattr(self._index_service, "pending_changes", None)
        changes = pending() if callable(pending) else {}
        return KeeperView(
            watched=tuple(self._index_service.repo_paths)
            if getattr(self._index_service, "watch", False)
            else (),
            pending={
                root: (change.changed_paths, change.rebuilding) for root, change in changes.items()
            },
            waited=waited,
            landing={
                root: (change.writing, change.queued)
                for root, change in changes.items()
                if getattr(change, "writing", None) is not None
            },
        )

    def _render(self, request, waited: float | None):
        setattr(request, KEEPER_ATTRIBUTE, self._view(waited))
        return self._inner.render(request)

    def _pass(self, request, waited: float | None) -> None:
        setattr(request, KEEPER_ATTRIBUTE, self._view(waited))
        request.render(self._inner)


def describe_build_event(event: dict) -> str | None:
    """A sentence for a user waiting on the build, or None for events not worth one."""
    phase = event.get("phase")
    if phase == "walk":
        return f"indexing: {event.get('to_parse', 0)} of {event.get('files', 0)} files to parse"
    if phase == "parse":
        return f"indexing: {event.get('done', 0)}/{event.get('total', 0)} files parsed"
    if phase == "resolve":
        return "indexing: resolving references"
    if phase == "committed":
        return "indexing: new generation active"
    if phase == "failed":
        return "indexing failed"
    return None


class BuildProgress:
    """The index keeper's first build as the protocol sees it: awaited or not, and its steps."""

    def __init__(self, index_service, is_ready: Callable[[], bool] = lambda: False) -> None:
        self._index_service = index_service
        self._is_ready = is_ready
        self._served = False

    def building(self) -> bool:
        """Whether calls now wait for a build: one runs and no index has been served yet."""
        if self._index_service.state != "building" or self._served:
            return False
        self._served = self._is_ready()
        return not self._served

    def subscribe(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(sentence)`` for each step of the build worth telling a user."""

        def listen(event: dict) -> None:
            sentence = describe_build_event(event)
            if sentence is not None:
                callback(sentence)

        return self._index_service.subscribe(listen)
