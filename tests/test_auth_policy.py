"""The credential policy: header parsing, resolver order, shared key and enforcement."""

import hashlib
import json
import os
import tempfile

from twisted.cred.checkers import ICredentialsChecker
from twisted.cred.error import UnauthorizedLogin
from twisted.internet.defer import Deferred, fail, succeed
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase
from zope.interface import implementer

from eshu_mcp.auth.credentials import AuthenticationFailed, IBearerToken
from eshu_mcp.auth.policy import CredentialPolicy
from eshu_mcp.auth.principal import Principal
from eshu_mcp.auth.testing import TokenIssuer

SHARED_KEY = "s3cret-shared-key"
SCOPED_TOKEN = "team-token"
RESOURCE = "https://eshu.example.com/mcp"
NOW = 1_800_000_000.0
ISSUER = TokenIssuer("https://login.example.com", algorithm="ES256")


@implementer(ICredentialsChecker)
class RecordingChecker:
    """A resolver that records what it saw and answers as told."""

    credentialInterfaces = (IBearerToken,)

    def __init__(self, answer=None) -> None:
        self.seen: list[str] = []
        self.answer = answer

    def requestAvatarId(self, credentials) -> Deferred:
        self.seen.append(credentials.token)
        if self.answer is None:
            return fail(UnauthorizedLogin())
        if isinstance(self.answer, Exception):
            return fail(self.answer)
        return succeed(self.answer)


class _FilesMixin:
    def make_home(self) -> str:
        home = tempfile.mkdtemp()
        self.addCleanup(os.rmdir, home)  # type: ignore[attr-defined]
        return home

    def write(self, document: object) -> str:
        handle, path = tempfile.mkstemp(suffix=".json")
        with os.fdopen(handle, "w") as stream:
            json.dump(document, stream)
        self.addCleanup(os.remove, path)  # type: ignore[attr-defined]
        return path

    def scoped_file(self) -> str:
        return self.write(
            {
                "version": 1,
                "tokens": [
                    {
                        "token_sha256": hashlib.sha256(SCOPED_TOKEN.encode()).hexdigest(),
                        "tenant_id": "tenant-a",
                        "workspace_id": "ws-a",
                        "subject_id_hash": "sha256:00000000aaaa",
                    }
                ],
            }
        )

    def oidc_file(self) -> str:
        return self.write(
            {
                "providers": [{"id": "corp", "issuer": ISSUER.issuer, "jwks": ISSUER.jwks()}],
                "grants": [{"provider": "corp", "group": "eng", "roles": ["reader"]}],
            }
        )

    def environ(self, **values: str) -> dict[str, str]:
        return {"ESHU_HOME": self.make_home(), **values}


class HeaderTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.policy = CredentialPolicy(shared_key=SHARED_KEY)

    def refused(self, header: bytes | None) -> AuthenticationFailed:
        failure = self.failureResultOf(self.policy.authenticate(header), AuthenticationFailed)
        self.assertEqual((failure.value.status, failure.value.code), (401, "unauthenticated"))
        self.assertEqual(failure.value.message, "authentication is required")
        return failure.value

    def test_bearer_scheme_is_case_insensitive(self) -> None:
        for scheme in (b"Bearer", b"bearer", b"BEARER"):
            principal = self.successResultOf(
                self.policy.authenticate(scheme + b" " + SHARED_KEY.encode())
            )
            self.assertEqual(principal.key, "shared")
            self.assertEqual(principal.subject_class, "shared_token")
            self.assertTrue(principal.all_scopes)

    def test_credentials_and_header_are_trimmed(self) -> None:
        self.successResultOf(
            self.policy.authenticate(b"  Bearer   " + SHARED_KEY.encode() + b" \t")
        )

    def test_non_bearer_schemes_are_refused_with_the_challenge(self) -> None:
        for header in (
            b"Basic dXNlcjpwYXNz",
            b"Bearer\t" + SHARED_KEY.encode(),
            SHARED_KEY.encode(),
            b"Token x",
        ):
            self.assertTrue(self.refused(header).challenge, header)

    def test_empty_credentials_are_refused(self) -> None:
        for header in (b"Bearer", b"Bearer ", b"Bearer    \t"):
            self.assertTrue(self.refused(header).challenge)

    def test_missing_header_is_refused_while_enforced(self) -> None:
        for header in (None, b"", b"   "):
            self.assertEqual(self.refused(header).reason, "missing_credential")

    def test_wrong_shared_key_is_refused(self) -> None:
        for candidate in (SHARED_KEY[:-1], SHARED_KEY + "x", SHARED_KEY.upper()):
            self.assertEqual(self.refused(b"Bearer " + candidate.encode()).reason, "unrecognized")

    def test_no_header_field_is_read_but_authorization(self) -> None:
        self.assertTrue(self.refused(b"X-API-Key " + SHARED_KEY.encode()).challenge)


