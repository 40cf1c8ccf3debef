"""Tests for the API framework: selectors, paging helpers, field types, errors, routing."""

from __future__ import annotations

from attrs import frozen
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.framework import (
    Answer,
    ApiContext,
    ApiError,
    RouteTable,
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
                error.detail,
                'repository selector "nope" did not match any indexed repository;'
                " indexed: payments, twin",
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
        error = self.assertRaises(ApiError, ctx.repository, "payments", not_found_status=404)
        self.assertTrue(error.detail.endswith("; indexed: twin"), error.detail)
        nothing = context(self.conn, principal=Grants(()))
        error = self.assertRaises(ApiError, nothing.repository, "twin", not_found_status=404)
        self.assertTrue(
            error.detail.endswith("; no repository you may read is indexed"), error.detail
        )
        self.assertEqual(ctx.repository("twin", not_found_status=404)["repo_id"], self.twin)

    def test_truth_is_scoped_to_the_resolved_repository(self):
        ctx = context(self.conn)
        ctx.repository("payments", not_found_status=404)
        truth = ctx.truth("code_search.exact_symbol", basis="authoritative_graph")
        self.assertEqual(truth["level"], "exact")
        self.assertEqual(truth["profile"], "local_lightweight")
        self.assertEqual(truth["freshness"]["observed_at"], "2026-12-02T10:01:00Z")


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
