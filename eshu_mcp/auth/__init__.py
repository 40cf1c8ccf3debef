"""
Bearer authentication for the HTTP transports and ``/api/v0``.

A :class:`CredentialPolicy` turns an ``Authorization`` header into a :class:`Principal`
(shared key, scoped-token file, OIDC JWT) or an :class:`AuthenticationFailed`; :func:`guard`
applies it to a Resource; :func:`protected_resource_metadata` serves RFC 9728 discovery.
stdio is never authenticated.
"""

from twisted.web.resource import IResource

from eshu_mcp.auth.credentials import AuthenticationFailed, BearerToken, IBearerToken
from eshu_mcp.auth.discovery import Discovery, ProtectedResourceMetadata, metadata_url
from eshu_mcp.auth.gate import allow_unauthenticated, announce_posture, startup_refusal
from eshu_mcp.auth.guard import guard, principal_of
from eshu_mcp.auth.peek import peek_mcp_method
from eshu_mcp.auth.policy import CredentialPolicy
from eshu_mcp.auth.principal import Principal, principal_key


def protected_resource_metadata(policy: CredentialPolicy) -> IResource | None:
    """The Resource to mount at ``/.well-known/oauth-protected-resource``, or None when
    discovery is off (no valid ``ESHU_AUTH_RESOURCE_URI``)."""
    if policy.discovery is None:
        return None
    return ProtectedResourceMetadata(policy.discovery)


__all__ = [
    "AuthenticationFailed",
    "BearerToken",
    "CredentialPolicy",
    "Discovery",
    "IBearerToken",
    "Principal",
    "allow_unauthenticated",
    "announce_posture",
    "guard",
    "metadata_url",
    "peek_mcp_method",
    "principal_key",
    "principal_of",
    "protected_resource_metadata",
    "startup_refusal",
]
