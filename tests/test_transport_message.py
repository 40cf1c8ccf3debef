"""The replay seam: a bare JSON-RPC message Resource over any query Resource."""

import json

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.server import Site

from eshu_mcp.transport import in_process_message_handler
from tests.support import FRESH_TRUTH, HttpExchange, RecordingResource, envelope, post_json


class InProcessMessageHandlerTests(SynchronousTestCase):
    def setUp(self):
        resource = RecordingResource(body=envelope({"count": 7}, FRESH_TRUTH))
        self.site = Site(in_process_message_handler(resource, clock=Clock()))

    def post(self, path, message):
        exchange = HttpExchange(self.site)
        post_json(exchange, path, message)
        return exchange.response()

    def test_any_path_answers_a_tool_call_inline(self):
        reply = self.post(
            b"/anything?sessionId=sess_1",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "find_code", "arguments": {"query": "x"}},
            },
        )
        self.assertEqual(reply.status, 200)
        _summary, embedded = reply.json()["result"]["content"]
        self.assertEqual(json.loads(embedded["resource"]["text"])["data"], {"count": 7})

    def test_notification_is_204_and_parse_error_is_400(self):
        self.assertEqual(
            self.post(b"/", {"jsonrpc": "2.0", "method": "notifications/initialized"}).status, 204
        )
        exchange = HttpExchange(self.site)
        exchange.request(b"POST", b"/", body=b"not json")
        self.assertEqual(exchange.response().status, 400)

    def test_every_tool_is_served(self):
        reply = self.post(b"/", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        result = reply.json()["result"]
        self.assertEqual(len(result["tools"]), 50)
        self.assertIn("nextCursor", result)
