"""Tests for eshu_mcp.query.local.index.build.lock: one writer per database."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.lock import IndexLocked, WriterLock, writer_running


class WriterLockTests(SynchronousTestCase):
    def test_second_writer_is_refused_until_the_first_releases(self) -> None:
        db = Path(tempfile.mkdtemp(prefix="eshu-lock-")) / "index.sqlite"
        with WriterLock(db):
            with self.assertRaises(IndexLocked) as caught:
                WriterLock(db, timeout=0).__enter__()
            self.assertIn("another indexer", str(caught.exception))
        with WriterLock(db, timeout=0):
            self.assertTrue(Path(str(db) + ".lock").exists())


ORPHANING_INDEXER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, f"{os.getpid()} {os.getpgid(0)}\\n".encode())
worker = os.fork()
if worker == 0:  # an old-style parser worker: inherits the locked file and outlives its parent
    time.sleep(60)
    os._exit(0)
print(worker, flush=True)
os._exit(0)  # the indexer dies without releasing anything
"""


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0].decode()
    except OSError:
        return None


class StaleLockTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-stale-lock-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.db = self.tmp / "index.sqlite"

    def test_a_lock_left_by_a_dead_indexer_is_taken_over_with_a_notice(self) -> None:
        Path(str(self.db) + ".lock").write_text("999999999 999999999\n")  # beyond pid_max
        notes: list[str] = []
        with WriterLock(self.db, timeout=0, notice=notes.append):
            pass
        self.assertEqual(len(notes), 1)
        self.assertIn("indexer pid 999999999, which ended without releasing it", notes[0])
        self.assertEqual(Path(str(self.db) + ".lock").read_text(), "")  # released cleanly
        with WriterLock(self.db, timeout=0, notice=notes.append):
            pass
        self.assertEqual(len(notes), 1)

    def test_orphaned_workers_of_a_dead_indexer_are_stopped_and_the_lock_taken(self) -> None:
        lock = str(self.db) + ".lock"
        indexer = subprocess.Popen(
            [sys.executable, "-c", ORPHANING_INDEXER, lock],
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        orphan = int(indexer.stdout.readline())
        indexer.stdout.close()
        indexer.wait(30)
        self.addCleanup(lambda: _state(orphan) in (None, "Z") or os.kill(orphan, signal.SIGKILL))
        self.assertTrue(writer_running(self.db))
        notes: list[str] = []
        with WriterLock(self.db, timeout=10, notice=notes.append):
            self.assertIn(_state(orphan), (None, "Z"))
        self.assertEqual(len(notes), 1)
        self.assertIn(f"indexer pid {indexer.pid} is gone", notes[0])
        self.assertIn(str(orphan), notes[0])
        self.assertFalse(writer_running(self.db))

    def test_a_live_writer_is_named_and_never_killed(self) -> None:
        with WriterLock(self.db), self.assertRaises(IndexLocked) as caught:
            WriterLock(self.db, timeout=0).__enter__()
        self.assertIn(f"another indexer (pid {os.getpid()})", str(caught.exception))

    def test_a_forked_child_does_not_keep_the_lock(self) -> None:
        with WriterLock(self.db):
            child = os.fork()
            if child == 0:
                time.sleep(30)
                os._exit(0)
        self.addCleanup(lambda: os.waitpid(child, 0))
        self.addCleanup(os.kill, child, signal.SIGKILL)
        self.assertFalse(writer_running(self.db))
