"""
Driving a tool call through the query Resource in process.

A tool call becomes a real ``twisted.web.server.Request`` over an in-memory
channel, rendered by the same Resource tree that serves ``/api/v0`` over HTTP,
so an MCP answer and the matching HTTP answer are the same bytes. The Deferred
it returns has a deadline and a canceller; both make the request lose its
"connection", so the Resource's ``notifyFinish()`` errbacks exactly as it would
for a socket client and the Resource can stop its work.
"""

import time
from functools import lru_cache
from io import BytesIO
from urllib.parse import urlencode

from attrs import define, field
from twisted.internet import defer
from twisted.internet.address import IPv4Address
from twisted.internet.error import ConnectionLost
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.http_headers import Headers
from twisted.web.resource import IResource, Resource
from twisted.web.server import Request, Site

from eshu_mcp.dispatch.anchors import anchored_arguments
from eshu_mcp.dispatch.api_errors import with_selectors_not_found
from eshu_mcp.dispatch.argument_errors import argument_error_result
from eshu_mcp.dispatch.attribution import attributed
from eshu_mcp.dispatch.budget import DEFAULT_ANSWER_PAGE, DEFAULT_RESPONSE_BUDGET
from eshu_mcp.dispatch.defaults import with_default_repository
from eshu_mcp.dispatch.first_page import (
    DEFAULT_ANSWER_ROWS,
    first_page_arguments,
    first_page_note,
)
from eshu_mcp.dispatch.results import (
    dispatch_context_error_result,
    error_result,
    result_from_response,
)
from eshu_mcp.dispatch.routes import Route, RouteError, resolve_route
from eshu_mcp.dispatch.unused import (
    honoured_arguments,
    unused_arguments,
    unused_arguments_note,
)
from eshu_mcp.dispatch.validation import check_arguments
from eshu_mcp.encoding import dumpb
from eshu_mcp.query.compact import ANSWER_DETAIL_HEADER, ANSWER_DETAILS, COMPACT, wants_compact

log = Logger()

DEFAULT_DISPATCH_TIMEOUT = 30.0
ENVELOPE_MIME_TYPE = b"application/eshu.envelope+json"
_PEER = IPv4Address("TCP", "127.0.0.1", 0)


@define
class InProcessResponse:
    """What the query Resource answered."""

    status: int
    headers: Headers
    body: bytes


