"""Tests for eshu_mcp.query.local.index.parse.secrets: candidates, kinds, redaction, suppression."""

import hashlib

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.secrets import find_secrets, redact

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

    def test_shaped_tokens_are_found_on_lines_giving_no_keyword_a_value(self) -> None:
        text = (
            f"the password of the service is kept with {KEY} in it\n"
            "# token rotated, see -----BEGIN PRIVATE KEY----- below\n"
            "api docs mention xoxb-1234567890-abcdef once\n"
            "a secret we never wrote down\n"
        )
        found = find_secrets("notes/readme.txt", text)
        self.assertEqual(
            [(f.line_number, f.finding_kind) for f in found],
            [(1, "aws_access_key"), (2, "private_key"), (3, "slack_token")],
        )
        self.assertNotIn(KEY, found[0].redacted_excerpt)

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

    def test_in_code_only_string_literals_count(self) -> None:
        source = (
            'api_key = "k3y-v4lue-zz"\n'
            "self.password = password\n"
            'TOKEN = os.environ["TOKEN"]\n'
            "sharedSecret = _secret(ours, theirs)\n"
            "def sign(self, privateKey: PrivateKey) -> bytes:\n"
            'prompt = "{}\'s password: ".format(host)\n'
            "password: str = 'hunter2hunter'\n"
            'SECRET_KEY = "django-insecure-abc123"\n'
            'settings = {"token": "abcdef123456"}\n'
        )
        found = find_secrets("app/settings.py", source)
        self.assertEqual([f.line_number for f in found], [1, 7, 8, 9])
        for finding in found:
            self.assertIn("[REDACTED]", finding.redacted_excerpt)
        self.assertNotIn("hunter2hunter", found[1].redacted_excerpt)
        self.assertNotIn("django-insecure-abc123", found[2].redacted_excerpt)
        # the same lines in a configuration file are all values
        self.assertEqual(len(find_secrets("app/settings.env", "token = readFromVault\n")), 1)

    def test_test_files_are_marked(self) -> None:
        (finding,) = find_secrets("pkg/test/test_auth.py", 'password = "hunter2hunter"\n')
        self.assertEqual(finding.suppression_notes, ("test_or_fixture_path",))

    def test_quoted_keys_of_configuration_files_are_redacted(self) -> None:
        (finding,) = find_secrets("deploy/app.json", '{"password": "hunter2hunter"}\n')
        self.assertEqual(finding.finding_kind, "password_literal")
        self.assertEqual(finding.redacted_excerpt, '{"password": "[REDACTED]"}')


class UrlCredentialTests(SynchronousTestCase):
    def test_a_url_s_userinfo_is_redacted_and_an_ssh_user_name_kept(self) -> None:
        from eshu_mcp.query.local.index.parse.secrets import redact_url_credentials

        cases = {
            "git+https://oauth2:glpat-s3cr3t@gitlab.example.com/t/p.git": (
                "git+https://[REDACTED]@gitlab.example.com/t/p.git"
            ),
            "https://ghp_s3cr3t@github.com/o/r": "https://[REDACTED]@github.com/o/r",
            "git::https://deploy:s3cr3t@git.example.com/m.git?ref=v1": (
                "git::https://[REDACTED]@git.example.com/m.git?ref=v1"
            ),
            "ssh://git@github.com/o/r.git": "ssh://git@github.com/o/r.git",
            "ssh://git:s3cr3t@host/r.git": "ssh://[REDACTED]@host/r.git",
            "git@github.com:o/r.git": "git@github.com:o/r.git",
            "https://registry.npmjs.org/@scope/pkg": "https://registry.npmjs.org/@scope/pkg",
            "nginx:1.25": "nginx:1.25",
        }
        for raw, stored in cases.items():
            self.assertEqual(redact_url_credentials(raw), stored, raw)

    def test_query_values_named_like_credentials_are_redacted_others_kept(self) -> None:
        from eshu_mcp.query.local.index.parse.secrets import redact_url_credentials

        self.assertEqual(
            redact_url_credentials(
                "https://h/m.zip?ref=v1&access_token=s3cr3t&design=blue&X-Amz-Signature=ab12"
            ),
            "https://h/m.zip?ref=v1&access_token=[REDACTED]&design=blue&X-Amz-Signature=[REDACTED]",
        )
