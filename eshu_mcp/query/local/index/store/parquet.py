"""
A reader for the one Parquet file the embedding model ships (a single optional string
column, Snappy pages, dictionary then plain encoded), so the ``semantic`` extra needs no
Parquet library: a Thrift compact-protocol footer and page headers, raw Snappy blocks.
"""

from __future__ import annotations

import struct
from typing import Any

READ_AHEAD = 1 << 16
"""Bytes a Snappy page is decompressed ahead of the value being read."""
_LENGTH = struct.Struct("<i")
_UNSIGNED_LENGTH = struct.Struct("<I")


def parquet_strings(data: bytes, limit: int | None = None) -> list[str]:
    """
    The values of a one-column Parquet file of strings, in row order (the first ``limit``
    of them when given: a page is decompressed only as far as they need).
    """
    if data[:4] != b"PAR1" or data[-4:] != b"PAR1":
        raise ValueError("not a Parquet file")
    try:
        values, rows = _read_strings(data, limit)
    except (IndexError, KeyError, TypeError, struct.error) as error:
        raise ValueError(f"corrupt Parquet file ({error!r})") from None
    if len(values) != rows or len(set(values)) != rows:
        raise ValueError("the model's word list is not the distinct words it should be")
    return values


def _read_strings(data: bytes, limit: int | None) -> tuple[list[str], int]:
    """The first rows of the file's column, and how many rows there should be."""
    footer_size = _LENGTH.unpack(data[-8:-4])[0]
    footer, _ = _struct(data, len(data) - 8 - footer_size)
    rows = footer[3] if limit is None else min(limit, footer[3])
    chunk = footer[4][0][1][0][3]  # row group 0, column 0, its metadata
    if chunk[4] not in (0, 1):
        raise ValueError(f"unsupported Parquet codec {chunk[4]}")
    snappy = chunk[4] == 1
    position = chunk.get(11, chunk[9])  # dictionary page offset, else data page offset
    end = chunk[9] + chunk[7] if 11 not in chunk else chunk[11] + chunk[7]
    dictionary: list[str] = []
    values: list[str] = []
    while position < end and len(values) < rows:
        header, position = _struct(data, position)
        page = data[position : position + header[3]]
        position += header[3]
        if header[1] == 2:  # dictionary page: PLAIN strings, as many as the rows need
            wanted = min(header[7][1], rows)
            body = _Page(page, snappy)
            if wanted == header[7][1]:
                body.need(body.size)  # all of it: in one piece
            dictionary = _plain_strings(body, 0, wanted)
        elif header[1] == 0:  # data page v1: definition levels, then values
            count, encoding = header[5][1], header[5][2]
            if encoding == 0:
                body = _Page(page, snappy)
                body.need(4)
                start = 4 + _LENGTH.unpack_from(body.out, 0)[0]
                values += _plain_strings(body, start, min(count, rows - len(values)))
            elif encoding in (2, 8):
                # Every value of this column is distinct, so the dictionary holds the
                # values in row order and its indexes run 0, 1, 2...: take them in order
                # (the page itself, its indexes, is not even decompressed).
                values += dictionary[len(values) : len(values) + count]
            else:
                raise ValueError(f"unsupported Parquet encoding {encoding}")
        else:
            raise ValueError(f"unsupported Parquet page type {header[1]}")
    del values[rows:]
    return values, rows


class _Page:
    """
    A page's bytes (``out``), decompressed when Snappy only as far as they are read (and
    copied to ``bytes`` as they grow, whose slices decode faster than a bytearray's).
    """

    def __init__(self, page: bytes, snappy: bool) -> None:
        self.data = page
        self.out = b""
        if snappy:
            self.size, self.position = _varint(page, 0)
            self.buffer = bytearray()
        else:
            self.size, self.position, self.out = len(page), len(page), page

    def need(self, count: int) -> None:
        """At least ``count`` bytes in ``out``, or ValueError when the page is shorter."""
        if count > self.size or count < 0:
            raise ValueError("a Parquet value runs past its page")
        if len(self.out) >= count:
            return
        wanted = min(count + READ_AHEAD, self.size)
        self.position = _snappy_into(self.data, self.position, self.buffer, wanted)
        produced = len(self.buffer)
        ended = self.position >= len(self.data)
        if produced < count or produced > self.size or (ended != (produced == self.size)):
            raise ValueError("corrupt Snappy data")
        self.out = bytes(self.buffer)


