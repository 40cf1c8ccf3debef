"""
Reading a query handler's body the way Eshu's Go MCP server does.

The reference server never passes handler bytes through: it decodes them (into
``any`` or into the typed ``query.ResponseEnvelope``) and encodes them again. The
MCP client therefore sees numbers that went through float64, objects with sorted
keys, unknown envelope fields dropped and the envelope's own fields in struct
order. This module reproduces that decoding so ``resource.text``, the response
budget and the summaries agree byte for byte with the Go server.
"""

import json
import math
import re
from typing import Any

__all__ = ["body_text", "decode_body", "envelope_from_value", "parse_canonical_envelope"]

# A Go float64 holds every integer up to 2**53 exactly; beyond that the value
# (and so its JSON text) is the nearest float.
_EXACT_INTEGER_LIMIT = 2**53

_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


class _NotEnvelope(Exception):
    """The body decodes as JSON but not into Go's typed envelope struct."""


def _go_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        # Go: "cannot unmarshal number 1e400 into Go value of type float64".
        raise ValueError(f"number out of float64 range: {text[:32]}")
    return number


def _go_int(text: str) -> int | float:
    if len(text) < 16:
        return -0.0 if text == "-0" else int(text)
    number = _go_float(text)
    if abs(number) < _EXACT_INTEGER_LIMIT:
        return int(text)
    return number


def _reject_constant(name: str) -> Any:
    raise ValueError(f"not JSON: {name}")


def body_text(body: bytes) -> str:
    """UTF-8 text of ``body`` with each invalid byte as U+FFFD, as Go's decoder reads strings."""
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return _SURROGATE.sub("\ufffd", body.decode("utf-8", "surrogateescape"))


def _first(pair: tuple) -> Any:
    return pair[0]


def _sorted_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object with its keys in Go map order (the last of duplicate keys wins)."""
    return dict(sorted(pairs, key=_first))


def _normalize(value: Any, fix_surrogates: bool) -> Any:
    """Sort object keys (Go map order) and turn lone surrogates into U+FFFD, as Go decodes them."""
    if isinstance(value, dict):
        items = value.items()
        if fix_surrogates:
            items = [(_SURROGATE.sub("\ufffd", key), item) for key, item in items]
        out = {}
        for key, item in sorted(items, key=_first):
            out[key] = _normalize(item, fix_surrogates)
        return out
    if isinstance(value, list):
        return [_normalize(item, fix_surrogates) for item in value]
    if fix_surrogates and isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    return value


def decode_body(body: bytes) -> Any:
    """
    Decode ``body`` as Go's ``json.Unmarshal`` into ``any`` would, with object keys sorted.

    Integers beyond 2**53 come back as the float Go would hold; ``NaN``, numbers
    out of float64 range, trailing data and nesting deeper than this interpreter
    can walk raise ``ValueError`` (Go refuses all but the last too).
    """
    text = body_text(body)
    fix_surrogates = _ESCAPED_SURROGATE.search(text) is not None
    try:
        value = json.loads(
            text,
            parse_float=_go_float,
            parse_int=_go_int,
            parse_constant=_reject_constant,
            # Keys sorted as each object is built (no second walk); a lone surrogate
            # escape is rare and takes the walk that also replaces it.
            object_pairs_hook=None if fix_surrogates else _sorted_object,
        )
        return _normalize(value, True) if fix_surrogates else value
    except RecursionError as error:
        raise ValueError("JSON nested too deeply") from error


# Struct layouts of Go's query envelope types: (json name, kind, omitempty).
# Kinds: "string", "any", "map_any", "map_string", or a nested layout for a
# struct value ("struct", layout) or pointer ("pointer", layout).
_PROFILES = (("current", "string", True), ("required", "string", True))
_NEXT_CHECK = (
    ("tool", "string", True),
    ("route", "string", True),
    ("reason", "string", True),
    ("params", "map_string", True),
)
_FRESHNESS = (
    ("state", "string", False),
    ("observed_at", "string", True),
    ("detail", "string", True),
    ("cause", "string", True),
    ("next_check", ("pointer", _NEXT_CHECK), True),
)
_TRUTH = (
    ("level", "string", False),
    ("capability", "string", True),
    ("profile", "string", True),
    ("basis", "string", True),
    ("backend", "string", True),
    ("freshness", ("struct", _FRESHNESS), False),
    ("reason", "string", True),
)
_ERROR = (
    ("code", "string", False),
    ("message", "string", False),
    ("capability", "string", True),
    ("correlation_id", "string", True),
    ("profiles", ("pointer", _PROFILES), True),
    ("details", "map_any", True),
)
_ENVELOPE = (
    ("data", "any", False),
    ("truth", ("pointer", _TRUTH), False),
    ("error", ("pointer", _ERROR), False),
)


def _folds_to(char: str, lower: str) -> bool:
    """Whether ``char`` equals ``lower`` under Go's simple case folding (field names are ASCII)."""
    if char == lower:
        return True
    if char.isascii():
        return char.lower() == lower
    return (char == "\u212a" and lower == "k") or (char == "\u017f" and lower == "s")


