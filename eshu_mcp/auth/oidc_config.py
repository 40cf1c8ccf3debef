"""
The OIDC provider file (``ESHU_AUTH_OIDC_CONFIG_FILE``): who may issue bearer JWTs, and
which groups they carry grant which reads.

Format (JSON; unknown keys are ignored)::

    {
      "version": 1,
      "providers": [
        {
          "id": "corp-okta",
          "issuer": "https://login.example.com/oauth2/default",
          "tenant_id": "default",
          "workspace_id": "default",
          "groups_claim": "groups",
          "enabled": true,
          "jwks_uri": "https://login.example.com/oauth2/default/v1/keys"
        },
        {
          "id": "ci",
          "issuer": "https://ci.example.com",
          "tenant_id": "platform",
          "workspace_id": "ci",
          "jwks": {"keys": [{"kty": "EC", "crv": "P-256", "kid": "ci-1", "x": "...", "y": "..."}]}
        }
      ],
      "grants": [
        {"provider": "corp-okta", "group": "eshu-admins", "roles": ["admin"], "all_scopes": true},
        {"provider": "corp-okta", "group": "payments", "roles": ["reader"],
         "allowed_repository_ids": ["repo://acme/payments"],
         "allowed_scope_ids": ["git-repository-scope:acme/payments"]}
      ]
    }

Providers:

* ``id`` (required, unique) names the provider; the subject hash is
  ``sha256:`` + hex(SHA-256(``<id>:<sub>``)), so renaming a provider re-keys its users.
* ``issuer`` (required) must equal the token's ``iss`` exactly.  An issuer claimed by two
  enabled providers is ambiguous and neither provider is used.
* ``tenant_id`` / ``workspace_id`` default to ``default``; ``groups_claim`` to ``groups``;
  ``enabled`` to true.
* Exactly one of ``jwks`` (an inline JWK Set) or ``jwks_uri`` (``https``, or ``http`` on a
  loopback host) gives the signing keys.  Keys fetched from a URI are cached for 30 s and
  refreshed in the background.  RS256 and ES256 (P-256) keys are used; others are skipped.

Grants: a token's groups claim (a list of strings, or one string) is matched against
``group`` for its ``provider``.  A grant needs at least one role to count.  The principal
gets the union of the matching grants' repository and scope ids, and ``all_scopes`` if any
matching grant has it.  A token with no matching grant is refused (``no_grants``).

Every problem is a ``ValueError`` naming the file and the offending entry, raised at startup.
"""

import json
from typing import Any
from urllib.parse import urlsplit

from attrs import frozen

from eshu_mcp.auth.bearer_jwt import InvalidKeySet, VerificationKey, keys_from_jwks

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


@frozen
class OidcProvider:
    """One trusted token issuer."""

    id: str
    issuer: str
    tenant_id: str = "default"
    workspace_id: str = "default"
    groups_claim: str = "groups"
    enabled: bool = True
    inline_keys: tuple[VerificationKey, ...] | None = None
    jwks_uri: str = ""


@frozen
class GroupGrant:
    """Reads granted to members of one provider group."""

    provider: str
    group: str
    roles: tuple[str, ...]
    all_scopes: bool = False
    allowed_repository_ids: tuple[str, ...] = ()
    allowed_scope_ids: tuple[str, ...] = ()


@frozen
class OidcConfig:
    """The parsed provider file."""

    providers: tuple[OidcProvider, ...] = ()
    grants: tuple[GroupGrant, ...] = ()


class _Invalid(ValueError):
    pass


def _text(entry: dict[str, Any], key: str, where: str, default: str = "") -> str:
    value = entry.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise _Invalid(f"{where}.{key} must be a string")
    return value.strip() or default


