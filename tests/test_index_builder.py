"""
Tests for the long-lived indexer child's loop (eshu_mcp.query.local.index.build.builder) and for
what a build says about itself: the summary's counts agree with ``eshu-mcp index --status``,
and the terminal progress names the resolve step.
"""

from __future__ import annotations

import gc
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build import builder
from eshu_mcp.query.local.index.build.command import collect_status
from eshu_mcp.query.local.index.build.progress import TerminalProgress
from eshu_mcp.query.local.index.store.database import open_reader
from tests.test_index_indexer import fixture_repository


class BuilderLoopTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-builder-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = fixture_repository(self.tmp)
        self.db = str(self.tmp / "index.sqlite")

    def serve(self, *requests: dict) -> list[dict]:
        lines = "".join(json.dumps(request) + "\n" for request in requests)
        out = io.StringIO()
        self.assertEqual(builder.serve(self.db, io.StringIO(lines + "not json\n"), out), 0)
        return [json.loads(line) for line in out.getvalue().splitlines()]

    def built(self, events: list[dict]) -> list[dict]:
        return [event for event in events if event["phase"] == builder.BUILT]

    def status_counts(self) -> dict:
        conn = open_reader(self.db)
        try:
            (repo,) = collect_status(conn)["repositories"]
        finally:
            conn.close()
        return {key: repo[key] for key in ("files", "entities", "edges")}

    def test_each_request_ends_with_one_built_line_whose_counts_agree_with_status(self) -> None:
        (self.repo / "app" / "extra.py").write_text("def extra():\n    return 1\n")
        events = self.serve(
            {"build": 1, "paths": [str(self.repo)], "workers": 1},
            {"build": 2, "paths": [str(self.repo)], "workers": 1},
        )
        first, second = self.built(events)
        self.assertEqual((first["build"], first["ok"], second["build"]), (1, True, 2))
        self.assertTrue(all("build" in event for event in events))
        (repo,) = first["repositories"]
        self.assertEqual(repo["status"], "indexed")
        self.assertGreater(repo["parsed"], 1)
        self.assertEqual({k: repo[k] for k in ("files", "entities", "edges")}, self.status_counts())
        self.assertEqual(second["repositories"][0]["status"], "fresh")
        phases = [event["phase"] for event in events if event["build"] == 1]
        self.assertLess(phases.index("resolve"), phases.index("committed"))

    def test_warming_after_a_build_keeps_inputs_out_of_later_collections(self) -> None:
        from eshu_mcp.query.local.index.resolve import input_cache

        seen: list = []
        warm = input_cache.warm

        def watched(*args) -> int:
            seen.append(gc.isenabled())
            read = warm(*args)
            seen.append((read, bool(input_cache._kept)))
            return read

        self.patch(input_cache, "warm", watched)
        self.patch(gc, "freeze", lambda: seen.append("frozen"))  # not this test process
        self.assertTrue(gc.isenabled())
        self.serve(
            {"build": 1, "paths": [str(self.repo)], "workers": 1},
            {"build": 2, "paths": [str(self.repo)], "workers": 1},
        )
        # paused while warming; the first build's inputs read, kept and frozen; the second
        # build (nothing changed) finds them kept and freezes nothing more
        self.assertEqual(seen, [False, (1, True), "frozen", False, (0, True)])
        self.assertTrue(gc.isenabled())

    def test_kept_inputs_hold_no_reference_cycles_so_freezing_them_cannot_leak(self) -> None:
        from eshu_mcp.query.local.index.resolve import input_cache

        held: dict = {}
        warm = input_cache.warm

        def holding(*args) -> int:
            read = warm(*args)
            held.update(input_cache._kept)
            return read

        self.patch(input_cache, "warm", holding)
        self.patch(gc, "freeze", lambda: None)  # not this test process
        self.serve({"build": 1, "paths": [str(self.repo)], "workers": 1})
        self.assertTrue(held)
        gc.collect()  # everything else unreachable goes first
        held.clear()  # the last references to the kept inputs
        # frozen objects are never collected: kept inputs that needed the cycle collector
        # to be freed would leak each time they are replaced
        self.assertEqual(gc.collect(), 0)

    def test_a_failed_build_is_reported_and_the_next_one_still_runs(self) -> None:
        events = self.serve(
            {"build": 1, "paths": [str(self.tmp / "gone")]},
            {"build": 2, "paths": [str(self.repo)], "workers": 1},
        )
        failed, succeeded = self.built(events)
        self.assertFalse(failed["ok"])
        self.assertIn("gone", failed["error"])
        self.assertTrue(succeeded["ok"])


