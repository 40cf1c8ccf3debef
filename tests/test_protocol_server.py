"""The MCP method table: negotiation, listing, calling, batches, cancellation, both eras."""

import json

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.catalog import ToolCatalog, load_contract
from eshu_mcp.dispatch.inprocess import InProcessDispatcher
from eshu_mcp.protocol import versions
from eshu_mcp.protocol.server import CallContext, McpServer
from tests.support import FRESH_TRUTH, RecordingResource, envelope

MODERN_META = {
    versions.PROTOCOL_VERSION_META_KEY: "2026-07-28",
    versions.CLIENT_CAPABILITIES_META_KEY: {},
}


def make_server(resource=None, clock=None, **kwargs):
    resource = resource or RecordingResource(body=envelope({"count": 2}, FRESH_TRUTH))
    dispatcher = InProcessDispatcher(resource, clock or Clock())
    return McpServer(ToolCatalog.full(), dispatcher, **kwargs), resource


class Client:
    """Drives one McpConnection synchronously."""

    def __init__(self, test, server, default_version="2024-11-05"):
        self.test = test
        self.connection = server.connection(default_version=default_version)
        self.next_id = 0

    def send(self, message):
        return self.test.successResultOf(self.connection.handle(message, CallContext()))

    def request(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        return self.send(message)


class InitializeTests(SynchronousTestCase):
    def test_each_supported_revision_is_answered_in_kind(self):
        server, _ = make_server()
        for version in versions.HANDSHAKE_VERSIONS:
            reply = Client(self, server).request("initialize", {"protocolVersion": version})
            self.assertEqual(reply["result"]["protocolVersion"], version)

    def test_unknown_revision_gets_the_newest(self):
        server, _ = make_server()
        reply = Client(self, server).request("initialize", {"protocolVersion": "1999-01-01"})
        self.assertEqual(reply["result"]["protocolVersion"], "2025-11-25")

    def test_result_names_the_server_and_tools_capability(self):
        server, _ = make_server()
        result = Client(self, server).request("initialize", {})["result"]
        self.assertEqual(result["capabilities"], {"tools": {"listChanged": False}, "logging": {}})
        self.assertEqual(result["serverInfo"]["name"], "eshu-mcp-server")
        self.assertTrue(result["instructions"])

    def test_initialized_notification_gets_no_reply(self):
        server, _ = make_server()
        client = Client(self, server)
        self.assertIsNone(client.send({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        self.assertTrue(client.connection.initialized)

    def test_ping_answers_empty_object_and_echoes_string_ids(self):
        server, _ = make_server()
        reply = Client(self, server).send({"jsonrpc": "2.0", "id": "abc", "method": "ping"})
        self.assertEqual(reply, {"jsonrpc": "2.0", "id": "abc", "result": {}})


class ErrorTests(SynchronousTestCase):
    def setUp(self):
        self.client = Client(self, make_server()[0])

    def test_unknown_method(self):
        reply = self.client.request("resources/list")
        self.assertEqual(
            reply["error"], {"code": -32601, "message": "method not found: resources/list"}
        )

    def test_invalid_requests(self):
        for message in (
            [],
            "x",
            {"jsonrpc": "1.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "id": 1},
            {"jsonrpc": "2.0", "id": True, "method": "ping"},
            {"jsonrpc": "2.0", "id": None, "method": "ping"},
            {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": 3},
        ):
            reply = self.client.send(message)
            self.assertEqual(reply["error"]["code"], -32600, message)

    def test_tools_call_params_must_be_an_object_with_a_string_name(self):
        for params in (None, {"name": 3}, {"name": "find_code", "arguments": [1]}):
            reply = self.client.request("tools/call", params)
            self.assertEqual(reply["error"]["code"], -32602, params)

    def test_unknown_tool_is_a_tool_error(self):
        reply = self.client.request("tools/call", {"name": "nope"})
        self.assertEqual(
            reply["result"],
            {"content": [{"type": "text", "text": "unknown tool: nope"}], "isError": True},
        )

    def test_notifications_never_get_replies(self):
        for method in ("notifications/progress", "notifications/roots/list_changed"):
            self.assertIsNone(self.client.send({"jsonrpc": "2.0", "method": method}))


class ToolsListTests(SynchronousTestCase):
    def list_all(self, client):
        names, cursor, pages = [], None, 0
        while pages < 20:
            params = {"cursor": cursor} if cursor else {}
            result = client.request("tools/list", params)["result"]
            names += [tool["name"] for tool in result["tools"]]
            pages += 1
            cursor = result.get("nextCursor")
            if not cursor:
                return names, pages
        self.fail("pagination did not end")

    def test_pages_follow_to_all_162_tools_in_contract_order(self):
        server, _ = make_server(page_size=50)
        names, pages = self.list_all(Client(self, server))
        self.assertEqual(names, [tool["name"] for tool in load_contract()])
        self.assertEqual(len(names), 162)
        self.assertEqual(pages, 4)

    def test_bad_cursor_is_invalid_params(self):
        reply = Client(self, make_server()[0]).request("tools/list", {"cursor": "bogus"})
        self.assertEqual(reply["error"]["code"], -32602)

    def test_every_tool_is_read_only(self):
        client = Client(self, make_server(page_size=200)[0])
        client.request("initialize", {"protocolVersion": "2025-06-18"})
        for tool in client.request("tools/list")["result"]["tools"]:
            annotations = tool["annotations"]
            self.assertIs(annotations["readOnlyHint"], True)
            self.assertIs(annotations["destructiveHint"], False)
            self.assertIs(annotations["idempotentHint"], True)


class ToolsCallTests(SynchronousTestCase):
    def test_call_returns_dispatched_result_once_as_structured_content(self):
        server, resource = make_server()
        client = Client(self, server)
        client.request("initialize", {"protocolVersion": "2025-06-18"})
        reply = client.request("tools/call", {"name": "find_code", "arguments": {"query": "main"}})
        self.assertEqual(reply["result"]["structuredContent"]["data"], {"count": 2})
        self.assertEqual([block["type"] for block in reply["result"]["content"]], ["text"])
        self.assertEqual(len(resource.requests), 1)

    def test_before_structured_content_the_answer_is_sent_once_as_a_resource(self):
        server, _ = make_server()
        reply = Client(self, server).request(
            "tools/call", {"name": "find_code", "arguments": {"query": "main"}}
        )
        result = reply["result"]
        self.assertNotIn("structuredContent", result)
        _summary, embedded = result["content"]
        self.assertEqual(embedded["resource"]["uri"], "eshu://tool-result/envelope")
        self.assertEqual(json.loads(embedded["resource"]["text"])["data"], {"count": 2})

    def test_full_detail_keeps_both_copies_in_every_revision(self):
        resource = RecordingResource(body=envelope({"count": 2}, FRESH_TRUTH))
        dispatcher = InProcessDispatcher(resource, Clock(), answer_detail="full")
        server = McpServer(ToolCatalog.full(), dispatcher)
        for version in ("2024-11-05", "2025-11-25"):
            client = Client(self, server)
            client.request("initialize", {"protocolVersion": version})
            result = client.request(
                "tools/call", {"name": "find_code", "arguments": {"query": "x"}}
            )["result"]
            self.assertEqual(result["structuredContent"]["data"], {"count": 2})
            self.assertEqual(
                json.loads(result["content"][1]["resource"]["text"])["data"], {"count": 2}
            )

    def test_plain_array_payload_is_not_structured_content_before_2026(self):
        server, _ = make_server(RecordingResource(body=b"[1, 2, 3]"))
        client = Client(self, server)
        client.request("initialize", {"protocolVersion": "2025-11-25"})
        result = client.request("tools/call", {"name": "list_collectors"})["result"]
        self.assertNotIn("structuredContent", result)
        self.assertEqual(result["content"][0]["text"], "Returned 3 result(s).")

    def test_plain_payload_of_an_envelope_tool_is_wrapped_to_match_its_output_schema(self):
        server, _ = make_server(RecordingResource(body=b'{"repositories": []}'))
        client = Client(self, server)
        client.request("initialize", {"protocolVersion": "2025-06-18"})
        result = client.request("tools/call", {"name": "list_indexed_repositories"})["result"]
        self.assertEqual(
            result["structuredContent"],
            {"data": {"repositories": []}, "truth": None, "error": None},
        )

    def test_cancelled_notification_cancels_the_call_and_suppresses_its_reply(self):
        resource = RecordingResource(hold=True)
        server, _ = make_server(resource)
        client = Client(self, server)
        message = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "find_code", "arguments": {"query": "x"}},
        }
        pending = client.connection.handle(message, CallContext())
        self.assertNoResult(pending)
        self.assertEqual(client.connection.in_flight, 1)
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "user hit stop"},
        }
        self.assertIsNone(client.send(cancel))
        self.assertIsNone(self.successResultOf(pending))
        self.assertEqual(len(resource.disconnected), 1)
        self.assertEqual(client.connection.in_flight, 0)

    def test_closing_the_connection_cancels_its_calls(self):
        resource = RecordingResource(hold=True)
        server, _ = make_server(resource)
        client = Client(self, server)
        pending = client.connection.handle(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "find_code", "arguments": {"query": "x"}},
            },
            CallContext(),
        )
        client.connection.close()
        self.assertIsNone(self.successResultOf(pending))
        self.assertEqual(len(resource.disconnected), 1)