class EnforcementOffTests(SynchronousTestCase):
    def test_headerless_request_is_served_open_with_no_principal(self) -> None:
        policy = CredentialPolicy()
        self.assertFalse(policy.enforced)
        self.assertIsNone(self.successResultOf(policy.authenticate(None)))
        self.assertIsNone(self.successResultOf(policy.authenticate(b" ")))

    def test_unknown_bearer_is_refused_even_when_open(self) -> None:
        failure = self.failureResultOf(
            CredentialPolicy().authenticate(b"Bearer guess"), AuthenticationFailed
        )
        self.assertEqual(failure.value.status, 401)

    def test_resolver_match_still_applies_when_open(self) -> None:
        principal = Principal(mode="scoped", tenant_id="t", workspace_id="w")
        policy = CredentialPolicy(checkers=(RecordingChecker(principal),))
        self.assertFalse(policy.enforced)
        self.assertEqual(self.successResultOf(policy.authenticate(b"Bearer id-token")), principal)


class ChainTests(SynchronousTestCase):
    def test_resolvers_run_in_order_until_one_matches(self) -> None:
        principal = Principal(mode="scoped", tenant_id="t", workspace_id="w")
        first, second, third = RecordingChecker(), RecordingChecker(principal), RecordingChecker()
        policy = CredentialPolicy(shared_key=SHARED_KEY, checkers=(first, second, third))
        self.assertEqual(self.successResultOf(policy.authenticate(b"Bearer tok")), principal)
        self.assertEqual((first.seen, second.seen, third.seen), (["tok"], ["tok"], []))

    def test_resolver_error_stops_the_chain_before_the_shared_key(self) -> None:
        error = AuthenticationFailed(reason="expired")
        later = RecordingChecker(Principal(mode="scoped"))
        policy = CredentialPolicy(shared_key=SHARED_KEY, checkers=(RecordingChecker(error), later))
        failure = self.failureResultOf(
            policy.authenticate(b"Bearer " + SHARED_KEY.encode()), AuthenticationFailed
        )
        self.assertIs(failure.value, error)
        self.assertEqual(later.seen, [])

    def test_shared_key_is_compared_after_every_resolver_declines(self) -> None:
        checker = RecordingChecker()
        policy = CredentialPolicy(shared_key=SHARED_KEY, checkers=(checker,))
        self.assertEqual(
            self.successResultOf(policy.authenticate(b"Bearer " + SHARED_KEY.encode())).key,
            "shared",
        )
        self.assertEqual(checker.seen, [SHARED_KEY])

    def test_unexpected_resolver_failure_is_a_bare_401(self) -> None:
        policy = CredentialPolicy(checkers=(RecordingChecker(RuntimeError("db down")),))
        failure = self.failureResultOf(policy.authenticate(b"Bearer x"), AuthenticationFailed)
        self.assertEqual(failure.value.reason, "resolver_error")
        self.assertFalse(failure.value.challenge)
        self.assertEqual(len(self.flushLoggedErrors(RuntimeError)), 1)

    def test_headerless_request_never_reaches_a_resolver(self) -> None:
        checker = RecordingChecker()
        policy = CredentialPolicy(checkers=(checker,), resource_uri=RESOURCE)
        self.failureResultOf(policy.authenticate(None), AuthenticationFailed)
        self.assertEqual(checker.seen, [])


