"""
Bearer JWTs signed with RS256 or ES256, parsed and verified by PyJWT.

The OIDC resolver decides *which* keys and claims to trust; every byte of the token and of
the JWK Set is read by PyJWT (with its ``cryptography`` backend).  This module only chooses:
RS256 and ES256 (P-256) keys, the token's ``kid`` when it names one, no ``none``, HMAC or
other algorithm, and no critical header extensions.  Expiry and not-before are checked by
the caller against its own clock (PyJWT reads the wall clock, which tests cannot move).
"""

import re
from typing import Any

import jwt
from attrs import frozen
from jwt.exceptions import (
    InvalidAudienceError,
    InvalidIssuerError,
    InvalidTokenError,
    MissingRequiredClaimError,
    PyJWTError,
)

SUPPORTED_ALGORITHMS = ("RS256", "ES256")
_BASE64URL_SEGMENTS = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
_KEY_TYPES = {"RS256": ("RSA", None), "ES256": ("EC", "P-256")}
# Signature and audience/issuer only: time claims are the caller's, on its clock.
_CLAIM_OPTIONS = {"verify_exp": False, "verify_nbf": False, "verify_iat": False}


class MalformedToken(ValueError):
    """The credential is JWT-shaped but its header or payload cannot be decoded."""


class InvalidKeySet(ValueError):
    """A JWK Set cannot be read."""


class TokenRefused(ValueError):
    """A decodable token that does not verify; ``reason`` is a short word for logs."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@frozen(repr=False)
class UnverifiedToken:
    """A decoded but not yet verified token (the compact form is kept for verification)."""

    header: dict[str, Any]
    claims: dict[str, Any]
    compact: str

    def __repr__(self) -> str:
        return "<UnverifiedToken (redacted)>"


@frozen
class VerificationKey:
    """One public key from a JWK Set, with the algorithm it verifies."""

    key_id: str
    algorithm: str
    public_key: Any


def is_jwt_shaped(credential: str) -> bool:
    """Exactly three non-empty dot-separated segments."""
    parts = credential.split(".")
    return len(parts) == 3 and all(parts)


def decode_unverified(credential: str) -> UnverifiedToken:
    """Decode a compact JWT without checking anything; ``MalformedToken`` if it is not one."""
    if not _BASE64URL_SEGMENTS.fullmatch(credential):
        raise MalformedToken("not three unpadded base64url segments")
    try:
        decoded = jwt.api_jwt.decode_complete(credential, options={"verify_signature": False})
    except InvalidTokenError as error:
        raise MalformedToken(str(error)) from error
    return UnverifiedToken(decoded["header"], decoded["payload"], credential)


def _wanted(jwk: dict[str, Any]) -> str | None:
    """The algorithm a JWK will verify for us, or None to skip it."""
    if jwk.get("use", "sig") != "sig":
        return None
    for algorithm, (kty, curve) in _KEY_TYPES.items():
        if (
            jwk.get("kty") == kty
            and jwk.get("alg") in (None, algorithm)
            and (curve is None or jwk.get("crv") == curve)
        ):
            return algorithm
    return None


def keys_from_jwks(document: Any) -> tuple[VerificationKey, ...]:
    """The RS256 and ES256 signing keys of a JWK Set (``{"keys": [...]}``); others skipped."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise InvalidKeySet('a JWK Set must be an object with a "keys" list')
    keys = []
    for jwk in document["keys"]:
        if not isinstance(jwk, dict):
            raise InvalidKeySet("every JWK must be an object")
        algorithm = _wanted(jwk)
        if algorithm is None:
            continue
        try:
            parsed = jwt.PyJWK(jwk, algorithm)
        except (PyJWTError, ValueError, TypeError) as error:
            raise InvalidKeySet(f"unusable {algorithm} key: {error}") from error
        key_id = jwk.get("kid")
        keys.append(
            VerificationKey(key_id if isinstance(key_id, str) else "", algorithm, parsed.key)
        )
    return tuple(keys)


def candidate_keys(
    token: UnverifiedToken, keys: tuple[VerificationKey, ...]
) -> tuple[VerificationKey, ...]:
    """The keys that may have signed ``token``: same algorithm, and same ``kid`` if it has one.

    A token with critical header extensions (``crit``) is never accepted: none are understood.
    """
    algorithm = token.header.get("alg")
    if algorithm not in SUPPORTED_ALGORITHMS or "crit" in token.header:
        return ()
    key_id = token.header.get("kid")
    return tuple(
        key
        for key in keys
        if key.algorithm == algorithm and (not isinstance(key_id, str) or key.key_id == key_id)
    )


def verified_claims(
    token: UnverifiedToken,
    keys: tuple[VerificationKey, ...],
    *,
    audience: str | None = None,
    issuer: str | None = None,
) -> dict[str, Any]:
    """
    The token's claims once one of ``keys`` verifies its signature and, when given, its
    ``aud`` contains ``audience`` and its ``iss`` is ``issuer``.

    Raises :class:`TokenRefused` with ``bad_signature``, ``wrong_audience`` or ``wrong_issuer``.
    """
    options = {**_CLAIM_OPTIONS, "verify_aud": audience is not None}
    for key in candidate_keys(token, keys):
        # PyJWT checks the signature before the claims: a claim error means the key signed it.
        try:
            return jwt.decode(
                token.compact,
                key.public_key,
                algorithms=[key.algorithm],
                audience=audience,
                issuer=issuer,
                options=options,
            )
        except (InvalidAudienceError, MissingRequiredClaimError) as error:
            raise TokenRefused("wrong_audience") from error
        except InvalidIssuerError as error:
            raise TokenRefused("wrong_issuer") from error
        except InvalidTokenError:
            continue
    raise TokenRefused("bad_signature")


def verify_signature(token: UnverifiedToken, keys: tuple[VerificationKey, ...]) -> bool:
    """Whether one of ``keys`` verifies the token's signature under its declared algorithm."""
    try:
        verified_claims(token, keys)
    except TokenRefused:
        return False
    return True
