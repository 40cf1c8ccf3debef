"""Log events raised while a call is worked on name the session that made the call."""

from twisted.logger import Logger, globalLogPublisher
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.attribution import attributed, calling


class AttributionTests(SynchronousTestCase):
    def test_events_inside_a_step_are_attributed_and_outside_are_not(self):
        seen: list[object] = []

        def observe(event: dict) -> None:
            seen.append(calling())

        globalLogPublisher.addObserver(observe)
        self.addCleanup(globalLogPublisher.removeObserver, observe)
        session = object()
        log = Logger(namespace="eshu_mcp.dispatch.inprocess")
        self.assertEqual(attributed(session, lambda: log.info("refused") or 7), 7)
        log.info("after")
        self.assertEqual(seen, [session, None])

    def test_a_failing_step_leaves_no_attribution_behind(self):
        def fail() -> None:
            raise ValueError("bad")

        self.assertRaises(ValueError, attributed, object(), fail)
        self.assertIsNone(calling())
