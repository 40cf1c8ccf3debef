"""
Hostile clients against the daemon's real HTTP tree, in memory and on a task.Clock.

Each case shows three things: the bound holds (with the error a client would see), another
client is served while the hostile one is at it, and the memory the hostile client made the
daemon allocate is given back (tracemalloc, within 10% of the start) once it is gone.
"""

import gc
import json
import tracemalloc

from twisted.logger import globalLogBeginner, globalLogPublisher
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET

from eshu_mcp.catalog import contract, tools, toolsets
from eshu_mcp.dispatch import routes, validation
from tests.support import FRESH_TRUTH, HttpExchange, envelope, post_json, web_site

ACCEPT = b"application/json, text/event-stream"
HANDSHAKE = b"2025-03-26"
QUEUE_BYTES = 64 * 1024
ROWS = [{"name": f"function_{n}", "path": f"src/module_{n}.py", "line": n} for n in range(20)]


class GateResource(Resource):
    """
    A query Resource that holds the requests whose path contains ``held_path`` until the
    test releases them, and answers every other request at once.
    """

    isLeaf = True

    def __init__(self, held_path: bytes = b"/code/dead-code") -> None:
        super().__init__()
        self.held_path = held_path
        self.held: list = []
        self.answered = 0
        self.body = envelope({"results": ROWS, "count": len(ROWS)}, FRESH_TRUTH)

    def render(self, request):
        if self.held_path in request.path:
            self.held.append(request)
            return NOT_DONE_YET
        self.answered += 1
        request.setHeader(b"content-type", b"application/json")
        return self.body

    def release(self) -> int:
        """Answer every held request still wanted; how many were answered."""
        taken, self.held = self.held, []
        for request in taken:
            if not request._disconnected:
                request.setHeader(b"content-type", b"application/json")
                request.write(self.body)
                request.finish()
        return len(taken)


def call(request_id, tool="list_indexed_repositories", **arguments):
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": HANDSHAKE.decode(), "capabilities": {}},
}


class HostileCase(SynchronousTestCase):
    """A site over a GateResource, with memory accounting from the first request on."""

    site_options: dict = {}

    def setUp(self):
        # pytest never starts Twisted's logging, so every log event would stay in the
        # start-up buffer; take the buffer out for the test so memory is the daemon's own.
        buffer = globalLogBeginner._temporaryObserver
        if buffer is not None:
            globalLogPublisher.removeObserver(buffer)
            self.addCleanup(globalLogPublisher.addObserver, buffer)
        # The daemon's start is what a fresh one builds: its catalog, routes and
        # argument checks (module caches, emptied here so they are built under tracing),
        # its site and sessions, and one warm-up request of each kind a test makes.
        for cached in (
            contract.load_contract,
            tools.read_only_tools,
            toolsets.embedded_route_modes,
            routes._resolvers,
            validation._compiled,
            validation.tool_arguments,
        ):
            cached.cache_clear()
        gc.collect()
        tracemalloc.start()
        self.addCleanup(tracemalloc.stop)
        self.gate = GateResource()
        self.site, self.app, self.clock = web_site(self.gate, **self.site_options)
        self.connections: list[HttpExchange] = []

    def connect(self) -> HttpExchange:
        """A client connection, closed by :meth:`hang_up_all` as its client would close it."""
        exchange = HttpExchange(self.site)
        self.connections.append(exchange)
        return exchange

    def hang_up(self, exchange: HttpExchange) -> None:
        """One client closes its connection (once)."""
        if exchange in self.connections:
            self.connections.remove(exchange)
            exchange.disconnect()

    def hang_up_all(self) -> None:
        """Every client this test opened closes its connection."""
        for exchange in list(self.connections):
            self.hang_up(exchange)

    def start_memory(self) -> None:
        """Call after a warm-up round, so lazy caches are not counted as growth."""
        gc.collect()
        self.memory_start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()

    def assert_memory_returned(self) -> None:
        self.hang_up_all()
        self.clock.advance(0)
        gc.collect()
        current, _peak = tracemalloc.get_traced_memory()
        self.assertLessEqual(current, self.memory_start * 1.10, "memory not given back")

    def peak_growth(self) -> int:
        return tracemalloc.get_traced_memory()[1] - self.memory_start

    def post(self, message, path=b"/mcp", session=None, raw=None, **headers):
        exchange = self.connect()
        extra = {"accept": ACCEPT, "mcp_protocol_version": HANDSHAKE, **headers}
        if session is not None:
            extra["mcp_session_id"] = session
        if raw is not None:
            merged = {b"content-type": b"application/json"}
            merged.update({k.replace("_", "-").encode(): v for k, v in extra.items()})
            exchange.request(b"POST", path, headers=merged, body=raw)
        else:
            post_json(exchange, path, message, **extra)
        return exchange

    def open_session(self) -> bytes:
        return self.post(INITIALIZE).response().header(b"mcp-session-id")

    def end_session(self, session: bytes) -> None:
        exchange = self.connect()
        exchange.request(b"DELETE", b"/mcp", headers={b"mcp-session-id": session})

    def served(self, request_id=99) -> dict:
        """Another, well-behaved client's tool call, answered now."""
        reply = self.post(
            call(request_id),
            mcp_protocol_version=b"2026-07-28",
            mcp_method=b"tools/call",
            mcp_name=b"list_indexed_repositories",
        ).response()
        self.assertEqual(reply.status, 200)
        result = reply.json()["result"]
        self.assertFalse(result.get("isError"), result)
        return result

    def metric(self, line_prefix: str) -> float:
        exchange = self.connect()
        exchange.request(b"GET", b"/metrics")
        for line in exchange.response().body.decode().splitlines():
            if line.startswith(line_prefix + " "):
                return float(line.rsplit(" ", 1)[1])
        return 0.0


