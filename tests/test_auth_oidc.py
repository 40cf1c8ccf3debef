"""The OIDC bearer resolver: verification, grants, subject hashes and the JWKS cache."""

import hashlib
import json

from treq.testing import StubTreq
from twisted.cred.error import UnauthorizedLogin
from twisted.internet.defer import CancelledError, Deferred, TimeoutError, fail
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.resource import Resource

from eshu_mcp.auth.credentials import AuthenticationFailed, BearerToken
from eshu_mcp.auth.oidc import JwksCache, OidcBearerChecker, http_fetcher, subject_hash
from eshu_mcp.auth.oidc_config import parse_oidc_config
from eshu_mcp.auth.testing import TokenIssuer

RESOURCE = "https://eshu.example.com/mcp"
NOW = 1_800_000_000.0
ISSUER = TokenIssuer("https://login.example.com", algorithm="RS256", key_id="rsa-1")
EC_ISSUER = TokenIssuer("https://ci.example.com", algorithm="ES256", key_id="ec-1")

GRANTS = [
    {
        "provider": "corp",
        "group": "payments",
        "roles": ["reader"],
        "allowed_repository_ids": ["repo://acme/payments"],
        "allowed_scope_ids": ["git-repository-scope:acme/payments"],
    },
    {
        "provider": "corp",
        "group": "billing",
        "roles": ["reader"],
        "allowed_repository_ids": ["repo://acme/billing", "repo://acme/payments"],
    },
    {"provider": "corp", "group": "admins", "roles": ["admin"], "all_scopes": True},
    {"provider": "corp", "group": "roleless", "roles": []},
    {"provider": "ci", "group": "deploy", "roles": ["reader"], "all_scopes": True},
]


def _config(**corp_overrides: object) -> dict[str, object]:
    corp: dict[str, object] = {
        "id": "corp",
        "issuer": ISSUER.issuer,
        "tenant_id": "acme",
        "workspace_id": "engineering",
        "jwks": ISSUER.jwks(),
    }
    corp.update(corp_overrides)
    ci = {
        "id": "ci",
        "issuer": EC_ISSUER.issuer,
        "groups_claim": "roles",
        "jwks": EC_ISSUER.jwks(),
    }
    return {"version": 1, "providers": [corp, ci], "grants": GRANTS}


def _claims(**overrides: object) -> dict[str, object]:
    claims: dict[str, object] = {
        "sub": "alice",
        "aud": RESOURCE,
        "exp": NOW + 600,
        "iat": NOW - 10,
        "groups": ["payments"],
    }
    claims.update(overrides)
    return {key: value for key, value in claims.items() if value is not None}


class _CheckerMixin:
    def checker(self, document: dict[str, object] | None = None, **kwargs: object):
        self.clock = Clock()
        self.clock.advance(NOW)
        return OidcBearerChecker(
            parse_oidc_config(document or _config()), RESOURCE, clock=self.clock, **kwargs
        )

    def refused(self, checker, token: str) -> AuthenticationFailed:
        failure = self.failureResultOf(  # type: ignore[attr-defined]
            checker.requestAvatarId(BearerToken(token)), AuthenticationFailed
        )
        self.assertEqual(failure.value.status, 401)  # type: ignore[attr-defined]
        self.assertEqual(failure.value.code, "unauthenticated")  # type: ignore[attr-defined]
        return failure.value


