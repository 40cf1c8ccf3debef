"""Bearer JWTs through PyJWT: decoding, JWK Sets, RS256/ES256 signatures, audience and issuer."""

import json

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.auth.bearer_jwt import (
    InvalidKeySet,
    MalformedToken,
    TokenRefused,
    decode_unverified,
    is_jwt_shaped,
    keys_from_jwks,
    verified_claims,
    verify_signature,
)
from eshu_mcp.auth.testing import TokenIssuer, b64url

RSA_ISSUER = TokenIssuer("https://idp.example", algorithm="RS256", key_id="rsa-1")
EC_ISSUER = TokenIssuer("https://idp.example", algorithm="ES256", key_id="ec-1")


class ShapeTests(SynchronousTestCase):
    def test_three_non_empty_segments_are_jwt_shaped(self) -> None:
        self.assertTrue(is_jwt_shaped("a.b.c"))
        for credential in ("a.b", "a.b.c.d", "a..c", ".b.c", "opaque-token", ""):
            self.assertFalse(is_jwt_shaped(credential), credential)

    def test_undecodable_segments_are_malformed(self) -> None:
        for credential in ("a.b.c", b64url(b"[1]") + ".e30.c2ln", "e30.e30=.c2ln", "e30.e30.*"):
            with self.assertRaises(MalformedToken):
                decode_unverified(credential)

    def test_decoding_exposes_header_and_claims_without_trusting_them(self) -> None:
        token = decode_unverified(RSA_ISSUER.mint({"sub": "alice"}))
        self.assertEqual(token.header["kid"], "rsa-1")
        self.assertEqual(token.claims, {"iss": "https://idp.example", "sub": "alice"})
        self.assertNotIn("alice", repr(token))


class KeySetTests(SynchronousTestCase):
    def test_rsa_and_p256_keys_are_read_and_others_skipped(self) -> None:
        document = {
            "keys": [
                RSA_ISSUER.jwk(),
                EC_ISSUER.jwk(),
                {"kty": "oct", "k": "c2VjcmV0"},
                {**RSA_ISSUER.jwk(), "use": "enc"},
                {"kty": "EC", "crv": "P-384", "x": "AA", "y": "AA"},
            ]
        }
        keys = keys_from_jwks(document)
        self.assertEqual(
            [(k.key_id, k.algorithm) for k in keys], [("rsa-1", "RS256"), ("ec-1", "ES256")]
        )

    def test_malformed_key_sets_are_rejected(self) -> None:
        for document in ({}, {"keys": {}}, [], {"keys": ["x"]}, {"keys": [{"kty": "RSA"}]}):
            with self.assertRaises(InvalidKeySet):
                keys_from_jwks(document)

    def test_ec_point_off_the_curve_is_rejected(self) -> None:
        jwk = {**EC_ISSUER.jwk(), "y": b64url((1).to_bytes(32, "big"))}
        with self.assertRaises(InvalidKeySet):
            keys_from_jwks({"keys": [jwk]})


class SignatureTests(SynchronousTestCase):
    def test_rs256_and_es256_signatures_verify_against_their_keys(self) -> None:
        keys = keys_from_jwks({"keys": [RSA_ISSUER.jwk(), EC_ISSUER.jwk()]})
        for issuer in (RSA_ISSUER, EC_ISSUER):
            self.assertTrue(verify_signature(decode_unverified(issuer.mint({"sub": "a"})), keys))

    def test_token_from_another_key_does_not_verify(self) -> None:
        stranger = TokenIssuer("https://idp.example", algorithm="ES256", key_id="ec-1")
        keys = keys_from_jwks(EC_ISSUER.jwks())
        self.assertFalse(verify_signature(decode_unverified(stranger.mint({"sub": "a"})), keys))

    def test_tampered_claims_do_not_verify(self) -> None:
        header, _, signature = RSA_ISSUER.mint({"sub": "alice"}).split(".")
        forged = b64url(json.dumps({"iss": "https://idp.example", "sub": "root"}).encode())
        keys = keys_from_jwks(RSA_ISSUER.jwks())
        self.assertFalse(
            verify_signature(decode_unverified(f"{header}.{forged}.{signature}"), keys)
        )

    def test_none_and_hmac_algorithms_are_refused(self) -> None:
        keys = keys_from_jwks(RSA_ISSUER.jwks())
        for algorithm in ("none", "HS256", "RS512", None):
            token = RSA_ISSUER.mint({"sub": "a"}, header={"alg": algorithm})
            self.assertFalse(verify_signature(decode_unverified(token), keys), algorithm)

    def test_kid_must_match_when_the_token_names_one(self) -> None:
        keys = keys_from_jwks(RSA_ISSUER.jwks())
        token = RSA_ISSUER.mint({"sub": "a"}, header={"kid": "rotated-away"})
        self.assertFalse(verify_signature(decode_unverified(token), keys))

    def test_token_without_kid_tries_every_key_of_its_algorithm(self) -> None:
        keys = keys_from_jwks({"keys": [EC_ISSUER.jwk(), RSA_ISSUER.jwk()]})
        token = RSA_ISSUER.mint({"sub": "a"}, header={"kid": None})
        self.assertTrue(verify_signature(decode_unverified(token), keys))

    def test_es256_signature_of_wrong_length_is_refused(self) -> None:
        header, claims, _ = EC_ISSUER.mint({"sub": "a"}).split(".")
        keys = keys_from_jwks(EC_ISSUER.jwks())
        short = b64url(b"\x01" * 63)
        self.assertFalse(verify_signature(decode_unverified(f"{header}.{claims}.{short}"), keys))

    def test_critical_header_extensions_are_refused(self) -> None:
        token = RSA_ISSUER.mint({"sub": "a"}, header={"crit": ["exp"], "exp": 1})
        with self.assertRaises(MalformedToken):
            decode_unverified(token)

    def test_a_kid_that_is_not_a_string_is_malformed(self) -> None:
        token = RSA_ISSUER.mint({"sub": "a"}, header={"kid": 7})
        with self.assertRaises(MalformedToken):
            decode_unverified(token)


class ClaimTests(SynchronousTestCase):
    def test_audience_and_issuer_are_checked_after_the_signature(self) -> None:
        keys = keys_from_jwks(RSA_ISSUER.jwks())
        token = decode_unverified(RSA_ISSUER.mint({"sub": "a", "aud": ["x", "api"]}))
        claims = verified_claims(token, keys, audience="api", issuer="https://idp.example")
        self.assertEqual(claims["sub"], "a")
        for audience, issuer, reason in (
            ("other", "https://idp.example", "wrong_audience"),
            ("api", "https://elsewhere.example", "wrong_issuer"),
        ):
            refusal = self.assertRaises(
                TokenRefused, verified_claims, token, keys, audience=audience, issuer=issuer
            )
            self.assertEqual(refusal.reason, reason)

    def test_a_forged_token_is_a_bad_signature_whatever_its_claims(self) -> None:
        stranger = TokenIssuer("https://idp.example", algorithm="RS256", key_id="rsa-1")
        keys = keys_from_jwks(RSA_ISSUER.jwks())
        token = decode_unverified(stranger.mint({"sub": "a", "aud": "elsewhere"}))
        refusal = self.assertRaises(TokenRefused, verified_claims, token, keys, audience="api")
        self.assertEqual(refusal.reason, "bad_signature")
