"""
Tests for eshu_mcp.query.local.index.build.service.IndexService: one long-lived indexer child fed
build requests, restarted when it dies, stopped within a bounded time; driven with a fake
process reactor on a task.Clock (the real-process behaviour is in test_index_watch.py).
"""

import json
import os
import signal
import sys

from twisted.internet import defer, error
from twisted.internet.task import Clock
from twisted.logger import capturedLogs
from twisted.python.failure import Failure
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.builder_process import (
    PARENT_ENV,
    REAP_GRACE_SECONDS,
    TERM_GRACE_SECONDS,
)
from eshu_mcp.query.local.index.build.service import (
    RESTART_DELAYS,
    IndexFailed,
    IndexService,
    PendingChange,
)
from eshu_mcp.query.local.index.parse.credentials import SERVE_ENV


class FakeProcess:
    """A child process transport: records what the service writes and signals."""

    def __init__(self, protocol, argv) -> None:
        self.protocol = protocol
        self.argv = argv
        self.pid = None  # no process group to signal: signals go through signalProcess
        self.written = b""
        self.stdin_closed = False
        self.signals: list[str] = []

    @property
    def requests(self) -> list[dict]:
        return [json.loads(line) for line in self.written.splitlines()]

    def write(self, data: bytes) -> None:
        self.written += data

    def closeStdin(self) -> None:
        self.stdin_closed = True

    def signalProcess(self, name: str) -> None:
        self.signals.append(name)

    def say(self, **event) -> None:
        self.protocol.outReceived(json.dumps(event).encode() + b"\n")

    def built(self, ok: bool = True, **fields) -> None:
        build = self.requests[-1]["build"]
        repositories = [
            {
                "path": path,
                "repo_id": "repository:r_1",
                "status": "indexed",
                "parsed": 1,
                "deleted": 0,
                "files": 3,
                "entities": 5,
                "edges": 9,
                "seconds": 0.1,
            }
            for path in self.requests[-1]["paths"]
        ]
        fields.setdefault("repositories", repositories)
        self.say(phase="built", build=build, ok=ok, seconds=0.1, **fields)

    def exit(self, code: int | None = 0, stderr: bytes = b"") -> None:
        if stderr:
            self.protocol.errReceived(stderr)
        if code == 0:
            reason = error.ProcessDone(0)
        else:
            reason = error.ProcessTerminated(exitCode=code, signal=9 if code is None else None)
        self.protocol.processEnded(Failure(reason))


class FakeReactor(Clock):
    def __init__(self) -> None:
        super().__init__()
        self.processes: list[FakeProcess] = []

    def spawnProcess(self, protocol, executable, args, env=None, **kwargs):
        process = FakeProcess(protocol, args)
        process.env = env
        self.processes.append(process)
        protocol.makeConnection(process)
        return process


class IndexServiceTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.reactor = FakeReactor()
        self.digests = {"/repo": "one"}

    def service(self, watch: bool = False, repos=("/repo",)) -> IndexService:
        service = IndexService(
            "/tmp/index.sqlite",
            list(repos),
            watch=watch,
            reactor=self.reactor,
            digest=lambda path: defer.succeed(self.digests[path]),
            use_inotify=False,
        )
        service.startService()
        self.addCleanup(lambda: service.running and service.stopService())
        return service

    def test_start_spawns_one_builder_and_asks_for_a_full_build(self) -> None:
        service = self.service()
        (child,) = self.reactor.processes
        self.assertEqual(
            child.argv,
            [
                sys.executable,
                "-m",
                "eshu_mcp.query.local.index.build.builder",
                "--db",
                "/tmp/index.sqlite",
            ],
        )
        self.assertEqual(
            child.requests, [{"build": 1, "paths": ["/repo"], "changed": {"/repo": None}}]
        )
        self.assertEqual(service.state, "building")
        self.assertTrue(service.running_indexer)

    def test_a_successful_build_makes_it_ready(self) -> None:
        service = self.service()
        ready = service.whenReady()
        self.assertNoResult(ready)
        self.reactor.processes[0].built()
        self.assertIs(self.successResultOf(ready), service)
        self.assertEqual(service.state, "ready")
        self.assertFalse(service.running_indexer)
        self.assertIs(self.successResultOf(service.whenReady()), service)

    def test_a_failed_build_records_its_error_and_keeps_the_child(self) -> None:
        service = self.service()
        ready = service.whenReady()
        self.reactor.processes[0].built(ok=False, repositories=[], error="another indexer")
        self.failureResultOf(ready, IndexFailed)
        self.assertEqual((service.state, service.last_error), ("failed", "another indexer"))
        self.assertEqual(len(self.reactor.processes), 1)

    def test_the_child_is_reused_for_every_change(self) -> None:
        service = self.service(watch=True)
        child = self.reactor.processes[0]
        child.built()
        for digest in ("two", "three"):
            self.digests["/repo"] = digest
            self.reactor.advance(service.interval)
            self.reactor.advance(1.0)  # past the debounce
            child.built()
        self.assertEqual(len(self.reactor.processes), 1)
        self.assertEqual([r["build"] for r in child.requests], [1, 2, 3])
        self.assertEqual(service.state, "ready")

    def test_a_change_during_a_build_is_built_after_it(self) -> None:
        service = self.service(watch=True)
        child = self.reactor.processes[0]
        self.digests["/repo"] = "two"
        self.reactor.advance(service.interval)
        self.reactor.advance(1.0)
        self.assertEqual(len(child.requests), 1)  # one build at a time
        child.built()
        self.assertEqual(len(child.requests), 2)

    def test_a_burst_of_changes_becomes_one_build_naming_every_path(self) -> None:
        service = self.service(watch=True)
        child = self.reactor.processes[0]
        child.built()
        for name in ("a.py", "b.py", "a.py", "c.py"):
            service._changed("/repo", name)
            self.reactor.advance(0.01)
        self.assertEqual(len(child.requests), 1)
        self.reactor.advance(1.0)
        self.assertEqual(len(child.requests), 2)
        self.assertEqual(child.requests[-1]["changed"], {"/repo": ["a.py", "b.py", "c.py"]})

    def test_a_dead_child_is_logged_once_and_restarted_after_a_delay(self) -> None:
        service = self.service()
        first = self.reactor.processes[0]
        first.built()
        with capturedLogs() as events:
            first.exit(None, stderr=b"Killed\n")
        warnings = [e for e in events if "unexpectedly" in e["log_format"]]
        self.assertEqual(len(warnings), 1)
        self.assertEqual(len(self.reactor.processes), 1)
        self.reactor.advance(RESTART_DELAYS[0])
        self.assertEqual(len(self.reactor.processes), 2)
        self.assertEqual(service.state, "ready")  # the index it built still serves

    def test_a_build_lost_with_its_child_is_asked_again_of_the_next_child(self) -> None:
        service = self.service()
        ready = service.whenReady()
        self.reactor.processes[0].exit(1, stderr=b"MemoryError\n")
        self.failureResultOf(ready, IndexFailed)  # waiting queries go through
        self.assertIn("MemoryError", service.last_error)
        self.reactor.advance(RESTART_DELAYS[0])
        second = self.reactor.processes[1]
        self.assertEqual(second.requests[0]["paths"], ["/repo"])
        second.built()
        self.assertEqual(service.state, "ready")

    def test_restarts_back_off_while_the_child_keeps_dying(self) -> None:
        self.service()
        for attempt, delay in enumerate(RESTART_DELAYS[:3]):
            self.reactor.processes[-1].exit(1)
            self.reactor.advance(delay - 0.01)
            self.assertEqual(len(self.reactor.processes), attempt + 1)
            self.reactor.advance(0.01)
            self.assertEqual(len(self.reactor.processes), attempt + 2)
        self.reactor.processes[-1].built()  # a success resets the delay
        self.reactor.processes[-1].exit(1)
        self.reactor.advance(RESTART_DELAYS[0])
        self.assertEqual(len(self.reactor.processes), 5)

    def test_stop_terminates_the_child_then_kills_it_and_is_bounded(self) -> None:
        service = self.service(watch=True)
        child = self.reactor.processes[0]
        stopped = service.stopService()
        self.assertTrue(child.stdin_closed)
        self.assertEqual(child.signals, ["TERM"])
        self.assertNoResult(stopped)
        self.reactor.advance(TERM_GRACE_SECONDS)
        self.assertEqual(child.signals, ["TERM", "KILL"])
        self.assertNoResult(stopped)
        self.reactor.advance(REAP_GRACE_SECONDS)  # it never said it exited: stop anyway
        self.successResultOf(stopped)
        self.reactor.advance(max(RESTART_DELAYS) + service.interval * 3)
        self.assertEqual(len(self.reactor.processes), 1)  # no restart, no poll-driven build

    def test_stop_fires_as_soon_as_the_child_exits(self) -> None:
        service = self.service()
        child = self.reactor.processes[0]
        stopped = service.stopService()
        child.exit(None)
        self.successResultOf(stopped)
        self.assertEqual(child.signals, ["TERM"])
        self.assertEqual(service.state, "building")  # stopped, not failed
        self.assertEqual(self.reactor.getDelayedCalls(), [])

    def test_each_build_logs_one_line_per_repository_with_its_counts(self) -> None:
        self.service(repos=("/a", "/b"))
        with capturedLogs() as events:
            self.reactor.processes[0].built()
        lines = [e for e in events if e.get("run") == 1 and "files parsed" in e["log_format"]]
        self.assertEqual([e["path"] for e in lines], ["/a", "/b"])
        self.assertEqual(
            {k: lines[0][k] for k in ("parsed", "deleted", "files", "entities", "edges")},
            {"parsed": 1, "deleted": 0, "files": 3, "entities": 5, "edges": 9},
        )
        self.assertTrue(any(e.get("count") == 2 for e in events))  # and the total

    def test_progress_events_reach_subscribers(self) -> None:
        service = self.service()
        seen = []
        service.subscribe(seen.append)
        self.reactor.processes[0].say(phase="resolve", build=1)
        self.assertEqual(seen, [{"phase": "resolve", "build": 1}])