class VerificationTests(_CheckerMixin, SynchronousTestCase):
    def test_good_token_resolves_to_a_scoped_external_user(self) -> None:
        checker = self.checker()
        principal = self.successResultOf(
            checker.requestAvatarId(BearerToken(ISSUER.mint(_claims())))
        )
        expected_subject = "sha256:" + hashlib.sha256(b"corp:alice").hexdigest()
        self.assertEqual(principal.mode, "scoped")
        self.assertEqual(principal.subject_class, "external_oidc_user")
        self.assertEqual(principal.subject_id_hash, expected_subject)
        self.assertEqual(principal.key, f"scoped|acme|engineering|{expected_subject}")
        self.assertEqual(principal.allowed_repository_ids, ("repo://acme/payments",))
        self.assertEqual(principal.allowed_scope_ids, ("git-repository-scope:acme/payments",))
        self.assertFalse(principal.all_scopes)

    def test_es256_token_with_custom_groups_claim_resolves(self) -> None:
        token = EC_ISSUER.mint(_claims(groups=None, roles=["deploy"], sub="pipeline"))
        principal = self.successResultOf(self.checker().requestAvatarId(BearerToken(token)))
        self.assertTrue(principal.all_scopes)
        self.assertEqual((principal.tenant_id, principal.workspace_id), ("default", "default"))
        self.assertEqual(principal.subject_id_hash, subject_hash("ci", "pipeline"))

    def test_matching_grants_are_united(self) -> None:
        token = ISSUER.mint(_claims(groups=["payments", "billing", "unrelated"]))
        principal = self.successResultOf(self.checker().requestAvatarId(BearerToken(token)))
        self.assertEqual(
            principal.allowed_repository_ids, ("repo://acme/payments", "repo://acme/billing")
        )
        admin = ISSUER.mint(_claims(groups="admins"))
        self.assertTrue(
            self.successResultOf(self.checker().requestAvatarId(BearerToken(admin))).all_scopes
        )

    def test_audience_list_containing_the_resource_is_accepted(self) -> None:
        token = ISSUER.mint(_claims(aud=["other-api", RESOURCE]))
        self.successResultOf(self.checker().requestAvatarId(BearerToken(token)))

    def test_expired_token_is_refused_with_a_bare_challenge(self) -> None:
        denial = self.refused(self.checker(), ISSUER.mint(_claims(exp=NOW - 1)))
        self.assertEqual(denial.reason, "expired")
        self.assertFalse(denial.challenge)

    def test_token_without_expiry_is_refused(self) -> None:
        denial = self.refused(self.checker(), ISSUER.mint(_claims(exp=None)))
        self.assertEqual(denial.reason, "expired")

    def test_non_finite_expiry_or_not_before_is_refused(self) -> None:
        for claims, reason in (
            (_claims(exp=float("nan")), "expired"),
            (_claims(exp=float("inf")), "expired"),
            (_claims(nbf=float("nan")), "not_yet_valid"),
        ):
            with self.subTest(claims=claims):
                self.assertEqual(self.refused(self.checker(), ISSUER.mint(claims)).reason, reason)

    def test_expiry_follows_the_injected_clock(self) -> None:
        checker = self.checker()
        token = ISSUER.mint(_claims(exp=NOW + 60))
        self.successResultOf(checker.requestAvatarId(BearerToken(token)))
        self.clock.advance(61)
        self.assertEqual(self.refused(checker, token).reason, "expired")

    def test_not_before_allows_five_minutes_of_skew_and_no_more(self) -> None:
        checker = self.checker()
        self.successResultOf(
            checker.requestAvatarId(BearerToken(ISSUER.mint(_claims(nbf=NOW + 299))))
        )
        self.assertEqual(
            self.refused(checker, ISSUER.mint(_claims(nbf=NOW + 301))).reason, "not_yet_valid"
        )

    def test_wrong_audience_is_refused_with_a_bare_challenge(self) -> None:
        for audience in ("https://other.example.com/mcp", ["a", "b"], None, 7):
            denial = self.refused(self.checker(), ISSUER.mint(_claims(aud=audience)))
            self.assertEqual(denial.reason, "wrong_audience")
            self.assertFalse(denial.challenge)

    def test_unknown_issuer_is_unrecognized_with_the_challenge(self) -> None:
        stranger = TokenIssuer("https://evil.example.com", algorithm="ES256")
        denial = self.refused(self.checker(), stranger.mint(_claims()))
        self.assertEqual(denial.reason, "unrecognized")
        self.assertTrue(denial.challenge)

    def test_unparseable_jwt_is_unrecognized_with_the_challenge(self) -> None:
        for token in ("abc.def.ghi", "e30.bm90IGpzb24.c2ln"):
            denial = self.refused(self.checker(), token)
            self.assertEqual(denial.reason, "unrecognized")
            self.assertTrue(denial.challenge)

    def test_signature_from_another_key_is_refused(self) -> None:
        impostor = TokenIssuer(ISSUER.issuer, algorithm="RS256", key_id="rsa-1")
        denial = self.refused(self.checker(), impostor.mint(_claims()))
        self.assertEqual(denial.reason, "bad_signature")
        self.assertFalse(denial.challenge)

    def test_unsigned_token_is_refused(self) -> None:
        header, claims, _ = ISSUER.mint(_claims(), header={"alg": "none"}).split(".")
        self.assertEqual(
            self.refused(self.checker(), f"{header}.{claims}.c2ln").reason, "bad_signature"
        )

    def test_token_without_grants_is_refused(self) -> None:
        for groups in (["unrelated"], [], None, ["roleless"]):
            denial = self.refused(self.checker(), ISSUER.mint(_claims(groups=groups)))
            self.assertEqual(denial.reason, "no_grants")
            self.assertFalse(denial.challenge)

    def test_malformed_verified_claims_are_refused(self) -> None:
        for claims in (_claims(sub=None), _claims(sub=" "), _claims(groups={"a": 1})):
            self.assertEqual(
                self.refused(self.checker(), ISSUER.mint(claims)).reason, "malformed_claims"
            )


