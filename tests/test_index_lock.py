"""Tests for eshu_mcp.query.local.index.lock: one writer per database."""

import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.lock import IndexLocked, WriterLock


class WriterLockTests(SynchronousTestCase):
    def test_second_writer_is_refused_until_the_first_releases(self) -> None:
        db = Path(tempfile.mkdtemp(prefix="eshu-lock-")) / "index.sqlite"
        with WriterLock(db):
            with self.assertRaises(IndexLocked) as caught:
                WriterLock(db, timeout=0).__enter__()
            self.assertIn("another indexer", str(caught.exception))
        with WriterLock(db, timeout=0):
            self.assertTrue(Path(str(db) + ".lock").exists())
