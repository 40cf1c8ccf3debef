"""Tests for the reader of the embedding model's Parquet word list: Snappy, Thrift, pages."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.store import parquet


class SnappyTests(SynchronousTestCase):
    def test_literals_and_overlapping_copies_decompress(self):
        # 10 bytes: literal "ab" (tag 1 << 2), then copy 8 bytes from offset 2 (1-byte offset)
        block = bytes([10, 0x04]) + b"ab" + bytes([0x01 | ((8 - 4) << 2), 2])
        self.assertEqual(parquet._unsnappy(block), b"ababababab")

    def test_corrupt_data_is_refused(self):
        with self.assertRaises(ValueError):
            parquet._unsnappy(bytes([5, 0x01 | (4 << 2), 9]))  # copy before any output


class ThriftTests(SynchronousTestCase):
    def test_a_compact_struct_decodes_to_field_ids(self):
        # field 1 i32 = 3 (zigzag 6), field 2 binary "hi", field 4 list of two i32, stop
        data = bytes([0x15, 6, 0x18, 2]) + b"hi" + bytes([0x29, 0x25, 2, 4, 0])
        fields, end = parquet._struct(data, 0)
        self.assertEqual(fields, {1: 3, 2: b"hi", 4: [1, 2]})
        self.assertEqual(end, len(data))

    def test_a_file_that_is_not_parquet_is_refused(self):
        with self.assertRaises(ValueError):
            parquet.parquet_strings(b"not a parquet file")
