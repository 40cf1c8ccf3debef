"""
Argument helpers for tool dispatch, with the coercions of Eshu's reference server.

Tool arguments arrive as decoded JSON. The reference server never rejects an
argument for its type: each helper turns a value of the wrong type into its
documented fallback (``""``, the default, ``None``...), so these helpers never
raise. Names follow the contract README (``str`` is :func:`string_arg`,
``intOr`` is :func:`int_or`, and so on).
"""

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

Args = Mapping[str, Any]

_WORKLOAD_PREFIX = "workload:"
_CALL_CHAIN_ARROW = "->"
_CROSS_REPO_SCOPE = "cross_repo"
_DECIMAL = re.compile(r"[+-]?[0-9]+")
# Go writes floats at or beyond this magnitude in exponent form, never as integers.
_GO_EXPONENT_THRESHOLD = 1e21


def _is_number(value: Any) -> bool:
    """True for a JSON number; JSON ``true``/``false`` are bools, not numbers."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def string_arg(args: Args, key: str) -> str:
    """The argument if it is a JSON string, else ``""``."""
    value = args.get(key)
    return value if isinstance(value, str) else ""


def int_or(args: Args, key: str, default: int) -> int:
    """A JSON number truncated toward zero (2.9 -> 2); anything else gives ``default``."""
    value = args.get(key)
    if not _is_number(value):
        return default
    if isinstance(value, float) and not math.isfinite(value):
        return default
    return int(value)


def int_string(args: Args, key: str, default: int) -> str:
    """:func:`int_or` as a decimal string, for query parameters."""
    return str(int_or(args, key, default))


def optional_int_string(args: Args, key: str) -> str:
    """``""`` when the key is absent, else ``int_or(..., 0)`` as a decimal string."""
    if key not in args:
        return ""
    return str(int_or(args, key, 0))


def optional_float(args: Args, key: str) -> tuple[int | float, bool]:
    """``(value, True)`` for any JSON number, else ``(0, False)`` ("not present")."""
    value = args.get(key)
    if _is_number(value) and not (isinstance(value, float) and not math.isfinite(value)):
        return value, True
    return 0, False


def bool_or(args: Args, key: str, default: bool) -> bool:
    """The argument if it is a JSON bool, else ``default``."""
    value = args.get(key)
    return value if isinstance(value, bool) else default


def bool_str(args: Args, key: str) -> str:
    """``"true"``/``"false"`` when a bool is supplied, else ``""`` (the key is dropped)."""
    value = args.get(key)
    if not isinstance(value, bool):
        return ""
    return "true" if value else "false"


def string_slice(args: Args, key: str) -> list | None:
    """A JSON list as given (elements unchecked); anything else is ``None`` (JSON null)."""
    value = args.get(key)
    return value if isinstance(value, list) else None


def string_values(args: Args, key: str) -> list[str]:
    """The non-empty string elements of a JSON list; ``[]`` (never null) otherwise."""
    values = string_slice(args, key) or []
    return [item for item in values if isinstance(item, str) and item]


def object_slice(args: Args, key: str) -> list[dict] | None:
    """The object elements of a JSON list; ``None`` when the argument is not a list."""
    values = string_slice(args, key)
    if values is None:
        return None
    return [item for item in values if isinstance(item, dict)]


def map_string_any(args: Args, key: str) -> dict:
    """The argument if it is a JSON object, else ``{}``."""
    value = args.get(key)
    return value if isinstance(value, dict) else {}


def first_string(values: Sequence[Any] | None) -> str:
    """The first element if it is a string, else ``""``."""
    if not values:
        return ""
    first = values[0]
    return first if isinstance(first, str) else ""


def first_non_empty(args: Args, keys: Sequence[str], trimmed: bool = False) -> str:
    """The first of ``keys`` holding a non-empty string (optionally trimmed), else ``""``."""
    for key in keys:
        value = string_arg(args, key)
        if trimmed:
            value = value.strip()
        if value:
            return value
    return ""


def normalize_qualified_identifier(value: str) -> str:
    """
    Drop a ``kind:`` qualifier: ``workload:payments`` -> ``payments``, ``a:b:c`` -> ``b:c``.

    The value is unchanged unless both sides of its first ``:`` are non-empty.
    """
    kind, sep, rest = value.partition(":")
    if sep and kind and rest:
        return rest
    return value


def canonical_workload_identifier(value: str) -> str:
    """``value`` when it is ``workload:<non-empty>``, else ``""``."""
    if value.startswith(_WORKLOAD_PREFIX) and len(value) > len(_WORKLOAD_PREFIX):
        return value
    return ""


def parse_max_depth(args: Args, default: int = 5) -> int:
    """A numeric ``max_depth``, else the integer written in ``context``, else ``default``."""
    if _is_number(args.get("max_depth")):
        return int_or(args, "max_depth", default)
    context = string_arg(args, "context").strip()
    if _DECIMAL.fullmatch(context):
        return int(context)
    return default


def cross_repo_requested(args: Args, forced: bool = False) -> bool:
    """True when forced, when ``cross_repo`` is true, or when ``scope`` is ``cross_repo``."""
    if forced or bool_or(args, "cross_repo", False):
        return True
    return string_arg(args, "scope").casefold() == _CROSS_REPO_SCOPE


def split_call_chain_target(target: str) -> tuple[str, str] | None:
    """Split ``start->end`` at the first arrow, trimming both halves; ``None`` without one."""
    start, arrow, end = target.partition(_CALL_CHAIN_ARROW)
    if not arrow:
        return None
    return start.strip(), end.strip()


def content_search_scope(args: Args) -> tuple[Any, list | None]:
    """
    The repository scope of a content search, as ``(repo_id, repo_ids)``.

    ``None`` in either place means the field is not sent. No ``repo_ids`` falls back
    to the ``repo_id`` argument; one element is sent as ``repo_id`` when it is a
    string; two or more are sent unchanged as ``repo_ids``.
    """
    repo_ids = string_slice(args, "repo_ids") or []
    if not repo_ids:
        return string_arg(args, "repo_id") or None, None
    if len(repo_ids) == 1:
        only = repo_ids[0]
        return (only if isinstance(only, str) else None), None
    return None, repo_ids


def escape_path_segment(value: str) -> str:
    """Percent-escape a path segment as Go's ``url.PathEscape`` does."""
    return quote(value, safe="$&+:=@")


def go_json_value(value: Any) -> Any:
    """A copy of a JSON value with integral floats as integers (``1``, not ``1.0``)."""
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < _GO_EXPONENT_THRESHOLD:
            return int(value)
        return value
    if isinstance(value, dict):
        return {key: go_json_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [go_json_value(item) for item in value]
    return value
