"""Tests for eshu_mcp.query.local.index.secrets: candidates, kinds, redaction, suppression."""

import hashlib

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.secrets import find_secrets, redact

KEY = "AKIAQ3ZT7WXR2NLF4KDM"


class SecretTests(SynchronousTestCase):
    def test_kinds_first_match_wins_and_values_never_appear(self) -> None:
        text = (
            f"aws = {KEY}\n"
            "-----BEGIN RSA PRIVATE KEY-----\n"
            "slack = xoxb-1234567890-abcdef\n"
            'api_key = "k3y-v4lue-zz"\n'
            "db_password: hunter2hunter2\n"
            "client_secret=s3cr3tvalue\n"
            "plain line\n"
        )
        found = find_secrets("conf/app.cfg", text)
        self.assertEqual(
            [(f.line_number, f.finding_kind) for f in found],
            [
                (1, "aws_access_key"),
                (2, "private_key"),
                (3, "slack_token"),
                (4, "api_token"),
                (5, "password_literal"),
                (6, "secret_literal"),
            ],
        )
        for finding, secret in zip(
            found,
            [KEY, None, "xoxb-1234567890-abcdef", "k3y-v4lue-zz", "hunter2hunter2", "s3cr3tvalue"],
            strict=True,
        ):
            if secret:
                self.assertNotIn(secret, finding.redacted_excerpt)
        self.assertEqual(found[0].value_hash, hashlib.sha256(KEY.encode()).hexdigest())
        self.assertEqual(found[0].severity, "critical")

    def test_bare_sk_live_without_assignment_is_dropped(self) -> None:
        self.assertEqual(find_secrets("a.txt", "see sk_live_abcdefgh123 here\n"), [])

    def test_fixture_paths_and_placeholders_are_suppressed(self) -> None:
        (fixture,) = find_secrets("src/fixtures/keys.env", f"KEY={KEY}\n")
        self.assertEqual(fixture.suppression_notes, ("test_or_fixture_path",))
        (placeholder,) = find_secrets("app.env", "password = changeme123\n")
        self.assertEqual(placeholder.suppression_notes, ("placeholder_literal",))

    def test_redact_keeps_the_assignment_prefix(self) -> None:
        redacted, values = redact('token: "abcdefghij"')
        self.assertEqual((redacted, values), ('token: "[REDACTED]"', ["abcdefghij"]))