class NoMatchTests(_CheckerMixin, SynchronousTestCase):
    def test_opaque_credentials_fall_through(self) -> None:
        checker = self.checker()
        for token in ("shared-api-key", "a.b", "a.b.c.d", "a..c"):
            self.failureResultOf(checker.requestAvatarId(BearerToken(token)), UnauthorizedLogin)

    def test_without_enabled_providers_every_credential_falls_through(self) -> None:
        checker = self.checker({"version": 1, "providers": []})
        self.assertEqual(checker.active_issuers(), ())
        self.failureResultOf(
            checker.requestAvatarId(BearerToken(ISSUER.mint(_claims()))), UnauthorizedLogin
        )

    def test_issuer_claimed_by_two_providers_is_excluded(self) -> None:
        document = _config()
        twin = {"id": "twin", "issuer": ISSUER.issuer, "jwks": ISSUER.jwks()}
        document["providers"] = [*document["providers"], twin]  # type: ignore[misc]
        checker = self.checker(document)
        self.assertEqual(checker.active_issuers(), (EC_ISSUER.issuer,))
        self.assertEqual(self.refused(checker, ISSUER.mint(_claims())).reason, "unrecognized")

    def test_disabled_provider_is_not_an_issuer(self) -> None:
        checker = self.checker(_config(enabled=False))
        self.assertEqual(checker.active_issuers(), (EC_ISSUER.issuer,))


class _KeySet(Resource):
    isLeaf = True

    def __init__(self, document: object, status: int = 200) -> None:
        super().__init__()
        self.document = document
        self.status = status
        self.hits = 0

    def render_GET(self, request) -> bytes:
        self.hits += 1
        request.setResponseCode(self.status)
        request.setHeader(b"content-type", b"application/json")
        return json.dumps(self.document).encode()


