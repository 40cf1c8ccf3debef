"""
``POST /code/call-chain``: shortest CALLS chains between two functions.

A breadth-first search over outgoing CALLS edges, at most ``max_depth`` (<= 10) hops and
a bounded number of visited nodes; it returns every shortest chain up to a small cap.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.common import (
    RequestFields,
    entity_by_id,
    entity_id_of,
    in_clauses,
)
from eshu_mcp.query.local.api.code.scope import (
    RepositoryGrant,
    scope_repository,
)
from eshu_mcp.query.local.api.graph.edges import (
    MAX_EXPANSIONS,
    describe_nodes,
    name_candidates,
    pick_candidate,
)
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError

MAX_CHAINS = 10
MAX_CANDIDATE_PAIRS = 100


Hop = tuple[int | None, str | None, float | None]
"""How one node of a chain calls the next: (line, resolution method, confidence), the
surest of its calls (then the first line)."""


def shortest_paths(
    conn: sqlite3.Connection,
    starts: list[str],
    ends: set[str],
    max_depth: int,
    hops: dict[tuple[str, str], Hop] | None = None,
) -> list[list[str]]:
    """
    Every shortest CALLS path from any of ``starts`` to any of ``ends`` (ids), capped.

    Level-by-level BFS keeping all same-level parents, so equally short chains are all
    found; the walk stops at the first level that reaches an end, at ``max_depth``, or
    when ``MAX_EXPANSIONS`` nodes have been seen. ``hops``, when given, receives the
    :data:`Hop` of every edge the walk took.
    """
    parents: dict[str, list[str]] = {start: [] for start in starts}
    frontier = list(dict.fromkeys(starts))
    reached = [node for node in frontier if node in ends]
    depth = 0
    while not reached and frontier and depth < max_depth and len(parents) < MAX_EXPANSIONS:
        depth += 1
        level: dict[str, list[str]] = {}
        for clause, params in in_clauses("source_id", frontier):
            for source, target, line, method, confidence in conn.execute(
                "SELECT source_id, target_id, line_number, resolution_method, confidence"
                f" FROM edges WHERE {clause} AND type = 'CALLS'"
                " ORDER BY source_id, target_id, confidence DESC, line_number LIMIT ?",
                [*params, MAX_EXPANSIONS + 1],
            ):
                if target in parents:
                    continue
                level.setdefault(target, [])
                if source not in level[target]:
                    level[target].append(source)
                    if hops is not None:
                        hops[(source, target)] = (line, method, confidence)
        parents.update(level)
        frontier = sorted(level)
        reached = [node for node in frontier if node in ends]
    paths: list[list[str]] = []

    def unwind(node: str, suffix: list[str]) -> None:
        if len(paths) >= MAX_CHAINS:
            return
        if not parents[node]:
            paths.append([node, *suffix])
            return
        for parent in parents[node]:
            unwind(parent, [node, *suffix])

    for end in reached:
        unwind(end, [])
    return paths


def _endpoint(
    conn: sqlite3.Connection, name: str, entity_id: str, repo_id: str
) -> tuple[list[dict[str, Any]], str]:
    """Candidate rows for one chain endpoint and the label used in error texts."""
    entity_id = entity_id_of(entity_id) or entity_id or entity_id_of(name)
    if entity_id:
        row = entity_by_id(conn, entity_id)
        readable = row is not None and (
            not isinstance(repo_id, RepositoryGrant) or row["repo_id"] in repo_id.repo_ids
        )
        return ([row] if readable else []), entity_id
    return name_candidates(conn, name, repo_id=repo_id, language="", limit=50), name


def _ambiguity(name: str, repo_id: str, rows: list[dict[str, Any]]) -> ApiError:
    shown = ", ".join(f"{r['entity_id']} ({r['relative_path']}:{r['start_line']})" for r in rows)
    return ApiError(
        400, f'entity name "{name}" in repository "{repo_id}" matched multiple entities: {shown}'
    )


def _pairs_text(named: dict[str, dict[str, Any]], pairs: list[tuple[str, str]]) -> str:
    """
    The reachable pairs, with a start (or end) they all share stated once, so that the
    sentence names every candidate before an error's length bound cuts it.
    """

    def by_label(ids: set[str]) -> list[str]:  # by name and place, never by a hashed id
        return sorted(ids, key=lambda node: _endpoint_label(named, node))

    starts = by_label({a for a, _ in pairs})
    ends = by_label({b for _, b in pairs})
    if len(starts) == 1:
        listed = ", ".join(_endpoint_label(named, b) for b in ends)
        return f"{_endpoint_label(named, starts[0])} -> one of {len(ends)}: {listed}"
    if len(ends) == 1:
        listed = ", ".join(_endpoint_label(named, a) for a in starts)
        return f"one of {len(starts)}: {listed} -> {_endpoint_label(named, ends[0])}"
    return ", ".join(
        f"{_endpoint_label(named, a)} -> {_endpoint_label(named, b)}" for a, b in pairs
    )


def _where(req: dict[str, Any]) -> str:
    """Where the endpoints were looked up, for an error sentence."""
    repo_id = req.get("repo_id")
    return f'in repository "{repo_id}"' if repo_id else "across the indexed repositories"


def call_chains(
    conn: sqlite3.Connection, req: dict[str, Any]
) -> tuple[list[dict[str, Any]], str, str]:
    """Resolve both endpoints and find the chains; returns chains and the resolved ids."""
    start_rows, start_label = _endpoint(
        conn, req["start"], req["start_entity_id"], req["start_repo_id"]
    )
    end_rows, end_label = _endpoint(conn, req["end"], req["end_entity_id"], req["end_repo_id"])
    if not start_rows or not end_rows:
        missing = [
            f'"{label}" ({side})'
            for side, label, rows in (
                ("start", start_label, start_rows),
                ("end", end_label, end_rows),
            )
            if not rows
        ]
        req["reason"] = (
            f"no definition is named {' or '.join(missing)} {_where(req)};"
            " find_symbol with match_mode fuzzy lists the names that contain it"
        )
        return [], req["start_entity_id"], req["end_entity_id"]
    start = pick_candidate(start_rows)
    end = pick_candidate(end_rows)
    starts = [start] if start else start_rows
    ends = [end] if end else end_rows
    if len(starts) * len(ends) > MAX_CANDIDATE_PAIRS:
        raise ApiError(
            400,
            "call-chain endpoints matched too many candidate pairs"
            f" {_where(req)} to probe safely ({len(starts) * len(ends)} >"
            f" {MAX_CANDIDATE_PAIRS}); pass start_entity_id and end_entity_id, or qualified"
            " names (Class.method), to disambiguate",
        )
    hops: dict[tuple[str, str], Hop] = {}
    paths = shortest_paths(
        conn,
        [r["entity_id"] for r in starts],
        {r["entity_id"] for r in ends},
        req["max_depth"],
        hops,
    )
    pairs = sorted({(p[0], p[-1]) for p in paths})
    if len(pairs) > 1 and (start is None or end is None):
        named = describe_nodes(conn, {node for pair in pairs for node in pair})
        shown = _pairs_text(named, pairs)
        raise ApiError(
            400,
            "call-chain endpoints matched multiple reachable entity pairs"
            f" {_where(req)}: {shown}; pass qualified names (Class.method, or"
            " module.Class.method) or start_entity_id and end_entity_id to pick one",
        )
    if not pairs:
        if start is None:
            raise _ambiguity(start_label, req["start_repo_id"], start_rows)
        if end is None:
            raise _ambiguity(end_label, req["end_repo_id"], end_rows)
        req["reason"] = (
            f"both ends are indexed, and no chain of at most {req['max_depth']} linked calls"
            " joins them; a call the index could not link (an outside or dynamic receiver)"
            " is not followed"
        )
        return [], start["entity_id"], end["entity_id"]
    nodes = describe_nodes(conn, {node for path in paths for node in path})
    chains = [
        {
            "chain": [
                _chain_node(nodes, node, hops.get((path[at - 1], node)) if at else None)
                for at, node in enumerate(path)
            ],
            "depth": len(path) - 1,
        }
        for path in paths
    ]
    chains.sort(key=_uncertain_hops)  # the surest chains first (the sort is stable)
    return chains, pairs[0][0], pairs[0][1]


def _uncertain_hops(chain: dict[str, Any]) -> int:
    return sum(1 for node in chain["chain"] if node.get("resolution_method") == "ambiguous")


def _endpoint_label(nodes: dict[str, dict[str, Any]], node_id: str) -> str:
    """``Class.name (path:line)``: which of a shared name's definitions this is (a qualified
    name, ``module.Class.name``, then picks it)."""
    node = nodes.get(node_id)
    if node is None:
        return node_id
    name = node.get("name", "")
    if node.get("class_context"):
        name = f"{node['class_context']}.{name}"
    return f"{name} ({node.get('file_path', '')}:{node.get('start_line', 0)})"


def _chain_node(nodes: dict[str, dict[str, Any]], node_id: str, hop: Hop | None) -> dict[str, Any]:
    """Eshu's chain node; after the first, with how the previous node calls it (the line
    of the call, its resolution method and confidence: ``ambiguous`` when the call may run
    another definition of the name)."""
    node = nodes.get(node_id, {"name": node_id, "type": ""})
    metadata = node.get("metadata") or {}
    item = {
        "id": node_id,
        "name": node.get("name", ""),
        "labels": [node.get("type", "")],
        "language": node.get("language", ""),
        "docstring": metadata.get("docstring", ""),
        "method_kind": (
            "method" if node.get("class_context") or metadata.get("class_context") else "function"
        ),
        "file_path": node.get("file_path", ""),
        "repo_id": node.get("repo_id", ""),
        "repo_name": node.get("repo_name", ""),
        "start_line": node.get("start_line", 0),
        "end_line": node.get("end_line", 0),
    }
    if metadata:
        item["metadata"] = metadata
    if hop is not None:
        item["called_at_line"], item["resolution_method"], item["confidence"] = hop
    return item


@ROUTES.route("POST", "/code/call-chain")
def code_call_chain(ctx: ApiContext) -> Answer:
    """MCP ``find_function_call_chain``: shortest call chains between two functions."""
    fields = RequestFields.of(ctx)
    req: dict[str, Any] = {
        key: fields.string(key).strip()
        for key in ("start", "end", "start_entity_id", "end_entity_id")
    }
    if not req["start_entity_id"] and not req["start"]:
        raise ApiError(400, "start or start_entity_id is required")
    if not req["end_entity_id"] and not req["end"]:
        raise ApiError(400, "end or end_entity_id is required")
    max_depth = fields.integer("max_depth", 5)
    req["max_depth"] = 5 if max_depth <= 0 else min(max_depth, 10)
    req["cross_repo"] = fields.boolean("cross_repo")
    req["repo_id"] = scope_repository(ctx, fields.string("repo_id"))
    req["start_repo_id"] = req["end_repo_id"] = req["repo_id"]
    if req["cross_repo"]:
        req["start_repo_id"] = scope_repository(ctx, fields.string("start_repo_id"))
        req["end_repo_id"] = scope_repository(ctx, fields.string("end_repo_id"))
    chains, start_id, end_id = call_chains(ctx.conn, req)
    data = {
        "start": req["start"],
        "end": req["end"],
        "start_entity_id": start_id,
        "end_entity_id": end_id,
        "repo_id": req["repo_id"],
        "cross_repo": req["cross_repo"],
        "start_repo_id": req["start_repo_id"],
        "end_repo_id": req["end_repo_id"],
        "chains": chains,
        "max_depth": req["max_depth"],
    }
    if not chains and req.get("reason"):
        data["reason"] = req["reason"]
    truth = ctx.truth("call_graph.call_chain_path", reason="resolved from bounded CALLS search")
    return Answer(data, truth)
