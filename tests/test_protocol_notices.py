"""Progress notifications for tool calls and the server's log for sessions that ask."""

from twisted.internet.task import Clock
from twisted.logger import Logger, globalLogPublisher
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.auth.principal import SCOPED, Principal
from eshu_mcp.catalog import ToolCatalog
from eshu_mcp.dispatch.inprocess import InProcessDispatcher
from eshu_mcp.protocol import versions
from eshu_mcp.protocol.notices import LOG_QUEUE_LIMIT, LogBridge
from eshu_mcp.protocol.server import CallContext, McpServer
from eshu_mcp.query.local.first_index import BuildProgress
from eshu_mcp.query.local.index.build.service import IndexService
from tests.support import FRESH_TRUTH, RecordingResource, envelope
from tests.test_api_resource import ThreadReactor


class Session:
    """One connection whose notifications land in a list."""

    def __init__(self, test, server, version="2025-11-25"):
        self.test = test
        self.clock = server.log_feed.clock
        self.connection = server.connection(default_version=version)
        self.sent: list[dict] = []
        self.connection.attach(self.sent.append)
        self.next_id = 0

    def request(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        return self.connection.handle(message, CallContext())

    def notices(self, method):
        return [message["params"] for message in self.sent if message.get("method") == method]


def make_server(clock, resource=None, build=None):
    resource = resource or RecordingResource(body=envelope({"count": 2}, FRESH_TRUTH))
    dispatcher = InProcessDispatcher(resource, clock)
    return McpServer(ToolCatalog.full(), dispatcher, clock=clock, build_progress=build), resource


CALL = {"name": "list_indexed_repositories", "arguments": {}}


class ProgressTests(SynchronousTestCase):
    def test_a_call_with_a_token_reports_accepted_dispatched_and_done(self):
        server, _ = make_server(Clock())
        session = Session(self, server)
        reply = self.successResultOf(
            session.request("tools/call", {**CALL, "_meta": {"progressToken": "t1"}})
        )
        self.assertFalse(reply["result"].get("isError"))
        progress = session.notices("notifications/progress")
        self.assertEqual([p["progress"] for p in progress], [1, 2, 3])
        self.assertEqual({p["progressToken"] for p in progress}, {"t1"})
        self.assertEqual(progress[-1]["total"], 3)
        self.assertTrue(progress[0]["message"].startswith("accepted"))
        self.assertEqual(progress[-1]["message"], "done")

    def test_a_call_without_a_token_sends_nothing_but_its_reply(self):
        server, _ = make_server(Clock())
        session = Session(self, server)
        self.successResultOf(session.request("tools/call", CALL))
        self.assertEqual(session.sent, [])

    def test_a_call_waiting_for_the_first_build_hears_its_steps(self):
        clock = Clock()
        index = IndexService("db.sqlite", ["repo"], watch=False, reactor=clock)
        resource = RecordingResource(hold=True)
        server, _ = make_server(clock, resource, BuildProgress(index))
        session = Session(self, server)
        answer = session.request("tools/call", {**CALL, "_meta": {"progressToken": 7}})
        for event in (
            {"phase": "walk", "files": 40, "to_parse": 40, "deleted": 0},
            {"phase": "parse", "done": 20, "total": 40},
            {"phase": "parse", "done": 40, "total": 40},
            {"phase": "resolve", "repo_id": "r"},
        ):
            index._on_event(event)
        messages = [p["message"] for p in session.notices("notifications/progress")]
        self.assertIn("indexing: 20/40 files parsed", messages)
        self.assertIn("indexing: resolving references", messages)
        held = resource.requests[0]
        held.setResponseCode(200)
        held.write(envelope({"repositories": []}, FRESH_TRUTH))
        held.finish()
        self.successResultOf(answer)
        index._on_event({"phase": "committed", "seq": 1, "entities": 1})
        progress = session.notices("notifications/progress")
        values = [p["progress"] for p in progress]
        self.assertEqual(values, sorted(set(values)))
        self.assertGreaterEqual(len(values), 6)
        self.assertEqual(progress[-1]["message"], "done")


class LoggingTests(SynchronousTestCase):
    def test_set_level_answers_empty_and_delivers_events_at_or_above_it(self):
        clock = Clock()
        server, _ = make_server(clock)
        session = Session(self, server)
        reply = self.successResultOf(session.request("logging/setLevel", {"level": "warning"}))
        self.assertEqual(reply["result"], {})
        server.log_feed.publish("info", "service", "index build 2 started")
        server.log_feed.publish("error", "service", "index build 2 failed: disk full")
        clock.advance(0)
        self.assertEqual(
            session.notices("notifications/message"),
            [{"level": "error", "logger": "service", "data": "index build 2 failed: disk full"}],
        )

    def test_sessions_that_did_not_ask_hear_nothing(self):
        clock = Clock()
        server, _ = make_server(clock)
        session = Session(self, server)
        server.log_feed.publish("emergency", "service", "x")
        clock.advance(0)
        self.assertEqual(session.sent, [])

    def test_unknown_level_is_invalid_params(self):
        server, _ = make_server(Clock())
        reply = self.successResultOf(Session(self, server).request("logging/setLevel", {}))
        self.assertEqual(reply["error"]["code"], -32602)

    def test_a_silent_session_costs_a_bounded_queue(self):
        clock = Clock()
        server, _ = make_server(clock)
        session = Session(self, server)
        self.successResultOf(session.request("logging/setLevel", {"level": "debug"}))
        for number in range(LOG_QUEUE_LIMIT * 4):
            server.log_feed.publish("info", "service", f"event {number}")
        clock.advance(0)
        self.assertEqual(len(session.notices("notifications/message")), LOG_QUEUE_LIMIT)

    def test_closed_sessions_leave_the_feed(self):
        server, _ = make_server(Clock())
        session = Session(self, server)
        self.successResultOf(session.request("logging/setLevel", {"level": "info"}))
        session.connection.close()
        self.assertEqual(len(server.log_feed), 0)

    def test_the_stateless_revision_has_no_set_level(self):
        server, _ = make_server(Clock())
        session = Session(self, server, version="2026-07-28")
        params = {
            "level": "info",
            "_meta": {
                versions.PROTOCOL_VERSION_META_KEY: "2026-07-28",
                versions.CLIENT_CAPABILITIES_META_KEY: {},
            },
        }
        reply = self.successResultOf(session.request("logging/setLevel", params))
        self.assertEqual(reply["error"]["code"], -32601)

    def test_the_bridge_passes_service_events_and_nothing_else(self):
        clock = Clock()
        server, _ = make_server(clock)
        session = Session(self, server)
        self.successResultOf(session.request("logging/setLevel", {"level": "info"}))
        handed_over = []
        clock.callFromThread = lambda f, *args: handed_over.append((f, args))
        bridge = LogBridge(server.log_feed, clock)
        Logger(namespace="eshu_mcp.query.local.index.build.service", observer=bridge).info(
            "index build {run} finished", run=3
        )
        Logger(namespace="eshu_mcp.auth.oidc", observer=bridge).info("token {t}", t="secret")
        Logger(namespace="eshu_mcp.dispatch.inprocess", observer=bridge).debug("dispatch x")
        for function, args in handed_over:
            function(*args)
        clock.advance(0)
        self.assertEqual(
            [m["data"] for m in session.notices("notifications/message")],
            ["index build 3 finished"],
        )


class BuildReportTests(SynchronousTestCase):
    def test_the_indexer_reports_parse_progress_twice_a_second_and_at_its_end(self):
        import io
        import json

        from eshu_mcp.query.local.index.build.progress import JsonLinesProgress

        now = [0.0]
        out = io.StringIO()
        report = JsonLinesProgress(out, clock=lambda: now[0])
        for done in range(50, 1001, 50):
            now[0] += 0.1
            report({"phase": "parse", "done": done, "total": 1000})
        parsed = [json.loads(line)["done"] for line in out.getvalue().splitlines()]
        self.assertEqual(parsed[0], 50)
        self.assertEqual(parsed[-1], 1000)
        self.assertLess(len(parsed), 8)
        self.assertGreater(len(parsed), 3)

    def test_unsubscribed_listeners_hear_no_more_of_the_build(self):
        index = IndexService("db.sqlite", ["repo"], watch=False, reactor=Clock())
        heard = []
        stop = BuildProgress(index).subscribe(heard.append)
        index._on_event({"phase": "parse", "done": 1, "total": 2})
        stop()
        index._on_event({"phase": "parse", "done": 2, "total": 2})
        self.assertEqual(heard, ["indexing: 1/2 files parsed"])

    def test_a_rebuild_behind_a_served_index_is_not_waited_for(self):
        index = IndexService("db.sqlite", ["repo"], watch=True, reactor=Clock())
        ready = [False]
        build = BuildProgress(index, lambda: ready[0])
        self.assertTrue(build.building())
        ready[0] = True
        self.assertFalse(build.building())
        index.state = "ready"
        self.assertFalse(build.building())


class LogScopeTests(SynchronousTestCase):
    """A session hears its own calls' events and the index events it may read, no more."""

    def setUp(self):
        self.clock = ThreadReactor()
        self.server, _ = make_server(self.clock)
        bridge = LogBridge(self.server.log_feed, self.clock)
        globalLogPublisher.addObserver(bridge)
        self.addCleanup(globalLogPublisher.removeObserver, bridge)
        self.index_log = Logger(namespace=IndexService.__module__)

    def session(self, principal=None, level="debug"):
        session = Session(self, self.server)
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "logging/setLevel",
            "params": {"level": level},
        }
        reply = self.successResultOf(
            session.connection.handle(message, CallContext(principal=principal))
        )
        self.assertEqual(reply["result"], {})
        return session

    def heard(self, session):
        self.clock.advance(0)
        return [m["data"] for m in session.notices("notifications/message")]

    def test_a_scoped_session_hears_only_index_events_of_its_repositories(self):
        alpha_only = Principal(mode=SCOPED, allowed_repository_ids=("repository:r_alpha",))
        scoped, everyone = self.session(alpha_only), self.session()
        for repo_id in ("repository:r_alpha", "repository:r_bravo", None):
            self.index_log.info(
                "index build 1: {path} built", path=f"/src/{repo_id}", repo_id=repo_id
            )
        self.assertEqual(self.heard(scoped), ["index build 1: /src/repository:r_alpha built"])
        self.assertEqual(len(self.heard(everyone)), 3)

    def test_a_token_granted_every_scope_hears_every_index_event(self):
        session = self.session(Principal(mode=SCOPED, all_scopes=True))
        self.index_log.info("index build 2 finished 2 repositories")
        self.assertEqual(self.heard(session), ["index build 2 finished 2 repositories"])

    def test_a_call_s_events_reach_only_the_session_that_made_it(self):
        caller, other = self.session(), self.session()
        dispatch_log = Logger(namespace=InProcessDispatcher.__module__)
        self.server.dispatcher.call("find_code", {"limit": "x"}, caller=caller.connection)
        dispatch_log.info("dispatch tool {tool}", tool="anonymous")
        own = [text for text in self.heard(caller) if "find_code" in text]
        self.assertEqual(len(own), 1)
        self.assertEqual(self.heard(other), ["dispatch tool anonymous"])
