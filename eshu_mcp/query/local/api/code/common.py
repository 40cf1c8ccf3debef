"""
Request fields, entity rows and handles shared by the embedded ``/code/*`` routes.

Eshu decodes request bodies into Go structs, so a wrong JSON type is a 400
``invalid JSON: ...`` while ``null`` or an absent key means the zero value. The
helpers here reproduce that, and turn index rows (``entities``, ``files``,
``repositories``) into the row shapes the code routes share.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from eshu_mcp.query.local.api.platform.fields import INT64_MAX, INT64_MIN
from eshu_mcp.query.local.api.platform.framework import (
    ApiContext,
    ApiError,
    body_object,
    go_type_name,
)

CONTENT_BACKEND = "sqlite_content_store"
GRAPH_BACKEND = "sqlite_call_graph"
MAX_OFFSET = 10000
# Values bound in one IN (...) predicate, well inside SQLite's parameter limit.
IN_BATCH = 500

# snake_case type names accepted by filters -> Eshu labels (local-backend.md §3.2).
ENTITY_TYPE_LABELS: dict[str, str] = {
    "function": "Function",
    "method": "Function",
    "class": "Class",
    "module": "Module",
    "variable": "Variable",
    "module_attribute": "Variable",
    "type_annotation": "TypeAnnotation",
    "trait": "Trait",
    "interface": "Interface",
    "macro": "Macro",
    "struct": "Struct",
    "enum": "Enum",
    "protocol": "Protocol",
    "protocol_implementation": "ProtocolImplementation",
    "union": "Union",
    "typedef": "Typedef",
    "type_alias": "TypeAlias",
    "annotation": "Annotation",
    "record": "Record",
    "property": "Property",
    "component": "Component",
    "impl_block": "ImplBlock",
    "k8s_resource": "K8sResource",
    "terraform_module": "TerraformModule",
    "terraform_resource": "TerraformResource",
    "terraform_variable": "TerraformVariable",
    "terraform_output": "TerraformOutput",
    "terragrunt_config": "TerragruntConfig",
    "terragrunt_dependency": "TerragruntDependency",
    "terragrunt_local": "TerragruntLocal",
    "terragrunt_input": "TerragruntInput",
    "sql_table": "SqlTable",
    "sql_view": "SqlView",
    "sql_function": "SqlFunction",
    "sql_trigger": "SqlTrigger",
    "sql_index": "SqlIndex",
    "sql_migration": "SqlMigration",
    "sql_column": "SqlColumn",
}

_LANGUAGE_VARIANTS = {
    "typescript": ("typescript", "tsx"),
    "javascript": ("javascript", "jsx"),
    "c#": ("c_sharp",),
    "csharp": ("c_sharp",),
}

_GO_TYPES = {int: "int", bool: "bool", str: "string", float: "float64", list: "[]string"}


class RequestFields:
    """Typed access to a decoded JSON request body with Go decoder semantics."""

    def __init__(self, body: dict[str, Any]) -> None:
        self._body = body

    @classmethod
    def of(cls, ctx: ApiContext) -> RequestFields:
        """Read the POST body of a request (400 ``invalid JSON`` when it is not an object)."""
        return cls(body_object(ctx))

    def _mismatch(self, name: str, value: Any, go_type: str) -> ApiError:
        # Only a null list element reaches here as None; it has always read "object".
        kind = "object" if value is None else go_type_name(value)
        shown = f"number {value}" if kind == "number" else kind
        return ApiError(
            400,
            f"invalid JSON: json: cannot unmarshal {shown} into Go struct field .{name}"
            f" of type {go_type}",
        )

    def raw(self, name: str) -> Any:
        """The value as sent (None when absent or null)."""
        return self._body.get(name)

    def has(self, name: str) -> bool:
        """Whether the key was sent with a non-null value."""
        return self._body.get(name) is not None

    def string(self, name: str) -> str:
        """A string field; absent or null gives ``""``."""
        value = self._body.get(name)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise self._mismatch(name, value, "string")
        return value

    def integer(self, name: str, default: int = 0) -> int:
        """An integer field; absent or null gives ``default``."""
        value = self._body.get(name)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._mismatch(name, value, "int")
        if isinstance(value, float):
            if not value.is_integer():
                raise self._mismatch(name, value, "int")
            value = int(value)
        if not INT64_MIN <= value <= INT64_MAX:
            raise self._mismatch(name, value, "int")
        return value

    def number(self, name: str) -> float | None:
        """An optional float field (None when absent)."""
        value = self._body.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._mismatch(name, value, "float64")
        return float(value)

    def boolean(self, name: str, default: bool = False) -> bool:
        """A boolean field; absent or null gives ``default``."""
        value = self._body.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._mismatch(name, value, "bool")
        return value

    def strings(self, name: str) -> list[str]:
        """A list of strings; absent or null gives ``[]``."""
        value = self._body.get(name)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self._mismatch(name, value, "[]string")
        for item in value:
            if not isinstance(item, str):
                raise self._mismatch(name, item, "string")
        return list(value)


def check_offset(offset: int, maximum: int = MAX_OFFSET) -> int:
    """Eshu's offset validation texts: ``offset must be >= 0`` / ``<= <max>``."""
    if offset < 0:
        raise ApiError(400, "offset must be >= 0")
    if offset > maximum:
        raise ApiError(400, f"offset must be <= {maximum}")
    return offset


