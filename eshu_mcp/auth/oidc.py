"""
The OIDC bearer resolver: a ``twisted.cred`` checker for JWTs issued by the providers in
the ``ESHU_AUTH_OIDC_CONFIG_FILE`` (format in :mod:`eshu_mcp.auth.oidc_config`), with
``ESHU_AUTH_RESOURCE_URI`` as the required audience.

A credential that is not JWT-shaped, or any credential when no provider is enabled, is no
match (the next resolver tries it).  A JWT that cannot be decoded or names an unknown
issuer is refused as *unrecognized* (the OAuth challenge may be attached).  A known issuer's
token that fails signature, expiry, not-before (5 minutes' leeway), audience or claim checks,
or that maps to no grant, is refused with a bare challenge.
"""

import hashlib
import json
import math
from collections.abc import Callable
from typing import Any

from twisted.cred.checkers import ICredentialsChecker
from twisted.cred.error import UnauthorizedLogin
from twisted.internet.defer import Deferred, DeferredList, fail, succeed
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger
from zope.interface import implementer

from eshu_mcp.auth.bearer_jwt import (
    MalformedToken,
    TokenRefused,
    UnverifiedToken,
    VerificationKey,
    decode_unverified,
    is_jwt_shaped,
    keys_from_jwks,
    verified_claims,
)
from eshu_mcp.auth.credentials import IBearerToken, unauthenticated
from eshu_mcp.auth.oidc_config import OidcConfig, OidcProvider
from eshu_mcp.auth.principal import SCOPED, Principal

log = Logger()

JWKS_TTL_SECONDS = 30.0
JWKS_FETCH_TIMEOUT_SECONDS = 10.0
JWKS_MAX_BYTES = 1 << 20
NOT_BEFORE_LEEWAY_SECONDS = 300.0
EXTERNAL_OIDC_USER = "external_oidc_user"

JsonFetcher = Callable[[str], Deferred]


class JwksUnavailable(Exception):
    """A provider's JWK Set could not be fetched or read."""


def http_fetcher(
    client: Any, clock: IReactorTime, timeout: float = JWKS_FETCH_TIMEOUT_SECONDS
) -> JsonFetcher:
    """A fetcher of JSON documents over a treq-style ``client`` (``treq``, ``StubTreq``...)."""

    async def fetch(uri: str) -> Any:
        response = await client.get(uri, headers={b"Accept": [b"application/json"]})
        body = await response.content()
        if response.code != 200:
            raise JwksUnavailable(f"HTTP {response.code}")
        if len(body) > JWKS_MAX_BYTES:
            raise JwksUnavailable("JWK Set too large")
        return json.loads(body)

    def start(uri: str) -> Deferred:
        return Deferred.fromCoroutine(fetch(uri)).addTimeout(timeout, clock)

    return start


class JwksCache:
    """A provider's keys fetched from its ``jwks_uri``, refreshed in the background after a TTL.

    The first use waits for the fetch; later uses get the cached keys at once, and a stale
    cache starts one refresh whose result the next caller sees.  A failed refresh keeps the
    previous keys for another TTL.  Concurrent callers share one fetch.
    """

    def __init__(
        self, uri: str, fetch: JsonFetcher, clock: IReactorTime, ttl: float = JWKS_TTL_SECONDS
    ) -> None:
        self._uri = uri
        self._fetch = fetch
        self._clock = clock
        self._ttl = ttl
        self._keys: tuple[VerificationKey, ...] | None = None
        self._fetched_at = 0.0
        self._waiters: list[Deferred] = []
        self._refreshing = False

    def keys(self) -> Deferred:
        """Fire with the provider's keys; fails with ``JwksUnavailable`` before a first fetch."""
        stale = self._clock.seconds() - self._fetched_at >= self._ttl
        if self._keys is not None:
            if stale:
                self._refresh()
            return succeed(self._keys)
        waiter = Deferred(lambda d: self._waiters.remove(d) if d in self._waiters else None)
        self._waiters.append(waiter)
        self._refresh()
        return waiter

    def _refresh(self) -> None:
        if self._refreshing:
            return
        self._refreshing = True
        self._fetch(self._uri).addCallback(keys_from_jwks).addCallbacks(self._fetched, self._failed)

    def _fetched(self, keys: tuple[VerificationKey, ...]) -> None:
        self._refreshing = False
        self._keys = keys
        self._fetched_at = self._clock.seconds()
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.callback(keys)

    def _failed(self, failure: Any) -> None:
        self._refreshing = False
        if self._keys is not None:
            self._fetched_at = self._clock.seconds()
        log.warn(
            "oidc jwks fetch failed for {jwks_uri}: {error}",
            jwks_uri=self._uri,
            error=failure.getErrorMessage(),
        )
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.errback(JwksUnavailable(failure.getErrorMessage()))


def subject_hash(provider_id: str, subject: str) -> str:
    """``sha256:`` + hex(SHA-256(``<provider_id>:<sub>``)), the OIDC principal's subject."""
    return "sha256:" + hashlib.sha256(f"{provider_id}:{subject}".encode()).hexdigest()