class AmplificationTests(HostileCase):
    def warm_up(self):
        session = self.open_session()
        self.post([{"bad": 1}], session=session).response()
        self.post([call(1, "find_dead_code")], session=session)
        self.gate.release()
        self.served()
        self.end_session(session)

    def test_a_four_megabyte_batch_of_invalid_items_gets_one_short_error(self):
        self.warm_up()
        self.start_memory()
        session = self.open_session()
        body = b"[" + b"0," * 1_999_999 + b"0]"
        reply = self.post(None, session=session, raw=body).response()
        del body
        self.assertEqual(reply.status, 200)
        self.assertLess(len(reply.body), 300)
        self.assertEqual(reply.json()["error"]["code"], -32600)
        self.assertIn("--max-batch", reply.json()["error"]["message"])
        self.served()
        self.assertLess(self.peak_growth(), 64 * 1024 * 1024)
        self.end_session(session)
        del reply
        self.assertEqual(len(self.app.streamable_sessions), 0)
        self.assert_memory_returned()

    def test_batches_of_slow_calls_take_a_few_query_slots_and_others_are_served(self):
        self.warm_up()
        self.start_memory()
        session = self.open_session()
        batches = [
            self.post([call(b * 100 + n, "find_dead_code") for n in range(100)], session=session)
            for b in range(3)
        ]
        # 4 of 300 calls run; the rest wait their turn, and a fourth 100 would not fit the queue.
        self.assertEqual(len(self.gate.held), 4)
        before = self.gate.answered
        self.served()
        self.assertEqual(self.gate.answered, before + 1)
        rounds = 0
        while self.gate.release() and rounds < 200:
            rounds += 1
            self.assertLessEqual(len(self.gate.held), 4)
        replies = [batch.response().json() for batch in batches]
        self.assertEqual([len(reply) for reply in replies], [100, 100, 100])
        answered = [item for reply in replies for item in reply if "result" in item]
        busy = [item for reply in replies for item in reply if "error" in item]
        self.assertEqual((len(answered), len(busy)), (260, 40))
        self.assertEqual(busy[0]["error"]["code"], -32000)
        self.assertIn("--max-queued-calls", busy[0]["error"]["message"])
        self.end_session(session)
        del batches, replies, answered, busy
        self.assert_memory_returned()

    def test_a_client_that_goes_away_frees_its_queued_calls(self):
        self.warm_up()
        self.start_memory()
        session = self.open_session()
        batch = self.post([call(n, "find_dead_code") for n in range(100)], session=session)
        self.assertEqual(len(self.gate.held), 4)
        self.hang_up(batch)
        self.end_session(session)
        self.assertEqual(self.gate.release(), 4)
        self.assertEqual(self.gate.held, [])
        self.served()
        del batch
        self.assert_memory_returned()