class BatchTests(SynchronousTestCase):
    def test_batches_are_answered_in_2025_03_26(self):
        client = Client(self, make_server()[0])
        client.request("initialize", {"protocolVersion": "2025-03-26"})
        replies = client.send(
            [
                {"jsonrpc": "2.0", "id": "a", "method": "ping"},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": "b", "method": "nope"},
            ]
        )
        self.assertEqual([reply["id"] for reply in replies], ["a", "b"])
        self.assertEqual(replies[1]["error"]["code"], -32601)

    def test_batches_are_refused_in_other_revisions(self):
        client = Client(self, make_server()[0])
        client.request("initialize", {"protocolVersion": "2025-11-25"})
        reply = client.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
        self.assertEqual(reply["error"]["code"], -32600)
        self.assertIsNone(reply["id"])


class ModernEraTests(SynchronousTestCase):
    def test_discover_lists_modern_versions_with_cache_hints(self):
        client = Client(self, make_server()[0], default_version="2026-07-28")
        result = client.request("server/discover", {"_meta": MODERN_META})["result"]
        self.assertEqual(result["resultType"], "complete")
        self.assertEqual(result["supportedVersions"], ["2026-07-28"])
        self.assertEqual(result["_meta"][versions.SERVER_INFO_META_KEY]["name"], "eshu-mcp-server")
        self.assertIn("ttlMs", result)

    def test_discover_without_meta_is_invalid_params(self):
        client = Client(self, make_server()[0])
        self.assertEqual(client.request("server/discover", {})["error"]["code"], -32602)

    def test_unsupported_modern_version_names_the_supported_ones(self):
        client = Client(self, make_server()[0])
        meta = {versions.PROTOCOL_VERSION_META_KEY: "2099-01-01"}
        error = client.request("tools/list", {"_meta": meta})["error"]
        self.assertEqual(error["code"], -32022)
        self.assertEqual(error["data"], {"supported": ["2026-07-28"], "requested": "2099-01-01"})

    def test_modern_tools_list_and_call_are_stateless_and_complete(self):
        server, _ = make_server(page_size=200)
        client = Client(self, server, default_version="2026-07-28")
        listing = client.request("tools/list", {"_meta": MODERN_META})["result"]
        self.assertEqual(len(listing["tools"]), 162)
        self.assertEqual(listing["cacheScope"], "public")
        call = client.request(
            "tools/call", {"_meta": MODERN_META, "name": "find_code", "arguments": {"query": "a"}}
        )["result"]
        self.assertEqual(call["resultType"], "complete")
        self.assertEqual(call["structuredContent"]["data"], {"count": 2})

    def test_ping_is_gone_in_the_modern_revision(self):
        client = Client(self, make_server()[0])
        reply = client.request("ping", {"_meta": MODERN_META})
        self.assertEqual(reply["error"]["code"], -32601)