class BuilderSignalTests(SynchronousTestCase):
    def test_the_group_signal_falls_back_to_the_child_before_it_leads_a_group(self) -> None:
        from eshu_mcp.query.local.index.build.builder_process import BuilderProcess

        reactor = FakeReactor()
        child = BuilderProcess(reactor, "/db", on_event=lambda e: None, on_exit=lambda *a: None)
        child.signal_group(signal.SIGKILL)
        self.assertEqual(reactor.processes[0].signals, ["KILL"])


class BuilderEnvironmentTests(SynchronousTestCase):
    def spawn(self, **options) -> dict:
        reactor = FakeReactor()
        service = IndexService(
            "/tmp/index.sqlite",
            ["/repo"],
            watch=False,
            reactor=reactor,
            use_inotify=False,
            **options,
        )
        service.startService()
        self.addCleanup(lambda: service.running and service.stopService())
        return reactor.processes[0].env

    def test_the_builder_knows_its_daemon_and_whether_credential_files_are_served(self):
        env = self.spawn()
        self.assertEqual(env[PARENT_ENV], str(os.getpid()))
        self.assertNotEqual(env.get(SERVE_ENV), "1")
        self.assertEqual(self.spawn(serve_credential_files=True)[SERVE_ENV], "1")


class OutstandingChangesTests(SynchronousTestCase):
    """What the keeper says about changes it noticed and has not indexed yet."""

    def setUp(self) -> None:
        self.reactor = FakeReactor()
        self.service = IndexService(
            "/tmp/index.sqlite", ["/repo"], watch=True, reactor=self.reactor, use_inotify=False
        )
        self.service.startService()
        self.addCleanup(lambda: self.service.running and self.service.stopService())
        self.child = self.reactor.processes[0]

    def test_the_first_build_is_a_whole_tree_being_rebuilt(self) -> None:
        self.assertEqual(
            self.service.pending_changes(), {"/repo": PendingChange(None, rebuilding=True)}
        )
        self.child.built()
        self.assertEqual(self.service.pending_changes(), {})
        self.assertIsNone(self.service.when_caught_up())

    def test_an_edit_is_counted_queued_then_rebuilding_then_gone(self) -> None:
        self.child.built()
        self.service._changed("/repo", "a.py")
        self.service._changed("/repo", "b.py")
        self.assertEqual(
            self.service.pending_changes(), {"/repo": PendingChange(2, rebuilding=False)}
        )
        caught_up = self.service.when_caught_up()
        self.reactor.advance(1.0)  # past the debounce: the build starts
        self.assertEqual(
            self.service.pending_changes(), {"/repo": PendingChange(2, rebuilding=True)}
        )
        self.assertNoResult(caught_up)
        self.child.built()
        self.successResultOf(caught_up)
        self.assertEqual(self.service.pending_changes(), {})

    def test_an_edit_during_a_build_stays_outstanding_after_it(self) -> None:
        self.child.built()
        self.service._changed("/repo", "a.py")
        self.reactor.advance(1.0)
        first = self.service.when_caught_up()
        self.service._changed("/repo", "b.py")
        second = self.service.when_caught_up()
        self.child.built()  # covers a.py only
        self.successResultOf(first)
        self.assertNoResult(second)
        self.assertEqual(
            self.service.pending_changes(), {"/repo": PendingChange(1, rebuilding=False)}
        )
        self.reactor.advance(1.0)
        self.child.built()
        self.successResultOf(second)
        self.assertEqual(self.service.pending_changes(), {})

    def test_the_first_build_is_indexed_once_committed_before_the_childs_summary(self) -> None:
        """A call right after the first build commits, before the child has summed up the
        build (counting rows takes a while at 26k files), is answered as current."""
        waiter = self.service.when_caught_up()
        build = self.child.requests[-1]["build"]
        self.child.say(
            phase="discover", build=build, repo_id="repository:r_1", path="/repo", requested="/repo"
        )
        self.child.say(phase="write", build=build, repo_id="repository:r_1", generation_id="g1")
        writing = PendingChange(None, rebuilding=True, writing="g1", queued=0)
        self.assertEqual(self.service.pending_changes(), {"/repo": writing})
        self.assertNoResult(waiter)
        self.child.say(phase="committed", build=build, repo_id="repository:r_1", seq=1)
        self.assertEqual(self.service.pending_changes(), {})
        self.successResultOf(waiter)
        self.assertIsNone(self.service.when_caught_up())
        self.child.built()
        self.assertEqual(self.service.pending_changes(), {})

    def test_an_edit_noticed_during_a_build_stays_outstanding_after_its_commit(self) -> None:
        self.child.built()
        self.service._changed("/repo", "a.py")
        self.reactor.advance(1.0)
        build = self.child.requests[-1]["build"]
        self.child.say(phase="discover", build=build, repo_id="repository:r_1", requested="/repo")
        self.child.say(phase="write", build=build, repo_id="repository:r_1", generation_id="g2")
        self.service._changed("/repo", "b.py")
        waiter = self.service.when_caught_up()
        self.assertEqual(
            self.service.pending_changes(),
            {"/repo": PendingChange(2, rebuilding=True, writing="g2", queued=1)},
        )
        self.child.say(phase="committed", build=build, repo_id="repository:r_1", seq=2)
        self.assertEqual(
            self.service.pending_changes(), {"/repo": PendingChange(1, rebuilding=False)}
        )
        self.assertNoResult(waiter)  # b.py is not in that build
        self.child.built()
        self.reactor.advance(1.0)
        self.child.built()
        self.successResultOf(waiter)

    def test_a_build_with_nothing_to_do_is_indexed_when_it_says_so(self) -> None:
        self.child.built()
        self.service._changed("/repo", "a.py")
        self.reactor.advance(1.0)
        waiter = self.service.when_caught_up()
        build = self.child.requests[-1]["build"]
        self.child.say(phase="discover", build=build, repo_id="repository:r_1", requested="/repo")
        self.child.say(phase="fresh", build=build, repo_id="repository:r_1")
        self.successResultOf(waiter)
        self.assertEqual(self.service.pending_changes(), {})

    def test_events_of_an_earlier_build_change_nothing(self) -> None:
        self.child.built()
        self.service._changed("/repo", "a.py")
        self.reactor.advance(1.0)
        waiter = self.service.when_caught_up()
        stale = self.child.requests[-1]["build"] - 1
        self.child.say(phase="discover", build=stale, repo_id="repository:r_1", requested="/repo")
        self.child.say(phase="committed", build=stale, repo_id="repository:r_1", seq=1)
        self.assertNoResult(waiter)
        self.assertEqual(
            self.service.pending_changes(), {"/repo": PendingChange(1, rebuilding=True)}
        )
        self.child.built()
        self.successResultOf(waiter)

    def test_a_failed_build_leaves_its_changes_outstanding_and_releases_waiters(self) -> None:
        self.child.built()
        self.service._changed("/repo", "a.py")
        self.reactor.advance(1.0)
        waiter = self.service.when_caught_up()
        self.child.built(ok=False, error="disk full")
        self.successResultOf(waiter)  # nobody waits for a build that is not coming
        self.assertEqual(
            self.service.pending_changes(), {"/repo": PendingChange(1, rebuilding=False)}
        )
