"""Hostile input on every transport: non-finite numbers, oversized batches and messages."""

import json

from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.protocol.jsonrpc import ProtocolError, decode_frame
from eshu_mcp.service import ServerSettings, build_mcp_server
from eshu_mcp.transport.stdio import StdioTransport
from tests.support import FRESH_TRUTH, HttpExchange, RecordingResource, envelope, web_site

ACCEPT = b"application/json, text/event-stream"
PARSE_ERROR = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
NON_FINITE_FRAMES = (
    b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":Infinity,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":-Infinity,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
    b'"params":{"name":"find_code","arguments":{"query":"x","limit":NaN}}}',
    b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping",'
    b'"params":{"deep":[-1e999]}}]',
)


def stdio_transport(resource=None):
    resource = resource or RecordingResource(body=envelope({"count": 1}, FRESH_TRUTH))
    server = build_mcp_server(resource, clock=Clock(), settings=ServerSettings(toolsets="all"))
    protocol = StdioTransport(server)
    transport = StringTransport()
    protocol.makeConnection(transport)
    return protocol, transport


def stdio_replies(transport):
    return [json.loads(line) for line in transport.value().splitlines()]


class NonFiniteNumberTests(SynchronousTestCase):
    def test_the_decoder_refuses_every_non_finite_number(self):
        for frame in NON_FINITE_FRAMES:
            with self.subTest(frame=frame):
                error = self.assertRaises(ProtocolError, decode_frame, frame)
                self.assertEqual(error.code, -32700)

    def test_finite_numbers_still_decode(self):
        self.assertEqual(
            decode_frame(b'{"a":[1.5e300,-2,0.0,1e-400]}'), {"a": [1.5e300, -2, 0.0, 0.0]}
        )

    def test_stdio_answers_each_with_a_parse_error(self):
        protocol, transport = stdio_transport()
        protocol.dataReceived(b"\n".join(NON_FINITE_FRAMES) + b"\n")
        self.assertEqual(stdio_replies(transport), [PARSE_ERROR] * len(NON_FINITE_FRAMES))

    def test_streamable_http_answers_each_with_400_and_a_parse_error(self):
        site, _app, _clock = web_site()
        for version in (b"2025-03-26", b"2026-07-28"):
            for frame in NON_FINITE_FRAMES:
                with self.subTest(version=version, frame=frame):
                    exchange = HttpExchange(site)
                    exchange.request(
                        b"POST",
                        b"/mcp",
                        headers={
                            b"accept": ACCEPT,
                            b"content-type": b"application/json",
                            b"mcp-protocol-version": version,
                        },
                        body=frame,
                    )
                    reply = exchange.response()
                    self.assertEqual((reply.status, reply.json()), (400, PARSE_ERROR))

    def test_message_endpoint_answers_each_with_400_and_a_parse_error(self):
        site, _app, _clock = web_site()
        for frame in NON_FINITE_FRAMES:
            with self.subTest(frame=frame):
                exchange = HttpExchange(site)
                exchange.request(
                    b"POST",
                    b"/mcp/message",
                    headers={b"content-type": b"application/json"},
                    body=frame,
                )
                reply = exchange.response()
                self.assertEqual((reply.status, reply.json()), (400, PARSE_ERROR))


def ping(request_id):
    return {"jsonrpc": "2.0", "id": request_id, "method": "ping"}


def lines(*messages) -> bytes:
    return b"".join(json.dumps(message).encode() + b"\n" for message in messages)


INITIALIZE_2025_03 = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-03-26", "capabilities": {}},
}