class ShutdownTests(SynchronousTestCase):
    """Calls still running when the server stops are answered, never left hanging."""

    def test_running_and_queued_calls_get_an_error_result_at_shutdown(self):
        server, resource = make_server(
            RecordingResource(hold=True), max_concurrent_calls=1, max_queued_calls=4
        )
        connection = server.connection(default_version="2025-11-25")
        calls = [
            connection.handle(
                {
                    "jsonrpc": "2.0",
                    "id": number,
                    "method": "tools/call",
                    "params": {"name": "list_indexed_repositories", "arguments": {}},
                },
                CallContext(),
            )
            for number in (1, 2)
        ]
        self.assertNoResult(calls[0])
        self.assertEqual(server.answer_calls_at_shutdown(), 2)
        for number, call in zip((1, 2), calls, strict=True):
            reply = self.successResultOf(call)
            self.assertEqual(reply["id"], number)
            self.assertTrue(reply["result"]["isError"])
            self.assertIn("shutting down", reply["result"]["content"][0]["text"])
        self.assertTrue(resource.requests[0]._disconnected)
        self.assertEqual(server.answer_calls_at_shutdown(), 0)

    def test_calls_the_client_cancelled_stay_unanswered(self):
        server, _ = make_server(RecordingResource(hold=True))
        connection = server.connection(default_version="2025-11-25")
        call = connection.handle(
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {"name": "list_indexed_repositories", "arguments": {}},
            },
            CallContext(),
        )
        connection.cancel_call(9)
        self.assertEqual(server.answer_calls_at_shutdown(), 0)
        self.assertIsNone(self.successResultOf(call))
