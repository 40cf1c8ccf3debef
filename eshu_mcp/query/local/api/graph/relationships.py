"""
``POST /code/relationships``: one entity's direct (or transitive CALLS) relationships.

This is where ``analyze_code_relationships`` lands for query types that have no
dedicated route; ``/code/relationships/story`` (:mod:`.story.answer`) is the richer path.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.common import (
    RequestFields,
    entity_by_id,
    entity_id_of,
    entity_ref,
    fetch_entities,
    like_pattern,
)
from eshu_mcp.query.local.api.code.scope import (
    may_read,
    scope_predicate,
    scope_repository,
)
from eshu_mcp.query.local.api.graph.edges import (
    CANDIDATE_LIMIT,
    candidate_summary,
    edge_rows,
    fetch_edges,
    name_candidates,
    pick_candidate,
    provenance,
    walk,
)
from eshu_mcp.query.local.api.graph.story.page import (
    ENVELOPE_RESERVE_BYTES,
    RESPONSE_BUDGET_BYTES,
    fit_rows,
    wire_bytes,
)
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError

ALL_TYPES = (
    "CALLS",
    "IMPORTS",
    "INHERITS",
    "IMPLEMENTS",
    "OVERRIDES",
    "REFERENCES",
    "CONTAINS",
    "INSTANTIATES",
)
# Rows per direction (direct or transitive) before ``*_truncated`` is set.
DIRECT_ROW_CEILING = 200


def relationship_capability(relationship_type: str, direction: str, transitive: bool) -> str:
    """The capability id Eshu labels a relationship read with."""
    if transitive:
        return (
            "call_graph.transitive_callees"
            if direction == "outgoing"
            else "call_graph.transitive_callers"
        )
    if relationship_type == "IMPORTS":
        return "symbol_graph.imports"
    if relationship_type in ("INHERITS", "OVERRIDES", "IMPLEMENTS"):
        return "symbol_graph.inheritance"
    if direction == "outgoing":
        return "call_graph.direct_callees"
    return "call_graph.direct_callers"


def direct_relationships(
    conn: sqlite3.Connection,
    entity_id: str,
    direction: str,
    types: tuple[str, ...],
    ceiling: int | None = None,
) -> dict[str, Any]:
    """Incoming and/or outgoing edges of one entity, each direction capped at ``ceiling``."""
    ceiling = ceiling or DIRECT_ROW_CEILING
    result: dict[str, Any] = {}
    for side in ("outgoing", "incoming"):
        rows: list[dict[str, Any]] = []
        truncated = False
        if direction in ("", side):
            edges = fetch_edges(conn, [entity_id], side, types, ceiling + 1)
            truncated = len(edges) > ceiling
            rows = edge_rows(conn, edges[:ceiling], side)
            for row in rows:
                row["provenance"] = provenance(row)
        result[side] = rows
        result[f"{side}_truncated"] = truncated
    return result


def transitive_calls(
    conn: sqlite3.Connection, entity_id: str, direction: str, max_depth: int
) -> tuple[list[dict[str, Any]], bool]:
    """Every function reachable over CALLS within ``max_depth`` hops, with its depth."""
    found, bounded = walk(conn, [entity_id], direction, ("CALLS",), max_depth)
    side = "source" if direction == "incoming" else "target"
    rendered = edge_rows(conn, [edge for edge, _ in found], direction)
    rows = []
    for row, (_, depth) in zip(rendered, found, strict=True):
        rows.append(
            {
                "direction": direction,
                "type": "CALLS",
                f"{side}_name": row[f"{side}_name"],
                f"{side}_id": row[f"{side}_id"],
                f"{side}_file_path": row[f"{side}_file_path"],
                f"{side}_repo_id": row[f"{side}_repo_id"],
                "depth": depth,
                "reason": "transitive_call_graph",
            }
        )
    return rows, bounded


@ROUTES.route("POST", "/code/relationships")
def code_relationships(ctx: ApiContext) -> Answer:
    """Direct relationships of an entity, or transitive CALLS when asked."""
    fields = RequestFields.of(ctx)
    entity_id = fields.string("entity_id").strip()
    name = fields.string("name").strip()
    if entity_id and not entity_id_of(entity_id) and not entity_by_id(ctx.conn, entity_id):
        # analyze_code_relationships sends its target here as entity_id: a name, not an id.
        entity_id, name = "", name or entity_id
    entity_id = entity_id_of(entity_id) or entity_id
    if not entity_id and not name:
        raise ApiError(400, "entity_id or name is required")
    direction = fields.string("direction").strip().lower()
    if direction not in ("", "incoming", "outgoing"):
        raise ApiError(400, "direction must be incoming or outgoing")
    relationship_type = fields.string("relationship_type").strip().upper()
    transitive = fields.boolean("transitive")
    max_depth = fields.integer("max_depth", 5)
    max_depth = 5 if max_depth <= 0 else min(max_depth, 10)
    if transitive:
        if relationship_type not in ("", "CALLS"):
            raise ApiError(400, "transitive relationships are only supported for CALLS")
        if not direction:
            raise ApiError(400, "direction is required for transitive CALLS relationships")
    repo_id = scope_repository(ctx, fields.string("repo_id"))
    capability = relationship_capability(relationship_type or "CALLS", direction, transitive)

    if entity_id:
        row = entity_by_id(ctx.conn, entity_id)
        if row is not None and not may_read(ctx, row["repo_id"]):
            row = None
    else:
        candidates = name_candidates(ctx.conn, name, repo_id=repo_id, language="")
        if not candidates:
            where, params = scope_predicate(repo_id, "")
            candidates = fetch_entities(
                ctx.conn,
                where + " AND e.entity_name LIKE ? ESCAPE '\\'",
                [*params, like_pattern(name)],
                "e.repo_id, e.relative_path, e.start_line",
                CANDIDATE_LIMIT + 1,
            )
        row = pick_candidate(candidates)
        if row is None and candidates:
            return Answer(_ambiguous(name, repo_id, candidates), ctx.truth(capability))
    if row is None:
        raise ApiError(404, "entity not found")

    data = entity_ref(row)
    if transitive:
        rows, bounded = transitive_calls(ctx.conn, row["entity_id"], direction, max_depth)
        bounded = bounded or len(rows) > DIRECT_ROW_CEILING
        rows = rows[:DIRECT_ROW_CEILING]
        data["outgoing"] = rows if direction == "outgoing" else []
        data["incoming"] = rows if direction == "incoming" else []
        data["outgoing_truncated"] = bounded and direction == "outgoing"
        data["incoming_truncated"] = bounded and direction == "incoming"
        data["max_depth"] = max_depth
    else:
        types = (relationship_type,) if relationship_type else ALL_TYPES
        data.update(direct_relationships(ctx.conn, row["entity_id"], direction, types))
    _fit_response_budget(data)
    truth = ctx.truth(capability, reason="resolved from the embedded code graph")
    return Answer(data, truth)


def _fit_response_budget(data: dict[str, Any]) -> None:
    """
    Cut ``incoming``/``outgoing`` so the answer fits the MCP response budget, each
    direction getting at least half of the room, marking a cut direction truncated.
    """
    head = {k: v for k, v in data.items() if k not in ("incoming", "outgoing")}
    room = RESPONSE_BUDGET_BYTES - ENVELOPE_RESERVE_BYTES - wire_bytes(head)
    costs = {
        side: sum(wire_bytes(row) + 1 for row in data[side]) for side in ("incoming", "outgoing")
    }
    if sum(costs.values()) <= room:
        return
    for side, other in (("incoming", "outgoing"), ("outgoing", "incoming")):
        allowance = max(room // 2, room - costs[other])
        kept, _, clamped = fit_rows(data[side], 0, allowance)
        if clamped:
            data[side] = kept
            data[f"{side}_truncated"] = True
            data[f"{side}_truncated_by_response_budget"] = True


def _ambiguous(name: str, repo_id: str, candidates: list[dict[str, Any]]) -> dict[str, Any]:
    shown = candidates[:CANDIDATE_LIMIT]
    return {
        "status": "ambiguous",
        "target_resolution": {
            "status": "ambiguous",
            "target": name,
            "candidates": [candidate_summary(c) for c in shown],
            "truncated": len(candidates) > CANDIDATE_LIMIT,
        },
        "name": name,
        "repo_id": repo_id,
        "outgoing": [],
        "incoming": [],
        "summary": {
            "candidate_count": len(shown),
            "truncated": len(candidates) > CANDIDATE_LIMIT,
        },
    }
