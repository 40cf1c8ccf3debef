"""Reading a walked file: bounded whatever its size, never through a link or from a FIFO."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.rows import MAX_CONTENT_BYTES, parse_file, read_limit
from eshu_mcp.query.local.index.walk.reading import read_bounded

GIGABYTE = 1 << 30


class ReadBoundedTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-read-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_a_huge_file_costs_its_first_bytes_only(self) -> None:
        huge = self.tmp / "huge.py"
        with huge.open("wb") as handle:  # sparse: no disk, no time
            handle.write(b"print('start')\n")
            handle.truncate(GIGABYTE)
        limit = read_limit("huge.py")
        data, size = read_bounded(str(huge), limit)
        self.assertEqual(size, GIGABYTE)
        self.assertEqual(len(data), limit + 1)
        parsed = parse_file("huge.py", data, size)
        self.assertEqual(parsed.byte_size, GIGABYTE)
        self.assertIn(parsed.parse_status, ("too_large", "binary"))
        self.assertEqual(parsed.content, "")

    def test_a_small_file_is_read_whole(self) -> None:
        small = self.tmp / "small.py"
        small.write_bytes(b"x = 1\n")
        self.assertEqual(read_bounded(str(small), MAX_CONTENT_BYTES), (b"x = 1\n", 6))

    def test_a_large_text_file_is_too_large_with_a_hash_that_sees_its_size(self) -> None:
        path = self.tmp / "big.txt"
        path.write_bytes(b"a" * (MAX_CONTENT_BYTES + 10))
        data, size = read_bounded(str(path), read_limit("big.txt"))
        parsed = parse_file("big.txt", data, size)
        self.assertEqual((parsed.parse_status, parsed.byte_size), ("too_large", size))
        path.write_bytes(b"a" * (MAX_CONTENT_BYTES + 11))
        data, grown = read_bounded(str(path), read_limit("big.txt"))
        self.assertNotEqual(parse_file("big.txt", data, grown).content_hash, parsed.content_hash)

    def test_a_link_and_a_fifo_are_refused(self) -> None:
        target = self.tmp / "target.py"
        target.write_bytes(b"x = 1\n")
        os.symlink(target, self.tmp / "link.py")
        self.assertIsNone(read_bounded(str(self.tmp / "link.py"), MAX_CONTENT_BYTES))
        os.mkfifo(self.tmp / "pipe.py")
        result: list = []
        reader = threading.Thread(
            target=lambda: result.append(read_bounded(str(self.tmp / "pipe.py"), 10))
        )
        reader.start()
        reader.join(10)
        self.assertFalse(reader.is_alive())
        self.assertEqual(result, [None])
