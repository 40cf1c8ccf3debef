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