class FromEnvironmentTests(_FilesMixin, SynchronousTestCase):
    def test_demo_configuration_is_not_enforced(self) -> None:
        policy = CredentialPolicy.from_environment(self.environ())
        self.assertFalse(policy.enforced)
        self.assertEqual(policy.checkers, ())

    def test_each_credential_source_alone_turns_enforcement_on(self) -> None:
        for extra in (
            {"ESHU_API_KEY": SHARED_KEY},
            {"ESHU_SCOPED_TOKENS_FILE": self.scoped_file()},
            {"ESHU_AUTH_RESOURCE_URI": RESOURCE},
        ):
            self.assertTrue(CredentialPolicy.from_environment(self.environ(**extra)).enforced)

    def test_blank_variables_count_as_unset(self) -> None:
        environ = self.environ(
            ESHU_API_KEY="  ", ESHU_SCOPED_TOKENS_FILE=" ", ESHU_AUTH_RESOURCE_URI=""
        )
        self.assertFalse(CredentialPolicy.from_environment(environ).enforced)

    def test_options_win_over_the_environment(self) -> None:
        environ = self.environ(ESHU_API_KEY="from-env", ESHU_SCOPED_TOKENS_FILE="/nonexistent")
        policy = CredentialPolicy.from_environment(
            environ, api_key=SHARED_KEY, scoped_tokens_file=self.scoped_file()
        )
        self.successResultOf(policy.authenticate(b"Bearer " + SHARED_KEY.encode()))
        self.failureResultOf(policy.authenticate(b"Bearer from-env"), AuthenticationFailed)
        scoped = self.successResultOf(policy.authenticate(b"Bearer " + SCOPED_TOKEN.encode()))
        self.assertEqual(scoped.key, "scoped|tenant-a|ws-a|sha256:00000000aaaa")

    def test_empty_option_disables_an_environment_source(self) -> None:
        policy = CredentialPolicy.from_environment(
            self.environ(ESHU_API_KEY=SHARED_KEY), api_key=""
        )
        self.assertFalse(policy.enforced)

    def test_invalid_scoped_file_fails_startup(self) -> None:
        path = self.write({"version": 2, "tokens": []})
        with self.assertRaises(ValueError) as caught:
            CredentialPolicy.from_environment(self.environ(ESHU_SCOPED_TOKENS_FILE=path))
        self.assertIn("ESHU_SCOPED_TOKENS_FILE", str(caught.exception))

    def test_scoped_file_only_configuration_serves_file_tokens(self) -> None:
        policy = CredentialPolicy.from_environment(
            self.environ(ESHU_SCOPED_TOKENS_FILE=self.scoped_file())
        )
        self.failureResultOf(policy.authenticate(None), AuthenticationFailed)
        self.assertEqual(
            self.successResultOf(policy.authenticate(b"Bearer " + SCOPED_TOKEN.encode())).tenant_id,
            "tenant-a",
        )

    def test_oidc_configuration_verifies_tokens_against_the_injected_clock(self) -> None:
        clock = Clock()
        clock.advance(NOW)
        policy = CredentialPolicy.from_environment(
            self.environ(
                ESHU_AUTH_RESOURCE_URI=RESOURCE, ESHU_AUTH_OIDC_CONFIG_FILE=self.oidc_file()
            ),
            reactor=clock,
        )
        token = ISSUER.mint({"sub": "alice", "aud": RESOURCE, "exp": NOW + 60, "groups": ["eng"]})
        principal = self.successResultOf(policy.authenticate(b"Bearer " + token.encode()))
        self.assertEqual(principal.subject_class, "external_oidc_user")
        self.assertIsNotNone(policy.discovery)
        clock.advance(120)
        failure = self.failureResultOf(policy.authenticate(b"Bearer " + token.encode()))
        self.assertEqual(failure.value.reason, "expired")

    def test_oidc_file_without_resource_uri_accepts_no_jwt(self) -> None:
        policy = CredentialPolicy.from_environment(
            self.environ(ESHU_API_KEY=SHARED_KEY, ESHU_AUTH_OIDC_CONFIG_FILE=self.oidc_file())
        )
        self.assertEqual(policy.checkers, ())
        self.assertIsNone(policy.discovery)

    def test_discovery_fields_come_from_the_environment(self) -> None:
        policy = CredentialPolicy.from_environment(
            self.environ(
                ESHU_AUTH_RESOURCE_URI=RESOURCE,
                ESHU_AUTH_OIDC_CONFIG_FILE=self.oidc_file(),
                ESHU_AUTH_RESOURCE_DOCUMENTATION="https://docs.example.com",
                ESHU_AUTH_PREREGISTERED_CLIENT_ID="cli",
            )
        )
        document = policy.discovery.document()
        self.assertEqual(document["resource_documentation"], "https://docs.example.com")
        self.assertEqual(document["eshu_preregistered_client_id"], "cli")

    def test_invalid_resource_uri_keeps_audience_checks_without_discovery(self) -> None:
        policy = CredentialPolicy.from_environment(
            self.environ(ESHU_AUTH_RESOURCE_URI="http://eshu.example.com/mcp")
        )
        self.assertTrue(policy.enforced)
        self.assertIsNone(policy.discovery)
        self.assertEqual(len(policy.checkers), 1)


class ChallengeTests(_FilesMixin, SynchronousTestCase):
    def policy(self, resource: str) -> CredentialPolicy:
        return CredentialPolicy.from_environment(
            self.environ(
                ESHU_AUTH_RESOURCE_URI=resource, ESHU_AUTH_OIDC_CONFIG_FILE=self.oidc_file()
            )
        )

    def test_challenge_eligible_denial_points_at_the_metadata(self) -> None:
        policy = self.policy(RESOURCE)
        self.assertEqual(
            policy.challenge(AuthenticationFailed(challenge=True)),
            'Bearer resource_metadata="https://eshu.example.com/.well-known/'
            'oauth-protected-resource/mcp", scope="openid profile email groups"',
        )

    def test_other_denials_get_a_bare_challenge(self) -> None:
        self.assertEqual(self.policy(RESOURCE).challenge(AuthenticationFailed()), "Bearer")
        self.assertEqual(
            CredentialPolicy(shared_key="k").challenge(AuthenticationFailed(challenge=True)),
            "Bearer",
        )

    def test_forbidden_denial_names_insufficient_scope(self) -> None:
        denial = AuthenticationFailed(403, "permission_denied", "no")
        self.assertTrue(
            self.policy(RESOURCE).challenge(denial).startswith('Bearer error="insufficient_scope"')
        )


class PrefetchTests(SynchronousTestCase):
    def test_prefetch_without_oidc_providers_fires_at_once(self) -> None:
        self.assertIsNone(self.successResultOf(CredentialPolicy(shared_key="k").prefetch_keys()))
