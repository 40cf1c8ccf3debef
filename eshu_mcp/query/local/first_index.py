"""Holding queries that arrive before the first index build has finished."""

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
    through and get the backend's own error.
    """

    isLeaf = True

    def __init__(self, inner: IResource, index_service, is_ready) -> None:
        super().__init__()
        self._inner = inner
        self._index_service = index_service
        self._is_ready = is_ready

    def render(self, request):
        if self._is_ready() or self._index_service.state == "failed":
            return self._inner.render(request)
        waiting = defer.Deferred()
        self._index_service.whenReady().addBoth(
            lambda result: None if waiting.called else waiting.callback(None)
        )
        request.notifyFinish().addErrback(lambda _: waiting.cancel())

        def go(_) -> None:
            request.render(self._inner)

        waiting.addCallbacks(go, lambda failure: failure.trap(defer.CancelledError))
        return NOT_DONE_YET