class NonFiniteTests(HostileCase):
    FRAMES = (
        b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
        b'[{"jsonrpc":"2.0","id":-Infinity,"method":"ping"}]',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"find_code",'
        b'"arguments":{"query":"x","limit":Infinity}}}',
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"find_code",'
        b'"arguments":{"query":"x","filters":[{"min":-1e999}]}}}',
    )

    def test_every_transport_answers_a_parse_error_and_keeps_serving(self):
        stream = self.connect()
        stream.request(b"GET", b"/sse")
        body = stream.response().body.decode()
        endpoint = body.split("data: ", 1)[1].split("\n", 1)[0].encode()
        session = self.open_session()
        self.served()
        self.start_memory()
        for frame in self.FRAMES:
            for path, headers in (
                (b"/mcp", {"session": session}),
                (b"/mcp", {"mcp_protocol_version": b"2026-07-28"}),
                (endpoint, {}),
                (b"/mcp/message", {}),
            ):
                with self.subTest(frame=frame, path=path, headers=headers):
                    reply = self.post(None, path=path, raw=frame, **headers).response()
                    self.assertEqual(reply.status, 400)
                    self.assertEqual(reply.json()["error"]["code"], -32700)
        self.assertEqual(self.gate.answered, 1)
        ping = {"jsonrpc": "2.0", "id": 5, "method": "ping"}
        self.assertEqual(self.post(ping, session=session).response().json()["result"], {})
        self.served()
        self.assert_memory_returned()


ABANDONED = 150


class ReapingTests(HostileCase):
    site_options = {"session_idle_timeout": 60}

    def setUp(self):
        super().setUp()
        for registry in (self.app.streamable_sessions, self.app.sse_sessions):
            registry.startService()
            self.addCleanup(registry.stopService)

    def test_abandoned_sessions_of_both_transports_are_reaped_and_counted(self):
        session = self.open_session()
        self.post(call(1), session=session)
        self.end_session(session)
        self.served()
        self.start_memory()
        abandoned = []
        for n in range(ABANDONED):
            session = self.open_session()
            self.post(call(n), session=session).response()
            stream = self.connect()
            stream.request(b"GET", b"/sse")
            abandoned.append(stream)
        self.assertEqual(
            (len(self.app.streamable_sessions), len(self.app.sse_sessions)), (ABANDONED, ABANDONED)
        )
        for _ in range(4):
            self.clock.advance(30)
            self.served()
        self.assertEqual((len(self.app.streamable_sessions), len(self.app.sse_sessions)), (0, 0))
        self.assertEqual(
            self.metric('eshu_mcp_sessions_reaped_total{transport="streamable-http"}'), ABANDONED
        )
        self.assertEqual(self.metric('eshu_mcp_sessions_reaped_total{transport="sse"}'), ABANDONED)
        del abandoned, stream
        self.assert_memory_returned()


class SlowReaderTests(HostileCase):
    site_options = {"max_queued_bytes": QUEUE_BYTES}

    def test_a_reader_that_stops_reading_is_dropped_at_the_byte_bound(self):
        warm = self.connect()
        warm.request(b"GET", b"/sse")
        self.hang_up(warm)
        self.served()
        self.start_memory()
        stream = self.connect()
        stream.request(b"GET", b"/sse")
        body = stream.response().body.decode()
        endpoint = body.split("data: ", 1)[1].split("\n", 1)[0].encode()
        (session,) = self.app.sse_sessions._sessions.values()
        stream.transport.producer.pauseProducing()  # the client stops reading
        most_queued = posted = 0
        while not session.stream.closed and posted < 500:
            self.post(call(posted), path=endpoint).response()
            posted += 1
            most_queued = max(most_queued, session.stream.queued_bytes)
            if posted % 25 == 0:
                self.served(1000 + posted)
        self.assertTrue(session.stream.closed)
        self.assertLessEqual(most_queued, QUEUE_BYTES)
        self.assertGreater(most_queued, QUEUE_BYTES // 2)
        self.assertTrue(stream.transport.disconnecting)
        self.assertEqual(len(self.app.sse_sessions), 0)
        self.assertEqual(self.metric('eshu_mcp_slow_readers_dropped_total{transport="sse"}'), 1.0)
        self.served()
        self.hang_up(stream)
        del stream, session
        self.assert_memory_returned()

    def test_a_streamable_get_stream_left_unread_is_dropped_too(self):
        session = self.open_session()
        self.served()
        self.start_memory()
        stream = self.connect()
        stream.request(
            b"GET", b"/mcp", headers={b"mcp-session-id": session, b"accept": b"text/event-stream"}
        )
        stream.transport.producer.pauseProducing()
        (held,) = self.app.streamable_sessions._sessions.values()
        flood = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"pad": "x" * 900}}
        sent = 0
        while not held.stream.closed and sent < 500:
            held.connection.notify(flood)
            sent += 1
        self.assertTrue(held.stream.closed)
        self.assertLess(sent, 200)
        self.assertEqual(
            self.metric('eshu_mcp_slow_readers_dropped_total{transport="streamable-http"}'), 1.0
        )
        self.served()
        self.hang_up(stream)
        self.end_session(session)
        del stream, held
        self.assert_memory_returned()


