"""
Credential files are recognised by name or by a bounded look at their first bytes, kept
for their facts and secret candidates only, and ordinary source is never touched.
"""

from __future__ import annotations

import os

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.credentials import (
    SERVE_ENV,
    SNIFF_BYTES,
    credential_reason,
    literal_secret_key,
)
from eshu_mcp.query.local.index.parse.rows import parse_file

PRIVATE_KEY = (
    b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    b"-----END OPENSSH PRIVATE KEY-----\n"
)


class CredentialNameTests(SynchronousTestCase):
    def test_environment_files_and_keys_are_credentials_by_name(self) -> None:
        for path in (
            ".env",
            "deploy/.env.production",
            ".envrc",
            "config/prod.env",
            "home/.ssh/id_rsa",
            "id_ed25519",
            "certs/server.pem",
            "tls/server.key",
            "store.p12",
            ".netrc",
            ".git-credentials",
            "aws/credentials",
        ):
            self.assertIsNotNone(credential_reason(path, b"", is_source=False), path)

    def test_public_keys_and_lookalike_names_are_not(self) -> None:
        for path in ("id_rsa.pub", "docs/environment.md", ".envoy.yaml", "src/keys.py"):
            self.assertIsNone(credential_reason(path, b"", is_source=path.endswith(".py")), path)
        self.assertIsNone(credential_reason("id_rsa_tools.py", b"", is_source=True))


class CredentialContentTests(SynchronousTestCase):
    def test_configuration_with_a_literal_secret_is_a_credential(self) -> None:
        cases = {
            "config.json": b'{"db": {"host": "x", "password": "hunter2-prod"}}',
            "settings.yaml": b"service:\n  apiToken: 'abc123xyz'\n",
            "app.ini": b"[db]\nuser = app\npassword = s3cr3t!\n",
            "app.properties": b"spring.datasource.password=s3cr3t\n",
            "app.toml": b'[auth]\nclient_secret = "0a1b2c3d"\n',
        }
        for path, data in cases.items():
            reason = credential_reason(path, data, is_source=False)
            self.assertIsNotNone(reason, path)
            self.assertIn("literal value", reason)

    def test_references_templates_types_and_prose_are_not_literals(self) -> None:
        self.assertIsNone(
            literal_secret_key(
                "password: ${DB_PASSWORD}\n"
                "token: ${{ secrets.GITHUB_TOKEN }}\n"
                "secretName: my-tls\n"
                "api_key: {{ .Values.key }}\n"
                'label_password: "Enter your password"\n'
                "vault_password: !vault |\n"
            )
        )
        self.assertIsNone(
            literal_secret_key('{"password": "Password", "token": {"type": "string"}}')
        )

    def test_a_manifest_whose_url_carries_a_literal_password_is_a_credential(self) -> None:
        cases = {
            "requirements.txt": b"--index-url https://builder:glpat-s3cr3t@pypi.example.com/simple\n",
            "requirements/prod.txt": b"x @ git+https://oauth2:s3cr3t99@gitlab.example.com/t/x.git\n",
            "package.json": b'{"dependencies": {"p": "git+https://ghp_s3cr3t:x-oauth-basic@github.com/o/p"}}',
            "pyproject.toml": b'dependencies = ["x @ git+https://t:s3cr3t99@github.com/o/x.git"]\n',
            "Pipfile": b'[[source]]\nurl = "https://u:s3cr3t99@pypi.example.com/simple"\n',
        }
        for path, data in cases.items():
            self.assertEqual(
                credential_reason(path, data, is_source=False),
                "it holds a URL with a literal password",
                path,
            )

    def test_urls_without_a_literal_password_and_prose_files_are_not(self) -> None:
        cases = {
            "requirements.txt": b"--index-url https://${PIP_USER}:${PIP_TOKEN}@pypi.example.com/s\n",
            "package.json": b'{"dependencies": {"p": "git+ssh://git@github.com/o/p.git"}}',
            "docs/setup.md": b"clone https://user:hunter22@example.com/repo.git\n",
            "notes.txt": b"https://user:hunter22@example.com\n",
        }
        for path, data in cases.items():
            self.assertIsNone(credential_reason(path, data, is_source=False), path)

    def test_a_private_key_in_a_file_no_extractor_parses(self) -> None:
        self.assertIsNotNone(credential_reason("keys/deploy.txt", PRIVATE_KEY, is_source=False))
        self.assertIsNone(credential_reason("src/fixtures.py", PRIVATE_KEY, is_source=True))

    def test_only_the_first_bytes_are_looked_at(self) -> None:
        late = b"# notes\n" * (SNIFF_BYTES // 8 + 1) + b"password = s3cr3t\n"
        self.assertIsNone(credential_reason("big.ini", late[:SNIFF_BYTES], is_source=False))


class WithheldRowsTests(SynchronousTestCase):
    def setUp(self) -> None:
        saved = os.environ.pop(SERVE_ENV, None)
        self.addCleanup(
            lambda: (
                os.environ.pop(SERVE_ENV, None)
                if saved is None
                else os.environ.__setitem__(SERVE_ENV, saved)
            )
        )

    def test_a_credential_file_keeps_its_secret_candidates_but_no_text(self) -> None:
        parsed = parse_file(".env", b"DATABASE_PASSWORD=hunter2hunter2\nDEBUG=1\n")
        self.assertEqual((parsed.parse_status, parsed.content), ("withheld", ""))
        self.assertEqual(parsed.line_count, 2)
        self.assertTrue(parsed.secrets)
        self.assertNotIn("hunter2hunter2", repr(parsed.secrets))

    def test_ordinary_source_with_a_literal_is_unaffected(self) -> None:
        source = b'PASSWORD = "hunter2hunter2"\n\ndef connect():\n    return PASSWORD\n'
        parsed = parse_file("app/db.py", source)
        self.assertEqual(parsed.parse_status, "parsed")
        self.assertIn("hunter2hunter2", parsed.content)

    def test_the_operator_option_keeps_them_as_text(self) -> None:
        os.environ[SERVE_ENV] = "1"
        parsed = parse_file("config.json", b'{"password": "hunter2-prod"}\n')
        self.assertNotEqual(parsed.parse_status, "withheld")
        self.assertIn("hunter2-prod", parsed.content)


class WithheldWhateverTheirShapeTests(SynchronousTestCase):
    """A credential file is never 'binary' or 'too_large' (those are read back from disk)."""

    def test_a_binary_keystore_and_a_huge_env_file_are_withheld(self) -> None:
        self.assertEqual(
            parse_file("certs/store.p12", b"\x30\x82\x00\x00").parse_status, "withheld"
        )
        huge = parse_file(".env", b"A=1\n" * 10, byte_size=50 << 20)
        self.assertEqual((huge.parse_status, huge.content), ("withheld", ""))
