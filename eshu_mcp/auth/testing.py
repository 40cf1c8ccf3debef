"""
Test doubles for code that consumes bearer JWTs: an in-memory token issuer.

:class:`TokenIssuer` owns a freshly generated RS256 or ES256 key, publishes it as a JWK Set,
and mints signed compact JWTs, so tests can exercise the OIDC resolver without an identity
provider.  Nothing in the daemon imports this module.
"""

import base64
import json
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature


def b64url(data: bytes) -> str:
    """Unpadded base64url, as JOSE writes it."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _int_bytes(value: int, length: int | None = None) -> bytes:
    length = length or (value.bit_length() + 7) // 8
    return value.to_bytes(length, "big")


class TokenIssuer:
    """An issuer with one signing key; ``algorithm`` is ``RS256`` or ``ES256``."""

    def __init__(self, issuer: str, *, algorithm: str = "RS256", key_id: str = "key-1") -> None:
        self.issuer = issuer
        self.algorithm = algorithm
        self.key_id = key_id
        if algorithm == "RS256":
            self._key: Any = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        elif algorithm == "ES256":
            self._key = ec.generate_private_key(ec.SECP256R1())
        else:
            raise ValueError(f"unsupported algorithm {algorithm}")

    def jwk(self) -> dict[str, str]:
        """The public key as a JWK."""
        numbers = self._key.public_key().public_numbers()
        if self.algorithm == "RS256":
            return {
                "kty": "RSA",
                "kid": self.key_id,
                "alg": "RS256",
                "use": "sig",
                "n": b64url(_int_bytes(numbers.n)),
                "e": b64url(_int_bytes(numbers.e)),
            }
        return {
            "kty": "EC",
            "kid": self.key_id,
            "crv": "P-256",
            "x": b64url(_int_bytes(numbers.x, 32)),
            "y": b64url(_int_bytes(numbers.y, 32)),
        }

    def jwks(self) -> dict[str, list[dict[str, str]]]:
        """The JWK Set a provider would publish."""
        return {"keys": [self.jwk()]}

    def sign(self, signing_input: bytes) -> bytes:
        """The raw JWS signature over ``signing_input``."""
        if self.algorithm == "RS256":
            return self._key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
        r, s = decode_dss_signature(self._key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        return _int_bytes(r, 32) + _int_bytes(s, 32)

    def mint(self, claims: dict[str, Any], *, header: dict[str, Any] | None = None) -> str:
        """
        A signed compact JWT; ``iss`` defaults to this issuer, ``header`` overrides fields
        (a None value leaves the field out).
        """
        fields = {"alg": self.algorithm, "typ": "JWT", "kid": self.key_id, **(header or {})}
        fields = {name: value for name, value in fields.items() if value is not None}
        body = {"iss": self.issuer, **claims}
        signing_input = (
            b64url(json.dumps(fields).encode()) + "." + b64url(json.dumps(body).encode())
        )
        return signing_input + "." + b64url(self.sign(signing_input.encode("ascii")))
