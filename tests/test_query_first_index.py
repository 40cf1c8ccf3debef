"""Requests that arrive before the first index build wait for it."""

from twisted.internet import defer
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.server import Site

from eshu_mcp.query.local.first_index import AwaitFirstIndex
from tests.support import HttpExchange, RecordingResource


class IndexBuild:
    """The part of IndexService the gate uses: a state and whenReady()."""

    def __init__(self):
        self.state = "building"
        self.waiters = []

    def whenReady(self):
        waiter = defer.Deferred()
        self.waiters.append(waiter)
        return waiter

    def finish(self, state="ready"):
        self.state = state
        for waiter in self.waiters:
            waiter.callback(self)


class AwaitFirstIndexTests(SynchronousTestCase):
    def setUp(self):
        self.build = IndexBuild()
        self.ready = False
        self.inner = RecordingResource(body=b'{"ok": true}')
        gate = AwaitFirstIndex(self.inner, self.build, lambda: self.ready)
        self.exchange = HttpExchange(Site(gate))

    def test_requests_wait_for_the_first_build(self):
        self.exchange.request(b"GET", b"/repositories")
        self.assertEqual(self.inner.requests, [])
        self.ready = True
        self.build.finish()
        self.assertEqual(self.exchange.response().body, b'{"ok": true}')

    def test_a_failed_build_lets_requests_through(self):
        self.exchange.request(b"GET", b"/repositories")
        self.build.finish("failed")
        self.assertEqual(len(self.inner.requests), 1)

    def test_ready_backend_answers_at_once(self):
        self.ready = True
        self.exchange.request(b"GET", b"/repositories")
        self.assertEqual(self.exchange.response().status, 200)

    def test_a_client_that_leaves_stops_waiting(self):
        self.exchange.request(b"GET", b"/repositories")
        self.exchange.disconnect()
        self.build.finish()
        self.assertEqual(self.inner.requests, [])


class EarlierIndexTests(SynchronousTestCase):
    """An index left by an earlier run answers while the first build of this one runs."""

    def test_a_request_goes_through_once_the_backend_sees_an_active_generation(self):
        build = IndexBuild()
        seen = defer.Deferred()
        inner = RecordingResource(body=b'{"ok": true}')
        gate = AwaitFirstIndex(inner, build, lambda: False, lambda: seen)
        exchange = HttpExchange(Site(gate))
        exchange.request(b"GET", b"/repositories")
        self.assertEqual(inner.requests, [])
        seen.callback(True)
        self.assertEqual(exchange.response().body, b'{"ok": true}')
        self.assertEqual(build.state, "building")
