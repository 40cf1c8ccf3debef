"""
The daemon's HTTP resource tree.

Imported only by ``makeService`` (it imports Klein, which installs the reactor).
Every request passes the Host/Origin check first (DNS-rebinding protection for
a loopback listener, whatever the path); the MCP endpoints, ``/api/v0`` and
``/metrics`` then pass the bearer guard before reaching their Resource (metrics
can be made public); health and readiness are public.
"""

from urllib.parse import unquote_to_bytes

from attrs import define, field
from klein import Klein
from twisted.internet.interfaces import IReactorTime
from twisted.web.iweb import IRequest
from twisted.web.resource import IResource, Resource
from werkzeug.exceptions import MethodNotAllowed, NotFound

from eshu_mcp.auth import CredentialPolicy, guard, peek_mcp_method, protected_resource_metadata
from eshu_mcp.metrics import Metrics, MetricsResource
from eshu_mcp.protocol.server import McpServer
from eshu_mcp.query.interfaces import IQueryBackend
from eshu_mcp.transport.http import OriginPolicy, http_error
from eshu_mcp.transport.message import MessageResource
from eshu_mcp.transport.sse import SseResource, SseSessionRegistry
from eshu_mcp.transport.stream import DEFAULT_KEEPALIVE, DEFAULT_QUEUE_BYTES
from eshu_mcp.transport.streamable import StreamableResource, StreamableSessionRegistry


class _HostChecked(Resource):
    """The one Host/Origin check in front of the whole tree: 421 or 403 before any route."""

    isLeaf = True

    def __init__(
        self,
        inner: IResource,
        origins: OriginPolicy,
        direct: dict[tuple[bytes, bytes], IResource] | None = None,
    ) -> None:
        super().__init__()
        self._inner = inner
        self._origins = origins
        self._direct = direct or {}

    def render(self, request):
        refusal = self._origins.refusal(request)
        if refusal is not None:
            return http_error(request, *refusal)
        refusal = malformed_request(request)
        if refusal is not None:
            return http_error(request, *refusal[:2], **refusal[2])
        # The MCP endpoints skip the route table (a tenth of a small call's cost);
        # any other method or path still gets Klein's routing and its JSON 404/405.
        direct = self._direct.get((request.method, request.path))
        if direct is not None:
            return direct.render(request)
        return self._inner.render(request)


def malformed_request(request: IRequest) -> tuple[int, str, dict[str, bytes]] | None:
    """
    ``(status, message, headers)`` for a request no route can take, or None: a method that
    is not upper case (methods are case-sensitive: ``post`` is not ``POST``) or a path that
    does not percent-decode to UTF-8. Answered as JSON here, before a router would answer
    an HTML 501 or log a traceback.
    """
    method = request.method
    if not method.isupper() or not method.isalpha():
        shown = method.decode("ascii", "replace")[:16]
        return (
            405,
            f"method {shown!r} is not allowed: HTTP methods are case-sensitive"
            f" (did you mean {shown.upper()!r}?)",
            {"allow": b"GET, HEAD, POST, DELETE"},
        )
    try:
        unquote_to_bytes(request.path).decode("utf-8")
    except UnicodeDecodeError:
        return 400, "request path is not valid UTF-8 once percent-decoded", {}
    return None


def readyz_answer(request: IRequest, backend: IQueryBackend) -> bytes:
    """The /readyz line for the backend's readiness as it stands."""
    request.setHeader(b"content-type", b"text/plain; charset=utf-8")
    if backend.ready():
        return b"service=mcp-server probe=readyz status=ok\n"
    request.setResponseCode(503)
    reason = getattr(backend, "unready_reason", None) or "query backend not ready"
    line = f"service=mcp-server probe=readyz status=error error={reason}\n"
    return line.encode("utf-8", "replace")


class _Refusal(Resource):
    """A fixed JSON error, rendered as a Resource so Klein hands it the request."""

    isLeaf = True

    def __init__(self, status: int, message: str) -> None:
        super().__init__()
        self._status = status
        self._message = message

    def render(self, request):
        return http_error(request, self._status, self._message)


