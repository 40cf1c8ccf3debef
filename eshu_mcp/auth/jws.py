"""
Compact JSON Web Tokens signed with RS256 or ES256, verified with ``cryptography``.

Only what the OIDC bearer resolver needs: split and decode a token without trusting it
(:func:`decode_unverified`), turn a JWK Set into public keys (:func:`keys_from_jwks`), and
check a signature (:func:`verify_signature`).  ``none``, HMAC and every other algorithm are
refused, so a token can never choose a weaker check than the provider's published keys.
"""

import base64
import binascii
import json
import re
from typing import Any

from attrs import frozen
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

SUPPORTED_ALGORITHMS = ("RS256", "ES256")
_ES256_SIGNATURE_BYTES = 64
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")


class MalformedToken(ValueError):
    """The credential is JWT-shaped but its header or payload cannot be decoded."""


class InvalidKeySet(ValueError):
    """A JWK Set cannot be read."""


@frozen(repr=False)
class UnverifiedToken:
    """A decoded but not yet verified token."""

    header: dict[str, Any]
    claims: dict[str, Any]
    signing_input: bytes
    signature: bytes

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


def b64url_decode(segment: str) -> bytes:
    """Decode unpadded base64url; ``ValueError`` on anything else."""
    if not _BASE64URL.fullmatch(segment):
        raise ValueError("not unpadded base64url")
    try:
        return base64.b64decode(segment + "=" * (-len(segment) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError) as error:
        raise ValueError("invalid base64url") from error


def _json_object(segment: str) -> dict[str, Any]:
    try:
        value = json.loads(b64url_decode(segment))
    except ValueError as error:
        raise MalformedToken("segment is not base64url JSON") from error
    if not isinstance(value, dict):
        raise MalformedToken("segment is not a JSON object")
    return value


def decode_unverified(credential: str) -> UnverifiedToken:
    """Split and decode a compact JWT without checking anything; ``MalformedToken`` if not."""
    if not is_jwt_shaped(credential):
        raise MalformedToken("not three dot-separated segments")
    header_part, claims_part, signature_part = credential.split(".")
    header = _json_object(header_part)
    claims = _json_object(claims_part)
    try:
        signature = b64url_decode(signature_part)
    except ValueError as error:
        raise MalformedToken("signature is not base64url") from error
    signing_input = f"{header_part}.{claims_part}".encode("ascii", "replace")
    return UnverifiedToken(header, claims, signing_input, signature)


def _b64_int(jwk: dict[str, Any], name: str) -> int:
    value = jwk.get(name)
    if not isinstance(value, str) or not value:
        raise InvalidKeySet(f"key member {name!r} is missing")
    try:
        return int.from_bytes(b64url_decode(value), "big")
    except ValueError as error:
        raise InvalidKeySet(f"key member {name!r} is not base64url") from error


def _key_from_jwk(jwk: dict[str, Any]) -> VerificationKey | None:
    """The key a JWK describes, or None for keys this module does not verify with."""
    if jwk.get("use", "sig") != "sig":
        return None
    kty = jwk.get("kty")
    algorithm = jwk.get("alg")
    key_id = jwk.get("kid", "")
    if not isinstance(key_id, str):
        key_id = ""
    if kty == "RSA" and algorithm in (None, "RS256"):
        public_key = rsa.RSAPublicNumbers(_b64_int(jwk, "e"), _b64_int(jwk, "n")).public_key()
        return VerificationKey(key_id, "RS256", public_key)
    if kty == "EC" and jwk.get("crv") == "P-256" and algorithm in (None, "ES256"):
        numbers = ec.EllipticCurvePublicNumbers(
            _b64_int(jwk, "x"), _b64_int(jwk, "y"), ec.SECP256R1()
        )
        try:
            public_key = numbers.public_key()
        except ValueError as error:
            raise InvalidKeySet("EC point is not on P-256") from error
        return VerificationKey(key_id, "ES256", public_key)
    return None


def keys_from_jwks(document: Any) -> tuple[VerificationKey, ...]:
    """The RS256 and ES256 signing keys of a JWK Set (``{"keys": [...]}``); others skipped."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise InvalidKeySet('a JWK Set must be an object with a "keys" list')
    keys = []
    for jwk in document["keys"]:
        if not isinstance(jwk, dict):
            raise InvalidKeySet("every JWK must be an object")
        key = _key_from_jwk(jwk)
        if key is not None:
            keys.append(key)
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


def _signature_holds(token: UnverifiedToken, key: VerificationKey) -> bool:
    try:
        if key.algorithm == "RS256":
            key.public_key.verify(
                token.signature, token.signing_input, padding.PKCS1v15(), hashes.SHA256()
            )
            return True
        if len(token.signature) != _ES256_SIGNATURE_BYTES:
            return False
        half = _ES256_SIGNATURE_BYTES // 2
        der = encode_dss_signature(
            int.from_bytes(token.signature[:half], "big"),
            int.from_bytes(token.signature[half:], "big"),
        )
        key.public_key.verify(der, token.signing_input, ec.ECDSA(hashes.SHA256()))
        return True
    except InvalidSignature:
        return False


def verify_signature(token: UnverifiedToken, keys: tuple[VerificationKey, ...]) -> bool:
    """Whether one of ``keys`` verifies the token's signature under its declared algorithm."""
    return any(_signature_holds(token, key) for key in candidate_keys(token, keys))
