"""The stdio transport over an in-memory byte stream."""

import json

from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.service import ServerSettings, build_mcp_server
from eshu_mcp.transport.stdio import StdioTransport
from tests.support import FRESH_TRUTH, RecordingResource, envelope


class StdioTests(SynchronousTestCase):
    def setUp(self):
        self.resource = RecordingResource(body=envelope({"count": 4}, FRESH_TRUTH))
        server = build_mcp_server(
            self.resource, clock=Clock(), settings=ServerSettings(toolsets="all")
        )
        self.protocol = StdioTransport(server)
        self.transport = StringTransport()
        self.protocol.makeConnection(self.transport)

    def replies(self):
        return [json.loads(line) for line in self.transport.value().splitlines()]

    def test_one_reply_line_per_request_and_none_for_notifications(self):
        self.protocol.dataReceived(
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'
            b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
            b"\n"
            b'{"jsonrpc":"2.0","id":2,"method":"tools/call",'
            b'"params":{"name":"find_code","arguments":{"query":"<main>"}}}\r\n'
        )
        first, second = self.replies()
        self.assertEqual(first["id"], 1)
        self.assertEqual(second["result"]["structuredContent"]["data"], {"count": 4})
        self.assertNotIn(b"\\u003c", self.transport.value())

    def test_invalid_json_gets_a_parse_error(self):
        self.protocol.dataReceived(b"{oops\n")
        (reply,) = self.replies()
        self.assertEqual(
            reply,
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}},
        )

    def test_last_line_without_newline_is_answered_before_closing(self):
        self.protocol.dataReceived(b'{"jsonrpc":"2.0","id":9,"method":"ping"}')
        self.assertEqual(self.replies(), [])
        self.protocol.readConnectionLost()
        self.assertEqual(self.replies(), [{"jsonrpc": "2.0", "id": 9, "result": {}}])
        self.assertTrue(self.transport.disconnecting)

    def test_end_of_input_waits_for_calls_in_flight(self):
        self.resource.hold = True
        self.protocol.dataReceived(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"find_code","arguments":{"query":"x"}}}\n'
        )
        self.protocol.readConnectionLost()
        self.assertFalse(self.transport.disconnecting)
        request = self.resource.requests[0]
        request.setResponseCode(200)
        request.write(envelope({"count": 1}, FRESH_TRUTH))
        request.finish()
        self.assertEqual(self.replies()[0]["id"], 1)
        self.assertTrue(self.transport.disconnecting)

    def test_cancel_notification_reaches_the_call(self):
        self.resource.hold = True
        self.protocol.dataReceived(
            b'{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"find_code","arguments":{"query":"x"}}}\n'
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}}\n'
        )
        self.assertEqual(len(self.resource.disconnected), 1)
        self.assertEqual(self.replies(), [])

    def test_connection_lost_fires_done(self):
        self.protocol.connectionLost(None)
        self.assertIsNone(self.successResultOf(self.protocol.done))
