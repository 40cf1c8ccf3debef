"""
The authenticating wrapper around transport and query Resources.

``guard(inner, policy)`` answers every request below its mount point: it resolves the
``Authorization`` header through the :class:`~eshu_mcp.auth.policy.CredentialPolicy`, and
either renders ``inner`` for the request (traversing ``inner`` with the request's remaining
``postpath``, so a whole tree and ``NOT_DONE_YET`` streams work unchanged) with the
principal stored on the request, or writes the JSON 401/403 that names nothing about the
server, counts it once, and never reaches ``inner`` (so no session is ever created).
"""

import secrets
from collections.abc import Callable

from twisted.internet.defer import CancelledError
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.iweb import IRequest
from twisted.web.resource import IResource, Resource, getChildForRequest
from twisted.web.server import NOT_DONE_YET

from eshu_mcp.auth.credentials import AuthenticationFailed, scoped_route_denied
from eshu_mcp.auth.policy import CredentialPolicy
from eshu_mcp.auth.principal import SHARED, Principal
from eshu_mcp.encoding import dumpb
from eshu_mcp.metrics import Metrics

log = Logger()

ENVELOPE_MEDIA_TYPE = b"application/eshu.envelope+json"
UNKNOWN_METHOD = "unknown"
_PRINCIPAL_ATTRIBUTE = "_eshu_mcp_principal"


def principal_of(request: IRequest) -> Principal | None:
    """The principal the guard stored on ``request``; None when unauthenticated or unguarded."""
    return getattr(request, _PRINCIPAL_ATTRIBUTE, None)


def _set_principal(request: IRequest, principal: Principal | None) -> None:
    setattr(request, _PRINCIPAL_ATTRIBUTE, principal)


def correlation_id(request: IRequest) -> str:
    """``X-Correlation-ID``, else ``X-Request-ID``, else 32 random hex characters."""
    for name in (b"x-correlation-id", b"x-request-id"):
        value = request.getHeader(name)
        if value:
            return value.decode("utf-8", "replace")
    return secrets.token_hex(16)


def denial_body(request: IRequest, failure: AuthenticationFailed) -> bytes:
    """The JSON refusal in the shape the client's ``Accept`` asks for, newline-terminated."""
    accept = request.getHeader(b"accept") or b""
    identifier = correlation_id(request)
    if ENVELOPE_MEDIA_TYPE in accept.lower():
        body: dict[str, object] = {
            "data": None,
            "truth": None,
            "error": {
                "code": failure.code,
                "message": failure.message,
                "correlation_id": identifier,
            },
        }
    else:
        body = {
            "correlation_id": identifier,
            "error_code": failure.code,
            "message": failure.message,
        }
    return dumpb(body, escape_html=False) + b"\n"


class AuthGuard(Resource):
    """A leaf that authenticates, then hands the request to the inner Resource tree."""

    isLeaf = True

    def __init__(
        self,
        inner: IResource,
        policy: CredentialPolicy,
        *,
        metrics: Metrics | None = None,
        method_label: Callable[[IRequest], str] | None = None,
        scoped_allowed: Callable[[IRequest], bool] | None = None,
    ) -> None:
        super().__init__()
        self._inner = inner
        self._policy = policy
        self._metrics = metrics
        self._method_label = method_label
        self._scoped_allowed = scoped_allowed

    def render(self, request: IRequest) -> object:
        pending = self._policy.authenticate(request.getHeader(b"authorization"))
        if pending.called:
            # Decided at once (no credential to fetch): the client cannot have left
            # meanwhile, and a long-lived stream keeps no watcher for it. Read the
            # outcome in place (every guarded call passes here, most twice).
            outcome = pending.result
            if isinstance(outcome, Failure):
                pending.addErrback(lambda _: None)  # consumed below
                self._refuse(outcome, request, ())
                return NOT_DONE_YET
            try:
                self._admit(outcome, request, ())
            except BaseException:
                self._refuse(Failure(), request, ())
            return NOT_DONE_YET
        gone: list[Failure] = []
        request.notifyFinish().addErrback(gone.append)
        pending.addCallback(self._admit, request, gone)
        pending.addErrback(self._refuse, request, gone)
        request.notifyFinish().addErrback(lambda _: pending.cancel())
        return NOT_DONE_YET

    def _admit(self, principal: Principal | None, request: IRequest, gone: list | tuple) -> None:
        if gone:
            return
        if (
            principal is not None
            and principal.mode != SHARED
            and self._scoped_allowed is not None
            and not self._scoped_allowed(request)
        ):
            raise scoped_route_denied()
        _set_principal(request, principal)
        request.render(getChildForRequest(self._inner, request))

    def _refuse(self, failure: Failure, request: IRequest, gone: list | tuple) -> None:
        if gone or failure.check(CancelledError):
            return
        if not failure.check(AuthenticationFailed):
            if not request.startedWriting:
                request.processingFailed(failure)
                return
            log.failure("guarded resource failed mid-response", failure)
            if not request.finished:
                request.loseConnection()
            return
        denial: AuthenticationFailed = failure.value
        label = self._method_label(request) if self._method_label else UNKNOWN_METHOD
        if self._metrics is not None:
            self._metrics.auth_denied(label, "unauthenticated")
        log.debug(
            "transport request refused: {status} {reason} ({mcp_method})",
            status=denial.status,
            reason=denial.reason,
            mcp_method=label,
        )
        request.setResponseCode(denial.status)
        request.setHeader(b"www-authenticate", self._policy.challenge(denial).encode("utf-8"))
        request.setHeader(b"content-type", b"application/json; charset=utf-8")
        request.setHeader(b"x-content-type-options", b"nosniff")
        body = denial_body(request, denial)
        request.setHeader(b"content-length", str(len(body)).encode("ascii"))
        if request.method != b"HEAD":
            request.write(body)
        request.finish()


def guard(
    inner: IResource,
    policy: CredentialPolicy,
    *,
    metrics: Metrics | None = None,
    method_label: Callable[[IRequest], str] | None = None,
    public: bool = False,
    scoped_allowed: Callable[[IRequest], bool] | None = None,
) -> IResource:
    """Wrap ``inner`` (a leaf or a tree) so every request is authenticated first.

    ``method_label`` names the denied request in the ``auth_denied`` metric (default
    ``unknown``).  ``public=True`` returns ``inner`` untouched (health, metrics, discovery).
    ``scoped_allowed``, when given, is the route allowlist for scoped principals: a scoped
    caller on a request it rejects gets the 403 ``permission_denied``.
    """
    if public:
        return inner
    return AuthGuard(
        inner,
        policy,
        metrics=metrics,
        method_label=method_label,
        scoped_allowed=scoped_allowed,
    )
