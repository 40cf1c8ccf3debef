"""Holding queries that arrive before the first index build has finished."""

from collections.abc import Callable

from twisted.internet import defer
from twisted.web.resource import IResource, Resource
from twisted.web.server import NOT_DONE_YET


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
    """

    isLeaf = True

    def __init__(
        self,
        inner: IResource,
        index_service,
        is_ready: Callable[[], bool],
        became_ready: Callable[[], defer.Deferred] | None = None,
    ) -> None:
        super().__init__()
        self._inner = inner
        self._index_service = index_service
        self._is_ready = is_ready
        self._became_ready = became_ready

    def render(self, request):
        if self._is_ready() or self._index_service.state == "failed":
            return self._inner.render(request)
        waiting = defer.Deferred()

        def release(result: object) -> None:
            if not waiting.called:
                waiting.callback(None)

        self._index_service.whenReady().addBoth(release)
        if self._became_ready is not None:
            self._became_ready().addBoth(release)
        request.notifyFinish().addErrback(lambda _: waiting.cancel())

        def go(_) -> None:
            request.render(self._inner)

        waiting.addCallbacks(go, lambda failure: failure.trap(defer.CancelledError))
        return NOT_DONE_YET


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
