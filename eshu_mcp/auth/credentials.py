"""
Bearer credentials and the failure every resolver reports.

Resolvers are ``twisted.cred`` checkers over :class:`IBearerToken`.  Each one answers a
credential with a :class:`~eshu_mcp.auth.principal.Principal` (match), an
``UnauthorizedLogin`` (no match: try the next resolver) or an :class:`AuthenticationFailed`
(error: stop, the request is refused).
"""

from attrs import frozen
from twisted.cred.credentials import ICredentials
from zope.interface import implementer

UNAUTHENTICATED = "unauthenticated"
PERMISSION_DENIED = "permission_denied"
AUTHENTICATION_REQUIRED = "authentication is required"
SCOPED_ROUTE_DENIED = "scoped authorization is not yet enabled for this route"


class IBearerToken(ICredentials):
    """A bearer credential taken from ``Authorization: Bearer <token>``."""


@implementer(IBearerToken)
@frozen(repr=False)
class BearerToken:
    """The trimmed credential text of a bearer header; never shown in reprs or logs."""

    token: str

    def __repr__(self) -> str:
        return "<BearerToken (redacted)>"


class AuthenticationFailed(Exception):
    """A refused request: the HTTP status, error code and message of its JSON body.

    ``challenge`` says whether the OAuth ``resource_metadata`` challenge may be attached
    (missing or unrecognized credentials); ``reason`` is a short, secret-free word for logs.
    """

    def __init__(
        self,
        status: int = 401,
        code: str = UNAUTHENTICATED,
        message: str = AUTHENTICATION_REQUIRED,
        *,
        challenge: bool = False,
        reason: str = UNAUTHENTICATED,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.challenge = challenge
        self.reason = reason

    def __repr__(self) -> str:
        return (
            f"AuthenticationFailed(status={self.status}, code={self.code!r}, "
            f"challenge={self.challenge}, reason={self.reason!r})"
        )


def unauthenticated(reason: str, *, challenge: bool) -> AuthenticationFailed:
    """A 401 ``unauthenticated`` refusal."""
    return AuthenticationFailed(challenge=challenge, reason=reason)


def scoped_route_denied() -> AuthenticationFailed:
    """The 403 for a scoped caller on a route that is not tenant-filtered yet."""
    return AuthenticationFailed(
        403, PERMISSION_DENIED, SCOPED_ROUTE_DENIED, challenge=False, reason="scoped_route"
    )