def _plain_strings(body: _Page, position: int, count: int) -> list[str]:
    """``count`` PLAIN-encoded strings (a length, then UTF-8 bytes) from ``position``."""
    out = body.out
    have = len(out)
    if have < body.size:
        return _plain_strings_read(body, position, count)
    # The whole page is here: a length read past its end raises, and an unsigned length
    # that runs past it (a negative one too) leaves ``position`` past the end, checked once.
    length = _UNSIGNED_LENGTH.unpack_from
    strings: list[str] = []
    append = strings.append
    for _ in range(count):
        start = position + 4
        position = start + length(out, start - 4)[0]
        append(out[start:position].decode("utf-8"))
    if position > have:
        raise ValueError("a Parquet value runs past its page")
    return strings


def _plain_strings_read(body: _Page, position: int, count: int) -> list[str]:
    """:func:`_plain_strings` from a page decompressed as far as they need."""
    out = body.out
    have = len(out)
    length = _LENGTH.unpack_from
    strings: list[str] = []
    append = strings.append
    for _ in range(count):
        start = position + 4
        if start > have:
            body.need(start)
            out = body.out
            have = len(out)
        position = start + length(out, start - 4)[0]
        if position > have or position < start:
            body.need(position if position >= start else -1)
            out = body.out
            have = len(out)
        append(out[start:position].decode("utf-8"))
    return strings


def _varint(data: bytes, position: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7


def _struct(data: bytes, position: int) -> tuple[dict[int, Any], int]:
    """A Thrift compact-protocol struct: field id -> value."""
    fields: dict[int, Any] = {}
    last = 0
    while True:
        head = data[position]
        position += 1
        if head == 0:
            return fields, position
        kind, delta = head & 0x0F, head >> 4
        if delta:
            field_id = last + delta
        else:
            raw, position = _varint(data, position)
            field_id = (raw >> 1) ^ -(raw & 1)
        last = field_id
        fields[field_id], position = _value(data, position, kind)


def _value(data: bytes, position: int, kind: int) -> tuple[Any, int]:
    if kind in (1, 2):
        return kind == 1, position
    if kind == 3:
        return data[position], position + 1
    if kind in (4, 5, 6):
        raw, position = _varint(data, position)
        return (raw >> 1) ^ -(raw & 1), position
    if kind == 7:
        return struct.unpack_from("<d", data, position)[0], position + 8
    if kind == 8:
        size, position = _varint(data, position)
        return data[position : position + size], position + size
    if kind in (9, 10):
        head = data[position]
        position += 1
        count, element = head >> 4, head & 0x0F
        if count == 15:
            count, position = _varint(data, position)
        items = []
        for _ in range(count):
            item, position = _value(data, position, element)
            items.append(item)
        return items, position
    if kind == 12:
        return _struct(data, position)
    raise ValueError(f"unsupported Thrift type {kind}")


def _unsnappy(data: bytes) -> bytes:
    """Decompress a raw Snappy block."""
    page = _Page(data, snappy=True)
    page.need(page.size)
    return page.out


def _snappy_into(data: bytes, position: int, out: bytearray, wanted: int) -> int:
    """
    Decompress Snappy elements from ``data[position:]`` onto ``out`` until it holds
    ``wanted`` bytes or the block ends; where the next element starts.
    """
    end = len(data)
    produced = len(out)
    length_of = _ELEMENT_LENGTH
    high_offset = _HIGH_OFFSET
    try:
        while produced < wanted and position < end:
            tag = data[position]
            kind = tag & 3
            length = length_of[tag]
            if kind == 2:  # a copy with a 2-byte offset: the most common element
                offset = data[position + 1] | data[position + 2] << 8
                position += 3
            elif kind == 1:
                offset = high_offset[tag] | data[position + 1]
                position += 2
            elif kind == 0:  # literal bytes
                position += 1
                if length > 60:
                    extra = length - 60
                    length = int.from_bytes(data[position : position + extra], "little") + 1
                    position += extra
                stop = position + length
                if stop > end:
                    raise ValueError("corrupt Snappy data")
                out += data[position:stop]
                position = stop
                produced += length
                continue
            else:
                offset = int.from_bytes(data[position + 1 : position + 5], "little")
                position += 5
            start = produced - offset
            if length <= offset <= produced:  # the usual copy, of bytes already out
                out += out[start : start + length]
                produced += length
                continue
            if offset <= 0 or start < 0:
                raise ValueError("corrupt Snappy data")
            while length > 0:  # the copy overlaps what it writes: a repeating pattern
                piece = out[start : start + min(offset, length)]
                out += piece
                length -= len(piece)
            produced = len(out)
    except IndexError:
        raise ValueError("corrupt Snappy data") from None
    return position


_ELEMENT_LENGTH = tuple(
    ((tag >> 2) & 7) + 4 if tag & 3 == 1 else (tag >> 2) + 1 for tag in range(256)
)
"""A Snappy tag byte's length: of its literal (over 60: more length bytes follow) or copy."""
_HIGH_OFFSET = tuple((tag >> 5) << 8 for tag in range(256))
"""A 1-byte-offset copy's tag: the high bits of its offset."""
