"""Streamable HTTP on /mcp: sessions, the GET stream, DELETE, origin checks, both eras."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.protocol import versions
from tests.support import HttpExchange, RecordingResource, post_json, web_site

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
}
ACCEPT = b"application/json, text/event-stream"
MODERN = {
    versions.PROTOCOL_VERSION_META_KEY: "2026-07-28",
    versions.CLIENT_CAPABILITIES_META_KEY: {},
}


class HandshakeEraTests(SynchronousTestCase):
    def setUp(self):
        self.resource = RecordingResource(body=b'{"count": 1}')
        self.site, self.app, self.clock = web_site(self.resource)

    def post(self, message, **headers):
        exchange = HttpExchange(self.site)
        post_json(exchange, b"/mcp", message, accept=ACCEPT, **headers)
        return exchange.response()

    def open_session(self) -> bytes:
        reply = self.post(INITIALIZE)
        self.assertEqual(reply.status, 200)
        return reply.header(b"mcp-session-id")

    def test_initialize_issues_a_session_id(self):
        reply = self.post(INITIALIZE)
        self.assertEqual(reply.json()["result"]["protocolVersion"], "2025-11-25")
        self.assertRegex(reply.header(b"mcp-session-id").decode(), r"^[\x21-\x7e]{20,}$")
        self.assertEqual(len(self.app.streamable_sessions), 1)

    def test_requests_in_a_session_are_answered_as_json(self):
        session = self.open_session()
        ack = self.post(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            mcp_session_id=session,
            mcp_protocol_version=b"2025-11-25",
        )
        self.assertEqual((ack.status, ack.body), (202, b""))
        reply = self.post(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "find_code", "arguments": {"query": "x"}},
            },
            mcp_session_id=session,
            mcp_protocol_version=b"2025-11-25",
        )
        self.assertEqual(reply.status, 200)
        self.assertEqual(reply.json()["result"]["structuredContent"]["data"], {"count": 1})

    def test_missing_and_unknown_sessions(self):
        missing = self.post({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        self.assertEqual(missing.status, 400)
        unknown = self.post({"jsonrpc": "2.0", "id": 2, "method": "ping"}, mcp_session_id=b"x")
        self.assertEqual(unknown.status, 404)
        self.assertEqual(unknown.json()["id"], 2)

    def test_unsupported_protocol_version_header_is_400(self):
        session = self.open_session()
        reply = self.post(
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
            mcp_session_id=session,
            mcp_protocol_version=b"1999-01-01",
        )
        self.assertEqual(reply.status, 400)

    def test_delete_ends_the_session(self):
        session = self.open_session()
        exchange = HttpExchange(self.site)
        exchange.request(b"DELETE", b"/mcp", headers={b"mcp-session-id": session})
        self.assertEqual(exchange.response().status, 204)
        reply = self.post({"jsonrpc": "2.0", "id": 2, "method": "ping"}, mcp_session_id=session)
        self.assertEqual(reply.status, 404)

    def test_get_opens_the_session_stream_once(self):
        session = self.open_session()
        stream = HttpExchange(self.site)
        headers = {b"mcp-session-id": session, b"accept": b"text/event-stream"}
        stream.request(b"GET", b"/mcp", headers=headers)
        self.assertEqual(stream.response().header(b"content-type"), b"text/event-stream")
        second = HttpExchange(self.site)
        second.request(b"GET", b"/mcp", headers=headers)
        self.assertEqual(second.response().status, 409)
        self.clock.advance(30)
        self.assertTrue(stream.response().body.endswith(b": keepalive\n\n"))

    def test_dropping_a_post_cancels_its_call(self):
        resource = RecordingResource(hold=True)
        site, _, _ = web_site(resource)
        first = HttpExchange(site)
        post_json(first, b"/mcp", INITIALIZE, accept=ACCEPT)
        session = first.response().header(b"mcp-session-id")
        call = HttpExchange(site)
        post_json(
            call,
            b"/mcp",
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "find_code", "arguments": {"query": "x"}},
            },
            accept=ACCEPT,
            mcp_session_id=session,
        )
        self.assertEqual(len(resource.requests), 1)
        call.disconnect()
        self.assertEqual(len(resource.disconnected), 1)

    def test_idle_sessions_expire(self):
        self.app.streamable_sessions.startService()
        self.open_session()
        self.clock.advance(31 * 60)
        self.assertEqual(len(self.app.streamable_sessions), 0)
        self.app.streamable_sessions.stopService()

    def test_foreign_origin_is_403_and_foreign_host_is_421(self):
        reply = self.post(INITIALIZE, origin=b"http://evil.example.com")
        self.assertEqual(reply.status, 403)
        exchange = HttpExchange(self.site)
        exchange.request(
            b"POST",
            b"/mcp",
            headers={b"host": b"evil.example.com", b"accept": ACCEPT},
            body=b"{}",
        )
        self.assertEqual(exchange.response().status, 421)

    def test_loopback_origin_is_allowed(self):
        reply = self.post(INITIALIZE, origin=b"http://localhost:6274")
        self.assertEqual(reply.status, 200)

    def test_parse_error_and_unacceptable_accept(self):
        exchange = HttpExchange(self.site)
        exchange.request(b"POST", b"/mcp", headers={b"accept": ACCEPT}, body=b"nope")
        self.assertEqual(exchange.response().status, 400)
        exchange = HttpExchange(self.site)
        exchange.request(b"POST", b"/mcp", headers={b"accept": b"text/html"}, body=b"{}")
        self.assertEqual(exchange.response().status, 406)

    def test_other_methods_are_405(self):
        exchange = HttpExchange(self.site)
        exchange.request(b"PUT", b"/mcp")
        reply = exchange.response()
        self.assertEqual(reply.status, 405)
        self.assertEqual(reply.header(b"allow"), b"DELETE, GET, HEAD, POST")


class ModernEraTests(SynchronousTestCase):
    def setUp(self):
        self.site, self.app, _ = web_site(RecordingResource(body=b'{"count": 3}'))

    def post(self, message, **headers):
        exchange = HttpExchange(self.site)
        headers.setdefault("mcp_protocol_version", b"2026-07-28")
        post_json(exchange, b"/mcp", message, accept=ACCEPT, **headers)
        return exchange.response()

    def test_discover_is_stateless(self):
        reply = self.post(
            {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN}},
            mcp_method=b"server/discover",
        )
        self.assertEqual(reply.status, 200)
        self.assertIsNone(reply.header(b"mcp-session-id"))
        self.assertEqual(reply.json()["result"]["supportedVersions"], ["2026-07-28"])

    def test_tool_call_needs_matching_routing_headers(self):
        message = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"_meta": MODERN, "name": "list_indexed_repositories"},
        }
        good = self.post(message, mcp_method=b"tools/call", mcp_name=b"list_indexed_repositories")
        self.assertEqual(good.status, 200)
        self.assertEqual(good.json()["result"]["structuredContent"]["data"], {"count": 3})
        bad = self.post(message, mcp_method=b"tools/call", mcp_name=b"find_code")
        self.assertEqual(bad.status, 400)
        self.assertEqual(bad.json()["error"]["code"], -32020)

    def test_unknown_method_is_404(self):
        reply = self.post(
            {"jsonrpc": "2.0", "id": 3, "method": "nope", "params": {"_meta": MODERN}},
            mcp_method=b"nope",
        )
        self.assertEqual(reply.status, 404)

    def test_notifications_are_accepted(self):
        reply = self.post({"jsonrpc": "2.0", "method": "notifications/cancelled"})
        self.assertEqual(reply.status, 202)

    def test_get_and_delete_are_405(self):
        for method in (b"GET", b"DELETE"):
            exchange = HttpExchange(self.site)
            exchange.request(method, b"/mcp", headers={b"mcp-protocol-version": b"2026-07-28"})
            reply = exchange.response()
            self.assertEqual(reply.status, 405)
            self.assertEqual(reply.header(b"allow"), b"POST")


def sse_messages(body: bytes) -> list[dict]:
    """The JSON-RPC messages of a text/event-stream body, in order."""
    import json

    return [
        json.loads(line[len(b"data: ") :])
        for line in body.split(b"\n")
        if line.startswith(b"data: ")
    ]


class ProgressStreamTests(SynchronousTestCase):
    def setUp(self):
        self.resource = RecordingResource(body=b'{"count": 1}')
        self.site, self.app, self.clock = web_site(self.resource)

    def call(self, meta, *, accept=ACCEPT, **headers):
        exchange = HttpExchange(self.site)
        message = {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"_meta": meta, "name": "list_indexed_repositories"},
        }
        post_json(exchange, b"/mcp", message, accept=accept, **headers)
        return exchange.response()

    def test_a_handshake_call_with_a_token_is_answered_as_its_own_stream(self):
        first = HttpExchange(self.site)
        post_json(first, b"/mcp", INITIALIZE, accept=ACCEPT)
        session = first.response().header(b"mcp-session-id")
        reply = self.call({"progressToken": "p"}, mcp_session_id=session)
        self.assertEqual(reply.header(b"content-type"), b"text/event-stream")
        messages = sse_messages(reply.body)
        progress = [m["params"]["progress"] for m in messages[:-1]]
        self.assertEqual(progress, [1, 2, 3])
        self.assertEqual(messages[-1]["id"], 9)
        self.assertEqual(messages[-1]["result"]["structuredContent"]["data"], {"count": 1})

    def test_a_stateless_call_with_a_token_streams_progress_then_the_result(self):
        reply = self.call(
            {**MODERN, "progressToken": 4},
            mcp_protocol_version=b"2026-07-28",
            mcp_method=b"tools/call",
            mcp_name=b"list_indexed_repositories",
        )
        messages = sse_messages(reply.body)
        self.assertEqual(
            [m.get("method") for m in messages],
            ["notifications/progress"] * 3 + [None],
        )
        self.assertEqual(messages[-1]["result"]["resultType"], "complete")

    def test_a_call_without_a_token_keeps_its_json_reply(self):
        reply = self.call(
            MODERN,
            mcp_protocol_version=b"2026-07-28",
            mcp_method=b"tools/call",
            mcp_name=b"list_indexed_repositories",
        )
        self.assertEqual(reply.header(b"content-type"), b"application/json")
        self.assertEqual(reply.json()["id"], 9)

    def test_a_client_that_takes_only_json_gets_json(self):
        reply = self.call(
            {**MODERN, "progressToken": 4},
            accept=b"application/json",
            mcp_protocol_version=b"2026-07-28",
            mcp_method=b"tools/call",
            mcp_name=b"list_indexed_repositories",
        )
        self.assertEqual(reply.json()["id"], 9)

    def test_a_stateless_request_naming_a_log_level_hears_the_log_while_it_runs(self):
        resource = RecordingResource(hold=True)
        site, app, clock = web_site(resource)
        exchange = HttpExchange(site)
        message = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "_meta": {**MODERN, "io.modelcontextprotocol/logLevel": "warning"},
                "name": "list_indexed_repositories",
            },
        }
        post_json(
            exchange,
            b"/mcp",
            message,
            accept=ACCEPT,
            mcp_protocol_version=b"2026-07-28",
            mcp_method=b"tools/call",
            mcp_name=b"list_indexed_repositories",
        )
        feed = app.server.log_feed
        feed.publish("info", "service", "index build 2 started")
        feed.publish("warning", "service", "index build 2 failed: no space")
        clock.advance(0)
        held = resource.requests[0]
        held.setResponseCode(200)
        held.write(b'{"count": 1}')
        held.finish()
        messages = sse_messages(exchange.response().body)
        self.assertEqual(messages[0]["method"], "notifications/message")
        self.assertEqual(messages[0]["params"]["data"], "index build 2 failed: no space")
        self.assertEqual(messages[-1]["id"], 3)
        self.assertEqual(len(messages), 2)
        self.assertEqual(len(feed), 0)

    def test_dropping_a_streamed_call_cancels_it(self):
        resource = RecordingResource(hold=True)
        site, _, _ = web_site(resource)
        exchange = HttpExchange(site)
        message = {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {
                "_meta": {**MODERN, "progressToken": 1},
                "name": "list_indexed_repositories",
            },
        }
        post_json(
            exchange,
            b"/mcp",
            message,
            accept=ACCEPT,
            mcp_protocol_version=b"2026-07-28",
            mcp_method=b"tools/call",
            mcp_name=b"list_indexed_repositories",
        )
        self.assertEqual(len(sse_messages(exchange.response().body)), 2)
        exchange.disconnect()
        self.assertEqual(len(resource.disconnected), 1)


class ScopedLogTests(SynchronousTestCase):
    """The guard's principal reaches the session's log: a scoped token hears its own only."""

    def setUp(self):
        import json as _json

        from twisted.logger import Logger, globalLogPublisher

        from eshu_mcp.auth.scoped import token_sha256
        from eshu_mcp.protocol.notices import LogBridge

        registry = self.mktemp()
        with open(registry, "w") as handle:
            _json.dump(
                {
                    "version": 1,
                    "tokens": [
                        {
                            "token_sha256": token_sha256("alpha-token"),
                            "tenant_id": "t",
                            "workspace_id": "w",
                            "allowed_repository_ids": ["repository:r_alpha"],
                        }
                    ],
                },
                handle,
            )
        self.site, self.app, self.clock = web_site(environ={"ESHU_SCOPED_TOKENS_FILE": registry})
        self.clock.callFromThread = lambda f, *args: f(*args)
        bridge = LogBridge(self.app.server.log_feed, self.clock)
        globalLogPublisher.addObserver(bridge)
        self.addCleanup(globalLogPublisher.removeObserver, bridge)
        self.index_log = Logger(namespace="eshu_mcp.query.local.index.build.service")

    def post(self, message, **headers):
        exchange = HttpExchange(self.site)
        post_json(
            exchange,
            b"/mcp",
            message,
            accept=ACCEPT,
            authorization=b"Bearer alpha-token",
            **headers,
        )
        return exchange.response()

    def test_a_scoped_session_s_stream_carries_only_its_repositories_index_events(self):
        session = self.post(INITIALIZE).header(b"mcp-session-id")
        stream = HttpExchange(self.site)
        stream.request(
            b"GET",
            b"/mcp",
            headers={
                b"mcp-session-id": session,
                b"accept": b"text/event-stream",
                b"authorization": b"Bearer alpha-token",
            },
        )
        level = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "logging/setLevel",
            "params": {"level": "info"},
        }
        self.assertEqual(self.post(level, mcp_session_id=session).status, 200)
        for repo_id in ("repository:r_alpha", "repository:r_bravo"):
            self.index_log.info(
                "index build 1: {path} built", path=f"/src/{repo_id}", repo_id=repo_id
            )
        self.index_log.info("index build 1 finished 2 repositories")
        self.clock.advance(0)
        body = stream.response().body
        self.assertIn(b"/src/repository:r_alpha built", body)
        self.assertNotIn(b"r_bravo", body)
        self.assertNotIn(b"2 repositories", body)
