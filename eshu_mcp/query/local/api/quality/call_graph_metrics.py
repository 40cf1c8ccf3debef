"""
``POST /code/call-graph/metrics``: hub functions and recursive functions of a repository.

Two indexed reads, by integer node number: the repository's Function entities (with the
path, name and id that break ranking ties), then the distinct (caller, callee) pairs of
CALLS edges between them, driven from those functions through the edge source index. The
exact scope is 250,000 distinct pairs (Eshu stops at 50,000 edges; Twisted alone has 61k
edges, 37k distinct function pairs): a 250,001st pair is the sentinel that turns the
answer into a 422 naming ``language`` as the way to narrow it. Degrees and recursion are
counted over the pairs in Python; only the rows of the requested page are described.
The route ranks every pair of the repository (no ceiling) once per generation and pages
through that ranking (:mod:`..platform.generation_answers`).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from typing import Any

from attrs import frozen

from eshu_mcp.query.local.api.code.common import (
    GRAPH_BACKEND,
    RequestFields,
    check_offset,
    entity_handle,
    file_handle,
    language_values,
    next_offset,
)
from eshu_mcp.query.local.api.code.scope import (
    scope_repository,
)
from eshu_mcp.query.local.api.graph.edges import describe_nodes
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError
from eshu_mcp.query.local.api.platform.generation_answers import GENERATION_ANSWERS

# Distinct function-to-function call pairs one answer may count (about a second of work).
EDGE_SCOPE_LIMIT = 250000
METRIC_TYPES = ("hub_functions", "recursive_functions")


def _functions_sql(columns: str, languages: list[str], *, with_ids: bool = False) -> str:
    """``columns`` of the repository's Function entities (``r``, ``f``, ``n``), by language."""
    ids = " JOIN nodes n ON n.nid = r.rid" if with_ids else ""
    sql = (
        f"SELECT {columns} FROM files f JOIN entity_rows r ON r.file_id = f.file_id{ids}"
        " WHERE f.repo_id = ? AND r.entity_type = 'Function'"
    )
    if languages:
        sql += " AND f.language IN (" + ", ".join("?" * len(languages)) + ")"
    return sql


@frozen
class CallScope:
    """The functions of one repository (by node number) and the distinct calls between them."""

    # rid -> (file_path, name, entity_id): the identity part of every sort key
    functions: dict[int, tuple[str, str, str]]
    pairs: set[tuple[int, int]]

    def entity_id(self, rid: int) -> str:
        return self.functions[rid][2]


def load_call_scope(
    conn: sqlite3.Connection,
    repo_id: str,
    language: str,
    scope_limit: int | None = None,
    *,
    capped: bool = True,
) -> CallScope:
    """Read the call scope of a repository; 422 past ``scope_limit`` distinct pairs (unless
    not ``capped``: every pair, for a ranking computed once per generation)."""
    scope_limit = scope_limit or EDGE_SCOPE_LIMIT
    languages = language_values(language)
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: tens of thousands of rows, read once
    listed = _functions_sql(
        "r.rid, f.relative_path, r.entity_name, n.node_id", languages, with_ids=True
    )
    functions = {row[0]: row[1:] for row in cursor.execute(listed, [repo_id, *languages])}
    scope = _functions_sql("r.rid", languages)
    sentinel = scope_limit + 1
    rows = cursor.execute(
        f"SELECT DISTINCT e.src, e.dst FROM edge_rows e WHERE e.src IN ({scope})"
        " AND e.type = 1 AND e.repo = (SELECT repo_key FROM repositories WHERE repo_id = ?)"
        f" AND e.dst IN ({scope}) LIMIT ?",
        [repo_id, *languages, repo_id, repo_id, *languages, sentinel if capped else -1],
    ).fetchall()
    if capped and len(rows) >= sentinel:
        narrow = "" if languages else "; pass language to measure one language at a time"
        raise ApiError(
            422,
            f"call graph metrics scope is too broad: reached the {sentinel}-edge sentinel;"
            f" maximum exact scope is {scope_limit}{narrow}",
        )
    return CallScope(functions, set(rows))


