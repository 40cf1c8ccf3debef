"""Tests for the three error shapes."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.errors import ApiError, status_text, unsupported


class ErrorShapeTests(SynchronousTestCase):
    def test_plain_error_ignores_the_envelope(self):
        error = ApiError(400, "query is required")
        expected = {"error": "Bad Request", "detail": "query is required"}
        self.assertEqual(error.body(True), expected)
        self.assertEqual(error.body(False), expected)

    def test_contract_error_envelope_omits_empty_fields(self):
        error = ApiError(404, "gone", code="not_found")
        self.assertEqual(
            error.body(True),
            {"data": None, "truth": None, "error": {"code": "not_found", "message": "gone"}},
        )
        self.assertEqual(error.body(False), {"error": "Not Found", "detail": "gone"})

    def test_unsupported_names_current_and_required_profiles(self):
        body = unsupported("no", "graph_query.read_only_cypher").body(True)
        self.assertEqual(
            body["error"]["profiles"],
            {"current": "local_lightweight", "required": "local_authoritative"},
        )

    def test_custom_plain_shape_is_kept(self):
        error = ApiError(400, "m", code="invalid_argument", plain={"error_code": "x"})
        self.assertEqual(error.body(False), {"error_code": "x"})

    def test_status_text_matches_go(self):
        self.assertEqual(status_text(422), "Unprocessable Entity")
        self.assertEqual(status_text(504), "Gateway Timeout")
