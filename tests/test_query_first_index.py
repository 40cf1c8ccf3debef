"""Requests that arrive before the first index build wait for it."""

from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.server import Site

from eshu_mcp.query.local.api.platform.keeper_view import KEEPER_ATTRIBUTE, KeeperView
from eshu_mcp.query.local.first_index import AwaitFirstIndex
from eshu_mcp.query.local.index.build.service import PendingChange
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


class Keeper(IndexBuild):
    """An index keeper that is ready and has (or has not) noticed changes not indexed yet."""

    def __init__(self):
        super().__init__()
        self.state = "ready"
        self.watch = True
        self.repo_paths = ["/repo"]
        self.outstanding: dict = {}
        self.catching_up: list[defer.Deferred] = []

    def pending_changes(self):
        return self.outstanding

    def when_caught_up(self):
        if not self.outstanding:
            return None
        waiter = defer.Deferred()
        self.catching_up.append(waiter)
        return waiter

    def indexed(self):
        self.outstanding = {}
        for waiter in self.catching_up:
            waiter.callback(None)


class CatchUpTests(SynchronousTestCase):
    """A call arriving while an edit is being indexed waits for it, within a bound."""

    def setUp(self):
        self.clock = Clock()
        self.keeper = Keeper()
        self.inner = RecordingResource(body=b'{"ok": true}')
        gate = AwaitFirstIndex(
            self.inner, self.keeper, lambda: True, clock=self.clock, catch_up_wait=2.0
        )
        self.exchange = HttpExchange(Site(gate))

    def view(self) -> KeeperView:
        return getattr(self.inner.requests[-1], KEEPER_ATTRIBUTE)

    def test_nothing_outstanding_answers_at_once_and_says_the_tree_is_watched(self):
        self.exchange.request(b"GET", b"/repositories")
        self.assertEqual(self.exchange.response().status, 200)
        self.assertEqual(self.view(), KeeperView(watched=("/repo",), pending={}, waited=None))

    def test_a_call_during_an_edit_is_answered_once_the_edit_is_indexed(self):
        self.keeper.outstanding = {"/repo": PendingChange(1, rebuilding=True)}
        self.exchange.request(b"GET", b"/repositories")
        self.clock.advance(0.3)
        self.assertEqual(self.inner.requests, [])
        self.keeper.indexed()
        self.assertEqual(self.exchange.response().body, b'{"ok": true}')
        self.assertEqual(self.view().waited, 0.3)
        self.assertEqual(self.view().pending, {})

    def test_a_slow_rebuild_is_waited_for_only_up_to_the_bound(self):
        self.keeper.outstanding = {"/repo": PendingChange(4, rebuilding=True)}
        self.exchange.request(b"GET", b"/repositories")
        self.clock.advance(2.0)
        self.assertEqual(self.exchange.response().status, 200)
        self.assertEqual(self.view().waited, 2.0)
        self.assertEqual(self.view().outstanding("/repo"), (4, True))

    def test_a_call_past_the_bound_knows_which_generation_ends_the_rebuild(self):
        self.keeper.outstanding = {
            "/repo": PendingChange(1, rebuilding=True, writing="g7", queued=0)
        }
        self.exchange.request(b"GET", b"/repositories")
        self.clock.advance(2.0)
        view = self.view()
        self.assertEqual(view.landing, {"/repo": ("g7", 0)})
        self.assertEqual(view.outstanding("/repo", "g6"), (1, True))  # not committed yet
        self.assertIsNone(view.outstanding("/repo", "g7"))  # committed: nothing outstanding

    def test_a_client_that_leaves_while_waiting_gets_nothing_rendered(self):
        self.keeper.outstanding = {"/repo": PendingChange(1, rebuilding=False)}
        self.exchange.request(b"GET", b"/repositories")
        self.exchange.disconnect()
        self.keeper.indexed()
        self.assertEqual(self.inner.requests, [])
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_an_unwatched_keeper_leaves_its_trees_to_be_compared(self):
        self.keeper.watch = False
        self.exchange.request(b"GET", b"/repositories")
        self.assertEqual(self.view().watched, ())
