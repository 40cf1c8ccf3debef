"""
``POST /code/relationships/story``: the bounded relationship story of one target.

MCP ``get_code_relationship_story`` and most ``analyze_code_relationships`` query types
(callers, callees, transitive callers/callees, importers, class hierarchy, overrides)
land here. Pipeline (local-backend.md §2.4): resolve the target, fetch ``limit+1`` rows
per direction, apply the confidence floor, rank by bounded centrality, cut to ``limit``,
attach provenance and handles, then apply the token budget.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Callable
from typing import Any

from eshu_mcp.query.local.api.code_common import (
    GRAPH_BACKEND,
    RequestFields,
    entity_by_id,
    entity_handle,
)
from eshu_mcp.query.local.api.code_graph import (
    INHERITABLE_LABELS,
    candidate_summary,
    count_edges,
    edge_rows,
    fetch_edges,
    name_candidates,
    pick_candidate,
    provenance,
    walk,
)
from eshu_mcp.query.local.api.code_scope import (
    RepositoryGrant,
    may_read,
    repo_clause,
    scope_repository,
)
from eshu_mcp.query.local.api.code_story_cross import cross_repo_incoming
from eshu_mcp.query.local.api.code_story_enrichment import (
    class_hierarchy,
    override_story,
    repository_overrides,
)
from eshu_mcp.query.local.api.code_story_request import story_request
from eshu_mcp.query.local.api.framework import ROUTES, Answer, ApiContext, ApiError


def _resolve(conn: sqlite3.Connection, req: dict[str, Any], repo_id: str) -> dict[str, Any]:
    """Target resolution: ``resolved`` with the anchor row, or unresolved/ambiguous."""
    if req["entity_id"]:
        row = entity_by_id(conn, req["entity_id"])
        outside = repo_id and row is not None and row["repo_id"] != repo_id
        hidden = (
            isinstance(repo_id, RepositoryGrant)
            and row is not None
            and (row["repo_id"] not in repo_id.repo_ids)
        )
        if row is None or hidden or (outside and not req["cross_repo"]):
            return {"status": "unresolved", "entity_id": req["entity_id"]}
        return {"status": "resolved", "row": row}
    candidates = name_candidates(conn, req["target"], repo_id=repo_id, language=req["language"])
    if req["query_type"] == "class_hierarchy" and candidates:
        candidates = [c for c in candidates if c["entity_type"] in INHERITABLE_LABELS]
        if not candidates:
            raise ApiError(
                400, "class_hierarchy target must resolve to a class or inheritable entity"
            )
    if not candidates and "IMPORTS" in req["relationship_types"]:
        candidates = _module_candidates(conn, req["target"], repo_id)
    if not candidates:
        return {"status": "unresolved", "target": req["target"]}
    row = pick_candidate(candidates)
    if row is None:
        return {
            "status": "ambiguous",
            "target": req["target"],
            "candidates": [candidate_summary(c) for c in candidates[:25]],
            "truncated": len(candidates) > 25,
        }
    return {"status": "resolved", "row": row}


def _module_candidates(conn: sqlite3.Connection, name: str, repo_id: str) -> list[dict]:
    """Imported modules named ``name``, shaped like entity rows, for importer stories."""
    sql = (
        "SELECT m.module_key, m.repo_id, m.name, m.language, m.file_id,"
        " COALESCE(f.relative_path, '') AS relative_path, COALESCE(r.name, '') AS repo_name"
        " FROM modules m LEFT JOIN files f ON f.file_id = m.file_id"
        " LEFT JOIN repositories r ON r.repo_id = m.repo_id WHERE m.name = ?"
    )
    clause, scope_params = repo_clause("m.repo_id", repo_id)
    sql += " AND " + clause
    params: list[Any] = [name.strip(), *scope_params]
    rows = conn.execute(sql + " ORDER BY m.module_key LIMIT 26", params).fetchall()
    return [
        {
            "entity_id": row["module_key"],
            "entity_name": row["name"],
            "entity_type": "Module",
            "repo_id": row["repo_id"],
            "repo_name": row["repo_name"],
            "relative_path": row["relative_path"],
            "language": row["language"] or "",
            "start_line": 0,
            "end_line": 0,
            "file_id": row["file_id"],
            "is_test": 0,
            "metadata": "{}",
        }
        for row in rows
    ]


def _anchors(conn: sqlite3.Connection, row: dict[str, Any], types: list[str]) -> list[str]:
    """Node ids standing for the target: the entity, plus its module for imports."""
    anchors = [row["entity_id"]]
    if "IMPORTS" in types and row["entity_type"] == "Module" and row["file_id"] is not None:
        anchors += [
            key
            for (key,) in conn.execute(
                "SELECT module_key FROM modules WHERE file_id = ? AND module_key <> ?"
                " ORDER BY module_key",
                (row["file_id"], row["entity_id"]),
            )
        ]
    return anchors


def _rank(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Order by bounded centrality: how often a row's neighbour recurs in the set."""

    def neighbour(row: dict[str, Any]) -> str:
        return row["source_id"] if row["direction"] == "incoming" else row["target_id"]

    def neighbour_name(row: dict[str, Any]) -> str:
        return row["source_name"] if row["direction"] == "incoming" else row["target_name"]

    degree = Counter(neighbour(row) for row in rows)
    for row in rows:
        row["centrality"] = degree[neighbour(row)]
    return sorted(rows, key=lambda r: (-r["centrality"], neighbour_name(r), neighbour(r)))


