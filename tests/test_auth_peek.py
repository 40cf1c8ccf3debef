"""The 4 KiB method peek: labels, and the body left whole for the handler."""

import io
import json

from twisted.trial.unittest import SynchronousTestCase
from twisted.web.server import Request
from twisted.web.test.requesthelper import DummyChannel

from eshu_mcp.auth.peek import PEEK_LIMIT, method_label, peek_mcp_method


def _request(body: bytes | None) -> Request:
    request = Request(DummyChannel())
    request.method = b"POST"
    request.content = None if body is None else io.BytesIO(body)
    return request


def _message(method: object, padding: int = 0) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "pad": "x" * padding}).encode()


class _OneWayStream:
    """A body stream that cannot seek, like some request content implementations."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def read(self, size: int = -1) -> bytes:
        return self._data.read(size)


class LabelTests(SynchronousTestCase):
    def test_known_methods_keep_their_names(self) -> None:
        for method in (
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call",
            "ping",
        ):
            self.assertEqual(peek_mcp_method(_request(_message(method))), method)

    def test_other_methods_are_other(self) -> None:
        for method in ("resources/list", "server/discover", "TOOLS/LIST"):
            self.assertEqual(peek_mcp_method(_request(_message(method))), "other")

    def test_unreadable_or_methodless_bodies_are_unknown(self) -> None:
        for body in (
            None,
            b"",
            b"{not json",
            b'[{"jsonrpc":"2.0","method":"tools/list","id":1}]',
            b'{"jsonrpc":"2.0","id":1}',
            b'{"method":""}',
            b'{"method":7}',
            b'{"method":null}',
            b"\xff\xfe\x00",
        ):
            self.assertEqual(peek_mcp_method(_request(body)), "unknown", body)

    def test_bodies_over_four_kibibytes_are_unknown(self) -> None:
        body = _message("tools/list", padding=PEEK_LIMIT)
        self.assertGreater(len(body), PEEK_LIMIT)
        self.assertEqual(peek_mcp_method(_request(body)), "unknown")

    def test_trailing_whitespace_past_the_limit_still_labels(self) -> None:
        body = _message("tools/call")
        self.assertEqual(method_label(body + b" " * (PEEK_LIMIT - len(body))), "tools/call")

    def test_method_key_matches_case_insensitively(self) -> None:
        self.assertEqual(method_label(b'{"Method":"ping"}'), "ping")


class BodyPreservationTests(SynchronousTestCase):
    def assertBodyIntact(self, body: bytes, request: Request) -> None:
        self.assertEqual(request.content.read(), body)

    def test_small_body_is_readable_from_the_start_after_the_peek(self) -> None:
        body = _message("tools/list")
        request = _request(body)
        request.content.seek(0, 2)
        peek_mcp_method(request)
        self.assertBodyIntact(body, request)

    def test_body_twice_the_limit_is_readable_whole_after_the_peek(self) -> None:
        body = _message("tools/list", padding=2 * PEEK_LIMIT)
        request = _request(body)
        peek_mcp_method(request)
        self.assertBodyIntact(body, request)

    def test_unseekable_body_is_rebuilt_as_head_then_tail(self) -> None:
        for body in (_message("ping"), _message("ping", padding=3 * PEEK_LIMIT)):
            request = _request(None)
            request.content = _OneWayStream(body)
            label = peek_mcp_method(request)
            self.assertEqual(label, "ping" if len(body) <= PEEK_LIMIT else "unknown")
            self.assertBodyIntact(body, request)
