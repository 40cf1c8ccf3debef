"""Tests for request field decoding, paging helpers and repository-relative paths."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.errors import ApiError
from eshu_mcp.query.local.api.platform.fields import (
    JsonBody,
    body_object,
    bool_param,
    int_param,
    limit_offset,
    next_offset,
    page,
    relative_path,
    str_list_param,
)
from tests.test_api_framework import context


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
        self.assertEqual(
            self.assertRaises(ApiError, body_object, context(None)).detail, "invalid JSON: EOF"
        )
        error = self.assertRaises(ApiError, body_object, context(None, body="x"))
        self.assertIn("cannot unmarshal string", error.detail)
        self.assertIsInstance(body_object(context(None, body={"a": 1})), JsonBody)

    def test_relative_path_refuses_escapes(self):
        self.assertEqual(relative_path("./a//b/./c.py"), "a/b/c.py")
        self.assertEqual(relative_path("a\\b.py"), "a/b.py")
        for bad in ("../x", "/abs", "a/../../b", "C:/x", "a\x00b"):
            self.assertEqual(self.assertRaises(ApiError, relative_path, bad).status, 400)