def _texts(entry: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = entry.get(key, [])
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _Invalid(f"{where}.{key} must be a list of strings")
    return tuple(item.strip() for item in value if item.strip())


def _flag(entry: dict[str, Any], key: str, where: str, default: bool) -> bool:
    value = entry.get(key, default)
    if not isinstance(value, bool):
        raise _Invalid(f"{where}.{key} must be true or false")
    return value


def _jwks_uri(value: str, where: str) -> str:
    parts = urlsplit(value)
    host = (parts.hostname or "").lower()
    if parts.scheme == "https" and host:
        return value
    if parts.scheme == "http" and host in LOOPBACK_HOSTS:
        return value
    raise _Invalid(f"{where}.jwks_uri must be an https URL (or http on a loopback host)")


def _provider(raw: Any, where: str) -> OidcProvider:
    if not isinstance(raw, dict):
        raise _Invalid(f"{where} must be a JSON object")
    provider_id = _text(raw, "id", where)
    issuer = _text(raw, "issuer", where)
    if not provider_id:
        raise _Invalid(f"{where}.id must not be empty")
    if not issuer:
        raise _Invalid(f"{where}.issuer must not be empty")
    uri = _text(raw, "jwks_uri", where)
    inline = raw.get("jwks")
    if (inline is None) == (not uri):
        raise _Invalid(f"{where} must have exactly one of jwks or jwks_uri")
    keys = None
    if inline is not None:
        try:
            keys = keys_from_jwks(inline)
        except InvalidKeySet as error:
            raise _Invalid(f"{where}.jwks is not a usable JWK Set: {error}") from None
    return OidcProvider(
        id=provider_id,
        issuer=issuer,
        tenant_id=_text(raw, "tenant_id", where, "default"),
        workspace_id=_text(raw, "workspace_id", where, "default"),
        groups_claim=_text(raw, "groups_claim", where, "groups"),
        enabled=_flag(raw, "enabled", where, True),
        inline_keys=keys,
        jwks_uri=_jwks_uri(uri, where) if uri else "",
    )


def _grant(raw: Any, where: str, provider_ids: set[str]) -> GroupGrant:
    if not isinstance(raw, dict):
        raise _Invalid(f"{where} must be a JSON object")
    provider = _text(raw, "provider", where)
    group = _text(raw, "group", where)
    if provider not in provider_ids:
        raise _Invalid(f"{where}.provider must name a provider id from this file")
    if not group:
        raise _Invalid(f"{where}.group must not be empty")
    return GroupGrant(
        provider=provider,
        group=group,
        roles=_texts(raw, "roles", where),
        all_scopes=_flag(raw, "all_scopes", where, False),
        allowed_repository_ids=_texts(raw, "allowed_repository_ids", where),
        allowed_scope_ids=_texts(raw, "allowed_scope_ids", where),
    )


def _list(document: dict[str, Any], key: str) -> list[Any]:
    value = document.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Invalid(f'"{key}" must be a list')
    return value


def parse_oidc_config(document: Any) -> OidcConfig:
    """Validate a decoded provider file; ``ValueError`` naming the bad entry."""
    if not isinstance(document, dict):
        raise _Invalid("the top level must be a JSON object")
    version = document.get("version", 1)
    if isinstance(version, bool) or version != 1:
        raise _Invalid('"version" must be 1')
    providers = []
    for index, raw in enumerate(_list(document, "providers")):
        provider = _provider(raw, f"providers[{index}]")
        if any(existing.id == provider.id for existing in providers):
            raise _Invalid(f"providers[{index}].id repeats an earlier provider id")
        providers.append(provider)
    ids = {provider.id for provider in providers}
    grants = tuple(
        _grant(raw, f"grants[{index}]", ids) for index, raw in enumerate(_list(document, "grants"))
    )
    return OidcConfig(tuple(providers), grants)


def load_oidc_config(path: str) -> OidcConfig:
    """Read and validate ``path``; ``ValueError`` with a sentence a person can act on."""
    try:
        with open(path, "rb") as handle:
            document = json.loads(handle.read())
    except OSError as error:
        raise ValueError(
            f"ESHU_AUTH_OIDC_CONFIG_FILE {path!r} cannot be read ({error.strerror or error}); "
            "fix the path or its permissions, or unset the variable"
        ) from None
    except ValueError:
        raise ValueError(
            f"ESHU_AUTH_OIDC_CONFIG_FILE {path!r} is not valid JSON; fix the file"
        ) from None
    try:
        return parse_oidc_config(document)
    except _Invalid as error:
        raise ValueError(
            f"ESHU_AUTH_OIDC_CONFIG_FILE {path!r} is invalid: {error}; fix the entry"
        ) from None
