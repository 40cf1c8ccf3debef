"""
A client that hangs up stops the work, not just the reply: a Streamable HTTP POST
carrying a tool call is dropped mid-query, and the SQLite statement serving it is
interrupted, through every layer in between (transport, protocol, dispatch, the
synthesized request, the local query Resource).
"""

import threading
from typing import Any

from twisted.python.threadpool import ThreadPool
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.framework import RouteTable
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from tests.support import HttpExchange, post_json, web_site
from tests.test_api_resource import QueueReactor, endless_query, small_index

ACCEPT = b"application/json, text/event-stream"


class HangUpTests(SynchronousTestCase):
    def test_dropping_the_post_interrupts_the_query(self):
        index, _ = small_index(self)
        started = threading.Event()
        outcome: dict[str, Any] = {}
        routes = RouteTable()

        routes.add("GET", "/repositories", lambda ctx: endless_query(ctx, started.set, outcome))

        pool = ThreadPool(minthreads=1, maxthreads=1, name="hang-up-test")
        pool.start()
        self.addCleanup(pool.stop)
        query_reactor = QueueReactor()
        resource = LocalQueryResource(
            index.path, reactor=query_reactor, threadpool=pool, routes=routes
        )
        site, _, _ = web_site(resource)

        opening = HttpExchange(site)
        post_json(
            opening,
            b"/mcp",
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
            accept=ACCEPT,
        )
        session = opening.response().header(b"mcp-session-id")
        call = HttpExchange(site)
        post_json(
            call,
            b"/mcp",
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "list_indexed_repositories"},
            },
            accept=ACCEPT,
            mcp_session_id=session,
        )
        self.assertTrue(started.wait(10), "the query never started")
        call.disconnect()
        query_reactor.run_next()  # the query started: its deadline is armed (it already left)
        query_reactor.run_next()  # its outcome
        self.assertEqual(outcome["error"], "interrupted")
        self.assertEqual(call.transport.value(), b"")
