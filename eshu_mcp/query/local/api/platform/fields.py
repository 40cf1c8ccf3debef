"""
Request fields with Go's decoding rules: typed JSON body fields (a wrong type is a 400
``invalid JSON: ...``), lenient query integers, Eshu's paging inputs and the ``limit+1``
probe, and repository-relative paths that can never leave the repository.
"""

from __future__ import annotations

from typing import Any

from eshu_mcp.query.local.api.platform.errors import ApiError


class JsonBody(dict):
    """A decoded JSON request body: its fields are typed, unlike query strings."""


def body_object(ctx: Any) -> dict[str, Any]:
    """The POST body as a JSON object (a :class:`JsonBody`), or Go's ``invalid JSON`` 400."""
    body = ctx.body
    if body is None:
        raise ApiError(400, "invalid JSON: EOF")
    if not isinstance(body, dict):
        raise ApiError(
            400,
            f"invalid JSON: json: cannot unmarshal {go_type_name(body)} into Go value"
            " of type request",
        )
    return body if isinstance(body, JsonBody) else JsonBody(body)


def go_type_name(value: Any) -> str:
    """The JSON type word Go's decoder uses in unmarshal errors."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _type_error(name: str, value: Any, go_type: str) -> ApiError:
    return ApiError(
        400,
        f"invalid JSON: json: cannot unmarshal {go_type_name(value)} into Go struct field"
        f" .{name} of type {go_type}",
    )


INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
"""The integers Eshu's Go API reads (``int`` is 64 bits); SQLite stores no others."""


def int_param(source: dict[str, Any], name: str, default: int) -> int:
    """
    An integer from a JSON body (wrong type or beyond 64 bits -> 400) or a query dict
    (text that is no 64-bit integer silently falls back to ``default``, as Eshu's
    ``QueryParamInt`` does).
    """
    value = source.get(name)
    if value is None:
        return default
    if isinstance(value, str) and not isinstance(source, JsonBody):
        try:
            number = int(value.strip())
        except ValueError:
            return default
        return number if INT64_MIN <= number <= INT64_MAX else default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _type_error(name, value, "int")
    if isinstance(value, float) and not value.is_integer():
        raise _type_error(name, value, "int")
    if not INT64_MIN <= value <= INT64_MAX:
        raise ApiError(
            400,
            f"invalid JSON: json: cannot unmarshal number {_number_text(value)} into Go struct"
            f" field .{name} of type int",
        )
    return int(value)


def _number_text(value: int | float) -> str:
    return str(int(value)) if isinstance(value, int) else repr(value)


NOT_AN_INTEGER = -1
"""What :func:`strict_query_int` gives for text that is no integer (callers refuse < 0)."""


def strict_query_int(query: dict[str, str], name: str) -> int | None:
    """
    A query integer for a route that refuses text that is not one: None when absent or
    blank, else its value, or :data:`NOT_AN_INTEGER` (every such route refuses negatives,
    so one bound check answers both, in the route's own words).
    """
    raw = (query.get(name) or "").strip()
    if not raw:
        return None
    try:
        number = int(raw)
    except ValueError:
        return NOT_AN_INTEGER
    return number if INT64_MIN <= number <= INT64_MAX else NOT_AN_INTEGER


def str_param(source: dict[str, Any], name: str, default: str = "") -> str:
    """A string field; non-strings in a JSON body are Go's 400."""
    value = source.get(name)
    if value is None:
        return default
    if not isinstance(value, str):
        raise _type_error(name, value, "string")
    return value


def bool_param(source: dict[str, Any], name: str, default: bool = False) -> bool:
    """A boolean from a body (bool) or a query (``true``/``1``/``false``/``0``)."""
    value = source.get(name)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and not isinstance(source, JsonBody):
        text = value.strip().lower()
        if text in ("1", "t", "true", "yes"):
            return True
        if text in ("0", "f", "false", "no"):
            return False
        return default
    raise _type_error(name, value, "bool")


def str_list_param(source: dict[str, Any], name: str) -> list[str]:
    """A list of strings from a body (or a comma-separated query value)."""
    value = source.get(name)
    if value is None:
        return []
    if isinstance(value, str) and not isinstance(source, JsonBody):
        return [item.strip() for item in value.split(",") if item.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _type_error(name, value, "[]string")
    return list(value)


def limit_offset(
    source: dict[str, Any],
    *,
    default: int,
    maximum: int,
    max_offset: int | None = None,
) -> tuple[int, int]:
    """
    Eshu's paging inputs: ``limit`` <= 0 means ``default``, clamped to ``maximum``;
    negative ``offset`` is 0; past ``max_offset`` is 400 ``offset exceeds maximum of N``.
    """
    limit = int_param(source, "limit", default)
    if limit <= 0:
        limit = default
    limit = min(limit, maximum)
    offset = max(int_param(source, "offset", 0), 0)
    if max_offset is not None and offset > max_offset:
        raise ApiError(400, f"offset exceeds maximum of {max_offset}")
    return limit, offset


def page(rows: list, limit: int) -> tuple[list, bool]:
    """The ``limit+1`` probe: drop the extra row and report whether it was there."""
    return rows[:limit], len(rows) > limit


def next_offset(offset: int, count: int, truncated: bool) -> int | None:
    """``offset+count`` when truncated, else None."""
    return offset + count if truncated else None


def relative_path(value: str, *, field: str = "relative_path") -> str:
    """
    A repository-relative path, normalised to forward slashes.

    Absolute paths, ``..`` segments and NUL bytes are refused with 400, so no handler can
    be steered outside an indexed repository whatever a client sends.
    """
    if "\x00" in value:
        raise ApiError(400, f"{field} must not contain NUL bytes")
    text = value.replace("\\", "/").strip()
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise ApiError(400, f"{field} must be relative to the repository root")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ApiError(400, f"{field} must not leave the repository")
    return "/".join(parts)
