"""
A reader for the one Parquet file the embedding model ships (a single optional string
column, Snappy pages, dictionary then plain encoded), so the ``semantic`` extra needs no
Parquet library: a Thrift compact-protocol footer and page headers, raw Snappy blocks.
"""

from __future__ import annotations

import struct
from typing import Any


def parquet_strings(data: bytes, limit: int | None = None) -> list[str]:
    """The values of a one-column Parquet file of strings, in row order (the first
    ``limit`` of them when given)."""
    if data[:4] != b"PAR1" or data[-4:] != b"PAR1":
        raise ValueError("not a Parquet file")
    footer_size = struct.unpack("<i", data[-8:-4])[0]
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
        dictionary_encoded = header[1] == 0 and header[5][2] in (2, 8)
        body = _unsnappy(page) if snappy and not dictionary_encoded else page
        if header[1] == 2:  # dictionary page: PLAIN strings
            dictionary = _plain_strings(body, 0, header[7][1])
        elif header[1] == 0:  # data page v1: definition levels, then values
            count, encoding = header[5][1], header[5][2]
            if encoding == 0:
                start = 4 + struct.unpack("<i", body[:4])[0]
                values += _plain_strings(body, start, count)
            elif encoding in (2, 8):
                # Every value of this column is distinct, so the dictionary holds the
                # values in row order and its indexes run 0, 1, 2...: take them in order.
                values += dictionary[len(values) : len(values) + count]
            else:
                raise ValueError(f"unsupported Parquet encoding {encoding}")
        else:
            raise ValueError(f"unsupported Parquet page type {header[1]}")
    del values[rows:]
    if len(values) != rows or len(set(values)) != rows:
        raise ValueError("the model's word list is not the distinct words it should be")
    return values


def _plain_strings(body: bytes, position: int, count: int) -> list[str]:
    out = []
    for _ in range(count):
        size = struct.unpack_from("<i", body, position)[0]
        position += 4
        out.append(body[position : position + size].decode("utf-8"))
        position += size
    return out


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
    size, position = _varint(data, 0)
    out = bytearray()
    end = len(data)
    while position < end:
        tag = data[position]
        position += 1
        kind = tag & 3
        if kind == 0:
            length = tag >> 2
            if length >= 60:
                extra = length - 59
                length = int.from_bytes(data[position : position + extra], "little")
                position += extra
            length += 1
            out += data[position : position + length]
            position += length
            continue
        if kind == 1:
            length = ((tag >> 2) & 7) + 4
            offset = ((tag >> 5) << 8) | data[position]
            position += 1
        elif kind == 2:
            length = (tag >> 2) + 1
            offset = int.from_bytes(data[position : position + 2], "little")
            position += 2
        else:
            length = (tag >> 2) + 1
            offset = int.from_bytes(data[position : position + 4], "little")
            position += 4
        if offset <= 0 or offset > len(out):
            raise ValueError("corrupt Snappy data")
        start = len(out) - offset
        if offset >= length:
            out += out[start : start + length]
        else:
            while length > 0:
                piece = out[start : start + min(offset, length)]
                out += piece
                length -= len(piece)
    if len(out) != size:
        raise ValueError("corrupt Snappy data")
    return bytes(out)
