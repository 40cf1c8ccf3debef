"""The HTTP connection's own bounds: bodies refused by their length before they are read."""

import json

from twisted.trial.unittest import SynchronousTestCase

from tests.support import HttpExchange, RecordingResource, web_site

LIMIT = 64 * 1024


class BodyBoundTests(SynchronousTestCase):
    def setUp(self):
        self.resource = RecordingResource()
        self.site, self.app, self.clock = web_site(self.resource, max_body_bytes=LIMIT)

    def send(self, exchange: HttpExchange, head: list[bytes], body: bytes = b"") -> None:
        lines = [b"POST /api/v0/code/search HTTP/1.1", b"host: 127.0.0.1:8080", *head]
        exchange.channel.dataReceived(b"\r\n".join(lines) + b"\r\n\r\n" + body)

    def test_a_declared_length_over_the_bound_is_413_before_a_byte_is_read(self):
        exchange = HttpExchange(self.site)
        self.send(exchange, [b"content-length: %d" % (64 << 20)], b"{" * 1024)
        response = exchange.response()
        self.assertEqual(response.status, 413)
        self.assertIn(str(LIMIT), json.loads(response.body)["detail"])
        self.assertTrue(exchange.transport.disconnecting)
        exchange.channel.dataReceived(b"x" * (1 << 20))  # the rest is dropped, not spooled
        self.assertEqual(self.resource.requests, [])
        self.assertEqual(exchange.channel.requests[0].content, None)

    def test_a_chunked_body_is_refused_once_it_passes_the_bound(self):
        exchange = HttpExchange(self.site)
        chunk = b"%x\r\n%s\r\n" % (LIMIT // 2, b"a" * (LIMIT // 2))
        self.send(exchange, [b"transfer-encoding: chunked"], chunk * 3)
        self.assertEqual(exchange.response().status, 413)
        self.assertEqual(self.resource.requests, [])

    def test_a_body_within_the_bound_is_served_and_others_keep_being_served(self):
        body = json.dumps({"query": "x" * 1000}).encode()
        refused = HttpExchange(self.site)
        self.send(refused, [b"content-length: %d" % (LIMIT + 1)])
        served = HttpExchange(self.site)
        self.send(served, [b"content-length: %d" % len(body)], body)
        self.assertEqual(served.response().status, 200)
        self.assertEqual(len(self.resource.requests), 1)


class RequestDeadlineTests(SynchronousTestCase):
    """Slowloris: a client trickling its request is closed; a streaming answer is not."""

    def setUp(self):
        self.resource = RecordingResource()
        self.site, self.app, self.clock = web_site(self.resource, request_timeout=30)

    def test_a_request_trickled_a_byte_at_a_time_is_closed_with_408(self):
        exchange = HttpExchange(self.site)
        for byte in b"GET /health HTTP/1.1\r\nhost: 127.0.0.1:8080\r\nx-slow: ":
            exchange.channel.dataReceived(bytes([byte]))
            self.clock.advance(1)
            if exchange.transport.disconnecting:
                break
        self.assertTrue(exchange.transport.disconnecting)
        self.assertEqual(exchange.response().status, 408)
        self.assertIn("--request-timeout", json.loads(exchange.response().body)["detail"])

    def test_an_idle_connection_is_closed_after_the_deadline(self):
        exchange = HttpExchange(self.site)
        self.clock.advance(29)
        self.assertFalse(exchange.transport.disconnecting)
        self.clock.advance(2)
        self.assertTrue(exchange.transport.disconnecting)

    def test_a_keep_alive_connection_gets_a_fresh_deadline_after_each_answer(self):
        exchange = HttpExchange(self.site)
        for _ in range(3):
            self.clock.advance(20)
            exchange.request(b"GET", b"/health")
            self.assertFalse(exchange.transport.disconnecting)
        self.assertEqual(exchange.transport.value().count(b"HTTP/1.1 200"), 3)

    def test_a_streaming_answer_outlives_the_deadline(self):
        exchange = HttpExchange(self.site)
        exchange.request(b"GET", b"/sse")
        self.clock.pump([10] * 12)
        self.assertFalse(exchange.transport.disconnecting)
        self.assertIn(b"event: endpoint", exchange.transport.value())
