"""Opaque ``tools/list`` cursors: what this server issued, and nothing else, decodes."""

import base64
import binascii
from typing import Any

from eshu_mcp.protocol.jsonrpc import INVALID_PARAMS, ProtocolError

__all__ = ["decode_cursor", "encode_cursor"]

_CURSOR_PREFIX = b"eshu-tools:"


def encode_cursor(offset: int) -> str:
    """An opaque cursor for the page starting at ``offset``."""
    return base64.urlsafe_b64encode(_CURSOR_PREFIX + str(offset).encode()).decode("ascii")


def decode_cursor(cursor: Any, total: int) -> int:
    """The offset a cursor names; -32602 for anything we did not issue."""
    if cursor is None:
        return 0
    try:
        raw = base64.urlsafe_b64decode(cursor.encode("ascii"))
    except (AttributeError, UnicodeEncodeError, ValueError, binascii.Error):
        raw = b""
    if raw.startswith(_CURSOR_PREFIX):
        digits = raw[len(_CURSOR_PREFIX) :]
        if digits.isdigit() and 0 <= int(digits) <= total:
            return int(digits)
    raise ProtocolError(INVALID_PARAMS, "invalid params: unknown cursor")