class BatchBoundTests(SynchronousTestCase):
    def test_a_batch_at_the_bound_is_answered_in_full(self):
        protocol, transport = stdio_transport()
        protocol.dataReceived(lines(INITIALIZE_2025_03, [ping(i) for i in range(100)]))
        _init, batch = stdio_replies(transport)
        self.assertEqual([reply["id"] for reply in batch], list(range(100)))

    def test_a_longer_batch_gets_one_error_naming_the_bound(self):
        protocol, transport = stdio_transport()
        protocol.dataReceived(lines(INITIALIZE_2025_03, [ping(i) for i in range(101)]))
        _init, refusal = stdio_replies(transport)
        self.assertEqual(refusal["id"], None)
        self.assertEqual(refusal["error"]["code"], -32600)
        self.assertIn("at most 100 messages", refusal["error"]["message"])
        self.assertIn("--max-batch", refusal["error"]["message"])

    def test_the_bound_is_an_option(self):
        settings = ServerSettings(toolsets="all", max_batch=2)
        resource = RecordingResource(body=envelope({"count": 1}, FRESH_TRUTH))
        server = build_mcp_server(resource, clock=Clock(), settings=settings)
        protocol = StdioTransport(server)
        transport = StringTransport()
        protocol.makeConnection(transport)
        protocol.dataReceived(lines(INITIALIZE_2025_03, [ping(1), ping(2), ping(3)]))
        _init, refusal = stdio_replies(transport)
        self.assertIn("at most 2 messages, this one 3", refusal["error"]["message"])

    def test_four_megabytes_of_invalid_items_get_a_short_reply(self):
        """The amplification case: 2M invalid items once drew a 208 MB reply."""
        site, _app, _clock = web_site()
        exchange = HttpExchange(site)
        exchange.request(
            b"POST",
            b"/mcp",
            headers={
                b"accept": ACCEPT,
                b"content-type": b"application/json",
                b"mcp-protocol-version": b"2025-03-26",
            },
            body=json.dumps(INITIALIZE_2025_03).encode(),
        )
        session = exchange.response().header(b"mcp-session-id")
        body = b"[" + b",".join([b"0"] * 2_000_000) + b"]"
        self.assertGreater(len(body), 3_900_000)
        exchange = HttpExchange(site)
        exchange.request(
            b"POST",
            b"/mcp",
            headers={
                b"accept": ACCEPT,
                b"content-type": b"application/json",
                b"mcp-protocol-version": b"2025-03-26",
                b"mcp-session-id": session,
            },
            body=body,
        )
        reply = exchange.response()
        self.assertEqual(reply.status, 200)
        self.assertLess(len(reply.body), 300)
        self.assertEqual(reply.json()["error"]["code"], -32600)


class MessageSizeTests(SynchronousTestCase):
    settings = ServerSettings(toolsets="all", max_message_bytes=2048)

    def test_http_bodies_over_the_bound_are_413_with_a_json_body(self):
        site, _app, _clock = web_site(settings=self.settings)
        big = json.dumps({**ping(1), "params": {"pad": "x" * 3000}}).encode()
        for path, headers in (
            (b"/mcp", {b"accept": ACCEPT, b"mcp-protocol-version": b"2026-07-28"}),
            (b"/mcp/message", {}),
        ):
            with self.subTest(path=path):
                exchange = HttpExchange(site)
                exchange.request(
                    b"POST",
                    path,
                    headers={b"content-type": b"application/json", **headers},
                    body=big,
                )
                reply = exchange.response()
                self.assertEqual(reply.status, 413)
                self.assertEqual(
                    reply.json(),
                    {
                        "error": "Payload Too Large",
                        "detail": "the message is larger than 2 KiB; see --max-message-bytes",
                    },
                )

    def test_http_bodies_at_the_bound_are_served(self):
        site, _app, _clock = web_site(settings=self.settings)
        head = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"'
        body = head + b"x" * (2048 - len(head) - 3) + b'"}}'
        self.assertEqual(len(body), 2048)
        exchange = HttpExchange(site)
        exchange.request(
            b"POST", b"/mcp/message", headers={b"content-type": b"application/json"}, body=body
        )
        self.assertEqual(exchange.response().json()["result"], {})

    def test_stdio_skips_a_long_line_and_serves_the_next(self):
        resource = RecordingResource(body=envelope({"count": 1}, FRESH_TRUTH))
        server = build_mcp_server(resource, clock=Clock(), settings=self.settings)
        protocol = StdioTransport(server)
        transport = StringTransport()
        protocol.makeConnection(transport)
        long_line = json.dumps({**ping(1), "params": {"pad": "x" * 5000}}).encode()
        # The long line arrives in pieces, with the next message in the same read.
        protocol.dataReceived(long_line[:1000])
        protocol.dataReceived(long_line[1000:3000])
        protocol.dataReceived(long_line[3000:] + b"\n" + lines(ping(2)))
        protocol.dataReceived(long_line + b"\n" + lines(ping(3)))
        too_large, second, again, third = stdio_replies(transport)
        self.assertEqual(too_large["error"]["code"], -32600)
        self.assertIn("larger than 2 KiB", too_large["error"]["message"])
        self.assertEqual(second, {"jsonrpc": "2.0", "id": 2, "result": {}})
        self.assertEqual(again, too_large)
        self.assertEqual(third, {"jsonrpc": "2.0", "id": 3, "result": {}})