class _CaptureChannel:
    """The least of an ``HTTPChannel`` a ``Request`` needs, keeping what it writes."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.transport = self
        self.producer = None
        self.status = 200
        self.headers = Headers()
        self.chunks: list[bytes] = []
        self.done = defer.Deferred()

    def getPeer(self) -> IPv4Address:
        return _PEER

    def getHost(self) -> IPv4Address:
        return _PEER

    def isSecure(self) -> bool:
        return False

    def writeHeaders(self, version, code, reason, headers) -> None:
        self.status = int(code)
        if isinstance(headers, Headers):
            # The request's own response headers: nothing changes them once written.
            self.headers = headers
            return
        for name, value in headers:
            self.headers.addRawHeader(name, value)

    def write(self, data: bytes) -> None:
        self.chunks.append(data)

    def writeSequence(self, data) -> None:
        self.chunks.extend(data)

    def registerProducer(self, producer, streaming: bool) -> None:
        self.producer = producer
        if not streaming:
            producer.resumeProducing()

    def unregisterProducer(self) -> None:
        self.producer = None

    def requestDone(self, request: Request) -> None:
        if not self.done.called:
            self.done.callback(InProcessResponse(self.status, self.headers, b"".join(self.chunks)))

    def loseConnection(self) -> None:
        """Nothing to close: the caller reads the captured response."""

    def _respondToBadRequestAndDisconnect(self) -> None:
        self.status = 400
        self.requestDone(None)


def api_root(query_resource: IResource) -> Resource:
    """A root that serves ``query_resource`` at ``/api/v0``, as the HTTP tree does."""
    root = Resource()
    api = Resource()
    root.putChild(b"api", api)
    api.putChild(b"v0", query_resource)
    return root


def request_target(route: Route) -> bytes:
    """The path and query string of a route, keys sorted and empty values kept."""
    return _target(route.path, tuple(sorted(route.query.items())) if route.query else ())


@lru_cache(maxsize=1024)
def _target(path: str, query: tuple) -> bytes:
    # Calls repeat their targets (a tool's defaults, a client's paging): encode each once.
    target = path
    if query:
        target += "?" + urlencode(query)
    return target.encode("utf-8")


@define
class InProcessDispatcher:
    """
    Turns tool calls into in-process requests against a query Resource (and, with
    ``log_calls``, the daemon's ``--access-log``, logs a line for each).

    ``timeout`` bounds each call (the Resource sees the request lose its
    connection when it expires); ``budget`` bounds the size of each answer.
    ``answer_detail`` is ``compact`` (lean rows, one copy, rows trimmed to the
    budget) or ``full`` (Eshu's HTTP shape, byte for byte); compact answers over
    ``answer_page`` bytes (0: no such bound) keep the rows that fit and say how to page;
    a compact call naming no ``limit`` asks for a first page of ``answer_rows`` rows
    (0: the tool's own default; :mod:`eshu_mcp.dispatch.first_page`).
    ``default_repository`` is the one repository the server is scoped to (a selector the
    query Resource resolves), used by calls that name none
    (:mod:`eshu_mcp.dispatch.defaults`); "" when it serves several.
    """

    query_resource: IResource
    clock: IReactorTime
    timeout: float = DEFAULT_DISPATCH_TIMEOUT
    budget: int = DEFAULT_RESPONSE_BUDGET
    log_calls: bool = False
    metrics: object | None = None
    answer_detail: str = field(default=COMPACT)
    answer_page: int = DEFAULT_ANSWER_PAGE
    answer_rows: int = DEFAULT_ANSWER_ROWS
    default_repository: str = ""
    _site: Site = field(init=False)
    _series: dict = field(init=False, factory=dict)

    @answer_detail.validator
    def _known_detail(self, attribute, value: str) -> None:
        if value not in ANSWER_DETAILS:
            raise ValueError(f"answer_detail must be one of {', '.join(ANSWER_DETAILS)}")

    def __attrs_post_init__(self) -> None:
        self._site = Site(api_root(self.query_resource), parsePOSTFormSubmission=False)

    def call(
        self,
        tool_name: str,
        args: dict,
        authorization: bytes | None = None,
        *,
        caller: object | None = None,
    ):
        """
        Fire with the MCP tool result for one call; cancelling it cancels the request.

        Arguments are checked against the tool's input schema first: a call the
        schema refuses never reaches the query Resource. The call's log events are
        attributed to ``caller`` (the session making it), the one session that hears them.
        """
        return attributed(caller, self._call, tool_name, args, authorization, caller)

    def _call(self, tool_name: str, args: dict, authorization: bytes | None, caller: object):
        started = time.monotonic()
        args = with_default_repository(tool_name, args, self.default_repository)
        args, problems = check_arguments(tool_name, args)
        if problems:
            log.info(
                "mcp tool arguments refused: {tool} ({count} problems)",
                tool=tool_name,
                count=len(problems),
            )
            self._count(tool_name, "invalid_arguments", started)
            return defer.succeed(argument_error_result(tool_name, problems))
        unused = unused_arguments(tool_name, args)
        first_page = None
        if self.answer_detail == COMPACT:
            args, first_page = first_page_arguments(tool_name, args, self.answer_rows)
        try:
            route = resolve_route(tool_name, anchored_arguments(tool_name, args))
        except RouteError as error:
            self._count(tool_name, "route_error", started)
            hint = f"\n{error.hint}" if error.hint else ""
            return defer.succeed(error_result(str(error) + hint))
        route = honoured_arguments(tool_name, args, route)
        if self.log_calls:
            log.info(
                "dispatch tool {tool} {method} {path}",
                tool=tool_name,
                method=route.method,
                path=route.path,
            )
        outcome = self.request(route, authorization)

        def classify(response: InProcessResponse) -> dict:
            result = result_from_response(
                tool_name,
                response.status,
                response.body,
                budget=self.budget,
                compact=self.answer_detail == COMPACT,
                paging_offset=_paging_offset(route),
                compact_here=self.answer_detail == COMPACT and not _confirmed_compact(response),
                request_args=route.body if isinstance(route.body, dict) else route.query,
                page_budget=self.answer_page,
            )
            if first_page is not None:
                result = first_page_note(tool_name, first_page, result)
            result = unused_arguments_note(unused, result)
            self._count(tool_name, "error" if result.get("isError") else "ok", started)
            return result

        def ended(failure: Failure) -> dict:
            failure.trap(defer.TimeoutError, defer.CancelledError)
            timed_out = failure.check(defer.TimeoutError) is not None
            log.warn(
                "mcp tool dispatch context ended: {tool} after {timeout}s ({err})",
                tool=tool_name,
                timeout=self.timeout,
                err="context deadline exceeded" if timed_out else "context canceled",
            )
            self._count(tool_name, "timeout" if timed_out else "canceled", started)
            return dispatch_context_error_result(
                tool_name, timed_out=timed_out, configured_timeout=self.timeout
            )

        outcome.addCallbacks(
            lambda response: attributed(caller, classify, response),
            lambda failure: attributed(caller, ended, failure),
        )
        return outcome.addCallback(with_selectors_not_found, args)

    def request(self, route: Route, authorization: bytes | None = None) -> defer.Deferred:
        """
        Render one route through the query Resource.

        Fires with an :class:`InProcessResponse`, or fails with
        ``defer.TimeoutError`` at the deadline or ``defer.CancelledError`` when
        cancelled; either way the request has lost its connection first.
        """
        channel = _CaptureChannel(self._site)
        request = Request(channel)
        headers = request.requestHeaders
        headers.setRawHeaders(b"accept", [ENVELOPE_MIME_TYPE])
        headers.setRawHeaders(b"host", [b"eshu-mcp.in-process"])
        if authorization:
            headers.setRawHeaders(b"authorization", [authorization])
        if self.answer_detail == COMPACT:
            headers.setRawHeaders(ANSWER_DETAIL_HEADER, [COMPACT.encode("ascii")])
        body = b""
        if route.body is not None:
            body = dumpb(route.body)
            headers.setRawHeaders(b"content-type", [b"application/json"])
            headers.setRawHeaders(b"content-length", [str(len(body)).encode("ascii")])
        request.content = BytesIO(body)
        request.content.seek(0, 2)

        def abandon(reason: Exception) -> None:
            if not request.finished and not request._disconnected:
                request.connectionLost(Failure(reason))

        def cancel(result: defer.Deferred) -> None:
            abandon(ConnectionLost("the tool call was cancelled"))

        outcome = defer.Deferred(cancel)
        channel.done.addCallback(lambda response: outcome.called or outcome.callback(response))
        outcome.addTimeout(self.timeout, self.clock, onTimeoutCancel=None)
        outcome.addErrback(_lose_connection_on_failure, abandon)
        request.requestReceived(route.method.encode("ascii"), request_target(route), b"HTTP/1.0")
        return outcome

    def _count(self, tool_name: str, outcome: str, started: float) -> None:
        if self.metrics is None:
            return
        # The labelled series, looked up once per tool and outcome (``labels()`` is
        # a good part of a small call's cost).
        series = self._series.get((tool_name, outcome))
        if series is None:
            series = self._series[(tool_name, outcome)] = (
                self.metrics.tool_calls.labels(tool_name, outcome),
                self.metrics.tool_seconds.labels(tool_name),
            )
        series[0].inc()
        series[1].observe(time.monotonic() - started)


def _confirmed_compact(response: InProcessResponse) -> bool:
    """Whether the query Resource says it answered with the compact view."""
    values = response.headers.getRawHeaders(ANSWER_DETAIL_HEADER) or []
    return any(wants_compact(value) for value in values)


def _paging_offset(route: Route) -> int | None:
    """The offset a route sent (it pages by offset), or None when it sent none."""
    sent = route.body.get("offset") if isinstance(route.body, dict) else None
    if sent is None:
        sent = route.query.get("offset")
    try:
        return int(sent) if sent is not None else None
    except (TypeError, ValueError):
        return None


def _lose_connection_on_failure(failure: Failure, abandon) -> Failure:
    abandon(ConnectionLost("the tool call deadline passed"))
    return failure


def run_read_only_tool(
    resource: IResource,
    tool_name: str,
    args: dict,
    auth_header: bytes | str | None = None,
    *,
    clock: IReactorTime | None = None,
    timeout: float = DEFAULT_DISPATCH_TIMEOUT,
    budget: int = DEFAULT_RESPONSE_BUDGET,
    answer_detail: str = COMPACT,
    answer_page: int = DEFAULT_ANSWER_PAGE,
    answer_rows: int = DEFAULT_ANSWER_ROWS,
    default_repository: str = "",
) -> defer.Deferred:
    """Run one tool against ``resource`` in process; fires with the MCP tool result."""
    if clock is None:
        from twisted.internet import reactor as clock
    if isinstance(auth_header, str):
        auth_header = auth_header.encode("latin-1")
    dispatcher = InProcessDispatcher(
        resource,
        clock,
        timeout=timeout,
        budget=budget,
        answer_detail=answer_detail,
        answer_page=answer_page,
        answer_rows=answer_rows,
        default_repository=default_repository,
    )
    return dispatcher.call(tool_name, args, auth_header)
