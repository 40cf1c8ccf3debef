"""
``POST /code/call-chain``: shortest CALLS chains between two functions.

A breadth-first search over outgoing CALLS edges, at most ``max_depth`` (<= 10) hops and
a bounded number of visited nodes; it returns every shortest chain up to a small cap.
A name several definitions share is answered, not refused: the chains found between any
of them (surest first, each naming its own ends) with the ambiguity stated.
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
    """
    Candidate rows for one chain endpoint and the label used in error texts. A name given
    as the entity id (``end_entity_id: Segment.split_and_crop_lines``) is read as a name.
    """
    if entity_id and not entity_id_of(entity_id) and not name:
        name, entity_id = entity_id, ""
    entity_id = entity_id_of(entity_id) or entity_id or entity_id_of(name)
    if entity_id:
        row = entity_by_id(conn, entity_id)
        readable = row is not None and (
            not isinstance(repo_id, RepositoryGrant) or row["repo_id"] in repo_id.repo_ids
        )
        return ([row] if readable else []), entity_id
    return name_candidates(conn, name, repo_id=repo_id, language="", limit=50), name


def _bounded_candidates(
    starts: list[dict[str, Any]], ends: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """
    The candidates probed: all of them while their pairs stay within
    ``MAX_CANDIDATE_PAIRS``, else the first of each side (non-test definitions come first)
    until they do.
    """
    starts, ends = list(starts), list(ends)
    while len(starts) * len(ends) > MAX_CANDIDATE_PAIRS:
        if len(starts) >= len(ends):
            starts.pop()
        else:
            ends.pop()
    return starts, ends


def _ambiguity(
    req: dict[str, Any],
    start_label: str,
    end_label: str,
    starts: list[dict[str, Any]],
    ends: list[dict[str, Any]],
    probed: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    pairs: list[tuple[str, str]],
) -> dict[str, Any]:
    """What a shared name left open: how many definitions each end has, and which were tried."""
    sides = [
        f'"{label}" names {len(rows)} definitions'
        for label, rows in ((start_label, starts), (end_label, ends))
        if len(rows) > 1
    ]
    probed_pairs = len(probed[0]) * len(probed[1])
    note = " and ".join(sides)
    if probed_pairs < len(starts) * len(ends):
        note += f" (the first {probed_pairs} pairs were probed)"
    note += f": {len(pairs)} of {probed_pairs} pairs are joined by a chain"
    if pairs:
        note += ", surest first; Class.method or start_entity_id/end_entity_id picks one"
    return {
        "start_candidates": len(starts),
        "end_candidates": len(ends),
        "probed_pairs": probed_pairs,
        "pairs_with_chains": len(pairs),
        "note": note,
    }


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
    probed = _bounded_candidates(starts, ends)
    hops: dict[tuple[str, str], Hop] = {}
    paths = shortest_paths(
        conn,
        [r["entity_id"] for r in probed[0]],
        {r["entity_id"] for r in probed[1]},
        req["max_depth"],
        hops,
    )
    pairs = sorted({(p[0], p[-1]) for p in paths})
    if start is None or end is None:
        req["ambiguity"] = _ambiguity(req, start_label, end_label, starts, ends, probed, pairs)
    if not pairs:
        req["reason"] = (
            f"both ends are indexed, and no chain of at most {req['max_depth']} linked calls"
            " joins them; a call the index could not link (an outside or dynamic receiver)"
            " is not followed"
        )
        if "ambiguity" in req:
            req["reason"] = f"{req['ambiguity']['note']}; {req['reason']}"
        return (
            [],
            start["entity_id"] if start else "",
            end["entity_id"] if end else "",
        )
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
    chains.sort(key=_surest_first)
    first = chains[0]["chain"]
    return chains, first[0]["id"], first[-1]["id"]


def _surest_first(chain: dict[str, Any]) -> tuple[int, int, str, int]:
    """Fewest ambiguous calls first, then the shortest, then by where the chain starts."""
    nodes = chain["chain"]
    uncertain = sum(1 for node in nodes if node.get("resolution_method") == "ambiguous")
    return uncertain, chain["depth"], nodes[0]["file_path"], nodes[0]["start_line"]


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
    if "ambiguity" in req:
        data["ambiguity"] = req["ambiguity"]
    truth = ctx.truth("call_graph.call_chain_path", reason="resolved from bounded CALLS search")
    return Answer(data, truth)
