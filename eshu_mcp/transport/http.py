"""What every HTTP transport shares: JSON replies, body limits and origin checks."""

from collections.abc import Callable
from ipaddress import ip_address
from typing import Any
from urllib.parse import urlsplit

from attrs import frozen
from twisted.internet import defer
from twisted.logger import Logger
from twisted.web.iweb import IRequest
from twisted.web.server import NOT_DONE_YET

from eshu_mcp.auth import principal_key, principal_of
from eshu_mcp.encoding import dumpb
from eshu_mcp.protocol.jsonrpc import (
    DEFAULT_MAX_MESSAGE_BYTES,
    PARSE_ERROR,
    ProtocolError,
    decode_frame,
    error_response,
    size_text,
)

log = Logger()

JSON_CONTENT_TYPE = b"application/json"
MAX_BODY_BYTES = DEFAULT_MAX_MESSAGE_BYTES
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
DEFAULT_IDLE_TIMEOUT = 30 * 60.0
DEFAULT_MAX_SESSIONS = 10_000
DEFAULT_MAX_SESSIONS_PER_CLIENT = 1_000
"""Sessions one client (one credential, or one address when unauthenticated) may hold."""


def write_json(request: IRequest, status: int, payload, *, headers: dict | None = None) -> bytes:
    """Set status and JSON headers; return the body (Go-style: compact, newline-terminated)."""
    request.setResponseCode(status)
    request.setHeader(b"content-type", JSON_CONTENT_TYPE)
    for name, value in (headers or {}).items():
        request.setHeader(name, value)
    return dumpb(payload) + b"\n"


def http_error(request: IRequest, status: int, message: str, **headers: bytes) -> bytes:
    """A plain JSON error body for a request refused before the protocol saw it."""
    return write_json(
        request,
        status,
        {"error": _REASONS.get(status, "Error"), "detail": message},
        headers={name.replace("_", "-").encode("ascii"): value for name, value in headers.items()},
    )


def too_many_sessions(request: IRequest, idle_timeout: float) -> bytes:
    """The 503 for a new session beyond ``--max-sessions``: retry once idle ones are reaped."""
    return http_error(
        request,
        503,
        "too many open sessions; try again later (--max-sessions)",
        retry_after=str(max(1, int(min(60.0, idle_timeout)))).encode(),
    )


def client_key(request: IRequest) -> str:
    """
    Who a session counts against: the caller's credential (its principal), else the
    address it connects from, so one client cannot fill the whole session table.
    """
    owner = principal_key(principal_of(request))
    if owner:
        return owner
    peer = request.getClientAddress()
    return "address:" + str(getattr(peer, "host", peer))


def too_many_client_sessions(request: IRequest, idle_timeout: float) -> bytes:
    """The 429 for a new session beyond ``--max-sessions-per-client``."""
    return http_error(
        request,
        429,
        "this client holds too many open sessions; end one (DELETE /mcp, or close the"
        " stream) or wait until idle ones are reaped (--max-sessions-per-client)",
        retry_after=str(max(1, int(min(60.0, idle_timeout)))).encode(),
    )


def rpc_error(request: IRequest, status: int, error: ProtocolError, request_id=None) -> bytes:
    """A JSON-RPC error reply carried with an HTTP status."""
    return write_json(request, status, error_response(request_id, error))


_REASONS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    409: "Conflict",
    413: "Payload Too Large",
    415: "Unsupported Media Type",
    421: "Misdirected Request",
    503: "Service Unavailable",
}


def answer_later(
    request: IRequest, handling: defer.Deferred, respond: Callable[[Any], None]
) -> object:
    """
    Finish ``request`` through ``respond(answer)`` once ``handling`` fires.

    A client that drops the request has given up on the calls it carried, so
    the handling is cancelled; nothing is written to a request that is gone.
    """
    request.notifyFinish().addErrback(lambda _: handling.cancel())

    def deliver(answer) -> None:
        if not request._disconnected:
            respond(answer)

    def failed(failure) -> None:
        if not failure.check(defer.CancelledError):
            log.failure("mcp reply to {uri} failed", failure, uri=request.uri)

    handling.addCallback(deliver).addErrback(failed)
    return NOT_DONE_YET


def finish_empty(request: IRequest, status: int) -> None:
    """End a response that has no body."""
    request.setResponseCode(status)
    if status != 204:
        request.setHeader(b"content-length", b"0")
    request.finish()


def finish_json(request: IRequest, status: int, payload) -> None:
    """End a response with a JSON body (sized: one write, no chunked framing)."""
    body = write_json(request, status, payload)
    request.setHeader(b"content-length", b"%d" % len(body))
    request.write(body)
    request.finish()


def read_body(request: IRequest, limit: int = MAX_BODY_BYTES) -> bytes | None:
    """The request body, or None when it is larger than ``limit``."""
    content = request.content
    content.seek(0, 2)
    if content.tell() > limit:
        return None
    content.seek(0)
    return content.read()


def read_frame(request: IRequest, limit: int = MAX_BODY_BYTES) -> tuple[Any, bytes | None]:
    """
    The request body decoded as one JSON frame, or the refusal to answer with
    (413 over the size limit ``limit``, 400 with a JSON-RPC parse error).
    """
    body = read_body(request, limit)
    if body is None:
        return None, http_error(
            request, 413, f"the message is larger than {size_text(limit)}; see --max-message-bytes"
        )
    try:
        return decode_frame(body), None
    except ProtocolError:
        return None, rpc_error(request, 400, ProtocolError(PARSE_ERROR, "parse error"))


def header(request: IRequest, name: bytes) -> str | None:
    """A request header decoded as Latin-1, or None."""
    value = request.getHeader(name)
    return None if value is None else value.decode("latin-1")


def _host_name(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    if host.count(":") == 1:
        return host.split(":", 1)[0]
    return host


def is_loopback_host(name: str) -> bool:
    """Whether a host name or address names this machine."""
    if name in LOOPBACK_HOSTS:
        return True
    try:
        return ip_address(name).is_loopback
    except ValueError:
        return False


@frozen
class OriginPolicy:
    """
    DNS-rebinding protection for the MCP endpoints.

    A browser page on a foreign origin must not reach a server on this
    machine: a request carrying an ``Origin`` is admitted only when that origin
    is listed, or names the same host the request was sent to, or is a
    loopback origin while the server only listens on loopback. With
    ``loopback_only`` the ``Host`` header must name loopback (or one of
    ``allowed_hosts``, the names a local reverse proxy forwards), so a rebound
    DNS name pointing at 127.0.0.1 is refused.
    """

    allowed_origins: frozenset[str] = frozenset()
    loopback_only: bool = True
    allowed_hosts: frozenset[str] = frozenset()

    def refusal(self, request: IRequest) -> tuple[int, str] | None:
        """None when the request may proceed, else (status, reason)."""
        host = header(request, b"host") or ""
        name = _host_name(host)
        if (
            self.loopback_only
            and host
            and not is_loopback_host(name)
            and name not in self.allowed_hosts
        ):
            return 421, f"host {host!r} is not served here; see --allowed-host"
        origin = header(request, b"origin")
        if origin is None or origin in self.allowed_origins:
            return None
        parts = urlsplit(origin)
        origin_host = (parts.hostname or "").lower()
        if parts.netloc and host and parts.netloc.lower() == host.strip().lower():
            return None
        if self.loopback_only and is_loopback_host(origin_host):
            return None
        return 403, f"origin {origin!r} is not allowed"