class JwksFetchTests(_CheckerMixin, SynchronousTestCase):
    def fetching_checker(self, keyset: _KeySet) -> OidcBearerChecker:
        stub = StubTreq(keyset)
        document = _config(jwks=None, jwks_uri="https://login.example.com/keys")
        del document["providers"][0]["jwks"]  # type: ignore[index]
        checker = self.checker(document, fetch=lambda uri: http_fetcher(stub, self.clock)(uri))
        self.stub = stub
        return checker

    def test_keys_are_fetched_from_the_jwks_uri_and_cached(self) -> None:
        keyset = _KeySet(ISSUER.jwks())
        checker = self.fetching_checker(keyset)
        token = BearerToken(ISSUER.mint(_claims()))
        self.successResultOf(checker.requestAvatarId(token))
        self.successResultOf(checker.requestAvatarId(token))
        self.assertEqual(keyset.hits, 1)

    def test_stale_keys_are_served_while_a_background_refresh_runs(self) -> None:
        keyset = _KeySet(ISSUER.jwks())
        checker = self.fetching_checker(keyset)
        token = BearerToken(ISSUER.mint(_claims(exp=NOW + 3600)))
        self.successResultOf(checker.requestAvatarId(token))
        self.clock.advance(29)
        self.successResultOf(checker.requestAvatarId(token))
        self.assertEqual(keyset.hits, 1)
        self.clock.advance(1)
        self.successResultOf(checker.requestAvatarId(token))
        self.assertEqual(keyset.hits, 2)

    def test_rotated_keys_are_used_after_the_refresh(self) -> None:
        rotated = TokenIssuer(ISSUER.issuer, algorithm="ES256", key_id="ec-2")
        keyset = _KeySet(ISSUER.jwks())
        checker = self.fetching_checker(keyset)
        self.successResultOf(checker.requestAvatarId(BearerToken(ISSUER.mint(_claims()))))
        keyset.document = rotated.jwks()
        new_token = BearerToken(rotated.mint(_claims(exp=NOW + 3600)))
        self.assertEqual(self.refused(checker, new_token.token).reason, "bad_signature")
        self.clock.advance(30)
        self.successResultOf(checker.requestAvatarId(new_token))
        self.assertEqual(keyset.hits, 2)

    def test_unreachable_key_set_refuses_with_a_bare_challenge(self) -> None:
        checker = self.fetching_checker(_KeySet({"error": "down"}, status=503))
        denial = self.refused(checker, ISSUER.mint(_claims()))
        self.assertEqual(denial.reason, "jwks_unavailable")
        self.assertFalse(denial.challenge)

    def test_failed_refresh_keeps_the_previous_keys(self) -> None:
        keyset = _KeySet(ISSUER.jwks())
        checker = self.fetching_checker(keyset)
        token = BearerToken(ISSUER.mint(_claims(exp=NOW + 3600)))
        self.successResultOf(checker.requestAvatarId(token))
        keyset.status = 500
        self.clock.advance(31)
        self.successResultOf(checker.requestAvatarId(token))
        self.successResultOf(checker.requestAvatarId(token))
        self.assertEqual(keyset.hits, 2)

    def manual_cache(self) -> tuple[JwksCache, list[Deferred]]:
        self.clock = Clock()
        pending: list[Deferred] = []

        def fetch(uri: str) -> Deferred:
            pending.append(Deferred())
            return pending[-1]

        return JwksCache("https://login.example.com/keys", fetch, self.clock), pending

    def test_concurrent_first_uses_share_one_fetch(self) -> None:
        cache, pending = self.manual_cache()
        first = cache.keys()
        second = cache.keys()
        self.assertNoResult(first)
        self.assertEqual(len(pending), 1)
        pending[0].callback(ISSUER.jwks())
        self.assertEqual(self.successResultOf(first), self.successResultOf(second))

    def test_stale_keys_answer_at_once_while_the_refresh_is_pending(self) -> None:
        cache, pending = self.manual_cache()
        first = cache.keys()
        pending[0].callback(ISSUER.jwks())
        old_keys = self.successResultOf(first)
        self.clock.advance(30)
        self.assertEqual(self.successResultOf(cache.keys()), old_keys)
        self.assertEqual(self.successResultOf(cache.keys()), old_keys)
        self.assertEqual(len(pending), 2)
        pending[1].callback(EC_ISSUER.jwks())
        self.assertEqual(self.successResultOf(cache.keys())[0].key_id, "ec-1")
        self.assertEqual(len(pending), 2)

    def test_cancelled_first_use_leaves_the_fetch_to_others(self) -> None:
        cache, pending = self.manual_cache()
        abandoned = cache.keys()
        abandoned.cancel()
        self.failureResultOf(abandoned, CancelledError)
        waiting = cache.keys()
        pending[0].callback(ISSUER.jwks())
        self.assertEqual(self.successResultOf(waiting)[0].key_id, "rsa-1")

    def test_http_fetch_that_never_answers_times_out(self) -> None:
        self.clock = Clock()

        class Silent:
            def get(self, uri: str, headers: object) -> Deferred:
                return Deferred()

        fetching = http_fetcher(Silent(), self.clock, timeout=10)("https://x/keys")
        self.assertNoResult(fetching)
        self.clock.advance(10)
        self.failureResultOf(fetching, TimeoutError)

    def test_checker_without_a_fetcher_for_a_uri_provider_is_a_configuration_error(self) -> None:
        document = _config(jwks_uri="https://login.example.com/keys")
        del document["providers"][0]["jwks"]  # type: ignore[index]
        with self.assertRaises(ValueError):
            self.checker(document)


class PrefetchTests(_CheckerMixin, SynchronousTestCase):
    def test_prefetch_warms_uri_providers_and_survives_failures(self) -> None:
        pending: list[Deferred] = []

        def fetch(uri: str) -> Deferred:
            pending.append(Deferred())
            return pending[-1]

        document = _config(jwks_uri="https://login.example.com/keys")
        del document["providers"][0]["jwks"]  # type: ignore[index]
        checker = self.checker(document, fetch=fetch)
        warming = checker.prefetch()
        self.assertNoResult(warming)
        pending[0].callback(ISSUER.jwks())
        self.assertIsNone(self.successResultOf(warming))
        self.successResultOf(checker.requestAvatarId(BearerToken(ISSUER.mint(_claims()))))
        self.assertEqual(len(pending), 1)

    def test_prefetch_with_unreachable_keys_still_fires(self) -> None:
        document = _config(jwks_uri="https://login.example.com/keys")
        del document["providers"][0]["jwks"]  # type: ignore[index]
        checker = self.checker(document, fetch=lambda uri: fail(ConnectionRefusedError()))
        self.assertIsNone(self.successResultOf(checker.prefetch()))