def _apply_budget(rows: list[dict[str, Any]], budget: int) -> tuple[list[dict[str, Any]], bool]:
    """Keep rows while their estimated token cost (4 bytes a token) fits the budget."""
    if budget <= 0:
        return rows, False
    kept: list[dict[str, Any]] = []
    spent = 0
    for row in rows:
        cost = len(json.dumps(row, separators=(",", ":"))) // 4 + 1
        if spent + cost > budget:
            return kept, True
        spent += cost
        kept.append(row)
    return kept, False


def _fetch(
    conn: sqlite3.Connection,
    req: dict[str, Any],
    anchors: list[str],
    repo_id: str,
    readable: Callable[[str], bool],
) -> tuple[list[dict[str, Any]], dict[str, int], dict[str, bool]]:
    directions = ["incoming", "outgoing"] if req["direction"] == "both" else [req["direction"]]
    types = req["relationship_types"]
    if req["query_type"] == "class_hierarchy":
        types = ["INHERITS", "IMPLEMENTS"]
    rows: list[dict[str, Any]] = []
    available: dict[str, int] = {"incoming": 0, "outgoing": 0}
    cut: dict[str, bool] = {"incoming": False, "outgoing": False}
    for direction in directions:
        if req["include_transitive"]:
            found, bounded = walk(conn, anchors, direction, ("CALLS",), req["max_depth"])
            edges = [edge for edge, _ in found][: req["limit"] + 1]
            batch = edge_rows(conn, edges, direction)
            for row, (_, depth) in zip(batch, found, strict=False):
                row["depth"] = depth
                row["edge_origin"] = "transitive_call_graph"
            available[direction] = len(found)
            cut[direction] = bounded or len(found) > req["limit"]
        else:
            edges = fetch_edges(conn, anchors, direction, types, req["limit"] + 1, req["offset"])
            batch = edge_rows(conn, edges, direction)
            for row in batch:
                row["edge_origin"] = "direct_code_edge"
            available[direction] = count_edges(conn, anchors, direction, types)
            cut[direction] = len(edges) > req["limit"]
            if req["cross_repo"] and direction == "incoming" and req["anchor"] is not None:
                remote = cross_repo_incoming(conn, req["anchor"], types, req["limit"] + 1, readable)
                for row in edge_rows(conn, remote, direction):
                    row["edge_origin"] = "cross_repo_name_match"
                    batch.append(row)
                available[direction] += len(remote)
                cut[direction] = cut[direction] or len(remote) > req["limit"]
        allowed = repo_id.repo_ids if isinstance(repo_id, RepositoryGrant) else (repo_id,)
        if (repo_id or isinstance(repo_id, RepositoryGrant)) and not req["cross_repo"]:
            side = "source" if direction == "incoming" else "target"
            batch = [r for r in batch if r[f"{side}_repo_id"] in (*allowed, "")]
        rows += batch
    return rows, available, cut


