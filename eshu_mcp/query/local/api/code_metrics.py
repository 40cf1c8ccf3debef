"""
``POST /code/call-graph/metrics``: hub functions and recursive functions of a repository.

Reads every CALLS edge with both ends in the repository up to Eshu's 50,000-edge exact
scope (a 50,001st edge is the sentinel that turns the answer into a 422), collapses
duplicate edges per (caller, callee) and computes degrees and recursion in Python.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code_common import (
    GRAPH_BACKEND,
    RequestFields,
    check_offset,
    entity_handle,
    file_handle,
    language_values,
    next_offset,
)
from eshu_mcp.query.local.api.code_graph import describe_nodes
from eshu_mcp.query.local.api.code_scope import (
    scope_repository,
)
from eshu_mcp.query.local.api.framework import ROUTES, Answer, ApiContext, ApiError

EDGE_SCOPE_LIMIT = 50000
METRIC_TYPES = ("hub_functions", "recursive_functions")


def call_pairs(
    conn: sqlite3.Connection, repo_id: str, *, scope_limit: int | None = None
) -> set[tuple[str, str]]:
    """Distinct (caller, callee) entity pairs of a repository; 422 past the exact scope."""
    scope_limit = scope_limit or EDGE_SCOPE_LIMIT
    sentinel = scope_limit + 1
    rows = conn.execute(
        "SELECT source_id, target_id FROM edges WHERE repo_id = ? AND type = 'CALLS'"
        " AND source_id LIKE 'content-entity:%' LIMIT ?",
        (repo_id, sentinel),
    ).fetchall()
    if len(rows) >= sentinel:
        raise ApiError(
            422,
            f"call graph metrics scope is too broad: reached the {sentinel}-edge sentinel;"
            f" maximum exact scope is {scope_limit}",
        )
    return {(source, target) for source, target in rows}


def _function_nodes(
    conn: sqlite3.Connection, ids: set[str], repo_id: str, language: str
) -> dict[str, dict[str, Any]]:
    nodes = describe_nodes(conn, ids)
    languages = set(language_values(language))
    return {
        node_id: node
        for node_id, node in nodes.items()
        if node["type"] == "Function"
        and node["repo_id"] == repo_id
        and (not languages or node["language"] in languages)
    }


def _row(repo_id: str, node: dict[str, Any], rank: int) -> dict[str, Any]:
    return {
        "repo_id": repo_id,
        "file_path": node["file_path"],
        "language": node["language"],
        "function_id": node["id"],
        "function_name": node["name"],
        "start_line": node["start_line"],
        "end_line": node["end_line"],
        "rank": rank,
        "source_backend": GRAPH_BACKEND,
        "source_handle": file_handle(repo_id, node["file_path"]),
        "entity_handle": entity_handle(node["id"]),
    }


def hub_functions(
    conn: sqlite3.Connection, repo_id: str, language: str, *, scope_limit: int | None = None
) -> list[dict[str, Any]]:
    """Every function with calls in or out, most connected first."""
    pairs = call_pairs(conn, repo_id, scope_limit=scope_limit)
    nodes = _function_nodes(conn, {n for pair in pairs for n in pair}, repo_id, language)
    incoming: dict[str, int] = dict.fromkeys(nodes, 0)
    outgoing: dict[str, int] = dict.fromkeys(nodes, 0)
    for source, target in pairs:
        if source in nodes and target in nodes:
            outgoing[source] += 1
            incoming[target] += 1
    order = sorted(
        (n for n in nodes if incoming[n] + outgoing[n] > 0),
        key=lambda n: (
            -(incoming[n] + outgoing[n]),
            -incoming[n],
            -outgoing[n],
            nodes[n]["file_path"],
            nodes[n]["name"],
            n,
        ),
    )
    rows = []
    for rank, node_id in enumerate(order, start=1):
        row = _row(repo_id, nodes[node_id], rank)
        row["incoming_calls"] = incoming[node_id]
        row["outgoing_calls"] = outgoing[node_id]
        row["total_degree"] = incoming[node_id] + outgoing[node_id]
        rows.append(row)
    return rows


def recursive_functions(
    conn: sqlite3.Connection, repo_id: str, language: str, *, scope_limit: int | None = None
) -> list[dict[str, Any]]:
    """Functions that call themselves, or call a function that calls them back."""
    pairs = call_pairs(conn, repo_id, scope_limit=scope_limit)
    nodes = _function_nodes(conn, {n for pair in pairs for n in pair}, repo_id, language)
    found: list[tuple[str, str, str]] = []
    for source, target in sorted(pairs):
        if source not in nodes or target not in nodes:
            continue
        if source == target:
            found.append((source, target, "self_call"))
        elif (target, source) in pairs:
            found.append((source, target, "mutual_call"))
    found.sort(key=lambda f: (nodes[f[0]]["file_path"], nodes[f[0]]["name"], f[0], f[1]))
    rows = []
    for rank, (function, partner, kind) in enumerate(found, start=1):
        node, other = nodes[function], nodes[partner]
        row = _row(repo_id, node, rank)
        evidence: dict[str, Any] = {
            "relationship_type": "CALLS",
            "cycle_path": [function, partner, function],
        }
        if kind == "mutual_call":
            evidence["partner_source_handle"] = file_handle(repo_id, other["file_path"])
            evidence["partner_entity_handle"] = entity_handle(partner)
        row.update(
            partner_id=partner,
            partner_name=other["name"],
            partner_file=other["file_path"],
            partner_start_line=other["start_line"],
            partner_end_line=other["end_line"],
            recursion_kind=kind,
            recursion_evidence=evidence,
        )
        rows.append(row)
    return rows


@ROUTES.route("POST", "/code/call-graph/metrics")
def call_graph_metrics(ctx: ApiContext) -> Answer:
    """MCP ``inspect_call_graph_metrics``: hub or recursive functions of one repository."""
    fields = RequestFields.of(ctx)
    selector = fields.string("repo_id")
    if not selector.strip():
        raise ApiError(400, "repo_id is required")
    metric_type = fields.string("metric_type").strip() or "hub_functions"
    if metric_type not in METRIC_TYPES:
        raise ApiError(400, "metric_type must be one of: " + ", ".join(METRIC_TYPES))
    limit = fields.integer("limit", 25)
    if fields.has("limit"):
        if limit > 200:
            raise ApiError(400, "limit must be <= 200")
        if limit < 1:
            raise ApiError(400, "limit must be >= 1")
    offset = check_offset(fields.integer("offset"))
    language = fields.string("language").strip()
    repo_id = scope_repository(ctx, selector)
    compute = hub_functions if metric_type == "hub_functions" else recursive_functions
    rows = compute(ctx.conn, repo_id, language)
    window = rows[offset : offset + limit + 1]
    functions, truncated = window[:limit], len(window) > limit
    data = {
        "metric_type": metric_type,
        "scope": {"repo_id": repo_id, "language": language, "limit": limit, "offset": offset},
        "functions": functions,
        "count": len(functions),
        "limit": limit,
        "offset": offset,
        "truncated": truncated,
        "next_offset": next_offset(offset, len(functions), truncated),
        "source_backend": GRAPH_BACKEND,
        "coverage": {
            "query_shape": metric_type,
            "relationship_types": ["CALLS"],
            "truncated": truncated,
            "bounded": True,
        },
    }
    truth = ctx.truth(
        "call_graph.metrics", reason="resolved from bounded call graph metrics lookup"
    )
    return Answer(data, truth)
