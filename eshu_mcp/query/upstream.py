"""
The upstream query backend: ``/api/v0`` proxied to a remote Eshu API.

Teams that run Eshu's own cluster point eshu-mcp at it; the graph then lives
there and any number of eshu-mcp replicas can front it. Requests keep their
method, path, query, body and ``Accept``; the credential sent upstream is the
configured upstream token, or else the caller's own ``Authorization``. A caller
that goes away (including a cancelled tool call) cancels the upstream request.
"""

from urllib.parse import urlsplit

import treq
from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.web.client import Agent, HTTPConnectionPool
from twisted.web.http_headers import Headers
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET
from zope.interface import implementer

from eshu_mcp.encoding import dumpb
from eshu_mcp.query.interfaces import IQueryBackend

log = Logger()

MAX_UPSTREAM_BODY = 32 * 1024 * 1024
DEFAULT_UPSTREAM_TIMEOUT = 60.0
PROBE_INTERVAL = 30.0
# Eshu-Answer-Detail goes both ways: an Eshu API that serves the compact view itself
# confirms it in the answer, and dispatch then leaves the answer as it is.
_FORWARDED = (
    b"accept",
    b"content-type",
    b"x-correlation-id",
    b"x-request-id",
    b"eshu-answer-detail",
)
_RETURNED = (
    b"content-type",
    b"www-authenticate",
    b"allow",
    b"cache-control",
    b"eshu-answer-detail",
)


def _error_body(request, status: int, code: str, message: str) -> bytes:
    request.setResponseCode(status)
    request.setHeader(b"content-type", b"application/json; charset=utf-8")
    accept = request.getHeader(b"accept") or b""
    if b"application/eshu.envelope+json" in accept:
        payload = {"data": None, "truth": None, "error": {"code": code, "message": message}}
    else:
        payload = {
            "error": "Bad Gateway" if status == 502 else "Gateway Timeout",
            "detail": message,
        }
    return dumpb(payload, escape_html=False) + b"\n"


class UpstreamResource(Resource):
    """Forward every request below ``/api/v0`` to the same path upstream."""

    isLeaf = True

    def __init__(self, base_url: str, client, *, token: str | None, clock, timeout: float):
        super().__init__()
        self._base = base_url.rstrip("/")
        self._client = client
        self._token = token
        self._clock = clock
        self._timeout = timeout

    def _target(self, request) -> bytes:
        query = request.uri.partition(b"?")[2]
        path = b"/api/v0/" + b"/".join(request.postpath)
        return self._base.encode("ascii") + path + (b"?" + query if query else b"")

    def _headers(self, request) -> Headers:
        headers = Headers()
        for name in _FORWARDED:
            values = request.requestHeaders.getRawHeaders(name)
            if values:
                headers.setRawHeaders(name, values)
        if self._token:
            headers.setRawHeaders(b"authorization", [b"Bearer " + self._token.encode("latin-1")])
        else:
            values = request.requestHeaders.getRawHeaders(b"authorization")
            if values:
                headers.setRawHeaders(b"authorization", values)
        return headers

    def render(self, request):
        request.content.seek(0)
        body = request.content.read()
        sent = self._client.request(
            request.method.decode("ascii"),
            self._target(request),
            headers=self._headers(request),
            data=body or None,
            unbuffered=True,
        )
        sent.addTimeout(self._timeout, self._clock)
        request.notifyFinish().addErrback(lambda _: sent.cancel())

        def relay(response):
            return _collect(response).addCallback(lambda payload: (response, payload))

        def write(result) -> None:
            response, payload = result
            if request._disconnected:
                return
            request.setResponseCode(response.code)
            for name in _RETURNED:
                values = response.headers.getRawHeaders(name)
                if values:
                    request.responseHeaders.setRawHeaders(name, values)
            request.write(payload)
            request.finish()

        def failed(failure) -> None:
            if request._disconnected:
                return
            if failure.check(defer.TimeoutError):
                body = _error_body(
                    request, 504, "backend_timeout", "the Eshu API did not answer in time"
                )
            else:
                log.warn("upstream request failed: {error}", error=failure.getErrorMessage())
                body = _error_body(
                    request, 502, "backend_unavailable", "the Eshu API could not be reached"
                )
            request.write(body)
            request.finish()

        sent.addCallback(relay).addCallbacks(write, failed)
        return NOT_DONE_YET


class _TooLarge(Exception):
    pass


def _collect(response) -> defer.Deferred:
    chunks: list[bytes] = []
    size = [0]

    def keep(data: bytes) -> None:
        size[0] += len(data)
        if size[0] > MAX_UPSTREAM_BODY:
            raise _TooLarge()
        chunks.append(data)

    return treq.collect(response, keep).addCallback(lambda _: b"".join(chunks))


@implementer(IQueryBackend)
class UpstreamQueryBackend(Service):
    """Answers ``/api/v0`` by asking a remote Eshu API; ready while its health probe passes."""

    name = "upstream"

    def __init__(
        self,
        base_url: str,
        *,
        reactor,
        token: str | None = None,
        timeout: float = DEFAULT_UPSTREAM_TIMEOUT,
        client=None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"upstream URL {base_url!r} must be an http(s) URL")
        self._base = base_url.rstrip("/")
        if client is None:
            client = treq.client.HTTPClient(Agent(reactor, pool=HTTPConnectionPool(reactor)))
        self._client = client
        self.resource = UpstreamResource(
            self._base, client, token=token, clock=reactor, timeout=timeout
        )
        self._healthy = False
        self._probe = LoopingCall(self.probe)
        self._probe.clock = reactor

    def ready(self) -> bool:
        return self._healthy

    def answers(self, method: str, path_template: str) -> bool:
        return True

    def probe(self) -> defer.Deferred:
        """Ask the upstream's ``/health``; remember whether it answered 200."""
        checking = self._client.get(self._base + "/health")

        def seen(response) -> None:
            self._healthy = response.code == 200
            return treq.content(response)

        def unreachable(failure) -> None:
            if self._healthy:
                log.warn("eshu api unreachable: {error}", error=failure.getErrorMessage())
            self._healthy = False

        return checking.addCallbacks(seen, unreachable)

    def startService(self) -> None:
        super().startService()
        self._probe.start(PROBE_INTERVAL, now=True)

    def stopService(self):
        if self._probe.running:
            self._probe.stop()
        return super().stopService()
