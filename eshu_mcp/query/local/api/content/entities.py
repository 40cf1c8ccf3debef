"""
Entity routes: resolve a name to canonical ids, one entity's context and the entity
inventory.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.qualified import (
    qualified_matches,
    qualified_parts,
    without_call_parens,
)
from eshu_mcp.query.local.api.content.reads import (
    like_pattern,
    metadata_of,
)
from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    body_object,
    limit_offset,
    page,
    str_param,
)
from eshu_mcp.query.local.api.platform.grants import readable

RESOLVE = "code_search.fuzzy_symbol"
RELATIONSHIP_CAP = 50

# Resolve/filter type names (snake_case) -> Eshu labels (§3.2); labels are accepted as is.
TYPE_LABELS = {
    "function": "Function",
    "method": "Function",
    "class": "Class",
    "module": "Module",
    "struct": "Struct",
    "enum": "Enum",
    "union": "Union",
    "macro": "Macro",
    "trait": "Trait",
    "interface": "Interface",
    "record": "Record",
    "type_annotation": "TypeAnnotation",
    "variable": "Variable",
    "module_attribute": "Variable",
    "type_alias": "TypeAlias",
    "typedef": "Typedef",
    "annotation": "Annotation",
    "protocol": "Protocol",
    "protocol_implementation": "ProtocolImplementation",
    "impl_block": "ImplBlock",
    "component": "Component",
    "property": "Property",
}


def entity_label(type_name: str) -> str:
    """The Eshu label for a resolve ``type`` (400 when unknown)."""
    key = type_name.strip()
    if key in TYPE_LABELS.values():
        return key
    label = TYPE_LABELS.get(key.lower())
    if label is None:
        raise ApiError(400, f'unknown entity type "{type_name}"')
    return label


def _repo_names(conn: sqlite3.Connection) -> dict[str, str]:
    return {row[0]: row[1] for row in conn.execute("SELECT repo_id, name FROM repositories")}


def resolved_entity(row: sqlite3.Row, repo_names: dict[str, str]) -> dict[str, Any]:
    """An entity in the resolve/context shape (``id``, ``labels``, ``file_path``...)."""
    return {
        "id": row["entity_id"],
        "entity_id": row["entity_id"],
        "name": row["entity_name"],
        "labels": [row["entity_type"]],
        "file_path": row["relative_path"],
        "repo_id": row["repo_id"],
        "repo_name": repo_names.get(row["repo_id"], ""),
        "language": row["language"] or "",
        "start_line": row["start_line"],
        "end_line": row["end_line"],
        "metadata": metadata_of(row),
    }


ENTITY_COLUMNS = (
    "SELECT entity_id, repo_id, relative_path, entity_type, entity_name, start_line, end_line,"
    " language, metadata FROM entities"
)


def _readable_page(ctx: ApiContext, rows: list, limit: int) -> tuple[list[dict[str, Any]], bool]:
    """The caller's readable rows, one page of them resolved, and whether more were left."""
    rows = [row for row in rows if readable(ctx.principal, row["repo_id"])]
    rows, truncated = page(rows, limit)
    names = _repo_names(ctx.conn)
    return [resolved_entity(row, names) for row in rows], truncated