def _window(ranked: list, offset: int, limit: int | None) -> list:
    return ranked[offset:] if limit is None else ranked[offset : offset + limit]


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
    conn: sqlite3.Connection,
    repo_id: str,
    language: str,
    *,
    offset: int = 0,
    limit: int | None = None,
    scope_limit: int | None = None,
    ranking: list[tuple[str, int, int]] | None = None,
) -> list[dict[str, Any]]:
    """Functions with calls in or out, most connected first: rows ``offset`` on (``limit``)."""
    ranked = (
        ranking
        if ranking is not None
        else hub_ranking(load_call_scope(conn, repo_id, language, scope_limit))
    )
    page = _window(ranked, offset, limit)
    nodes = describe_nodes(conn, [function_id for function_id, _, _ in page])
    rows = []
    for rank, (function_id, incoming, outgoing) in enumerate(page, start=offset + 1):
        row = _row(repo_id, nodes[function_id], rank)
        row["incoming_calls"] = incoming
        row["outgoing_calls"] = outgoing
        row["total_degree"] = incoming + outgoing
        rows.append(row)
    return rows


def hub_ranking(scope: CallScope) -> list[tuple[str, int, int]]:
    """Every function with calls in or out, most connected first: (id, incoming, outgoing)."""
    sources, targets = zip(*scope.pairs, strict=True) if scope.pairs else ((), ())
    outgoing, incoming = Counter(sources), Counter(targets)
    ranked = sorted(
        outgoing.keys() | incoming.keys(),
        key=lambda n: (
            -(incoming[n] + outgoing[n]),
            -incoming[n],
            -outgoing[n],
            *scope.functions[n],
        ),
    )
    return [(scope.entity_id(n), incoming[n], outgoing[n]) for n in ranked]


def recursive_functions(
    conn: sqlite3.Connection,
    repo_id: str,
    language: str,
    *,
    offset: int = 0,
    limit: int | None = None,
    scope_limit: int | None = None,
    ranking: list[tuple[str, str, str]] | None = None,
) -> list[dict[str, Any]]:
    """Functions that call themselves, or call one that calls them back: rows ``offset`` on."""
    found = (
        ranking
        if ranking is not None
        else recursion_ranking(load_call_scope(conn, repo_id, language, scope_limit))
    )
    page = _window(found, offset, limit)
    nodes = describe_nodes(conn, [n for f in page for n in f[:2]])
    rows = []
    for rank, (function, partner, kind) in enumerate(page, start=offset + 1):
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


def recursion_ranking(scope: CallScope) -> list[tuple[str, str, str]]:
    """Every recursive call pair in order: (function id, partner id, kind)."""
    found = [
        (source, target, "self_call" if source == target else "mutual_call")
        for source, target in scope.pairs
        if source == target or (target, source) in scope.pairs
    ]
    found.sort(key=lambda f: (*scope.functions[f[0]], scope.entity_id(f[1])))
    return [(scope.entity_id(s), scope.entity_id(t), kind) for s, t, kind in found]


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
    hubs = metric_type == "hub_functions"
    # the whole ranking once per generation (no pair ceiling); each page describes its rows
    ranking = GENERATION_ANSWERS.answer(
        ctx.conn,
        "call-graph:" + metric_type,
        {"language": language},
        repo_id,
        lambda: (hub_ranking if hubs else recursion_ranking)(
            load_call_scope(ctx.conn, repo_id, language, capped=False)
        ),
    )
    compute = hub_functions if hubs else recursive_functions
    window = compute(ctx.conn, repo_id, language, offset=offset, limit=limit + 1, ranking=ranking)
    functions, truncated = window[:limit], len(window) > limit
    data = {
        "metric_type": metric_type,
        "scope": {"repo_id": repo_id, "language": language, "limit": limit, "offset": offset},
        "functions": functions,
        "count": len(functions),
        "total": len(ranking),
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