def clamp_limit(limit: int, *, default: int, maximum: int) -> int:
    """Non-positive limits take the default; large ones are clamped."""
    if limit <= 0:
        return default
    return min(limit, maximum)


def language_values(language: str) -> list[str]:
    """The stored language keys a language filter matches (alias expansion, §1.5)."""
    key = language.strip().lower()
    if not key:
        return []
    return list(_LANGUAGE_VARIANTS.get(key, (key,)))


def entity_label(type_name: str) -> str:
    """Map a snake_case type name (or a label in any case) to an Eshu label."""
    key = type_name.strip()
    if not key:
        return ""
    mapped = ENTITY_TYPE_LABELS.get(key.lower())
    if mapped:
        return mapped
    for label in ENTITY_TYPE_LABELS.values():
        if label.lower() == key.lower():
            return label
    return key


def in_clause(column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
    """A parameterised ``column IN (?, ...)`` predicate."""
    marks = ", ".join("?" for _ in values)
    return f"{column} IN ({marks})", list(values)


def in_clauses(
    column: str, values: Sequence[Any], size: int = IN_BATCH
) -> Iterator[tuple[str, list[Any]]]:
    """``in_clause`` over ``values`` in batches of ``size``, within SQLite's parameter limit."""
    for start in range(0, len(values), size):
        yield in_clause(column, values[start : start + size])


def like_pattern(text: str) -> str:
    """A ``LIKE ... ESCAPE '\\'`` substring pattern for literal text."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def fts_phrase(text: str) -> str:
    """A quoted FTS5 phrase for literal text."""
    return '"' + text.replace('"', '""') + '"'


def decode_metadata(text: str | None) -> dict[str, Any]:
    """Entity metadata JSON, tolerating empty or malformed values."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


ENTITY_COLUMNS = (
    "e.rid, e.entity_id, e.repo_id, e.file_id, e.relative_path, e.entity_type, e.entity_name,"
    " e.start_line, e.end_line, e.language, e.metadata, e.cyclomatic_complexity, e.arg_count,"
    " e.line_span, e.is_test, e.is_generated, e.parent_entity_id, e.class_context,"
    " COALESCE(r.name, '') AS repo_name"
)
ENTITY_FROM = "entities e LEFT JOIN repositories r ON r.repo_id = e.repo_id"

SOURCE_CAP_BYTES = 64 * 1024
VARIABLE_SOURCE_CAP_BYTES = 4096


def attach_sources(conn: sqlite3.Connection, rows: list[dict[str, Any]]) -> None:
    """
    Fill ``source_cache`` on entity rows: the entity's byte span of its file body.

    The index keeps no per-entity copy of the source; each file body is read once and
    sliced as the ``entity_source`` view slices it, capped as Eshu caps it (64 KiB,
    Variables 4 KiB).
    """
    rids = [row["rid"] for row in rows if "source_cache" not in row]
    spans: dict[int, tuple[int, int | None, int | None]] = {}
    for clause, params in in_clauses("rid", rids):
        for rid, file_id, start, end in conn.execute(
            f"SELECT rid, file_id, start_byte, end_byte FROM entities WHERE {clause}", params
        ):
            spans[rid] = (file_id, start, end)
    bodies: dict[int, bytes] = {}
    for clause, params in in_clauses("file_id", sorted({span[0] for span in spans.values()})):
        for file_id, content in conn.execute(
            f"SELECT file_id, content FROM files WHERE {clause}", params
        ):
            bodies[file_id] = (content or "").encode("utf-8")
    for row in rows:
        if "source_cache" in row:
            continue
        file_id, start, end = spans.get(row["rid"], (0, None, None))
        body = bodies.get(file_id, b"")
        raw = body[max(start, 0) : max(end, 0)] if start is not None and end is not None else b""
        cap = VARIABLE_SOURCE_CAP_BYTES if row["entity_type"] == "Variable" else SOURCE_CAP_BYTES
        if len(raw) > cap:
            row["source_cache"] = raw[:cap].decode("utf-8", "ignore")
        else:
            row["source_cache"] = raw.decode("utf-8", "replace")


def entity_location(row: dict[str, Any]) -> dict[str, Any]:
    """An entity's id, name, labels and location, the head of every graph-style row."""
    return {
        "entity_id": row["entity_id"],
        "name": row["entity_name"],
        "labels": [row["entity_type"]],
        "file_path": row["relative_path"],
        "repo_id": row["repo_id"],
        "repo_name": row["repo_name"],
        "language": row["language"] or "",
        "start_line": row["start_line"],
        "end_line": row["end_line"],
    }


def entity_ref(row: dict[str, Any]) -> dict[str, Any]:
    """The graph-style entity row: id, name, labels, location, metadata."""
    ref = entity_location(row)
    metadata = decode_metadata(row["metadata"])
    if metadata:
        ref["metadata"] = metadata
    return ref


def content_entity(row: dict[str, Any]) -> dict[str, Any]:
    """The content-store entity row with both graph and content key names."""
    return {
        "entity_id": row["entity_id"],
        "name": row["entity_name"],
        "entity_name": row["entity_name"],
        "entity_type": row["entity_type"],
        "labels": [row["entity_type"]],
        "file_path": row["relative_path"],
        "relative_path": row["relative_path"],
        "repo_id": row["repo_id"],
        "repo_name": row["repo_name"],
        "language": row["language"] or "",
        "start_line": row["start_line"],
        "end_line": row["end_line"],
        "source_cache": row.get("source_cache", ""),
        "metadata": decode_metadata(row["metadata"]),
    }


def file_handle(repo_id: str, relative_path: str) -> dict[str, Any]:
    """The file source handle that points a client at ``get_file_content``."""
    return {
        "repo_id": repo_id,
        "file_path": relative_path,
        "relative_path": relative_path,
        "content_tool": "get_file_content",
    }


def span_handle(repo_id: str, file_path: str, start_line: int, end_line: int) -> dict[str, Any]:
    """A line-span source handle."""
    return {
        "repo_id": repo_id,
        "file_path": file_path,
        "start_line": start_line,
        "end_line": end_line,
    }


def ranked_entities(
    conn: sqlite3.Connection, rows: list[dict[str, Any]], offset: int, **match: Any
) -> list[dict[str, Any]]:
    """
    Content-entity rows ranked from ``offset + 1``, with their source and a span handle.

    ``match`` (how the row matched) comes before the rank; the labels are left out.
    """
    attach_sources(conn, rows)
    results = []
    for rank, row in enumerate(rows, start=offset + 1):
        item = content_entity(row)
        item.pop("labels")
        item.update(match)
        item.update(
            rank=rank,
            source_backend=CONTENT_BACKEND,
            source_handle=span_handle(
                row["repo_id"], row["relative_path"], row["start_line"], row["end_line"]
            ),
        )
        results.append(item)
    return results


def entity_handle(entity_id: str) -> str:
    """The graph handle string of an entity."""
    return "entity:" + entity_id


ENTITY_ID_PREFIX = "content-entity:"


def entity_id_of(reference: str) -> str:
    """
    The entity id a reference names: an entity id or its ``entity:`` handle, else ``""``.

    Lets a ``target``/``start``/``end`` argument name one definition exactly instead of
    a name that several definitions share.
    """
    text = reference.strip().removeprefix("entity:")
    return text if text.startswith(ENTITY_ID_PREFIX) and len(text) > len(ENTITY_ID_PREFIX) else ""


def fetch_entities(
    conn: sqlite3.Connection,
    where: str,
    params: Iterable[Any],
    order: str,
    limit: int,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """Entity rows (joined with their repository name) matching a predicate."""
    sql = (
        f"SELECT {ENTITY_COLUMNS} FROM {ENTITY_FROM} WHERE {where}"
        f" ORDER BY {order} LIMIT ? OFFSET ?"
    )
    return [dict(row) for row in conn.execute(sql, [*params, limit, offset])]


def entity_by_id(conn: sqlite3.Connection, entity_id: str) -> dict[str, Any] | None:
    """One entity row by id, or None."""
    rows = fetch_entities(conn, "e.entity_id = ?", [entity_id], "e.entity_id", 1)
    return rows[0] if rows else None


def next_offset(offset: int, count: int, truncated: bool) -> int | None:
    """``offset + count`` when more rows exist and the next page is reachable."""
    if not truncated:
        return None
    following = offset + count
    return following if following <= MAX_OFFSET else None
