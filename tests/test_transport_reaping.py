"""Streamable HTTP sessions whose client never sends DELETE are reaped, and counted."""

import json

from twisted.trial.unittest import SynchronousTestCase

from tests.support import HttpExchange, post_json, web_site

ACCEPT = b"application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
}


class ReapingTests(SynchronousTestCase):
    def setUp(self):
        self.site, self.app, self.clock = web_site(session_idle_timeout=60)
        self.app.streamable_sessions.startService()
        self.addCleanup(self.app.streamable_sessions.stopService)

    def post(self, message, **headers):
        exchange = HttpExchange(self.site)
        post_json(exchange, b"/mcp", message, accept=ACCEPT, **headers)
        return exchange.response()

    def ping(self, session):
        return self.post(
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
            mcp_session_id=session,
            mcp_protocol_version=b"2025-11-25",
        )

    def metric(self, name):
        exchange = HttpExchange(self.site)
        exchange.request(b"GET", b"/metrics")
        for line in exchange.response().body.decode().splitlines():
            if line.startswith(name + "{") or line.startswith(name + " "):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    def test_sessions_left_open_are_reaped_after_the_idle_lifetime(self):
        abandoned = [self.post(INITIALIZE).header(b"mcp-session-id") for _ in range(200)]
        active = self.post(INITIALIZE).header(b"mcp-session-id")
        self.assertEqual(len(self.app.streamable_sessions), 201)
        for _ in range(4):
            self.clock.advance(30)
            self.assertEqual(self.ping(active).status, 200)
        self.assertEqual(len(self.app.streamable_sessions), 1)
        self.assertEqual(self.ping(abandoned[0]).status, 404)
        self.assertEqual(self.metric("eshu_mcp_sessions_reaped_total"), 200.0)
        self.assertEqual(self.metric("eshu_mcp_sessions"), 1.0)

    def test_a_session_is_kept_within_its_lifetime(self):
        session = self.post(INITIALIZE).header(b"mcp-session-id")
        self.clock.advance(59)
        self.assertEqual(json.loads(self.ping(session).body)["result"], {})
        self.assertEqual(self.metric("eshu_mcp_sessions_reaped_total"), 0.0)

    def test_deleted_sessions_are_not_counted_as_reaped(self):
        session = self.post(INITIALIZE).header(b"mcp-session-id")
        exchange = HttpExchange(self.site)
        exchange.request(b"DELETE", b"/mcp", headers={b"mcp-session-id": session})
        self.clock.advance(300)
        self.assertEqual(self.metric("eshu_mcp_sessions_reaped_total"), 0.0)
        self.assertEqual(len(self.app.streamable_sessions), 0)

    def test_beyond_the_session_bound_initialize_is_503_with_retry_after(self):
        self.app.streamable_sessions.max_sessions = 2
        self.post(INITIALIZE)
        self.post(INITIALIZE)
        refused = self.post(INITIALIZE)
        self.assertEqual(refused.status, 503)
        self.assertEqual(refused.header(b"retry-after"), b"60")
        self.assertIn("too many open sessions", refused.json()["detail"])


class PerClientBoundTests(SynchronousTestCase):
    """One client (an address, or a credential) cannot fill the whole session table."""

    def setUp(self):
        self.site, self.app, self.clock = web_site(session_idle_timeout=60)
        for registry in (self.app.streamable_sessions, self.app.sse_sessions):
            registry.max_sessions_per_client = 3

    def exchange(self, host: str) -> HttpExchange:
        return HttpExchange(self.site, peer=host)

    def initialize(self, host: str):
        exchange = self.exchange(host)
        post_json(exchange, b"/mcp", INITIALIZE, accept=ACCEPT)
        return exchange.response()

    def test_one_address_past_its_bound_is_429_while_others_still_get_sessions(self):
        self.assertEqual([self.initialize("10.0.0.1").status for _ in range(3)], [200] * 3)
        refused = self.initialize("10.0.0.1")
        self.assertEqual(refused.status, 429)
        self.assertEqual(refused.header(b"retry-after"), b"60")
        self.assertIn("--max-sessions-per-client", refused.json()["detail"])
        self.assertEqual(self.initialize("10.0.0.2").status, 200)
        self.assertEqual(len(self.app.streamable_sessions), 4)

    def test_an_ended_session_frees_its_client_s_place(self):
        sessions = [self.initialize("10.0.0.1").header(b"mcp-session-id") for _ in range(3)]
        exchange = self.exchange("10.0.0.1")
        exchange.request(b"DELETE", b"/mcp", headers={b"mcp-session-id": sessions[0]})
        self.assertEqual(self.initialize("10.0.0.1").status, 200)

    def test_sse_streams_are_bounded_per_client_too(self):
        def open_stream(host):
            stream = self.exchange(host)
            stream.request(b"GET", b"/sse")
            return stream

        streams = [open_stream("10.0.0.1") for _ in range(3)]
        self.assertEqual(open_stream("10.0.0.1").response().status, 429)
        self.assertEqual(open_stream("10.0.0.3").response().status, 200)
        streams[0].disconnect()
        self.assertEqual(open_stream("10.0.0.1").response().status, 200)


def sse_endpoint(stream: HttpExchange) -> bytes:
    body = stream.response().body.decode()
    return body.split("event: endpoint\ndata: ", 1)[1].split("\n", 1)[0].encode()


class SseReapingTests(SynchronousTestCase):
    def setUp(self):
        self.site, self.app, self.clock = web_site(session_idle_timeout=60)
        self.app.sse_sessions.startService()
        self.addCleanup(self.app.sse_sessions.stopService)

    def open_stream(self):
        stream = HttpExchange(self.site)
        stream.request(b"GET", b"/sse")
        return stream

    def ping(self, stream):
        exchange = HttpExchange(self.site)
        post_json(exchange, sse_endpoint(stream), {"jsonrpc": "2.0", "id": 2, "method": "ping"})
        return exchange.response()

    def metric(self, name, transport):
        exchange = HttpExchange(self.site)
        exchange.request(b"GET", b"/metrics")
        prefix = f'{name}{{transport="{transport}"}} '
        for line in exchange.response().body.decode().splitlines():
            if line.startswith(prefix):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    def test_silent_sse_sessions_are_reaped_and_their_streams_closed(self):
        silent = [self.open_stream() for _ in range(50)]
        active = self.open_stream()
        for _ in range(4):
            self.clock.advance(30)
            self.assertEqual(self.ping(active).status, 202)
        self.assertEqual(len(self.app.sse_sessions), 1)
        self.assertTrue(all(s.transport.value().endswith(b"0\r\n\r\n") for s in silent))
        self.assertFalse(active.transport.value().endswith(b"0\r\n\r\n"))
        self.assertEqual(self.metric("eshu_mcp_sessions_reaped_total", "sse"), 50.0)
        self.assertEqual(self.metric("eshu_mcp_sessions", "sse"), 1.0)

    def test_keepalives_alone_do_not_keep_a_session(self):
        stream = self.open_stream()
        self.clock.pump([30] * 5)
        self.assertIn(b": keepalive", stream.response().body)
        self.assertEqual(len(self.app.sse_sessions), 0)

    def test_beyond_the_session_bound_get_sse_is_503_with_retry_after(self):
        self.app.sse_sessions.max_sessions = 2
        self.open_stream()
        self.open_stream()
        refused = self.open_stream().response()
        self.assertEqual(refused.status, 503)
        self.assertEqual(refused.header(b"retry-after"), b"60")
        self.assertIn("--max-sessions", refused.json()["detail"])
        self.clock.pump([60] * 3)
        self.assertEqual(self.open_stream().response().status, 200)