@ROUTES.route("POST", "/entities/resolve")
def resolve_entities(ctx: ApiContext) -> Answer:
    """Canonical entity ids for a name: exact matches, else substring matches."""
    body = body_object(ctx)
    name = str_param(body, "name").strip()
    if not name:
        raise ApiError(400, "name is required")
    type_name = str_param(body, "type").strip()
    selector = str_param(body, "repo_id").strip()
    limit, _ = limit_offset(body, default=10, maximum=100)
    if not type_name and not selector:
        raise ApiError(400, "global entity resolution requires type or repo_id")
    label = entity_label(type_name) if type_name else ""
    repo = ctx.repository(selector, not_found_status=404) if selector else None
    where, args = [], []
    if repo is not None:
        where.append("repo_id = ?")
        args.append(repo["repo_id"])
    if label:
        where.append("entity_type = ?")
        args.append(label)
    scope = "".join(f" AND {clause}" for clause in where)
    order = " ORDER BY repo_id, relative_path, start_line, entity_name LIMIT ?"
    if name.startswith("content-entity:"):
        rows = ctx.conn.execute(
            ENTITY_COLUMNS + " WHERE entity_id = ?" + scope + order, [name, *args, limit + 1]
        ).fetchall()
    else:
        rows = ctx.conn.execute(
            ENTITY_COLUMNS + " WHERE entity_name = ?" + scope + order, [name, *args, limit + 1]
        ).fetchall()
        parts = qualified_parts(without_call_parens(name) or name)
        if not rows and parts:  # Clock.callLater: the definitions that path names
            ids = qualified_matches(
                ctx.conn, parts, "1 = 1" + "".join(f" AND e.{c}" for c in where), args
            )
            marks = ", ".join("?" for _ in ids)
            rows = ctx.conn.execute(
                ENTITY_COLUMNS + f" WHERE entity_id IN ({marks})" + scope + order,
                [*ids, *args, limit + 1],
            ).fetchall()
        if not rows and repo is not None:
            rows = ctx.conn.execute(
                ENTITY_COLUMNS + " WHERE entity_name LIKE ? ESCAPE '\\'" + scope + order,
                [like_pattern(name), *args, limit + 1],
            ).fetchall()
    entities, truncated = _readable_page(ctx, rows, limit)
    data = {
        "entities": entities,
        "matches": entities,
        "count": len(entities),
        "limit": limit,
        "truncated": truncated,
    }
    truth = ctx.truth(
        RESOLVE, basis="hybrid", reason="resolved from bounded graph and content entity resolution"
    )
    return Answer(data, truth)


def _confidence_tier(confidence: float | None) -> str:
    if confidence is None:
        return "unsupported"
    if confidence >= 0.9:
        return "high"
    if confidence >= 0.7:
        return "medium"
    return "low"


def _endpoint(conn: sqlite3.Connection, node_id: str, names: dict[str, str]) -> dict[str, Any]:
    """Name, type and location of an edge endpoint (entity, ``file:<id>`` or module key)."""
    if node_id.startswith("file:"):
        row = conn.execute(
            "SELECT repo_id, relative_path, language FROM files WHERE file_id = ?",
            (node_id[len("file:") :],),
        ).fetchone()
        if row is None:
            return {"type": "File", "name": node_id}
        return {
            "type": "File",
            "name": row["relative_path"].rsplit("/", 1)[-1],
            "file_path": row["relative_path"],
            "repo_id": row["repo_id"],
            "repo_name": names.get(row["repo_id"], ""),
            "language": row["language"] or "",
        }
    row = conn.execute(ENTITY_COLUMNS + " WHERE entity_id = ?", (node_id,)).fetchone()
    if row is None:
        module = conn.execute(
            "SELECT repo_id, name, language FROM modules WHERE module_key = ?", (node_id,)
        ).fetchone()
        if module is None:
            return {"type": "", "name": node_id}
        return {
            "type": "Module",
            "name": module["name"],
            "repo_id": module["repo_id"],
            "repo_name": names.get(module["repo_id"], ""),
            "language": module["language"] or "",
        }
    return {
        "type": row["entity_type"],
        "name": row["entity_name"],
        "file_path": row["relative_path"],
        "repo_id": row["repo_id"],
        "repo_name": names.get(row["repo_id"], ""),
        "language": row["language"] or "",
        "start_line": row["start_line"],
        "end_line": row["end_line"],
    }


def relationship_row(
    conn: sqlite3.Connection, edge: sqlite3.Row, names: dict[str, str]
) -> dict[str, Any]:
    """One edge with both endpoints hydrated and its derivation spelled out."""
    item: dict[str, Any] = {"type": edge["type"]}
    for side, node in (("source", edge["source_id"]), ("target", edge["target_id"])):
        item[f"{side}_id"] = node
        for key, value in _endpoint(conn, node, names).items():
            item[f"{side}_{key}"] = value
    method = edge["resolution_method"] or ""
    item["resolution_method"] = method
    item["confidence"] = edge["confidence"] if edge["confidence"] is not None else 0
    item["evidence_type"] = "code_edge"
    item["reason"] = edge["reason"] or ""
    item["provenance"] = {
        "source_family": "code_edge",
        "method": method,
        "confidence": item["confidence"],
        "confidence_state": "reported",
        "confidence_tier": _confidence_tier(edge["confidence"]),
        "derived": True,
        "heuristic": method in ("scope_unique_name", "repo_unique_name"),
        "truth_state": "derived",
    }
    return item


