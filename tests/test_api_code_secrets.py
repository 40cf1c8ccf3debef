"""Tests for /code/security/secrets/investigate: redaction, suppression, paging."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.quality.secrets import redact
from tests.test_api_code_common import CodeIndex, call, error_of, scratch_dir

ROUTE = "/code/security/secrets/investigate"
AWS_KEY = "AKIA" + "ABCDEFGHIJKLMNOP"


def secrets_index(case: SynchronousTestCase):
    index = CodeIndex(scratch_dir(case))
    repo = index.repository("payments")
    settings = index.file(
        repo, "app/settings.py", f'API_TOKEN = "tok_12345678"\nKEY = "{AWS_KEY}"\n'
    )
    index.secret(settings, 1, "api_token", 'API_TOKEN = "[REDACTED]"')
    # An excerpt stored unredacted (an older extractor) must still leave redacted.
    index.secret(settings, 2, "aws_access_key", f'KEY = "{AWS_KEY}"')
    fixture = index.file(repo, "tests/fixtures/creds.py", 'password = "changeme123"\n')
    index.secret(
        fixture,
        1,
        "password_literal",
        'password = "[REDACTED]"',
        notes=["test_or_fixture_path", "placeholder_literal"],
    )
    index.writer.commit()
    return index, repo


class SecretsTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = secrets_index(self)
        self.conn = self.index.reader()

    def test_findings_are_redacted_and_ordered(self):
        answer = call(self.conn, ROUTE, {"repo_id": "payments"})
        data = answer.data
        self.assertEqual(
            [f["finding_kind"] for f in data["findings"]], ["api_token", "aws_access_key"]
        )
        for finding in data["findings"]:
            self.assertNotIn(AWS_KEY, finding["redacted_excerpt"])
            self.assertIn("[REDACTED]", finding["redacted_excerpt"])
        aws = data["findings"][1]
        self.assertEqual((aws["confidence"], aws["severity"]), ("high", "critical"))
        self.assertEqual(aws["rank"], 2)
        self.assertEqual(aws["source_handle"]["start_line"], 2)
        self.assertEqual(data["coverage"]["suppressed_count"], 1)
        self.assertEqual(
            data["coverage"]["redaction"], "secret_values_replaced_with_redacted_marker"
        )
        self.assertEqual(
            data["recommended_next_calls"][0]["tool"], "build_evidence_citation_packet"
        )
        self.assertEqual(answer.truth["capability"], "security.hardcoded_secrets")
        self.assertNotIn(AWS_KEY, repr(answer.data))

    def test_include_suppressed_shows_fixture_findings(self):
        data = call(self.conn, ROUTE, {"include_suppressed": True}).data
        suppressed = [f for f in data["findings"] if f["suppressed"]]
        self.assertEqual(len(suppressed), 1)
        self.assertEqual(
            suppressed[0]["suppression_notes"], ["test_or_fixture_path", "placeholder_literal"]
        )

    def test_kind_filter_and_paging(self):
        data = call(self.conn, ROUTE, {"finding_kinds": ["aws_access_key"]}).data
        self.assertEqual(data["count"], 1)
        self.assertFalse(data["coverage"]["searched_all_kinds"])
        data = call(self.conn, ROUTE, {"limit": 1}).data
        self.assertTrue(data["truncated"])

    def test_unknown_kind_is_rejected(self):
        error = error_of(self.conn, ROUTE, {"finding_kinds": ["ssh_key"]})
        self.assertEqual(error.detail, 'unsupported finding_kind "ssh_key"')

    def test_redaction_rules(self):
        self.assertEqual(redact('password = "hunter2hunter2"'), 'password = "[REDACTED]"')
        self.assertEqual(redact("token: abcdef123456"), "token: [REDACTED]")
        self.assertEqual(redact("slack xoxb-1234567890-abc"), "slack [REDACTED]")
        self.assertEqual(redact("-----BEGIN RSA PRIVATE KEY-----"), "[REDACTED]")
        self.assertEqual(redact("nothing secret here"), "nothing secret here")