@define(slots=False)
class McpWebApp:
    """Routes for the MCP transports, the query API, health and metrics."""

    server: McpServer
    backend: IQueryBackend
    api_resource: IResource
    policy: CredentialPolicy
    clock: IReactorTime
    metrics: Metrics
    origins: OriginPolicy = field(factory=OriginPolicy)
    keepalive: float = DEFAULT_KEEPALIVE
    max_queued_bytes: int = DEFAULT_QUEUE_BYTES
    public_metrics: bool = False
    sse_sessions: SseSessionRegistry = field(default=None)
    streamable_sessions: StreamableSessionRegistry = field(default=None)
    _sse: IResource = field(init=False)
    _message: IResource = field(init=False)
    _streamable: IResource = field(init=False)
    _discovery: IResource | None = field(init=False)
    _metrics_page: IResource = field(init=False)

    app = Klein()

    def __attrs_post_init__(self) -> None:
        if self.sse_sessions is None:
            self.sse_sessions = SseSessionRegistry(self.clock, metrics=self.metrics)
        if self.streamable_sessions is None:
            self.streamable_sessions = StreamableSessionRegistry(self.clock, metrics=self.metrics)
        self._sse = guard(
            SseResource(
                self.server,
                self.sse_sessions,
                self.clock,
                keepalive=self.keepalive,
                queue_bytes=self.max_queued_bytes,
                metrics=self.metrics,
            ),
            self.policy,
            metrics=self.metrics,
            method_label=lambda request: "sse",
        )
        self._message = guard(
            MessageResource(self.server, self.sse_sessions, self.metrics),
            self.policy,
            metrics=self.metrics,
            method_label=peek_mcp_method,
        )
        self._streamable = guard(
            StreamableResource(
                self.server,
                self.streamable_sessions,
                self.clock,
                keepalive=self.keepalive,
                queue_bytes=self.max_queued_bytes,
                metrics=self.metrics,
            ),
            self.policy,
            metrics=self.metrics,
            method_label=peek_mcp_method,
        )
        self._discovery = protected_resource_metadata(self.policy)
        self._metrics_page = guard(
            MetricsResource(self.metrics.registry),
            self.policy,
            metrics=self.metrics,
            method_label=lambda request: "metrics",
            public=self.public_metrics,
        )

    def resource(self) -> IResource:
        """The root Resource to serve."""
        direct = {
            (b"POST", b"/mcp"): self._streamable,
            (b"GET", b"/mcp"): self._streamable,
            (b"DELETE", b"/mcp"): self._streamable,
            (b"POST", b"/mcp/message"): self._message,
            (b"GET", b"/sse"): self._sse,
        }
        return _HostChecked(self.app.resource(), self.origins, direct)

    @app.route("/health", methods=["GET", "HEAD"])
    def health(self, request: IRequest) -> bytes:
        request.setHeader(b"content-type", b"application/json")
        return b'{"status":"ok"}'

    @app.route("/healthz", methods=["GET", "HEAD"])
    def healthz(self, request: IRequest) -> bytes:
        request.setHeader(b"content-type", b"text/plain; charset=utf-8")
        return b"service=mcp-server probe=healthz status=ok\n"

    @app.route("/readyz", methods=["GET", "HEAD"])
    def readyz(self, request: IRequest):
        # A backend that can look afresh does so off the reactor; the probe waits for it.
        check = getattr(self.backend, "check_readiness", None)
        if check is None:
            return readyz_answer(request, self.backend)
        return check().addCallback(lambda _: readyz_answer(request, self.backend))

    @app.route("/metrics", methods=["GET"])
    def metrics_page(self, request: IRequest) -> IResource:
        return self._metrics_page

    @app.route("/sse", methods=["GET", "HEAD"])
    def sse(self, request: IRequest) -> IResource:
        return self._sse

    @app.route("/mcp/message", methods=["POST"])
    def message(self, request: IRequest) -> IResource:
        return self._message

    @app.route("/mcp", methods=["GET", "POST", "DELETE"])
    def streamable(self, request: IRequest) -> IResource:
        return self._streamable

    @app.route("/api/v0/", branch=True)
    def api(self, request: IRequest) -> IResource:
        return self.api_resource

    @app.route("/.well-known/oauth-protected-resource", branch=True, methods=["GET"])
    def discovery(self, request: IRequest) -> IResource:
        if self._discovery is None:
            return _Refusal(404, "OAuth discovery is not configured")
        return self._discovery

    @app.handle_errors(NotFound)
    def not_found(self, request: IRequest, failure) -> bytes:
        return http_error(request, 404, "no such endpoint")

    @app.handle_errors(MethodNotAllowed)
    def method_not_allowed(self, request: IRequest, failure) -> bytes:
        allowed = ", ".join(sorted(failure.value.valid_methods or []))
        message = f"use {allowed}" if allowed else "method not allowed"
        return http_error(request, 405, message, allow=allowed.encode())
