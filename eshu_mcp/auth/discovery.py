"""
OAuth protected-resource discovery (RFC 9728) for ``ESHU_AUTH_RESOURCE_URI``.

When the resource URI is a valid https (or loopback-http) URL without query or fragment and
at least one OIDC issuer is active, the daemon serves its metadata document at
``/.well-known/oauth-protected-resource[/<resource path>]`` and points 401 challenges at it.
Otherwise nothing is served and challenges stay bare, so a client is never sent to a 404.

The reference server gates on three facts: a resource, a login provider for the ``default``
tenant, and an active bearer issuer.  Here the OIDC provider file is the only source of
both providers and issuers, so the last two gates are one: at least one active issuer.
"""

import re
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from attrs import frozen
from twisted.logger import Logger
from twisted.web.resource import Resource
from twisted.web.server import Request

from eshu_mcp.encoding import dumpb

log = Logger()

WELL_KNOWN = "/.well-known/oauth-protected-resource"
CHALLENGE_SCOPES = ("openid", "profile", "email", "groups")
RESOURCE_NAME = "Eshu MCP Server"
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
_CONTROL = re.compile(r'["\x00-\x1f\x7f]')


def metadata_url(resource_uri: str) -> str | None:
    """The metadata URL for a valid resource URI, or None when discovery must stay off.

    ``https://h/mcp`` gives ``https://h/.well-known/oauth-protected-resource/mcp``.
    """
    resource = resource_uri.strip()
    if not resource or _CONTROL.search(resource):
        return None
    try:
        parts = urlsplit(resource)
        host = (parts.hostname or "").lower()
        netloc = parts.netloc
        parts.port  # noqa: B018 -- raises ValueError for a malformed port
    except ValueError:
        return None
    if not host or parts.query or parts.fragment or "?" in resource or "#" in resource:
        return None
    if _CONTROL.search(unquote(netloc)) or _CONTROL.search(unquote(parts.path)):
        return None
    if parts.scheme == "https" or (parts.scheme == "http" and host in LOOPBACK_HOSTS):
        path = parts.path.strip("/")
        return f"{parts.scheme}://{netloc}{WELL_KNOWN}" + (f"/{path}" if path else "")
    return None


@frozen
class Discovery:
    """The discovery posture: the resource, where its metadata lives, and what it says."""

    resource: str
    metadata_url: str
    issuers: Callable[[], tuple[str, ...]]
    documentation: str = ""
    preregistered_client_id: str = ""

    @property
    def resource_path(self) -> str:
        """The resource's path trimmed of slashes: the well-known suffix that is served."""
        return urlsplit(self.resource).path.strip("/")

    def active(self) -> bool:
        """The three gates of the document and the challenge: resource, provider, issuer."""
        return bool(self.resource) and bool(self.issuers())

    def challenge(self) -> str:
        """The augmented ``WWW-Authenticate`` value pointing at the metadata document."""
        value = f'Bearer resource_metadata="{self.metadata_url}"'
        scope = " ".join(CHALLENGE_SCOPES)
        if scope:
            value += f', scope="{scope}"'
        return value

    def document(self) -> dict[str, object]:
        """The RFC 9728 metadata, keys in the published order."""
        body: dict[str, object] = {
            "resource": self.resource,
            "authorization_servers": list(self.issuers()),
            "bearer_methods_supported": ["header"],
            "scopes_supported": list(CHALLENGE_SCOPES),
            "resource_name": RESOURCE_NAME,
        }
        if self.documentation:
            body["resource_documentation"] = self.documentation
        if self.preregistered_client_id:
            body["eshu_preregistered_client_id"] = self.preregistered_client_id
        return body


def build_discovery(
    resource_uri: str,
    issuers: Callable[[], tuple[str, ...]],
    *,
    documentation: str = "",
    preregistered_client_id: str = "",
) -> Discovery | None:
    """The posture for ``resource_uri``, logging whether discovery is on; None when it is off."""
    if not resource_uri.strip():
        return None
    url = metadata_url(resource_uri)
    if url is None:
        log.warn(
            "oauth discovery disabled: ESHU_AUTH_RESOURCE_URI is not a valid https (or "
            "loopback-http) URL without query/fragment; bearer aud validation still enforced",
            event_name="runtime.startup.warning",
        )
        return None
    resource = resource_uri.strip()
    log.info(
        "oauth discovery enabled",
        resource=resource,
        metadata_url=url,
        event_name="runtime.startup",
    )
    return Discovery(resource, url, issuers, documentation.strip(), preregistered_client_id.strip())


_NOT_FOUND = b"404 page not found\n"
_POSTURE_FAILED = b'{"detail":"failed to derive auth posture","error":"Internal Server Error"}\n'


class ProtectedResourceMetadata(Resource):
    """``GET /.well-known/oauth-protected-resource[/<resource path>]``; mount it at the
    well-known segment.  Unauthenticated; 404 for other suffixes or while no issuer is active.
    """

    isLeaf = True

    def __init__(self, discovery: Discovery) -> None:
        super().__init__()
        self._discovery = discovery

    def render_GET(self, request: Request) -> bytes:
        suffix = b"/".join(request.postpath).decode("utf-8", "replace")
        if request.postpath and suffix != self._discovery.resource_path:
            return self._not_found(request)
        try:
            active = self._discovery.active()
        except Exception:
            log.failure("deriving the oauth discovery posture failed")
            request.setResponseCode(500)
            request.setHeader(b"content-type", b"application/json; charset=utf-8")
            return _POSTURE_FAILED
        if not active:
            return self._not_found(request)
        request.setHeader(b"cache-control", b"public, max-age=60")
        request.setHeader(b"content-type", b"application/json; charset=utf-8")
        return dumpb(self._discovery.document(), escape_html=False) + b"\n"

    @staticmethod
    def _not_found(request: Request) -> bytes:
        request.setResponseCode(404)
        request.setHeader(b"content-type", b"text/plain; charset=utf-8")
        request.setHeader(b"x-content-type-options", b"nosniff")
        return _NOT_FOUND