def relationship_story(
    conn: sqlite3.Connection,
    req: dict[str, Any],
    repo_id: str,
    readable: Callable[[str], bool] = lambda repo_id: True,
) -> dict[str, Any]:
    """Build the story data for a validated request."""
    resolution = _resolve(conn, req, repo_id) if (req["target"] or req["entity_id"]) else None
    rows: list[dict[str, Any]] = []
    available = {"incoming": 0, "outgoing": 0}
    cut = {"incoming": False, "outgoing": False}
    anchor_row = resolution.get("row") if resolution else None
    if resolution and resolution["status"] == "resolved":
        if req["query_type"] == "class_hierarchy" and anchor_row["entity_type"] not in (
            INHERITABLE_LABELS
        ):
            raise ApiError(
                400, "class_hierarchy target must resolve to a class or inheritable entity"
            )
        anchors = _anchors(conn, anchor_row, req["relationship_types"])
        req["anchor"] = anchor_row if anchor_row.get("rid") is not None else None
        rows, available, cut = _fetch(conn, req, anchors, repo_id, readable)
    elif resolution is None:
        rows, available, cut = repository_overrides(conn, req, repo_id)
    fetched = len(rows)
    floor = req["min_confidence"]
    if floor:
        rows = [
            r
            for r in rows
            if isinstance(r.get("confidence"), int | float) and r["confidence"] >= floor
        ]
    ranked = _rank(rows)
    count_cut = len(ranked) > req["limit"] or any(cut.values())
    ranked = ranked[: req["limit"]]
    for row in ranked:
        row["provenance"] = provenance(row)
        row["source_handle"] = entity_handle(row["source_id"])
        row["target_handle"] = entity_handle(row["target_id"])
    ranked, budget_cut = _apply_budget(ranked, req["token_budget"])
    returned = Counter(row["direction"] for row in ranked)
    returned_by = {"incoming": returned["incoming"], "outgoing": returned["outgoing"]}
    data: dict[str, Any] = {
        "target_resolution": _resolution_block(resolution, req, repo_id),
        "scope": _scope(req, repo_id),
        "relationships": ranked,
        "summary": {
            "relationship_count": len(ranked),
            "returned_by_direction": returned_by,
            "truncated": count_cut or budget_cut,
        },
    }
    if req["token_budget"]:
        data["summary"]["token_budget"] = req["token_budget"]
    if resolution is not None and resolution["status"] != "resolved":
        reason = "target_unresolved"
    elif fetched == 0:
        reason = "no_relationships_found"
    elif not rows:
        reason = "all_below_confidence_floor"
    elif budget_cut:
        reason = "truncated_by_token_budget"
    elif count_cut:
        reason = "truncated_by_limit"
    else:
        reason = "complete"
    state = {
        (False, False): "none",
        (True, False): "count",
        (False, True): "token_budget",
        (True, True): "count_and_token_budget",
    }[(count_cut, budget_cut)]
    coverage: dict[str, Any] = {
        "query_shape": "entity_anchor_bounded_bfs"
        if req["include_transitive"]
        else "entity_anchor_one_hop",
        "scope_mode": "cross_repo" if req["cross_repo"] else "repo_scoped",
        "directions": ["incoming", "outgoing"]
        if req["direction"] == "both"
        else [req["direction"]],
        "relationship_types": req["relationship_types"],
        "max_depth": req["max_depth"],
        "available_by_direction": available,
        "returned_by_direction": returned_by,
        "truncated_by_direction": cut,
        "truncated": count_cut or budget_cut,
        "ranked_by": "bounded_centrality",
        "missing_edge_reason": reason,
        "truncation_state": state,
        "evidence_explanation": _EXPLANATIONS[reason],
    }
    if floor is not None:
        coverage["min_confidence"] = floor
    if req["token_budget"]:
        coverage["token_budget"] = req["token_budget"]
    data["coverage"] = coverage
    data["source_backend"] = GRAPH_BACKEND
    if req["query_type"] == "class_hierarchy" and anchor_row is not None:
        data["class_hierarchy"] = class_hierarchy(conn, anchor_row, req["max_depth"])
    if req["query_type"] == "overrides":
        data["override_story"] = override_story(ranked, anchor_row)
    return data


_EXPLANATIONS = {
    "complete": "every matching relationship in scope was returned",
    "target_unresolved": "the target did not resolve to exactly one entity; pick a candidate"
    " entity_id and retry",
    "no_relationships_found": "the embedded call graph has no matching edge for this target;"
    " name-based resolution misses dynamic dispatch, so absence is not proof",
    "all_below_confidence_floor": "matching edges exist but all are below min_confidence",
    "truncated_by_limit": "more relationships exist than the limit; page with offset",
    "truncated_by_token_budget": "rows were cut to fit token_budget; raise it or narrow the"
    " request",
}


def _resolution_block(
    resolution: dict[str, Any] | None, req: dict[str, Any], repo_id: str
) -> dict[str, Any]:
    if resolution is None:
        return {"status": "repository_scope", "repo_id": repo_id}
    if resolution["status"] != "resolved":
        return {k: v for k, v in resolution.items() if k != "row"}
    row = resolution["row"]
    return {
        "status": "resolved",
        "target": req["target"] or row["entity_name"],
        "entity_id": row["entity_id"],
        "name": row["entity_name"],
        "repo_id": row["repo_id"],
        "language": row["language"] or "",
    }


def _scope(req: dict[str, Any], repo_id: str) -> dict[str, Any]:
    scope = {
        "repo_id": repo_id,
        "language": req["language"],
        "direction": req["direction"],
        "relationship_type": req["relationship_type"],
        "relationship_types": req["relationship_types"],
        "cross_repo": req["cross_repo"],
        "limit": req["limit"],
        "offset": req["offset"],
        "max_depth": req["max_depth"],
        "include_transitive": req["include_transitive"],
    }
    if req["min_confidence"] is not None:
        scope["min_confidence"] = req["min_confidence"]
    return scope


@ROUTES.route("POST", "/code/relationships/story")
def code_relationship_story(ctx: ApiContext) -> Answer:
    """Callers, callees, importers, hierarchy or overrides of one target, bounded."""
    req = story_request(RequestFields.of(ctx))
    repo_id = scope_repository(ctx, req["repo_selector"])
    data = relationship_story(ctx.conn, req, repo_id, lambda repo: may_read(ctx, repo))
    truth = ctx.truth(
        "call_graph.relationship_story", reason="resolved from bounded relationship story lookup"
    )
    return Answer(data, truth)
