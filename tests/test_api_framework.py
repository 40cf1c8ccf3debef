"""Tests for the API framework: selectors, paging helpers, field types, errors, routing."""

from __future__ import annotations

from attrs import frozen
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.framework import (
    Answer,
    ApiContext,
    ApiError,
    JsonBody,
    RouteTable,
    body_object,
    bool_param,
    int_param,
    limit_offset,
    next_offset,
    page,
    relative_path,
    str_list_param,
    unsupported,
)
from tests.test_api_resource import ApiIndex


def context(conn, body=None, principal=None) -> ApiContext:
    return ApiContext(
        conn=conn,
        method="POST",
        path_args={},
        query={},
        body=body,
        envelope=True,
        principal=principal,
    )


@frozen
class Grants:
    repositories: tuple[str, ...]

    def may_read_repository(self, repo_id: str) -> bool:
        return repo_id in self.repositories


class SelectorTests(SynchronousTestCase):
    def setUp(self):
        self.index = ApiIndex(self.mktemp())
        self.payments = self.index.repository("payments", remote="https://github.com/acme/payments")
        self.twin = self.index.repository("twin", remote="https://gitlab.com/acme/payments")
        self.index.writer.commit()
        self.conn = self.index.reader()
        self.addCleanup(self.conn.close)

    def test_empty_selector_means_no_scope(self):
        self.assertIsNone(context(self.conn).repository("  ", not_found_status=404))

    def test_name_remote_and_canonical_id_select_one_repository(self):
        ctx = context(self.conn)
        for selector in ("payments", "https://github.com/acme/payments", self.payments):
            self.assertEqual(
                ctx.repository(selector, not_found_status=404)["repo_id"], self.payments
            )

    def test_no_match_uses_the_handler_family_status(self):
        for status in (400, 404):
            error = self.assertRaises(
                ApiError, context(self.conn).repository, "nope", not_found_status=status
            )
            self.assertEqual(error.status, status)
            self.assertEqual(
                error.detail, 'repository selector "nope" did not match any indexed repository'
            )

    def test_several_matches_are_400_listing_ids(self):
        error = self.assertRaises(
            ApiError, context(self.conn).repository, "acme/payments", not_found_status=404
        )
        self.assertEqual(error.status, 400)
        self.assertIn("matched multiple repositories", error.detail)
        self.assertIn(self.payments, error.detail)
        self.assertIn(self.twin, error.detail)

    def test_scoped_principal_cannot_see_ungranted_repositories(self):
        ctx = context(self.conn, principal=Grants((self.twin,)))
        self.assertRaises(ApiError, ctx.repository, "payments", not_found_status=404)
        self.assertEqual(ctx.repository("twin", not_found_status=404)["repo_id"], self.twin)

    def test_truth_is_scoped_to_the_resolved_repository(self):
        ctx = context(self.conn)
        ctx.repository("payments", not_found_status=404)
        truth = ctx.truth("code_search.exact_symbol", basis="authoritative_graph")
        self.assertEqual(truth["level"], "exact")
        self.assertEqual(truth["profile"], "local_lightweight")
        self.assertEqual(truth["freshness"]["observed_at"], "2026-12-02T10:01:00Z")


