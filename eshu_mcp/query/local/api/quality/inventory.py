"""
``POST /code/structure/inventory``: structural inventories of the indexed code.

Each inventory kind is a predicate over ``entities`` and its metadata JSON (decorators,
docstrings, class context, dead-code root kinds), over entity source for ``super_call``
(a scan of the file bodies, see ``source_scan``) or, for ``function_count_by_file``, a
grouping of Functions by file.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.common import (
    CONTENT_BACKEND,
    ENTITY_FROM,
    RequestFields,
    check_offset,
    entity_label,
    fetch_entities,
    file_handle,
    next_offset,
    ranked_entities,
)
from eshu_mcp.query.local.api.code.scope import (
    repo_clause,
    scope_predicate,
    scope_repository,
)
from eshu_mcp.query.local.api.code.text_scan import fold, plain_rows, scan_files
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError

INVENTORY_KINDS = (
    "entity",
    "top_level",
    "dataclass",
    "documented",
    "documented_function",
    "decorated",
    "class_with_method",
    "super_call",
    "function_count_by_file",
)

# Decorator text without its leading "@" (the indexer may store either form).
_DECORATOR_TEXT = "ltrim(CASE WHEN d.type = 'object' THEN COALESCE(json_extract(d.value, '$.name'),"
_DECORATOR_TEXT += " json_extract(d.value, '$.expression')) ELSE d.value END, '@')"
_DECORATORS = f"SELECT {_DECORATOR_TEXT} AS text FROM json_each(e.metadata, '$.decorators') d"
_HAS_DOCSTRING = "COALESCE(e.docstring, json_extract(e.metadata, '$.docstring'), '') <> ''"
_CLASS_CONTEXT = (
    "COALESCE(e.class_context, json_extract(e.metadata, '$.class_context'),"
    " json_extract(e.metadata, '$.context'), json_extract(e.metadata, '$.impl_context'), '')"
)
_PREDICATES: dict[str, tuple[str, list[Any]]] = {
    "entity": ("1 = 1", []),
    "top_level": (f"{_CLASS_CONTEXT} = '' AND e.parent_entity_id IS NULL", []),
    "dataclass": (
        "e.entity_type = 'Class' AND (EXISTS (SELECT 1 FROM json_each(e.metadata,"
        " '$.dead_code_root_kinds') k WHERE k.value = 'python.dataclass_model')"
        f" OR EXISTS (SELECT 1 FROM ({_DECORATORS}) WHERE text IN ('dataclass',"
        " 'dataclasses.dataclass') OR text LIKE 'dataclass(%'"
        " OR text LIKE 'dataclasses.dataclass(%'))",
        [],
    ),
    "documented": (_HAS_DOCSTRING, []),
    "documented_function": (f"e.entity_type = 'Function' AND {_HAS_DOCSTRING}", []),
    "decorated": (f"EXISTS ({_DECORATORS})", []),
    "class_with_method": (f"e.entity_type = 'Function' AND {_CLASS_CONTEXT} <> ''", []),
}
# An entity calls its superclass when its source holds one of these (LIKE's case rule).
_SUPER_CALLS = ("super(", "super.", "super::", "super ")


# The structural predicates a request may narrow the inventory by, echoed in the answer.
_NARROWING_FIELDS = ("entity_kind", "file_path", "symbol", "decorator", "method_name", "class_name")


def _request(fields: RequestFields) -> dict[str, Any]:
    limit = fields.integer("limit", 25)
    if limit > 200:
        raise ApiError(400, "limit must be <= 200")
    req: dict[str, Any] = {
        key: fields.string(key).strip()
        for key in ("repo_id", "language", "inventory_kind", *_NARROWING_FIELDS)
    }
    req["limit"] = limit if limit > 0 else 25
    req["offset"] = check_offset(fields.integer("offset"))
    kind = req["inventory_kind"] or "entity"
    if kind not in INVENTORY_KINDS:
        raise ApiError(400, "inventory_kind must be one of: " + ", ".join(INVENTORY_KINDS))
    req["inventory_kind"] = kind
    if kind == "class_with_method" and not req["method_name"]:
        raise ApiError(400, "method_name is required for class_with_method inventory")
    req["entity_kind"] = entity_label(req["entity_kind"])
    if kind == "function_count_by_file" and req["entity_kind"] not in ("", "Function"):
        raise ApiError(400, "entity_kind must be function for function_count_by_file inventory")
    if not any(req[k] for k in ("repo_id", "file_path", "language", "entity_kind", "symbol")):
        raise ApiError(
            400, "one of repo_id, file_path, language, entity_kind, or symbol is required"
        )
    return req


def _super_call_rids(conn: sqlite3.Connection, repo_id: str) -> list[int]:
    """Entities of the scope whose source holds a superclass call, by one body scan."""
    where, params = repo_clause("f.repo_id", repo_id)
    needles = [fold(call) for call in _SUPER_CALLS]
    rids: set[int] = set()
    for scanned in scan_files(conn, _SUPER_CALLS, where, params, order="f.file_id"):
        spans = plain_rows(
            conn,
            "SELECT e.rid, e.start_byte, e.end_byte FROM entities e WHERE e.file_id = ?",
            [scanned.file_id],
        )
        for needle in needles:
            if scanned.contains(needle):
                rids.update(row[0] for row in scanned.rows_holding(needle, spans))
    return sorted(rids)


def _where(conn: sqlite3.Connection, req: dict[str, Any], repo_id: str) -> tuple[str, list[Any]]:
    where, params = scope_predicate(repo_id, req["language"])
    if req["inventory_kind"] == "super_call":
        rids = json.dumps(_super_call_rids(conn, repo_id))
        predicate, values = "e.rid IN (SELECT value FROM json_each(?))", [rids]
    else:
        predicate, values = _PREDICATES.get(req["inventory_kind"], ("1 = 1", []))
    where += f" AND ({predicate})"
    params += values
    filters = (
        ("entity_kind", "e.entity_type = ?"),
        ("file_path", "e.relative_path = ?"),
        ("symbol", "e.entity_name = ?"),
        ("method_name", "e.entity_name = ?"),
        ("class_name", f"{_CLASS_CONTEXT} = ?"),
    )
    for key, clause in filters:
        if req[key]:
            where += f" AND {clause}"
            params.append(req[key])
    if req["decorator"]:
        wanted = req["decorator"].lstrip("@")
        where += (
            f" AND EXISTS (SELECT 1 FROM ({_DECORATORS}) WHERE text = ? OR text LIKE ? ESCAPE '\\')"
        )
        params += [wanted, wanted.replace("%", "\\%").replace("_", "\\_") + "(%"]
    return where, params


def _counted(conn: sqlite3.Connection, where: str, params: list[Any], by_file: bool) -> int:
    """How many rows a cut inventory holds in all (a page's headline reads ``10 of 31``)."""
    if by_file:
        sql = (
            f"SELECT COUNT(*) FROM (SELECT 1 FROM entities e WHERE {where}"
            " AND e.entity_type = 'Function' GROUP BY e.repo_id, e.relative_path)"
        )
    else:
        sql = f"SELECT COUNT(*) FROM {ENTITY_FROM} WHERE {where}"
    return conn.execute(sql, params).fetchone()[0]


def inventory(
    conn: sqlite3.Connection, req: dict[str, Any], repo_id: str
) -> tuple[list[dict[str, Any]], int | None]:
    """The inventory rows of one kind, and how many there are in all when the page was cut
    (``None`` when it was not: the page holds them all from its offset)."""
    limit, offset = req["limit"], req["offset"]
    where, params = _where(
        conn,
        {**req, "inventory_kind": "entity"}
        if req["inventory_kind"] == "function_count_by_file"
        else req,
        repo_id,
    )
    kind = req["inventory_kind"]
    if kind == "function_count_by_file":
        rows = conn.execute(
            "SELECT e.repo_id, e.relative_path, e.language, COUNT(*) AS function_count"
            f" FROM entities e WHERE {where} AND e.entity_type = 'Function'"
            " GROUP BY e.repo_id, e.relative_path"
            " ORDER BY function_count DESC, e.repo_id, e.relative_path LIMIT ? OFFSET ?",
            [*params, limit + 1, offset],
        ).fetchall()
        results = [
            {
                "repo_id": row["repo_id"],
                "file_path": row["relative_path"],
                "relative_path": row["relative_path"],
                "language": row["language"] or "",
                "function_count": row["function_count"],
                "match_kind": kind,
                "rank": rank,
                "source_backend": CONTENT_BACKEND,
                "source_handle": file_handle(row["repo_id"], row["relative_path"]),
            }
            for rank, row in enumerate(rows[:limit], start=offset + 1)
        ]
        cut = len(rows) > limit
        return results, _counted(conn, where, params, True) if cut else None
    rows = fetch_entities(
        conn,
        where,
        params,
        "e.repo_id, e.relative_path, e.start_line, e.entity_name",
        limit + 1,
        offset,
    )
    results = ranked_entities(conn, rows[:limit], offset, match_kind=kind)
    for item, row in zip(results, rows, strict=False):
        if row["class_context"]:
            item["class_name"] = row["class_context"]
    cut = len(rows) > limit
    return results, _counted(conn, where, params, False) if cut else None


@ROUTES.route("POST", "/code/structure/inventory")
def structure_inventory(ctx: ApiContext) -> Answer:
    """MCP ``inspect_code_inventory``: entities matching a structural predicate."""
    req = _request(RequestFields.of(ctx))
    repo_id = scope_repository(ctx, req["repo_id"])
    results, total = inventory(ctx.conn, req, repo_id)
    truncated = total is not None
    if total is None:  # the page ran to the end: the rows before it and on it are all
        total = req["offset"] + len(results) if results else None
    data = {
        **{k: req[k] for k in ("inventory_kind", "language", *_NARROWING_FIELDS)},
        "repo_id": repo_id,
        "results": results,
        "matches": results,
        "count": len(results),
        **({"total": total} if total is not None else {}),
        "limit": req["limit"],
        "offset": req["offset"],
        "truncated": truncated,
        "next_offset": next_offset(req["offset"], len(results), truncated),
        "source_backend": CONTENT_BACKEND,
    }
    truth = ctx.truth("code_inventory.structural", reason="resolved from the embedded entity index")
    return Answer(data, truth)