class PipeliningTests(HostileCase):
    @staticmethod
    def pipelined(messages) -> bytes:
        requests = []
        for message in messages:
            body = json.dumps(message).encode()
            requests.append(
                b"POST /mcp/message HTTP/1.1\r\nhost: 127.0.0.1\r\n"
                b"content-type: application/json\r\n"
                b"content-length: %d\r\n\r\n" % len(body) + body
            )
        return b"".join(requests)

    def test_a_connection_pipelining_hundreds_of_calls_is_refused_after_the_bound(self):
        warm = self.connect()
        warm.channel.dataReceived(self.pipelined([call(1), call(2)]))
        self.served()
        self.start_memory()
        hostile = self.connect()
        data = self.pipelined([call(0, "find_dead_code")] + [call(n) for n in range(1, 300)])
        hostile.channel.dataReceived(data)
        del data
        self.assertEqual(len(self.gate.held), 1)
        self.served()
        self.gate.release()
        out = hostile.transport.value()
        self.assertEqual(out.count(b"HTTP/1.1 200 OK"), 17)
        self.assertEqual(out.count(b"HTTP/1.1 429 Too Many Requests"), 1)
        self.assertIn(b"--max-pipelined", out)
        self.assertTrue(hostile.transport.disconnecting)
        self.assertEqual(self.metric("eshu_mcp_pipelining_refused_total"), 1.0)
        self.served()
        self.hang_up(hostile)
        del hostile, out
        self.assert_memory_returned()

    def test_requests_sent_one_after_another_are_never_refused(self):
        client = self.connect()
        for n in range(40):
            client.channel.dataReceived(self.pipelined([call(n)]))
        self.assertEqual(client.transport.value().count(b"HTTP/1.1 200 OK"), 40)
        self.assertFalse(client.transport.disconnecting)


class RebindingTests(HostileCase):
    PATHS = (
        (b"GET", b"/api/v0/repositories"),
        (b"POST", b"/api/v0/content/files/read"),
        (b"POST", b"/api/v0/code/dead-code"),
        (b"GET", b"/metrics"),
        (b"GET", b"/health"),
        (b"HEAD", b"/healthz"),
        (b"GET", b"/readyz"),
        (b"GET", b"/.well-known/oauth-protected-resource"),
        (b"GET", b"/sse"),
        (b"GET", b"/mcp"),
        (b"POST", b"/mcp"),
        (b"DELETE", b"/mcp"),
        (b"POST", b"/mcp/message"),
        (b"GET", b"/no/such/path"),
    )

    def fetch(self, method, path, **headers):
        exchange = self.connect()
        extra = {name.encode(): value for name, value in headers.items()}
        exchange.request(method, path, headers=extra, body=b"{}" if method == b"POST" else None)
        return exchange.response()

    def test_a_rebound_page_reaches_nothing_on_any_path(self):
        self.fetch(b"GET", b"/api/v0/repositories", host=b"evil.example.com")
        self.served()
        self.start_memory()
        answered = self.gate.answered
        for method, path in self.PATHS:
            with self.subTest(method=method, path=path):
                host = self.fetch(method, path, host=b"evil.example.com:8080")
                self.assertEqual(host.status, 421)
                origin = self.fetch(method, path, origin=b"http://evil.example.com")
                self.assertEqual(origin.status, 403)
        self.assertEqual(self.gate.answered, answered)
        self.assertEqual(self.gate.held, [])
        self.served()
        self.assert_memory_returned()
