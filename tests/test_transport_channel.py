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