class FieldTests(SynchronousTestCase):
    def test_query_integers_fall_back_silently(self):
        self.assertEqual(int_param({"limit": "abc"}, "limit", 7), 7)
        self.assertEqual(int_param({"limit": " 12 "}, "limit", 7), 12)

    def test_body_integers_reject_wrong_types(self):
        for value in ("5", True, 1.5, [1]):
            error = self.assertRaises(ApiError, int_param, JsonBody(limit=value), "limit", 1)
            self.assertTrue(error.detail.startswith("invalid JSON: json: cannot unmarshal"))
        self.assertEqual(int_param(JsonBody(limit=5.0), "limit", 1), 5)

    def test_booleans_and_lists(self):
        self.assertTrue(bool_param({"recursive": "true"}, "recursive"))
        self.assertFalse(bool_param({"recursive": "maybe"}, "recursive"))
        self.assertRaises(ApiError, bool_param, JsonBody(x="true"), "x")
        self.assertEqual(str_list_param({"ids": "a, b,,"}, "ids"), ["a", "b"])
        self.assertRaises(ApiError, str_list_param, JsonBody(ids=[1]), "ids")

    def test_limit_offset_defaults_clamps_and_bounds(self):
        self.assertEqual(limit_offset({}, default=50, maximum=200), (50, 0))
        self.assertEqual(
            limit_offset({"limit": "0", "offset": "-3"}, default=50, maximum=200), (50, 0)
        )
        self.assertEqual(limit_offset({"limit": "900"}, default=50, maximum=200), (200, 0))
        error = self.assertRaises(
            ApiError, limit_offset, {"offset": "10001"}, default=5, maximum=9, max_offset=10000
        )
        self.assertEqual(error.detail, "offset exceeds maximum of 10000")

    def test_page_drops_the_probe_row(self):
        self.assertEqual(page([1, 2, 3], 2), ([1, 2], True))
        self.assertEqual(page([1, 2], 2), ([1, 2], False))
        self.assertEqual((next_offset(10, 5, True), next_offset(10, 5, False)), (15, None))

    def test_body_object_errors(self):
        conn = None
        self.assertEqual(
            self.assertRaises(ApiError, body_object, context(conn)).detail, "invalid JSON: EOF"
        )
        error = self.assertRaises(ApiError, body_object, context(conn, body="x"))
        self.assertIn("cannot unmarshal string", error.detail)
        self.assertIsInstance(body_object(context(conn, body={"a": 1})), JsonBody)

    def test_relative_path_refuses_escapes(self):
        self.assertEqual(relative_path("./a//b/./c.py"), "a/b/c.py")
        self.assertEqual(relative_path("a\\b.py"), "a/b.py")
        for bad in ("../x", "/abs", "a/../../b", "C:/x", "a\x00b"):
            self.assertEqual(self.assertRaises(ApiError, relative_path, bad).status, 400)


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


class RouteTableTests(SynchronousTestCase):
    def setUp(self):
        self.routes = RouteTable()
        self.handler = lambda ctx: Answer(None)

    def test_parameters_bind_and_literals_win(self):
        self.routes.add("GET", "/repositories/{repo_id}", self.handler)
        self.routes.add("GET", "/repositories/by-language", self.handler)
        match = self.routes.resolve("GET", ["repositories", "by-language"])
        self.assertEqual((match.route.pattern, match.path_args), ("/repositories/by-language", {}))
        match = self.routes.resolve("GET", ["repositories", "r1"])
        self.assertEqual(match.path_args, {"repo_id": "r1"})

    def test_wrong_method_reports_allowed_methods(self):
        self.routes.add("GET", "/a", self.handler)
        self.routes.add("DELETE", "/a", self.handler)
        match = self.routes.resolve("POST", ["a"])
        self.assertIsNone(match.route)
        self.assertEqual(match.allowed, ("DELETE", "GET"))

    def test_specific_handler_beats_fallback_whatever_the_order(self):
        specific = lambda ctx: Answer("specific")  # noqa: E731
        self.routes.add("GET", "/x", self.handler, fallback=True)
        self.routes.add("GET", "/x", specific)
        self.assertIs(self.routes.resolve("GET", ["x"]).route.handler, specific)
        self.assertIs(self.routes.find("GET", "/x").handler, specific)

    def test_duplicate_specific_registration_is_refused(self):
        self.routes.add("GET", "/x", self.handler)
        self.assertRaises(ValueError, self.routes.add, "GET", "/x", self.handler)
        self.assertRaises(ValueError, self.routes.add, "GET", "x", self.handler)

    def test_empty_segment_does_not_bind_a_parameter(self):
        self.routes.add("GET", "/entities/{entity_id}/context", self.handler)
        self.assertIsNone(self.routes.resolve("GET", ["entities", "", "context"]).route)