def _number(claims: dict[str, Any], name: str) -> float | None:
    """A numeric time claim; None when absent, not a number, or not finite (NaN, infinity)."""
    value = claims.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _groups(claims: dict[str, Any], claim: str) -> tuple[str, ...] | None:
    """The groups claim as strings; () when absent, None when it has the wrong shape."""
    value = claims.get(claim)
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def active_providers(config: OidcConfig) -> dict[str, OidcProvider]:
    """Enabled providers by issuer, leaving out any issuer two enabled providers claim."""
    claimed: dict[str, list[OidcProvider]] = {}
    for provider in config.providers:
        if provider.enabled:
            claimed.setdefault(provider.issuer, []).append(provider)
    active = {}
    for issuer, providers in claimed.items():
        if len(providers) == 1:
            active[issuer] = providers[0]
        else:
            log.warn(
                "oidc issuer {issuer} is claimed by {count} providers and is excluded",
                issuer=issuer,
                count=len(providers),
            )
    return active


@implementer(ICredentialsChecker)
class OidcBearerChecker:
    """Resolve JWT bearer credentials issued by configured OIDC providers to principals."""

    credentialInterfaces = (IBearerToken,)

    def __init__(
        self,
        config: OidcConfig,
        resource_uri: str,
        *,
        clock: IReactorTime,
        fetch: JsonFetcher | None = None,
    ) -> None:
        self._config = config
        self._resource_uri = resource_uri
        self._clock = clock
        self._providers = active_providers(config)
        self._caches: dict[str, JwksCache] = {}
        for provider in self._providers.values():
            if provider.inline_keys is None:
                if fetch is None:
                    raise ValueError(f"provider {provider.id!r} needs a JWKS fetcher")
                self._caches[provider.id] = JwksCache(provider.jwks_uri, fetch, clock)

    def prefetch(self) -> Deferred:
        """Start fetching every URI provider's keys, so the first token need not wait.

        Fires with None once every fetch has answered; failures are logged, never raised.
        """
        fetches = [cache.keys() for cache in self._caches.values()]
        return DeferredList(fetches, consumeErrors=True).addCallback(lambda _: None)

    def active_issuers(self) -> tuple[str, ...]:
        """Issuers whose tokens this checker can verify, in file order."""
        return tuple(self._providers)

    def requestAvatarId(self, credentials: IBearerToken) -> Deferred:
        """Fire with a scoped principal, fail with ``UnauthorizedLogin`` (not a JWT for us)
        or with ``AuthenticationFailed`` (a JWT that must be refused)."""
        credential = credentials.token
        if not self._providers or not is_jwt_shaped(credential):
            return fail(UnauthorizedLogin())
        try:
            token = decode_unverified(credential)
        except MalformedToken:
            return fail(unauthenticated("unrecognized", challenge=True))
        issuer = token.claims.get("iss")
        provider = self._providers.get(issuer) if isinstance(issuer, str) else None
        if provider is None:
            return fail(unauthenticated("unrecognized", challenge=True))
        return self._keys_for(provider).addCallback(self._verified, token, provider)

    def _keys_for(self, provider: OidcProvider) -> Deferred:
        if provider.inline_keys is not None:
            return succeed(provider.inline_keys)

        def unavailable(failure: Any) -> Any:
            failure.trap(JwksUnavailable)
            raise unauthenticated("jwks_unavailable", challenge=False)

        return self._caches[provider.id].keys().addErrback(unavailable)

    def _verified(
        self, keys: tuple[VerificationKey, ...], token: UnverifiedToken, provider: OidcProvider
    ) -> Principal:
        try:
            claims = verified_claims(
                token, keys, audience=self._resource_uri, issuer=provider.issuer
            )
        except TokenRefused as refusal:
            raise unauthenticated(refusal.reason, challenge=False) from None
        now = self._clock.seconds()
        expires = _number(claims, "exp")
        if expires is None or now > expires:
            raise unauthenticated("expired", challenge=False)
        if "nbf" in claims:
            not_before = _number(claims, "nbf")
            if not_before is None or now + NOT_BEFORE_LEEWAY_SECONDS < not_before:
                raise unauthenticated("not_yet_valid", challenge=False)
        subject = claims.get("sub")
        groups = _groups(claims, provider.groups_claim)
        if not isinstance(subject, str) or not subject.strip() or groups is None:
            raise unauthenticated("malformed_claims", challenge=False)
        return self._principal(provider, subject.strip(), groups)

    def _principal(
        self, provider: OidcProvider, subject: str, groups: tuple[str, ...]
    ) -> Principal:
        members = set(groups)
        grants = [
            grant
            for grant in self._config.grants
            if grant.provider == provider.id and grant.group in members and grant.roles
        ]
        if not grants:
            raise unauthenticated("no_grants", challenge=False)
        return Principal(
            mode=SCOPED,
            tenant_id=provider.tenant_id,
            workspace_id=provider.workspace_id,
            subject_class=EXTERNAL_OIDC_USER,
            subject_id_hash=subject_hash(provider.id, subject),
            all_scopes=any(grant.all_scopes for grant in grants),
            allowed_repository_ids=[
                repo for grant in grants for repo in grant.allowed_repository_ids
            ],
            allowed_scope_ids=[scope for grant in grants for scope in grant.allowed_scope_ids],
        )
