"""One client's tool calls: a few run at once, the rest wait in order, a full queue is busy."""

from twisted.internet import defer
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.protocol.admission import CallSlots
from eshu_mcp.protocol.jsonrpc import ProtocolError


class Calls:
    """Calls that run until the test answers them."""

    def __init__(self):
        self.started: list[str] = []
        self.pending: dict[str, defer.Deferred] = {}
        self.cancelled: list[str] = []

    def starter(self, name):
        def start():
            self.started.append(name)
            call = defer.Deferred(lambda _: self.cancelled.append(name))
            self.pending[name] = call
            return call

        return start

    def answer(self, name):
        self.pending.pop(name).callback(name.upper())


class CallSlotsTests(SynchronousTestCase):
    def setUp(self):
        self.calls = Calls()
        self.slots = CallSlots(limit=2, queue_limit=3)

    def run_call(self, name):
        return self.slots.run(self.calls.starter(name))

    def test_calls_beyond_the_limit_wait_and_start_in_arrival_order(self):
        results = [self.run_call(name) for name in "abcde"]
        self.assertEqual(self.calls.started, ["a", "b"])
        self.assertEqual((self.slots.running, self.slots.waiting), (2, 3))
        self.calls.answer("b")
        self.assertEqual(self.calls.started, ["a", "b", "c"])
        self.calls.answer("a")
        self.calls.answer("c")
        self.assertEqual(self.calls.started, ["a", "b", "c", "d", "e"])
        self.calls.answer("e")
        self.calls.answer("d")
        self.assertEqual([self.successResultOf(d) for d in results], list("ABCDE"))
        self.assertEqual((self.slots.running, self.slots.waiting), (0, 0))

    def test_a_full_queue_is_a_busy_error_naming_the_option(self):
        for name in "abcde":
            self.run_call(name)
        error = self.assertRaises(ProtocolError, self.run_call, "f")
        self.assertEqual(error.code, -32000)
        self.assertIn("--max-queued-calls", error.message)

    def test_cancelling_a_waiting_call_frees_its_place_without_starting_it(self):
        self.run_call("a")
        self.run_call("b")
        waiting = self.run_call("c")
        waiting.cancel()
        self.failureResultOf(waiting, defer.CancelledError)
        self.assertEqual(self.slots.waiting, 0)
        self.calls.answer("a")
        self.assertEqual(self.calls.started, ["a", "b"])

    def test_cancelling_a_started_call_cancels_the_work(self):
        self.run_call("a")
        self.run_call("b")
        queued = self.run_call("c")
        self.calls.answer("a")
        queued.cancel()
        self.assertEqual(self.calls.cancelled, ["c"])
        self.failureResultOf(queued, defer.CancelledError)
        self.assertEqual(self.slots.running, 1)

    def test_a_failing_call_releases_its_slot(self):
        failing = self.slots.run(lambda: defer.fail(ValueError("boom")))
        self.failureResultOf(failing, ValueError)
        self.assertEqual(self.slots.running, 0)
        self.run_call("a")
        self.assertEqual(self.calls.started, ["a"])


class CancellationRunTests(SynchronousTestCase):
    def setUp(self):
        from twisted.internet.task import Clock

        self.clock = Clock()
        self.calls = Calls()
        self.slots = CallSlots(limit=2, queue_limit=10, clock=self.clock)
        self.results = [self.slots.run(self.calls.starter(name)) for name in "abcdef"]

    def test_a_run_of_cancellations_starts_none_of_the_waiting_calls(self):
        for result in self.results:
            result.cancel()
            self.failureResultOf(result, defer.CancelledError)
        self.clock.advance(0)
        self.assertEqual(self.calls.started, ["a", "b"])
        self.assertEqual((self.slots.running, self.slots.waiting), (0, 0))

    def test_one_cancelled_call_hands_its_slot_on_at_the_next_turn(self):
        self.results[0].cancel()
        self.failureResultOf(self.results[0], defer.CancelledError)
        self.assertEqual(self.calls.started, ["a", "b"])
        self.clock.advance(0)
        self.assertEqual(self.calls.started, ["a", "b", "c"])
