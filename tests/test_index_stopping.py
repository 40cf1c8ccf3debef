"""
Stopping ``eshu-mcp index``: SIGTERM and Ctrl-C at each point of a build, and a parser worker
killed mid-parse, leave no process behind, no lock held, the previous generation serving and
an intact file. Real processes on a generated repository; every wait is bounded.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.status import index_health
from eshu_mcp.query.local.api.platform.truth import index_freshness
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.build.lock import WriterLock, writer_running
from eshu_mcp.query.local.index.build.stopping import HOLD_AT_ENV, HOLD_ENV
from eshu_mcp.query.local.index.store.database import open_reader

ROOT = Path(__file__).resolve().parent.parent
MODULES = 60  # above the in-process threshold: the second run parses in a worker pool
DEADLINE = 30.0


def generated_repository(parent: Path, modules: int = MODULES) -> Path:
    """A plain directory of Python modules that call into one another."""
    root = parent / "generated"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    for n in range(modules):
        callee = (n + 1) % modules
        (root / "pkg" / f"mod_{n}.py").write_text(
            f"from pkg.mod_{callee} import handle_{callee}\n\n\n"
            f"class Worker{n}:\n"
            f"    def run(self, item):\n"
            f"        return handle_{n}(item)\n\n\n"
            f"def handle_{n}(item):\n"
            f"    return handle_{callee}(item) if item else {n}\n"
        )
    return root


def edit_every_module(root: Path) -> None:
    """Give every module a new function, so the next run re-parses all of them."""
    for path in sorted((root / "pkg").glob("mod_*.py")):
        with path.open("a") as handle:
            handle.write("\n\ndef added_in_the_second_run():\n    return 2\n")


def process_state(pid: int) -> str | None:
    """The /proc state letter of a process, or None when it no longer exists."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return None


def live(pid: int) -> bool:
    """Running, sleeping or stopped: anything but gone or a zombie."""
    return process_state(pid) not in (None, "Z")


def children_of(pid: int) -> list[int]:
    """Live processes whose parent is ``pid``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != b"Z":
            found.append(int(name))
    return found


def group_members(pgid: int) -> list[int]:
    """Live processes of a process group."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.getpgid(int(name)) == pgid and live(int(name)):
                    found.append(int(name))
            except OSError:
                continue
    return found