def _field_for(key: str, layout: tuple) -> tuple | None:
    """The field a JSON key sets: exact name first, then a case-insensitive match, as Go does."""
    for field in layout:
        if field[0] == key:
            return field
    for field in layout:
        name = field[0]
        if len(name) == len(key) and all(map(_folds_to, key, name)):
            return field
    return None


def _decode_field(kind: Any, value: Any) -> Any:
    """Decode one JSON value into a Go field of ``kind``; None stands for Go's nil."""
    if kind == "any":
        return value
    if kind == "string":
        if value is None:
            return ""
        if not isinstance(value, str):
            raise _NotEnvelope
        return value
    if kind in ("map_any", "map_string"):
        if value is None:
            return None
        if not isinstance(value, dict):
            raise _NotEnvelope
        if kind == "map_any":
            return value
        return {key: _decode_field("string", item) for key, item in value.items()}
    shape, layout = kind
    if value is None:
        return None if shape == "pointer" else _decode_struct(layout, {})
    if not isinstance(value, dict):
        raise _NotEnvelope
    return _decode_struct(layout, value)


def _is_empty(kind: Any, decoded: Any) -> bool:
    """Go's omitempty: an empty string or map, or a nil pointer (a pointer to ``{}`` is kept)."""
    if decoded is None:
        return True
    return not isinstance(kind, tuple) and len(decoded) == 0


def _decode_struct(layout: tuple, value: dict) -> dict:
    """Decode a JSON object into a struct and encode it again: field order, omitempty, no extras."""
    fields: dict[str, Any] = {}
    for key, item in value.items():
        field = _field_for(key, layout)
        if field is not None:
            fields[field[0]] = _decode_field(field[1], item)
    out: dict[str, Any] = {}
    for name, kind, omitempty in layout:
        if name in fields:
            decoded = fields[name]
        elif kind == "string":
            decoded = ""
        elif isinstance(kind, tuple) and kind[0] == "struct":
            decoded = _decode_struct(kind[1], {})
        else:
            decoded = None
        if omitempty and _is_empty(kind, decoded):
            continue
        out[name] = decoded
    return out


def envelope_from_value(value: Any) -> dict | None:
    """
    The re-serialized canonical envelope for a decoded body, or None when it is not one.

    The body must be an object holding all three of ``data``, ``truth`` and
    ``error`` and must decode into Go's typed ``ResponseEnvelope``: ``truth`` and
    ``error`` objects or null, their fields of the right types. ``value`` is what
    :func:`decode_body` returned, so ``data`` and ``details`` already have sorted keys.
    """
    if not isinstance(value, dict):
        return None
    if "data" not in value or "truth" not in value or "error" not in value:
        return None
    try:
        return _decode_struct(_ENVELOPE, value)
    except _NotEnvelope:
        return None


def parse_canonical_envelope(body: bytes) -> dict | None:
    """
    Parse a handler body as Eshu's canonical envelope (spec §8.2), re-serialized per §8.3.

    Returns an insertion-ordered dict ``{"data", "truth", "error"}`` ready for
    :func:`eshu_mcp.encoding.dumps`, or None when the body is not an envelope.
    """
    try:
        value = decode_body(body)
    except ValueError:
        return None
    return envelope_from_value(value)
