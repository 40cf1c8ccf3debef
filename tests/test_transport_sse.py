"""Legacy HTTP+SSE: GET /sse sessions and POST /mcp/message, over a real Site."""

import json

from twisted.trial.unittest import SynchronousTestCase

from tests.support import HttpExchange, RecordingResource, post_json, web_site

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}


def events(raw: bytes) -> list[tuple[str, str]]:
    """(event, data) pairs of an SSE body."""
    found = []
    for block in raw.split(b"\n\n"):
        lines = block.decode().split("\n")
        name = next((line[7:] for line in lines if line.startswith("event: ")), None)
        data = "\n".join(line[6:] for line in lines if line.startswith("data: "))
        if name:
            found.append((name, data))
    return found


class SseSessionTests(SynchronousTestCase):
    def setUp(self):
        self.site, self.app, self.clock = web_site()
        self.stream = HttpExchange(self.site)
        self.stream.request(b"GET", b"/sse")
        self.response = self.stream.response()
        (endpoint,) = events(self.response.body)
        self.endpoint = endpoint[1]

    def post(self, message):
        exchange = HttpExchange(self.site)
        post_json(exchange, self.endpoint.encode(), message)
        return exchange.response()

    def test_stream_headers_and_endpoint_event(self):
        self.assertEqual(self.response.status, 200)
        self.assertEqual(self.response.header(b"content-type"), b"text/event-stream")
        self.assertEqual(self.response.header(b"cache-control"), b"no-cache")
        self.assertEqual(self.response.header(b"x-accel-buffering"), b"no")
        self.assertRegex(self.endpoint, r"^/mcp/message\?sessionId=sess_\d+$")
        self.assertEqual(len(self.app.sse_sessions), 1)

    def test_post_to_session_answers_202_and_delivers_on_the_stream(self):
        reply = self.post(INITIALIZE)
        self.assertEqual(reply.status, 202)
        self.assertEqual(reply.body, b"")
        name, data = events(self.stream.response().body)[-1]
        self.assertEqual(name, "message")
        self.assertEqual(json.loads(data)["id"], 1)

    def test_notification_to_session_is_204_and_nothing_is_streamed(self):
        reply = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.assertEqual(reply.status, 204)
        self.assertEqual(len(events(self.stream.response().body)), 1)

    def test_parse_error_is_answered_inline(self):
        exchange = HttpExchange(self.site)
        exchange.request(b"POST", self.endpoint.encode(), body=b"{not json")
        reply = exchange.response()
        self.assertEqual(reply.status, 400)
        self.assertEqual(reply.json()["error"], {"code": -32700, "message": "parse error"})

    def test_keepalive_every_30_seconds(self):
        self.clock.advance(29.999)
        self.assertFalse(self.stream.response().body.endswith(b": keepalive\n\n"))
        self.clock.advance(0.001)
        self.assertTrue(self.stream.response().body.endswith(b": keepalive\n\n"))

    def test_disconnect_removes_the_session(self):
        self.stream.disconnect()
        self.assertEqual(len(self.app.sse_sessions), 0)
        reply = self.post({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        self.assertEqual(reply.status, 200)
        self.assertEqual(reply.json()["result"], {})
        keepalives = [call for call in self.clock.getDelayedCalls() if "_ping" in repr(call)]
        self.assertEqual(keepalives, [])

    def test_closing_the_stream_cancels_the_sessions_calls(self):
        resource = RecordingResource(hold=True)
        site, _, _ = web_site(resource)
        stream = HttpExchange(site)
        stream.request(b"GET", b"/sse")
        endpoint = events(stream.response().body)[0][1]
        poster = HttpExchange(site)
        post_json(
            poster,
            endpoint.encode(),
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "find_code", "arguments": {"query": "x"}},
            },
        )
        self.assertEqual(poster.transport.value(), b"")
        stream.disconnect()
        self.assertEqual(len(resource.disconnected), 1)
        self.assertEqual(poster.response().status, 202)


class SessionlessMessageTests(SynchronousTestCase):
    def setUp(self):
        self.site, self.app, _ = web_site()

    def post(self, path, message):
        exchange = HttpExchange(self.site)
        post_json(exchange, path, message)
        return exchange.response()

    def test_without_session_reply_is_inline(self):
        reply = self.post(b"/mcp/message", INITIALIZE)
        self.assertEqual(reply.status, 200)
        self.assertEqual(reply.header(b"content-type"), b"application/json")
        self.assertEqual(reply.json()["result"]["protocolVersion"], "2025-11-25")
        self.assertTrue(reply.body.endswith(b"}\n"))

    def test_unknown_session_is_answered_inline(self):
        reply = self.post(
            b"/mcp/message?sessionId=sess_1", {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        )
        self.assertEqual(reply.status, 200)

    def test_wrong_method_is_405_json_with_allow(self):
        exchange = HttpExchange(self.site)
        exchange.request(b"GET", b"/mcp/message")
        reply = exchange.response()
        self.assertEqual(reply.status, 405)
        self.assertEqual(reply.header(b"allow"), b"POST")
        self.assertEqual(reply.json()["error"], "Method Not Allowed")

    def test_unknown_path_is_404_json(self):
        exchange = HttpExchange(self.site)
        exchange.request(b"GET", b"/nope")
        reply = exchange.response()
        self.assertEqual(reply.status, 404)
        self.assertEqual(reply.json()["error"], "Not Found")

    def test_health(self):
        exchange = HttpExchange(self.site)
        exchange.request(b"GET", b"/health")
        reply = exchange.response()
        self.assertEqual((reply.status, reply.body), (200, b'{"status":"ok"}'))
