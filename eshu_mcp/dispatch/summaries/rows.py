"""
Reading answer rows the same way whatever their shape, and writing them as summary lines.

Rows arrive in Eshu's full shape or a compact one (source trimmed, alias arrays and
repeated blocks dropped), from many route families that spell the same thing
differently: ``file_path``, ``relative_path`` or ``path``; ``start_line``,
``line_number`` or ``line``; ``name`` or ``entity_name``. Every reader here takes any
value and returns text, so no row can make a summary raise.
"""

from typing import Any

from eshu_mcp.dispatch.summaries.text import (
    clamp_line,
    field_map,
    field_rows,
    first_int,
    first_text,
    plural,
)

__all__ = [
    "ROW_LIMIT",
    "budget_cut",
    "entity_name",
    "excerpt",
    "kind_of",
    "location",
    "more_hint",
    "row_line",
    "row_lines",
    "rows_of",
]

# How many rows a summary lists before it points at the structured content: the top
# rows answer the question; the rest are one structured read away.
ROW_LIMIT = 5

PATH_KEYS = (
    "file_path",
    "relative_path",
    "path",
    "source_file",
    "source_file_path",
    "config_path",
)
LINE_KEYS = ("start_line", "line_number", "line")
NAME_KEYS = ("name", "entity_name", "symbol", "title", "qualified_name", "id", "entity_id")
KIND_KEYS = ("entity_type", "definition_kind", "type", "kind", "label")


def location(row: Any, path_keys: tuple[str, ...] = PATH_KEYS) -> str:
    """``path:line``, ``path``, or ``""``; a source handle is read when the row has no path."""
    path = first_text(row, *path_keys)
    line = first_int(row, *LINE_KEYS)
    if not path:
        handle = field_map(row, "source_handle")
        path = first_text(handle, "relative_path", "file_path", "path")
        if line is None:
            line = first_int(handle, *LINE_KEYS)
    if path and line is not None and line > 0:
        return f"{path}:{line}"
    return path


def entity_name(row: Any) -> str:
    """The row's name, qualified by its class (``Deferred.addCallbacks``) when the row says."""
    name = first_text(row, *NAME_KEYS)
    owner = first_text(row, "class_name", "class_context") or first_text(
        field_map(row, "metadata"), "class_context"
    )
    if name and owner and owner != name and "." not in name:
        return f"{owner}.{name}"
    return name


def kind_of(row: Any) -> str:
    """``Function``, ``Class``...: the entity type, or the first label."""
    kind = first_text(row, *KIND_KEYS)
    if kind:
        return kind
    labels = row.get("labels") if isinstance(row, dict) else None
    if isinstance(labels, list) and labels and isinstance(labels[0], str):
        return labels[0]
    return ""


def row_line(row: Any, extra: str = "") -> str:
    """``path:line name (Kind)`` plus ``extra``, on one bounded line."""
    where = location(row)
    name = entity_name(row)
    kind = kind_of(row)
    if not isinstance(row, dict):
        text = str(row)
    else:
        parts = [part for part in (where, name) if part]
        text = " ".join(parts) if parts else _scalars(row)
        if kind and name and kind != name:
            text += f" ({kind})"
    if extra:
        text += " " + extra if text else extra
    return clamp_line(text)


def _scalars(row: dict) -> str:
    """A row with no location or name: its first few scalar fields, ``key=value``."""
    pairs = []
    for key, value in row.items():
        if isinstance(value, str | int | float) and not isinstance(value, bool) and value != "":
            pairs.append(f"{key}={value}")
        if len(pairs) == 3:
            break
    return ", ".join(pairs)


def rows_of(container: Any, *keys: str) -> tuple[str, list[dict]]:
    """The first of ``keys`` holding a non-empty list of objects, and those rows."""
    for key in keys:
        rows = field_rows(container, key)
        if rows:
            return key, rows
    return "", []


def row_lines(rows: list, render=row_line, limit: int = ROW_LIMIT) -> list[str]:
    """The first ``limit`` rows rendered, then how many more the structured content holds."""
    lines = [render(row) for row in rows[:limit]]
    if len(rows) > limit:
        lines.append(f"... {plural(len(rows) - limit, 'more row')} in the structured content")
    return lines


def budget_cut(data: Any) -> bool:
    """
    Whether dispatch cut this answer's rows to the response budget: it then writes its
    own ``truncation_note`` line under the summary, so the summary adds no other hint.
    """
    return isinstance(data, dict) and isinstance(data.get("truncation_note"), str)


def more_hint(data: Any, shown: int) -> str:
    """What was left out and how to get it: the next offset or cursor, or a wider limit."""
    if not isinstance(data, dict) or budget_cut(data):
        return ""
    next_offset = first_int(data, "next_offset")
    if next_offset is not None and next_offset > 0:
        return f"more: call again with offset={next_offset}"
    cursor = first_text(data, "next_cursor", "cursor_next")
    if cursor:
        return f"more: call again with cursor={cursor}"
    truncated = data.get("truncated") is True or data.get("display_truncated") is True
    if not truncated:
        return ""
    offset = first_int(data, "offset")
    limit = first_int(data, "limit")
    if offset is not None and limit:
        return f"more: call again with offset={offset + max(limit, shown)}"
    return "truncated: raise limit or narrow the query for the rest"


def excerpt(content: Any, max_lines: int, max_bytes: int) -> tuple[list[str], int]:
    """The first lines of ``content`` within both bounds, and how many lines were left out."""
    if not isinstance(content, str) or not content:
        return [], 0
    lines = content.splitlines()
    shown: list[str] = []
    used = 0
    for line in lines[:max_lines]:
        line = clamp_line(line)
        size = len(line.encode("utf-8")) + 1
        if used + size > max_bytes:
            break
        shown.append(line)
        used += size
    return shown, len(lines) - len(shown)
