"""
The metric label of a refused ``POST /mcp/message`` (or ``/mcp``): the JSON-RPC method read
from the first 4 KiB of the body, without consuming it.

Only a complete JSON object within the first 4096 bytes is read, so larger bodies and
batches are labelled ``unknown``; known MCP methods keep their name and anything else is
``other``.  The body is left readable from its first byte, whole.
"""

import io
import json
from typing import Any

from twisted.web.iweb import IRequest

PEEK_LIMIT = 4 << 10
UNKNOWN = "unknown"
OTHER = "other"
LABELLED_METHODS = frozenset(
    {"initialize", "notifications/initialized", "tools/list", "tools/call", "ping"}
)


class _HeadThenTail(io.RawIOBase):
    """A read-only stream of an already-read head followed by the rest of a stream."""

    def __init__(self, head: bytes, tail: Any) -> None:
        super().__init__()
        self._head = io.BytesIO(head)
        self._tail = tail

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = self._head.readinto(buffer)
        if count:
            return count
        chunk = self._tail.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)


def _read_head(request: IRequest) -> bytes:
    """The first PEEK_LIMIT bytes of the body; the body is rewound (or rebuilt) afterwards."""
    content = getattr(request, "content", None)
    if content is None:
        return b""
    try:
        content.seek(0)
        head = content.read(PEEK_LIMIT)
        content.seek(0)
        return head
    except (OSError, ValueError, AttributeError):
        pass
    try:
        head = content.read(PEEK_LIMIT)
    except (OSError, ValueError):
        return b""
    request.content = io.BufferedReader(_HeadThenTail(head, content))
    return head


def _method(message: dict[str, Any]) -> Any:
    """The ``method`` member, matched case-insensitively as Go's decoder does."""
    if "method" in message:
        return message["method"]
    for key, value in message.items():
        if key.lower() == "method":
            return value
    return None


def method_label(head: bytes) -> str:
    """The label for a body head: a known method, ``other``, or ``unknown``."""
    try:
        message = json.loads(head)
    except ValueError:
        return UNKNOWN
    if not isinstance(message, dict):
        return UNKNOWN
    method = _method(message)
    if not isinstance(method, str) or not method:
        return UNKNOWN
    return method if method in LABELLED_METHODS else OTHER


def peek_mcp_method(request: IRequest) -> str:
    """The metric label of ``request``'s JSON-RPC method; leaves the body unread."""
    return method_label(_read_head(request))
