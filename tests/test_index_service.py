"""Tests for eshu_mcp.query.local.index.service.IndexService with a fake process reactor."""

import sys

from twisted.internet import defer, error
from twisted.internet.task import Clock
from twisted.python.failure import Failure
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.service import KILL_GRACE_SECONDS, IndexFailed, IndexService


class FakeProcess:
    def __init__(self, protocol, argv) -> None:
        self.protocol = protocol
        self.argv = argv
        self.signals: list[str] = []

    def signalProcess(self, name: str) -> None:
        self.signals.append(name)

    def finish(self, code: int = 0, stdout: bytes = b"", stderr: bytes = b"") -> None:
        if stdout:
            self.protocol.outReceived(stdout)
        if stderr:
            self.protocol.errReceived(stderr)
        reason = error.ProcessDone(0) if code == 0 else error.ProcessTerminated(exitCode=code)
        self.protocol.processEnded(Failure(reason))


class FakeReactor(Clock):
    def __init__(self) -> None:
        super().__init__()
        self.processes: list[FakeProcess] = []

    def spawnProcess(self, protocol, executable, args, env=None, **kwargs):
        process = FakeProcess(protocol, args)
        self.processes.append(process)
        protocol.makeConnection(process)
        return process


class IndexServiceTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.reactor = FakeReactor()
        self.digests = {"/repo": "one"}

    def service(self, watch: bool = False) -> IndexService:
        service = IndexService(
            "/tmp/index.sqlite",
            ["/repo"],
            watch=watch,
            reactor=self.reactor,
            digest=lambda path: defer.succeed(self.digests[path]),
        )
        service.startService()
        self.addCleanup(lambda: service.running and service.stopService())
        return service

    def test_start_spawns_the_command_module_with_the_database(self) -> None:
        service = self.service()
        (process,) = self.reactor.processes
        self.assertEqual(
            process.argv,
            [
                sys.executable,
                "-m",
                "eshu_mcp.query.local.index.command",
                "/repo",
                "--db",
                "/tmp/index.sqlite",
                "--json",
            ],
        )
        self.assertEqual(service.state, "building")
        self.assertTrue(service.running_indexer)

    def test_success_makes_it_ready_and_fires_when_ready(self) -> None:
        service = self.service()
        ready = service.whenReady()
        self.assertNoResult(ready)
        self.reactor.processes[0].finish(0, stdout=b'{"phase": "done", "ok": true}\n')
        self.assertIs(self.successResultOf(ready), service)
        self.assertEqual((service.state, service.last_event["phase"]), ("ready", "done"))
        self.assertIs(self.successResultOf(service.whenReady()), service)

    def test_failure_records_the_last_error_line(self) -> None:
        service = self.service()
        ready = service.whenReady()
        self.reactor.processes[0].finish(2, stderr=b"eshu-mcp index: path '/repo' does not exist\n")
        self.failureResultOf(ready, IndexFailed)
        self.assertEqual(service.state, "failed")
        self.assertEqual(service.last_error, "eshu-mcp index: path '/repo' does not exist")

    def test_watch_rebuilds_only_when_the_digest_changes(self) -> None:
        service = self.service(watch=True)
        self.reactor.processes[0].finish(0)
        self.reactor.advance(service.interval)
        self.assertEqual(len(self.reactor.processes), 1)
        self.digests["/repo"] = "two"
        self.reactor.advance(service.interval)
        self.assertEqual(len(self.reactor.processes), 2)
        self.assertEqual(service.state, "building")
        self.reactor.processes[1].finish(0)
        self.reactor.advance(service.interval)
        self.assertEqual((len(self.reactor.processes), service.state), (2, "ready"))

    def test_change_during_a_build_is_picked_up_after_it(self) -> None:
        service = self.service(watch=True)
        self.digests["/repo"] = "two"
        self.reactor.advance(service.interval)
        self.assertEqual(len(self.reactor.processes), 1)
        self.reactor.processes[0].finish(0)
        self.assertEqual(len(self.reactor.processes), 2)

    def test_stop_terminates_a_running_indexer_then_kills_it(self) -> None:
        service = self.service(watch=True)
        process = self.reactor.processes[0]
        stopped = service.stopService()
        self.assertEqual(process.signals, ["TERM"])
        self.assertNoResult(stopped)
        self.reactor.advance(KILL_GRACE_SECONDS)
        self.assertEqual(process.signals, ["TERM", "KILL"])
        process.finish(-9)
        self.successResultOf(stopped)
        self.assertEqual(service.state, "building")  # stopped, not failed
        self.reactor.advance(service.interval * 3)
        self.assertEqual(len(self.reactor.processes), 1)

    def test_stop_without_a_running_indexer_is_immediate(self) -> None:
        service = self.service()
        self.reactor.processes[0].finish(0)
        self.assertIsNone(service.stopService())
