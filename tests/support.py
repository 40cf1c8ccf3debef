"""Test support: driving real twisted.web Sites in memory, and small query Resources."""

import json
from typing import Any

from twisted.internet.address import IPv4Address
from twisted.internet.error import ConnectionDone
from twisted.internet.testing import StringTransport
from twisted.python.failure import Failure
from twisted.web.http_headers import Headers
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Site


class RawResponse:
    """A parsed HTTP/1.1 response (chunked bodies decoded, possibly still open)."""

    def __init__(self, raw: bytes) -> None:
        head, _, rest = raw.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        self.status = int(lines[0].split(b" ")[1])
        self.headers = Headers()
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            self.headers.addRawHeader(name.strip(), value.strip())
        if self.header(b"transfer-encoding") == b"chunked":
            self.body = _dechunk(rest)
        else:
            self.body = rest

    def header(self, name: bytes) -> bytes | None:
        values = self.headers.getRawHeaders(name)
        return values[0] if values else None

    def json(self) -> Any:
        return json.loads(self.body)


def _dechunk(data: bytes) -> bytes:
    body = b""
    while data:
        size_line, sep, data = data.partition(b"\r\n")
        if not sep:
            break
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        body += data[:size]
        data = data[size + 2 :]
    return body


class HttpExchange:
    """One client connection to a real ``Site`` over a ``StringTransport``."""

    def __init__(self, site: Site, peer: str | None = None) -> None:
        address = None if peer is None else IPv4Address("TCP", peer, 50000)
        self.transport = StringTransport(peerAddress=address)
        self.channel = site.buildProtocol(IPv4Address("TCP", "127.0.0.1", 50000))
        self.channel.makeConnection(self.transport)

    def request(
        self,
        method: bytes,
        path: bytes,
        *,
        headers: dict[bytes, bytes] | None = None,
        body: bytes | None = None,
    ) -> None:
        all_headers = {b"host": b"127.0.0.1:8080", **(headers or {})}
        if body is not None:
            all_headers[b"content-length"] = str(len(body)).encode()
        lines = [method + b" " + path + b" HTTP/1.1"]
        lines += [name + b": " + value for name, value in all_headers.items()]
        self.channel.dataReceived(b"\r\n".join(lines) + b"\r\n\r\n" + (body or b""))

    def response(self) -> RawResponse:
        return RawResponse(self.transport.value())

    def disconnect(self) -> None:
        self.channel.connectionLost(Failure(ConnectionDone()))


def post_json(exchange: HttpExchange, path: bytes, message: Any, **headers: bytes) -> None:
    """POST one JSON value."""
    extra = {b"content-type": b"application/json"}
    extra.update({name.replace("_", "-").encode(): value for name, value in headers.items()})
    exchange.request(b"POST", path, headers=extra, body=json.dumps(message).encode())


class RecordingResource(Resource):
    """
    A query Resource for transport tests: answers every request with a fixed
    status and body, remembers what it was asked, and can hold requests open.
    """

    isLeaf = True

    def __init__(self, status: int = 200, body: bytes = b"{}", *, hold: bool = False) -> None:
        super().__init__()
        self.status = status
        self.body = body
        self.hold = hold
        self.requests: list = []
        self.bodies: list[bytes] = []
        self.disconnected: list = []

    def render(self, request):
        self.requests.append(request)
        self.bodies.append(request.content.read())
        if self.hold:
            request.notifyFinish().addErrback(lambda failure: self.disconnected.append(failure))
            return NOT_DONE_YET
        request.setResponseCode(self.status)
        request.setHeader(b"content-type", b"application/json")
        return self.body


def envelope(data: Any, truth: dict | None = None, error: dict | None = None) -> bytes:
    """A canonical envelope body."""
    return json.dumps({"data": data, "truth": truth, "error": error}).encode()


FRESH_TRUTH = {"level": "exact", "freshness": {"state": "fresh"}}


class StaticBackend:
    """An IQueryBackend over any Resource, for transport tests."""

    name = "test"

    def __init__(self, resource, *, ready: bool = True) -> None:
        self.resource = resource
        self._ready = ready

    def ready(self) -> bool:
        return self._ready

    def answers(self, method: str, path_template: str) -> bool:
        return True


def web_site(
    resource=None,
    *,
    environ=None,
    clock=None,
    page_size=50,
    loopback_only=True,
    settings=None,
    public_metrics=False,
    session_idle_timeout=None,
    max_pipelined=16,
    max_queued_bytes=None,
    max_body_bytes=None,
    request_timeout=None,
):
    """The daemon's real HTTP tree over a test query Resource; returns (site, app, clock)."""
    from twisted.internet.task import Clock

    from eshu_mcp.auth import CredentialPolicy, guard
    from eshu_mcp.metrics import Metrics
    from eshu_mcp.service import ServerSettings, build_mcp_server
    from eshu_mcp.transport.channel import pipeline_bounded_channel
    from eshu_mcp.transport.http import OriginPolicy
    from eshu_mcp.transport.web import McpWebApp

    clock = clock or Clock()
    resource = resource or RecordingResource(body=envelope({"count": 2}, FRESH_TRUTH))
    backend = StaticBackend(resource)
    policy = CredentialPolicy.from_environment(environ or {})
    metrics = Metrics()
    api = guard(resource, policy)
    server = build_mcp_server(
        api,
        clock=clock,
        settings=settings or ServerSettings(toolsets="all", page_size=page_size),
        backend=backend,
        metrics=metrics,
    )
    sessions = sse_sessions = None
    if session_idle_timeout is not None:
        from eshu_mcp.transport.sse import SseSessionRegistry
        from eshu_mcp.transport.streamable import StreamableSessionRegistry

        sessions = StreamableSessionRegistry(
            clock, idle_timeout=session_idle_timeout, metrics=metrics
        )
        sse_sessions = SseSessionRegistry(clock, idle_timeout=session_idle_timeout, metrics=metrics)
    app = McpWebApp(
        server=server,
        backend=backend,
        api_resource=api,
        policy=policy,
        clock=clock,
        metrics=metrics,
        origins=OriginPolicy(loopback_only=loopback_only),
        public_metrics=public_metrics,
        streamable_sessions=sessions,
        sse_sessions=sse_sessions,
        **({} if max_queued_bytes is None else {"max_queued_bytes": max_queued_bytes}),
    )
    site = Site(app.resource(), parsePOSTFormSubmission=False, reactor=clock)
    site.protocol = pipeline_bounded_channel(
        max_pipelined, metrics, max_body_bytes=max_body_bytes, request_timeout=request_timeout
    )
    return site, app, clock
