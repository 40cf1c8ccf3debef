"""JSON-RPC 2.0 framing: decoding frames, validating messages, encoding replies."""

import json
import math
from typing import Any

from attrs import frozen

from eshu_mcp.encoding import dumps

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SESSION_OWNER_MISMATCH = -32001
SERVER_BUSY = -32000
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022

DEFAULT_MAX_BATCH = 100
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024

_MISSING = object()


@frozen
class ProtocolError(Exception):
    """A JSON-RPC error to send instead of a result."""

    code: int
    message: str
    data: Any = None

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


@frozen
class Request:
    """A validated JSON-RPC request or notification."""

    method: str
    params: Any
    id: Any = None
    is_notification: bool = False

    @property
    def id_key(self) -> str:
        """A hashable key telling ``1`` from ``"1"``."""
        return json.dumps(self.id, sort_keys=True)


class _NonFiniteNumber(ValueError):
    """A JSON number Python would read as NaN or an infinity."""


def _refuse_constant(name: str) -> float:
    raise _NonFiniteNumber(name)


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _NonFiniteNumber(text)
    return number


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)


def decode_frame(raw: bytes | str) -> Any:
    """
    Decode one frame; raise ``ProtocolError`` -32700 when it is not JSON.

    JSON has no NaN or infinities: ``NaN``, ``Infinity``, ``-Infinity`` and
    numbers that overflow a double (``1e400``) are parse errors wherever they
    appear, as in every strict decoder.
    """
    try:
        if isinstance(raw, bytes | bytearray):
            raw = raw.decode(json.detect_encoding(raw), "surrogatepass")
        return _DECODER.decode(raw)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(PARSE_ERROR, "parse error") from exc


def size_text(size: int) -> str:
    """A byte count as people write limits: ``4 MiB``, ``512 KiB`` or ``1000 bytes``."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} bytes"


def message_too_large(limit: int) -> ProtocolError:
    """The -32600 error for a message over the size limit."""
    return ProtocolError(
        INVALID_REQUEST,
        f"invalid request: message larger than {size_text(limit)} (--max-message-bytes)",
    )


def batch_too_long(length: int, limit: int) -> ProtocolError | None:
    """The -32600 error for a batch of more than ``limit`` messages, else None."""
    if length <= limit:
        return None
    return ProtocolError(
        INVALID_REQUEST,
        f"invalid request: a batch holds at most {limit} messages, this one {length} (--max-batch)",
    )


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, int | float) and not isinstance(value, bool)
    )


def parse_message(message: Any) -> Request:
    """
    Validate one decoded message as a request or a notification.

    Raises ``ProtocolError`` -32600 for anything else; a client's responses
    (we never send requests) are invalid here too.
    """
    if not isinstance(message, dict):
        raise ProtocolError(INVALID_REQUEST, "invalid request: expected a JSON object")
    if message.get("jsonrpc") != "2.0":
        raise ProtocolError(INVALID_REQUEST, 'invalid request: "jsonrpc" must be "2.0"')
    method = message.get("method")
    if not isinstance(method, str):
        raise ProtocolError(INVALID_REQUEST, 'invalid request: "method" must be a string')
    params = message.get("params", _MISSING)
    if params is not _MISSING and not isinstance(params, dict | list):
        raise ProtocolError(INVALID_REQUEST, 'invalid request: "params" must be an object')
    if params is _MISSING:
        params = None
    if "id" not in message:
        return Request(method=method, params=params, is_notification=True)
    request_id = message["id"]
    if not _valid_id(request_id):
        raise ProtocolError(INVALID_REQUEST, 'invalid request: "id" must be a string or number')
    return Request(method=method, params=params, id=request_id)


def message_id(message: Any) -> Any:
    """The id to echo in an error about ``message``, or None when it has no usable one."""
    if isinstance(message, dict) and _valid_id(message.get("id")):
        return message["id"]
    return None


def result_response(request_id: Any, result: Any) -> dict:
    """A success response, fields in wire order."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(request_id: Any, error: ProtocolError) -> dict:
    """An error response; the id is null when the request's id is unknown."""
    body: dict = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def encode(reply: Any, *, escape_html: bool = True) -> bytes:
    """Serialize a response (or a batch of them) as compact UTF-8 JSON."""
    return dumps(reply, escape_html=escape_html).encode("utf-8")
