"""
The scoped-token registry (``ESHU_SCOPED_TOKENS_FILE``) and its credential checker.

The file maps the SHA-256 of each token to a tenant, workspace and read grants::

    {"version": 1,
     "tokens": [{"token_sha256": "<64 hex>", "tenant_id": "t", "workspace_id": "w",
                 "subject_class": "team_token", "subject_id_hash": "sha256:<8..64 hex>",
                 "policy_revision_hash": "sha256:<8..64 hex>", "all_scopes": false,
                 "allowed_scope_ids": ["..."], "allowed_repository_ids": ["..."]}]}

It is validated once at startup and fails closed: any problem is a ``ValueError`` whose
message names the file and the entry but never any hash material.  Unknown keys are ignored.
"""

import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from typing import Any

from attrs import frozen
from twisted.cred.checkers import ICredentialsChecker
from twisted.cred.error import UnauthorizedLogin
from twisted.internet.defer import Deferred, fail, succeed
from zope.interface import implementer

from eshu_mcp.auth.credentials import IBearerToken
from eshu_mcp.auth.principal import SCOPED, Principal

_TOKEN_HASH = re.compile(r"[0-9a-f]{64}")
_PREFIXED_HASH = re.compile(r"sha256:[0-9a-f]{8,64}")


@frozen
class ScopedToken:
    """One registry entry: the token's hash and the principal it stands for."""

    token_sha256: str
    principal: Principal
    policy_revision_hash: str = ""


def token_sha256(credential: str) -> str:
    """Lower-case hex SHA-256 of the trimmed credential, the registry's lookup key."""
    return hashlib.sha256(credential.strip().encode("utf-8")).hexdigest()


class _Invalid(ValueError):
    pass


def _string(entry: Mapping[str, Any], key: str, where: str) -> str:
    value = entry.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Invalid(f"{where}.{key} must be a string")
    return value


def _string_list(entry: Mapping[str, Any], key: str, where: str) -> list[str]:
    value = entry.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _Invalid(f"{where}.{key} must be a list of strings")
    return value


def _entry(raw: Any, where: str) -> ScopedToken:
    if not isinstance(raw, dict):
        raise _Invalid(f"{where} must be a JSON object")
    digest = _string(raw, "token_sha256", where).strip().lower()
    if not _TOKEN_HASH.fullmatch(digest):
        raise _Invalid(f"{where}.token_sha256 must be exactly 64 hexadecimal characters")
    tenant = _string(raw, "tenant_id", where).strip()
    workspace = _string(raw, "workspace_id", where).strip()
    if not tenant:
        raise _Invalid(f"{where}.tenant_id must not be empty")
    if not workspace:
        raise _Invalid(f"{where}.workspace_id must not be empty")
    hashes = {}
    for key in ("subject_id_hash", "policy_revision_hash"):
        value = _string(raw, key, where).strip()
        if value and not _PREFIXED_HASH.fullmatch(value):
            raise _Invalid(
                f"{where}.{key} must be 'sha256:' followed by 8 to 64 lowercase hex characters"
            )
        hashes[key] = value
    all_scopes = raw.get("all_scopes", False)
    if not isinstance(all_scopes, bool):
        raise _Invalid(f"{where}.all_scopes must be true or false")
    principal = Principal(
        mode=SCOPED,
        tenant_id=tenant,
        workspace_id=workspace,
        subject_class=_string(raw, "subject_class", where),
        subject_id_hash=hashes["subject_id_hash"],
        all_scopes=all_scopes,
        allowed_repository_ids=_string_list(raw, "allowed_repository_ids", where),
        allowed_scope_ids=_string_list(raw, "allowed_scope_ids", where),
    )
    return ScopedToken(digest, principal, hashes["policy_revision_hash"])


def parse_registry(document: Any) -> tuple[ScopedToken, ...]:
    """Validate a decoded registry document; raise ``ValueError`` naming the bad entry."""
    if not isinstance(document, dict):
        raise _Invalid("the top level must be a JSON object")
    version = document.get("version")
    if isinstance(version, bool) or version != 1:
        raise _Invalid('"version" must be 1')
    raw_tokens = document.get("tokens", [])
    if raw_tokens is None:
        raw_tokens = []
    if not isinstance(raw_tokens, list):
        raise _Invalid('"tokens" must be a list')
    entries: list[ScopedToken] = []
    first_seen: dict[str, int] = {}
    for index, raw in enumerate(raw_tokens):
        where = f"tokens[{index}]"
        entry = _entry(raw, where)
        if entry.token_sha256 in first_seen:
            raise _Invalid(
                f"{where}.token_sha256 repeats the hash of tokens[{first_seen[entry.token_sha256]}]"
            )
        first_seen[entry.token_sha256] = index
        entries.append(entry)
    return tuple(entries)


@implementer(ICredentialsChecker)
class ScopedTokenChecker:
    """Resolve bearer tokens listed (by hash) in the scoped-token registry."""

    credentialInterfaces = (IBearerToken,)

    def __init__(self, entries: tuple[ScopedToken, ...]) -> None:
        self._entries = entries

    @classmethod
    def from_file(cls, path: str) -> "ScopedTokenChecker":
        """Load and validate ``path``; ``ValueError`` with an actionable sentence if invalid."""
        try:
            with open(path, "rb") as handle:
                document = json.loads(handle.read())
        except OSError as error:
            raise ValueError(
                f"ESHU_SCOPED_TOKENS_FILE {path!r} cannot be read ({error.strerror or error}); "
                "fix the path or its permissions, or unset the variable"
            ) from None
        except ValueError as error:
            raise ValueError(
                f"ESHU_SCOPED_TOKENS_FILE {path!r} is not valid JSON (line {_line(error)}); "
                "fix the file or unset the variable"
            ) from None
        try:
            return cls(parse_registry(document))
        except _Invalid as error:
            raise ValueError(
                f"ESHU_SCOPED_TOKENS_FILE {path!r} is invalid: {error}; "
                "fix the entry or unset the variable"
            ) from None

    def __len__(self) -> int:
        return len(self._entries)

    def resolve(self, credential: str) -> Principal | None:
        """The principal for ``credential``, or None; compares every hash in constant time."""
        if not credential.strip():
            return None
        digest = token_sha256(credential).encode("ascii")
        found = None
        for entry in self._entries:
            if hmac.compare_digest(digest, entry.token_sha256.encode("ascii")):
                found = entry
        return None if found is None else found.principal

    def requestAvatarId(self, credentials: IBearerToken) -> Deferred:
        """Fire with the matching principal, or fail with ``UnauthorizedLogin`` (no match)."""
        principal = self.resolve(credentials.token)
        if principal is None:
            return fail(UnauthorizedLogin())
        return succeed(principal)


def _line(error: ValueError) -> object:
    return getattr(error, "lineno", "?")