@ROUTES.route("GET", "/entities/{entity_id}/context")
def entity_context(ctx: ApiContext) -> Answer:
    """One entity with its direct incoming and outgoing relationships."""
    entity_id = ctx.path_args.get("entity_id", "").strip()
    if entity_id.startswith("entity:"):
        entity_id = entity_id[len("entity:") :]
    row = ctx.conn.execute(ENTITY_COLUMNS + " WHERE entity_id = ?", (entity_id,)).fetchone()
    if row is None or not readable(ctx.principal, row["repo_id"]):
        raise ApiError(404, "entity not found")
    repo = ctx.conn.execute("SELECT * FROM repositories WHERE repo_id = ?", (row["repo_id"],))
    ctx.scope_to(repo.fetchone())
    names = _repo_names(ctx.conn)
    edges = ctx.conn.execute(
        "SELECT * FROM (SELECT * FROM edges WHERE source_id = ?1 ORDER BY type, line_number"
        " LIMIT ?2) UNION ALL SELECT * FROM (SELECT * FROM edges WHERE target_id = ?1"
        " ORDER BY type, line_number LIMIT ?2)",
        (entity_id, RELATIONSHIP_CAP + 1),
    ).fetchall()
    outgoing = [e for e in edges if e["source_id"] == entity_id]
    incoming = [e for e in edges if e["target_id"] == entity_id and e["source_id"] != entity_id]
    complete = len(outgoing) <= RELATIONSHIP_CAP and len(incoming) <= RELATIONSHIP_CAP
    chosen = outgoing[:RELATIONSHIP_CAP] + incoming[:RELATIONSHIP_CAP]
    data = resolved_entity(row, names)
    data["relationships"] = [relationship_row(ctx.conn, e, names) for e in chosen]
    data["relationships_complete"] = complete
    data["partial_reasons"] = [] if complete else ["relationships_truncated"]
    data["result_limits"] = {
        "relationship_limit_per_direction": RELATIONSHIP_CAP,
        "truncated": not complete,
    }
    data["story"] = (
        f"{row['entity_type']} {row['entity_name']} in {row['relative_path']}"
        f" (lines {row['start_line']}-{row['end_line']}) has {len(outgoing[:RELATIONSHIP_CAP])}"
        f" outgoing and {len(incoming[:RELATIONSHIP_CAP])} incoming direct relationships."
    )
    truth = ctx.truth(RESOLVE, reason="resolved from the embedded entity and edge tables")
    return Answer(data, truth)


@ROUTES.route("GET", "/graph/entities")
def graph_entities(ctx: ApiContext) -> Answer:
    """A page of entities with facet counts by type and language."""
    q = ctx.query
    limit, offset = limit_offset(q, default=50, maximum=500, max_offset=10_000)
    where, args = ["1 = 1"], []
    repo = ctx.repository(q.get("repo_id", ""), not_found_status=404)
    if repo is not None:
        where.append("repo_id = ?")
        args.append(repo["repo_id"])
    if q.get("entity_type", "").strip():
        where.append("entity_type = ?")
        args.append(entity_label(q["entity_type"]))
    if q.get("language", "").strip():
        where.append("language = ?")
        args.append(q["language"].strip().lower())
    clause = " WHERE " + " AND ".join(where)
    facets: dict[str, dict[str, int]] = {"entity_types": {}, "languages": {}}
    for column, facet in (("entity_type", "entity_types"), ("language", "languages")):
        for value, count in ctx.conn.execute(
            f"SELECT {column}, COUNT(*) FROM entities{clause} GROUP BY {column}", args
        ):
            facets[facet][value or ""] = count
    rows = ctx.conn.execute(
        ENTITY_COLUMNS + clause + " ORDER BY repo_id, relative_path, start_line LIMIT ? OFFSET ?",
        [*args, limit + 1, offset],
    ).fetchall()
    entities, truncated = _readable_page(ctx, rows, limit)
    data = {
        "entities": entities,
        "count": len(entities),
        "total": sum(facets["entity_types"].values()),
        "facets": facets,
        "limit": limit,
        "offset": offset,
        "truncated": truncated,
    }
    return Answer(data, ctx.truth("graph_entity_inventory", reason="counted from entities"))