class TerminalProgressTests(SynchronousTestCase):
    def test_the_resolve_step_is_named_after_the_bar(self) -> None:
        stream = io.StringIO()
        progress = TerminalProgress(stream)
        progress({"phase": "parse", "done": 2, "total": 2, "rate": 9.0})
        progress({"phase": "resolve", "repo_id": "r"})
        self.assertIn("2/2 files", stream.getvalue())
        self.assertTrue(stream.getvalue().endswith("\n  resolving references and calls ...\n"))

    def test_the_committed_line_counts_edges_only(self) -> None:
        stream = io.StringIO()
        edges = {"CALLS": 5, "CONTAINS": 7, "unresolved_calls": 3, "rebuilt_files": 2}
        TerminalProgress(stream)({"phase": "committed", "seq": 4, "entities": 9, "edges": edges})
        self.assertEqual(stream.getvalue(), "  generation 4 active: 9 entities written, 12 edges\n")


FAKE_DAEMON = """
import json, os, subprocess, sys, time
db, repo, release, close_pipe = sys.argv[1:5]
env = dict(os.environ)
env.update(
    ESHU_MCP_BUILDER_PARENT=str(os.getpid()),
    ESHU_MCP_INDEX_HOLD_BEFORE_COMMIT=release,
    ESHU_MCP_INDEX_HOLD_AT="walk",
)
child = subprocess.Popen(
    [sys.executable, "-m", "eshu_mcp.query.local.index.build.builder", "--db", db],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
)
child.stdin.write(json.dumps({"build": 1, "paths": [repo]}).encode() + b"\\n")
child.stdin.flush()
for line in child.stdout:
    if json.loads(line).get("phase") == "holding":
        break
print(child.pid, flush=True)
if close_pipe == "close":
    child.stdin.close()
time.sleep(120)
"""


def process_gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie nobody reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except OSError:
        return True


class BuilderDiesWithTheDaemonTests(SynchronousTestCase):
    """Mid-build (held at the walk), the builder ends when its daemon does."""

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-orphan-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = fixture_repository(self.tmp)

    def start_daemon(self, close_pipe: bool) -> tuple[subprocess.Popen, int]:
        daemon = subprocess.Popen(
            [
                sys.executable,
                "-c",
                FAKE_DAEMON,
                str(self.tmp / "index.sqlite"),
                str(self.repo),
                str(self.tmp / "never-released"),
                "close" if close_pipe else "keep",
            ],
            stdout=subprocess.PIPE,
        )
        self.addCleanup(lambda: daemon.poll() is None and (daemon.kill(), daemon.wait()))
        line = daemon.stdout.readline()
        builder_pid = int(line)
        self.addCleanup(self.kill_if_alive, builder_pid)
        return daemon, builder_pid

    def kill_if_alive(self, pid: int) -> None:
        if not process_gone(pid):
            os.kill(pid, signal.SIGKILL)

    def assert_gone_soon(self, pid: int) -> None:
        deadline = time.monotonic() + 20  # the hold alone would keep it 60 s
        while not process_gone(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(process_gone(pid), f"builder {pid} outlived its daemon")

    def test_a_sigkilled_daemon_takes_its_builder_with_it(self) -> None:
        daemon, builder_pid = self.start_daemon(close_pipe=False)
        daemon.send_signal(signal.SIGKILL)
        daemon.wait()
        self.assert_gone_soon(builder_pid)

    def test_the_request_pipe_closing_mid_build_ends_the_builder(self) -> None:
        _, builder_pid = self.start_daemon(close_pipe=True)
        self.assert_gone_soon(builder_pid)
