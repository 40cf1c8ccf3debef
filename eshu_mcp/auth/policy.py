"""
The credential policy: how an ``Authorization`` header becomes a principal or a refusal.

One policy guards ``/api/v0/*``, ``/sse``, ``/mcp/message`` and ``/mcp`` alike.  Resolvers
run in order (OIDC bearer when ``ESHU_AUTH_RESOURCE_URI`` is set, then the scoped-token file);
the shared ``ESHU_API_KEY`` is compared, in constant time, only after every resolver said
"not mine".  Enforcement is on as soon as any of the three credential sources is configured.
"""

import hmac
import time
from collections.abc import Mapping
from typing import Any

from attrs import define, field
from twisted.cred.checkers import ICredentialsChecker
from twisted.cred.error import UnauthorizedLogin
from twisted.internet.defer import CancelledError, Deferred, DeferredList, fail, succeed
from twisted.logger import Logger

from eshu_mcp.auth.apikey import resolve_api_key
from eshu_mcp.auth.credentials import (
    AuthenticationFailed,
    BearerToken,
    unauthenticated,
)
from eshu_mcp.auth.discovery import Discovery, build_discovery
from eshu_mcp.auth.oidc import OidcBearerChecker, http_fetcher
from eshu_mcp.auth.oidc_config import OidcConfig, load_oidc_config
from eshu_mcp.auth.principal import SHARED_PRINCIPAL, Principal
from eshu_mcp.auth.scoped import ScopedTokenChecker

log = Logger()

_HTTP_WHITESPACE = " \t\r\n\v\f"


class _WallClock:
    """``IReactorTime.seconds`` for token expiry checks when no reactor is given."""

    def seconds(self) -> float:
        return time.time()


def _option(value: str | None, environ: Mapping[str, str], name: str) -> str:
    return (value if value is not None else environ.get(name, "")).strip()


def _reactor_fetcher(reactor: Any) -> Any:
    """A JWKS fetcher over treq on ``reactor`` (the global one, imported only when used)."""
    state: dict[str, Any] = {}

    def fetch(uri: str) -> Deferred:
        if "fetch" not in state:
            from treq.client import HTTPClient
            from twisted.web.client import Agent, HTTPConnectionPool

            running = reactor
            if running is None:
                from twisted.internet import reactor as running
            client = HTTPClient(Agent(running, pool=HTTPConnectionPool(running)))
            state["fetch"] = http_fetcher(client, running)
        return state["fetch"](uri)

    return fetch


@define
class CredentialPolicy:
    """Who may call the HTTP transports and the query API, and how that is decided."""

    shared_key: str = field(default="", repr=False)
    checkers: tuple[ICredentialsChecker, ...] = ()
    scoped_tokens_file: str = ""
    resource_uri: str = ""
    discovery: Discovery | None = None

    @classmethod
    def from_environment(
        cls,
        environ: Mapping[str, str],
        *,
        api_key: str | None = None,
        scoped_tokens_file: str | None = None,
        resource_uri: str | None = None,
        oidc_config_file: str | None = None,
        reactor: Any = None,
    ) -> "CredentialPolicy":
        """Build the policy from Eshu's variables, options (when not None) winning.

        Raises ``ValueError`` with an actionable sentence when the scoped-token file or the
        OIDC provider file is unreadable or invalid: auth configuration fails closed.
        """
        key = api_key.strip() if api_key is not None else resolve_api_key(environ)
        scoped_path = _option(scoped_tokens_file, environ, "ESHU_SCOPED_TOKENS_FILE")
        resource = _option(resource_uri, environ, "ESHU_AUTH_RESOURCE_URI")
        oidc_path = _option(oidc_config_file, environ, "ESHU_AUTH_OIDC_CONFIG_FILE")
        checkers: list[ICredentialsChecker] = []
        discovery = None
        if resource:
            config = load_oidc_config(oidc_path) if oidc_path else OidcConfig()
            needs_fetch = any(p.inline_keys is None for p in config.providers)
            oidc = OidcBearerChecker(
                config,
                resource,
                clock=reactor if reactor is not None else _WallClock(),
                fetch=_reactor_fetcher(reactor) if needs_fetch else None,
            )
            checkers.append(oidc)
            discovery = build_discovery(
                resource,
                oidc.active_issuers,
                documentation=environ.get("ESHU_AUTH_RESOURCE_DOCUMENTATION", ""),
                preregistered_client_id=environ.get("ESHU_AUTH_PREREGISTERED_CLIENT_ID", ""),
            )
        elif oidc_path:
            log.warn(
                "ESHU_AUTH_OIDC_CONFIG_FILE is set without ESHU_AUTH_RESOURCE_URI; "
                "OIDC bearer tokens are not accepted"
            )
        if scoped_path:
            checkers.append(ScopedTokenChecker.from_file(scoped_path))
        return cls(key, tuple(checkers), scoped_path, resource, discovery)

    def prefetch_keys(self) -> Deferred:
        """Warm the OIDC providers' key caches at startup; fires when done, never fails."""
        fetches = [c.prefetch() for c in self.checkers if isinstance(c, OidcBearerChecker)]
        return DeferredList(fetches).addCallback(lambda _: None)

    @property
    def enforced(self) -> bool:
        """Whether headerless requests are refused: any credential source is configured."""
        return bool(self.shared_key or self.scoped_tokens_file or self.resource_uri)

    def challenge(self, failure: AuthenticationFailed) -> str:
        """The ``WWW-Authenticate`` value for a refusal."""
        if failure.status == 403:
            value = 'Bearer error="insufficient_scope"'
            if self.discovery is not None and self.discovery.active():
                value += f', resource_metadata="{self.discovery.metadata_url}"'
            return value
        if failure.challenge and self.discovery is not None and self.discovery.active():
            return self.discovery.challenge()
        return "Bearer"

    def authenticate(self, authorization: bytes | None) -> Deferred:
        """Fire with the caller's principal, or None for a headerless request while
        enforcement is off; fail with :class:`AuthenticationFailed` otherwise."""
        header = (authorization or b"").decode("latin-1").strip(_HTTP_WHITESPACE)
        if not header:
            if self.enforced:
                return fail(unauthenticated("missing_credential", challenge=True))
            return succeed(None)
        scheme, space, credentials = header.partition(" ")
        if not space or scheme.strip(_HTTP_WHITESPACE).lower() != "bearer":
            return fail(unauthenticated("not_bearer", challenge=True))
        credential = credentials.strip(_HTTP_WHITESPACE)
        if not credential:
            return fail(unauthenticated("empty_credential", challenge=True))
        return Deferred.fromCoroutine(self._resolve(credential))

    async def _resolve(self, credential: str) -> Principal:
        token = BearerToken(credential)
        for checker in self.checkers:
            try:
                principal = await checker.requestAvatarId(token)
            except UnauthorizedLogin:
                continue
            except (AuthenticationFailed, CancelledError):
                raise
            except Exception:
                log.failure(
                    "credential resolver {resolver} failed", resolver=type(checker).__name__
                )
                raise unauthenticated("resolver_error", challenge=False) from None
            return principal
        if self.shared_key and hmac.compare_digest(
            credential.encode("utf-8"), self.shared_key.encode("utf-8")
        ):
            return SHARED_PRINCIPAL
        raise unauthenticated("unrecognized", challenge=True)
