"""The scoped-token registry: fail-closed validation and constant-time resolution."""

import hashlib
import json
import os
import tempfile

from twisted.cred.error import UnauthorizedLogin
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.auth.credentials import BearerToken
from eshu_mcp.auth.scoped import ScopedTokenChecker, token_sha256

TOKEN = "team-payments-secret"
DIGEST = hashlib.sha256(TOKEN.encode()).hexdigest()
SUBJECT = "sha256:" + "ab" * 8


def _entry(**overrides: object) -> dict[str, object]:
    entry: dict[str, object] = {
        "token_sha256": DIGEST,
        "tenant_id": "team-payments",
        "workspace_id": "team-payments",
        "subject_class": "team_token",
        "subject_id_hash": SUBJECT,
        "policy_revision_hash": "sha256:0123456789abcdef",
        "all_scopes": False,
        "allowed_scope_ids": ["git-repository-scope:acme/payments"],
        "allowed_repository_ids": ["repo://acme/payments"],
    }
    entry.update(overrides)
    return entry


class _FileMixin:
    def write(self, document: object) -> str:
        handle, path = tempfile.mkstemp(suffix=".json")
        with os.fdopen(handle, "w") as stream:
            stream.write(document if isinstance(document, str) else json.dumps(document))
        self.addCleanup(os.remove, path)  # type: ignore[attr-defined]
        return path

    def registry(self, *entries: dict[str, object]) -> str:
        return self.write({"version": 1, "tokens": list(entries)})


class ResolutionTests(_FileMixin, SynchronousTestCase):
    def test_listed_token_resolves_to_its_scoped_principal(self) -> None:
        checker = ScopedTokenChecker.from_file(self.registry(_entry()))
        principal = self.successResultOf(checker.requestAvatarId(BearerToken(TOKEN)))
        self.assertEqual(principal.mode, "scoped")
        self.assertEqual(principal.key, f"scoped|team-payments|team-payments|{SUBJECT}")
        self.assertEqual(principal.subject_class, "team_token")
        self.assertEqual(principal.allowed_repository_ids, ("repo://acme/payments",))
        self.assertEqual(principal.allowed_scope_ids, ("git-repository-scope:acme/payments",))
        self.assertFalse(principal.all_scopes)

    def test_credential_is_trimmed_before_hashing(self) -> None:
        checker = ScopedTokenChecker.from_file(self.registry(_entry()))
        self.assertIsNotNone(checker.resolve(f"  {TOKEN}\t"))
        self.assertEqual(token_sha256(f" {TOKEN} "), DIGEST)

    def test_unknown_and_empty_credentials_do_not_match(self) -> None:
        checker = ScopedTokenChecker.from_file(self.registry(_entry()))
        self.failureResultOf(checker.requestAvatarId(BearerToken("other")), UnauthorizedLogin)
        self.assertIsNone(checker.resolve(""))
        self.assertIsNone(checker.resolve("   "))

    def test_upper_case_and_padded_hashes_are_normalized(self) -> None:
        checker = ScopedTokenChecker.from_file(
            self.registry(_entry(token_sha256=f" {DIGEST.upper()} "))
        )
        self.assertIsNotNone(checker.resolve(TOKEN))

    def test_unknown_keys_are_ignored_and_optional_hashes_may_be_absent(self) -> None:
        entry = _entry(comment="rotated in May")
        del entry["subject_id_hash"]
        del entry["policy_revision_hash"]
        path = self.write({"version": 1, "owner": "platform", "tokens": [entry]})
        principal = ScopedTokenChecker.from_file(path).resolve(TOKEN)
        self.assertEqual(principal.key, "scoped|team-payments|team-payments|")

    def test_two_tokens_resolve_to_their_own_principals(self) -> None:
        other = "ops-secret"
        checker = ScopedTokenChecker.from_file(
            self.registry(
                _entry(),
                _entry(
                    token_sha256=hashlib.sha256(other.encode()).hexdigest(),
                    tenant_id="ops",
                    workspace_id="ops",
                    all_scopes=True,
                ),
            )
        )
        self.assertEqual(len(checker), 2)
        self.assertEqual(checker.resolve(TOKEN).tenant_id, "team-payments")
        self.assertTrue(checker.resolve(other).all_scopes)

    def test_empty_registry_matches_nothing(self) -> None:
        checker = ScopedTokenChecker.from_file(self.write({"version": 1, "tokens": []}))
        self.assertIsNone(checker.resolve(TOKEN))


class ValidationTests(_FileMixin, SynchronousTestCase):
    def assertFatal(self, path: str, *fragments: str) -> str:
        with self.assertRaises(ValueError) as caught:
            ScopedTokenChecker.from_file(path)
        message = str(caught.exception)
        self.assertIn("ESHU_SCOPED_TOKENS_FILE", message)
        for fragment in fragments:
            self.assertIn(fragment, message)
        self.assertNotIn(DIGEST, message.lower())
        self.assertNotIn("0123456789abcdef", message)
        self.assertNotIn("abababab", message)
        return message

    def test_unreadable_file_is_fatal(self) -> None:
        self.assertFatal("/nonexistent/tokens.json", "cannot be read")

    def test_bad_json_is_fatal(self) -> None:
        self.assertFatal(self.write('{"version": 1, "tokens": ['), "not valid JSON")

    def test_version_other_than_one_is_fatal(self) -> None:
        self.assertFatal(self.write({"version": 2, "tokens": []}), '"version" must be 1')
        self.assertFatal(self.write({"tokens": []}), '"version" must be 1')
        self.assertFatal(self.write({"version": True, "tokens": []}), '"version" must be 1')

    def test_token_hash_not_64_hex_is_fatal(self) -> None:
        for bad in (DIGEST[:-1], DIGEST + "0", "g" * 64, ""):
            self.assertFatal(
                self.registry(_entry(token_sha256=bad)), "tokens[0].token_sha256", "64"
            )

    def test_empty_tenant_or_workspace_is_fatal(self) -> None:
        self.assertFatal(self.registry(_entry(tenant_id="  ")), "tokens[0].tenant_id")
        self.assertFatal(self.registry(_entry(workspace_id="")), "tokens[0].workspace_id")

    def test_malformed_subject_or_policy_hash_is_fatal(self) -> None:
        for bad in ("ab" * 8, "sha256:ABCDEF0123", "sha256:abc", "sha256:" + "a" * 65):
            self.assertFatal(self.registry(_entry(subject_id_hash=bad)), "subject_id_hash")
            self.assertFatal(
                self.registry(_entry(policy_revision_hash=bad)), "policy_revision_hash"
            )

    def test_duplicate_hash_is_fatal_without_naming_it(self) -> None:
        message = self.assertFatal(
            self.registry(_entry(), _entry(token_sha256=DIGEST.upper())), "tokens[1]", "tokens[0]"
        )
        self.assertIn("repeats", message)

    def test_wrongly_typed_fields_are_fatal(self) -> None:
        self.assertFatal(self.registry(_entry(all_scopes="yes")), "all_scopes")
        self.assertFatal(self.registry(_entry(allowed_repository_ids="repo://a")), "list")
        self.assertFatal(self.registry("not an object"), "tokens[0]")
        self.assertFatal(self.write([]), "top level")
        self.assertFatal(self.write({"version": 1, "tokens": {}}), '"tokens"')

    def test_message_says_what_to_do(self) -> None:
        message = self.assertFatal(self.write({"version": 3}))
        self.assertIn("unset the variable", message)