def wait_for(predicate, what: str, deadline: float = DEADLINE):
    """Poll ``predicate`` until it returns something true, within a deadline."""
    until = time.monotonic() + deadline
    while time.monotonic() < until:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class StoppedBuildTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-stopping-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = generated_repository(self.tmp)
        self.db = self.tmp / "index.sqlite"
        first = index_repositories(self.db, [self.repo], workers=1)
        self.assertTrue(first.ok)
        edit_every_module(self.repo)
        self.release = self.tmp / "release"

    def start(self, hold_at: str) -> subprocess.Popen:
        """``eshu-mcp index`` with two parser workers, paused at ``hold_at``, in its own
        process group (as a shell job is)."""
        env = dict(
            os.environ,
            PYTHONPATH=str(ROOT),
            **{HOLD_ENV: str(self.release), HOLD_AT_ENV: hold_at},
        )
        argv = [str(self.repo), "--db", str(self.db), "--json", "--workers", "2"]
        child = subprocess.Popen(
            [sys.executable, "-m", "eshu_mcp.query.local.index.build.command", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        self.addCleanup(self.reap, child)
        return child

    def reap(self, child: subprocess.Popen) -> None:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(DEADLINE)
        child.stdout.close()
        child.stderr.close()

    def wait_until_holding(self, child: subprocess.Popen) -> list[dict]:
        events = []
        for _ in range(200):  # bounded: a few dozen progress lines come before any hold
            line = child.stdout.readline()
            if not line:
                break
            events.append(json.loads(line))
            if events[-1]["phase"] == "holding":
                return events
        self.fail(f"the run never reached its hold point: {events}")

    def finish(self, child: subprocess.Popen) -> tuple[int, list[dict], str]:
        out, err = child.communicate(timeout=DEADLINE)
        events = [json.loads(line) for line in out.decode().splitlines() if line]
        return child.returncode, events, err.decode()

    def assert_left_clean(self, child: subprocess.Popen, workers: list[int]) -> list[str]:
        """No process of the run alive, the lock free, generation 1 serving, file intact;
        returns what taking the lock noted."""
        for pid in workers:
            wait_for(lambda pid=pid: not live(pid), f"worker {pid} to exit")
        self.assertEqual(group_members(child.pid), [])
        self.assertFalse(writer_running(self.db))
        notes: list[str] = []
        with WriterLock(self.db, timeout=0, notice=notes.append):
            pass
        conn = open_reader(self.db)
        self.addCleanup(conn.close)
        self.assertEqual(conn.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        active = conn.execute(
            "SELECT g.seq FROM repositories r JOIN generations g"
            " ON g.generation_id = r.active_generation_id"
        ).fetchall()
        self.assertEqual([row[0] for row in active], [1])
        added = conn.execute(
            "SELECT COUNT(*) FROM entities WHERE entity_name = 'added_in_the_second_run'"
        ).fetchone()[0]
        self.assertEqual(added, 0)
        # the stopped run's edits are in the work tree, not in the index: stale, not building
        self.assertEqual(index_freshness(conn)["state"], "stale")
        self.assertEqual(index_health(conn).queue["outstanding"], 0)
        return notes

    def assert_next_run_commits(self) -> None:
        again = index_repositories(self.db, [self.repo], workers=1)
        self.assertTrue(again.ok)
        self.assertEqual(len(again.repositories[0].reparsed), MODULES)

    def stop_at(self, hold_at: str, signum: int) -> None:
        child = self.start(hold_at)
        self.wait_until_holding(child)
        workers = children_of(child.pid)
        if hold_at == "parse":
            self.assertEqual(len(workers), 2, "the parser pool is running")
        if signum == signal.SIGINT:
            os.killpg(child.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
        else:
            os.kill(child.pid, signum)  # kill -TERM PID
        code, events, err = self.finish(child)
        self.assertEqual(code, 128 + signum)
        self.assertNotIn("Traceback", err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn(f"stopped by {signal.Signals(signum).name}", err)
        if hold_at != "walk":  # a generation was pending: it is abandoned, not committed
            self.assertIn("generation 2", err)
            self.assertIn("previous generation keeps serving", err)
            self.assertEqual(events[-1]["phase"], "stopped")
            conn = sqlite3.connect(self.db)
            self.addCleanup(conn.close)
            row = conn.execute(
                "SELECT status, failure_class, failure_message FROM generations WHERE seq = 2"
            ).fetchone()
            self.assertEqual(row[:2], ("failed", "interrupted"))
            self.assertIn(signal.Signals(signum).name, row[2])
        self.assertEqual(self.assert_left_clean(child, workers), [])
        self.assert_next_run_commits()

    def test_sigterm_while_walking(self) -> None:
        self.stop_at("walk", signal.SIGTERM)

    def test_sigterm_while_parsing_with_workers(self) -> None:
        self.stop_at("parse", signal.SIGTERM)

    def test_ctrl_c_while_parsing_with_workers(self) -> None:
        self.stop_at("parse", signal.SIGINT)

    def test_sigterm_while_resolving(self) -> None:
        self.stop_at("resolve", signal.SIGTERM)

    def test_ctrl_c_before_commit(self) -> None:
        self.stop_at("commit", signal.SIGINT)

    def test_sigterm_before_commit(self) -> None:
        self.stop_at("commit", signal.SIGTERM)

    def test_a_killed_parser_worker_fails_the_run_in_one_line(self) -> None:
        child = self.start("worker")
        marker = f"{self.release.name}.worker."
        held = wait_for(
            lambda: [p for p in self.tmp.iterdir() if p.name.startswith(marker)],
            "a worker to hold a file",
        )
        workers = children_of(child.pid)
        self.assertEqual(len(workers), 2)
        os.kill(int(held[0].name.rsplit(".", 1)[1]), signal.SIGKILL)
        code, events, err = self.finish(child)
        self.assertEqual(code, 1)
        self.assertEqual(err, "")
        failed = [event for event in events if event["phase"] == "failed"]
        self.assertEqual(len(failed), 1)
        self.assertIn("parser worker process died", failed[0]["error"])
        self.assert_left_clean(child, workers)
        self.assert_next_run_commits()

    def test_sigkill_of_the_indexer_takes_its_workers_down(self) -> None:
        child = self.start("parse")
        self.wait_until_holding(child)
        workers = children_of(child.pid)
        self.assertEqual(len(workers), 2)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(DEADLINE)
        notes = self.assert_left_clean(child, workers)
        self.assertEqual(len(notes), 1)
        self.assertIn(f"took over the writer lock of indexer pid {child.pid}", notes[0])
        self.assert_next_run_commits()

    def test_a_stopped_first_build_says_nothing_serves_yet(self) -> None:
        self.db = self.tmp / "first.sqlite"
        child = self.start("commit")
        self.wait_until_holding(child)
        os.kill(child.pid, signal.SIGTERM)
        code, _, err = self.finish(child)
        self.assertEqual(code, 143)
        self.assertIn("generation 1 of", err)
        self.assertIn("it had no earlier generation to serve", err)
        self.assertFalse(writer_running(self.db))
        again = index_repositories(self.db, [self.repo], workers=1)
        self.assertEqual(again.repositories[0].seq, 2)
