"""
Code quality routes: ``/code/complexity`` and ``/code/quality/inspect``.

Cyclomatic complexity, function length and argument counts are entity columns written
by the indexer (McCabe per local-backend.md §3.6); the complexity route's
``incoming_count``/``outgoing_count`` are edge counts from the embedded graph.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.common import (
    ENTITY_FROM,
    RequestFields,
    clamp_limit,
    entity_by_id,
    entity_ref,
    fetch_entities,
)
from eshu_mcp.query.local.api.code.scope import (
    may_read,
    scope_predicate,
    scope_repository,
)
from eshu_mcp.query.local.api.graph.edges import name_candidates
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError
from eshu_mcp.query.reasons import NOT_MEASURED

QUALITY_CHECKS = ("complexity", "function_length", "argument_count", "refactoring_candidates")
DEFAULT_THRESHOLDS = {"min_complexity": 10, "min_lines": 20, "min_arguments": 5}
MAX_QUALITY_OFFSET = 10000
# Same-named functions read when a path narrows them (the path picks among these).
PATH_CANDIDATES = 500


def _complexity_row(row: dict[str, Any]) -> dict[str, Any]:
    ref = entity_ref(row)
    metadata = ref.pop("metadata", None)
    ref["complexity"] = row["cyclomatic_complexity"] or 0
    if metadata:
        ref["metadata"] = metadata
    return ref


def in_path(relative_path: str, path: str) -> bool:
    """Whether a file is ``path`` or lies under the folder ``path``."""
    return relative_path == path or relative_path.startswith(path + "/")


def most_complex(
    conn: sqlite3.Connection, repo_id: str, limit: int, path: str = ""
) -> tuple[list[dict[str, Any]], int]:
    """Functions with a complexity value, most complex first, and how many there are."""
    where, params = scope_predicate(repo_id, "")
    where += " AND e.entity_type = 'Function' AND COALESCE(e.cyclomatic_complexity, 0) > 0"
    if path:
        where += " AND (e.relative_path = ? OR substr(e.relative_path, 1, ?) = ?)"
        params = [*params, path, len(path) + 1, path + "/"]
    rows = fetch_entities(
        conn, where, params, "e.cyclomatic_complexity DESC, e.entity_name, e.entity_id", limit + 1
    )
    total = len(rows)
    if total > limit:  # the headline of a top-N reads "10 of 31 most complex functions"
        sql = f"SELECT COUNT(*) FROM {ENTITY_FROM} WHERE {where}"
        total = conn.execute(sql, params).fetchone()[0]
    return [_complexity_row(r) for r in rows[:limit]], total


def unmeasured_functions(
    conn: sqlite3.Connection, repo_id: str, path: str = ""
) -> list[tuple[str, int]]:
    """(language, function count) of the functions in scope the indexer measured no
    complexity for (languages without a complexity table), most first."""
    where, params = scope_predicate(repo_id, "")
    where += " AND e.entity_type = 'Function' AND e.cyclomatic_complexity IS NULL"
    if path:
        where += " AND (e.relative_path = ? OR substr(e.relative_path, 1, ?) = ?)"
        params = [*params, path, len(path) + 1, path + "/"]
    rows = conn.execute(
        "SELECT COALESCE(e.language, '') AS language, COUNT(*) AS n FROM entities e"
        f" WHERE {where} GROUP BY 1 ORDER BY 2 DESC, 1",
        params,
    )
    return [(row["language"] or "unknown", int(row["n"])) for row in rows]


def unmeasured_reason(unmeasured: list[tuple[str, int]]) -> str:
    """``complexity is not measured for typescript (533 functions), ...: not ranked``."""
    counts = ", ".join(
        f"{language} ({count} function{'s' if count != 1 else ''})"
        for language, count in unmeasured
    )
    return f"{NOT_MEASURED} {counts}: they are not ranked"


def edge_counts(conn: sqlite3.Connection, entity_id: str) -> tuple[int, int]:
    """(outgoing, incoming) relationship counts of a node."""
    outgoing = conn.execute("SELECT COUNT(*) FROM edges WHERE source_id = ?", (entity_id,))
    incoming = conn.execute("SELECT COUNT(*) FROM edges WHERE target_id = ?", (entity_id,))
    return int(outgoing.fetchone()[0]), int(incoming.fetchone()[0])


def _single(conn: sqlite3.Connection, row: dict[str, Any]) -> dict[str, Any]:
    data = _complexity_row(row)
    metadata = data.pop("metadata", None)
    outgoing, incoming = edge_counts(conn, row["entity_id"])
    data.update(
        outgoing_count=outgoing, incoming_count=incoming, total_relationships=outgoing + incoming
    )
    if metadata:
        data["metadata"] = metadata
    return data


@ROUTES.route("POST", "/code/complexity")
def code_complexity(ctx: ApiContext) -> Answer:
    """One function's complexity (by id or name), or the most complex functions."""
    fields = RequestFields.of(ctx)
    entity_id = fields.string("entity_id").strip()
    function_name = fields.string("function_name").strip()
    repo_id = scope_repository(ctx, fields.string("repo_id"))
    truth = ctx.truth(
        "code_quality.complexity", basis="hybrid", reason="resolved from indexed complexity"
    )
    if entity_id:
        row = entity_by_id(ctx.conn, entity_id)
        if row is None or not may_read(ctx, row["repo_id"]):
            raise ApiError(404, "entity not found")
        return Answer(_single(ctx.conn, row), _measured_truth(ctx, row, truth))
    path = fields.string("path").strip().strip("/")
    if function_name:
        # A bare or qualified name (Clock.callLater), an overload folded into its body.
        rows = name_candidates(
            ctx.conn,
            function_name,
            repo_id=repo_id,
            language="",
            labels=["Function"],
            limit=PATH_CANDIDATES if path else 2,
        )
        if path:
            rows = [row for row in rows if in_path(row["relative_path"], path)]
        if not rows and path:
            missing = f'no function named "{function_name}" in "{path}": entity not found'
            raise ApiError(404, missing)
        if not rows:
            raise ApiError(404, "entity not found")
        if len(rows) > 1:
            raise _ambiguous(function_name, repo_id, rows, truth)
        return Answer(_single(ctx.conn, rows[0]), _measured_truth(ctx, rows[0], truth))
    limit = clamp_limit(fields.integer("limit", 10), default=10, maximum=100)
    results, total = most_complex(ctx.conn, repo_id, limit, path)
    unmeasured = unmeasured_functions(ctx.conn, repo_id, path)
    if unmeasured:
        truth = ctx.truth(
            "code_quality.complexity",
            basis="hybrid",
            reason=f"resolved from indexed complexity; {unmeasured_reason(unmeasured)}",
        )
    data = {
        "repo_id": repo_id,
        **({"path": path} if path else {}),
        "results": results,
        "count": len(results),
        "total": total,
        "limit": limit,
        "truncated": total > len(results),
        "result_key": "entity_id",
    }
    return Answer(data, truth)


def _measured_truth(ctx: ApiContext, row: dict[str, Any], truth: dict[str, Any]):
    """The truth of one function's answer: its reason says when complexity was not
    measured (the answer's complexity is then 0, which no measured function has)."""
    if row["cyclomatic_complexity"] is not None:
        return truth
    language = row["language"] or "its language"
    return ctx.truth(
        "code_quality.complexity",
        basis="hybrid",
        reason=f"{NOT_MEASURED} {language} functions",
    )


def _ambiguous(
    name: str, repo_id: str, rows: list[dict[str, Any]], truth: dict[str, Any]
) -> ApiError:
    where = f'in repository "{repo_id}"' if repo_id else "across the indexed repositories"
    named = ", ".join(
        f"{r['class_context'] + '.' if r.get('class_context') else ''}{r['entity_name']}"
        f" ({r['relative_path']}:{r['start_line']})"
        for r in rows[:2]
    )
    more = ", ..." if len(rows) > 2 else ""
    message = (
        f'function_name "{name}" matched multiple entities {where}: {named}{more};'
        " pass entity_id, or a qualified name (Class.method), to pick one"
    )
    details = {
        "status": "ambiguous",
        "function_name": name,
        "repo_id": repo_id,
        "candidates": [_complexity_row(r) for r in rows[:2]],
        "truncated": len(rows) > 2,
    }
    plain = {"error": "Conflict", "detail": message, **details}
    return ApiError(
        409,
        message,
        code="ambiguous",
        capability="code_quality.complexity",
        details=details,
        truth=truth,
        plain=plain,
    )


def _thresholds(fields: RequestFields) -> dict[str, int]:
    nested = fields.raw("thresholds")
    thresholds = dict(DEFAULT_THRESHOLDS)
    if isinstance(nested, dict):
        inner = RequestFields(nested)
        for key in thresholds:
            thresholds[key] = inner.integer(key, thresholds[key])
    elif nested is not None:
        raise ApiError(
            400,
            "invalid JSON: json: cannot unmarshal into Go struct field .thresholds of type object",
        )
    for key in thresholds:
        if fields.has(key):
            thresholds[key] = fields.integer(key)
    return thresholds


def quality_findings(
    conn: sqlite3.Connection,
    *,
    check: str,
    thresholds: dict[str, int],
    repo_id: str,
    language: str,
    entity_id: str,
    function_name: str,
    limit: int,
    offset: int,
) -> tuple[list[dict[str, Any]], bool]:
    """Functions over the thresholds of one check, worst first, paged."""
    where, params = scope_predicate(repo_id, language)
    where += " AND e.entity_type = 'Function'"
    if entity_id:
        where += " AND e.entity_id = ?"
        params.append(entity_id)
    if function_name:
        where += " AND e.entity_name = ?"
        params.append(function_name)
    cc, lines, args = (
        "COALESCE(e.cyclomatic_complexity, 0)",
        "COALESCE(e.line_span, 0)",
        ("COALESCE(e.arg_count, 0)"),
    )
    tests = {
        "complexity": (f"{cc} >= ?", [thresholds["min_complexity"]], f"{cc} DESC"),
        "function_length": (f"{lines} >= ?", [thresholds["min_lines"]], f"{lines} DESC"),
        "argument_count": (f"{args} >= ?", [thresholds["min_arguments"]], f"{args} DESC"),
    }
    if check == "refactoring_candidates":
        predicate = " OR ".join(tests[k][0] for k in tests)
        values = [v for k in tests for v in tests[k][1]]
        order = f"({cc} >= ?) + ({lines} >= ?) + ({args} >= ?) DESC, {cc} DESC, {lines} DESC"
        order_values = values
    else:
        predicate, values, order = tests[check]
        order_values = []
    sql_order = order + ", e.entity_name, e.entity_id"
    sql = (
        "SELECT e.*, COALESCE(r.name, '') AS repo_name FROM entities e"
        " LEFT JOIN repositories r ON r.repo_id = e.repo_id"
        f" WHERE {where} AND ({predicate}) ORDER BY {sql_order} LIMIT ? OFFSET ?"
    )
    rows = [
        dict(r) for r in conn.execute(sql, [*params, *values, *order_values, limit + 1, offset])
    ]
    results = []
    for row in rows[:limit]:
        item = _complexity_row(row)
        metadata = item.pop("metadata", None)
        item["line_count"] = row["line_span"] or 0
        item["argument_count"] = row["arg_count"] or 0
        reasons = []
        if item["complexity"] >= thresholds["min_complexity"]:
            reasons.append("high_complexity")
        if item["line_count"] >= thresholds["min_lines"]:
            reasons.append("long_function")
        if item["argument_count"] >= thresholds["min_arguments"]:
            reasons.append("many_arguments")
        item["reasons"] = reasons
        if metadata:
            item["metadata"] = metadata
        results.append(item)
    return results, len(rows) > limit


@ROUTES.route("POST", "/code/quality/inspect")
def inspect_code_quality(ctx: ApiContext) -> Answer:
    """MCP ``inspect_code_quality``: complexity, length, argument or refactoring findings."""
    fields = RequestFields.of(ctx)
    check = fields.string("check").strip() or "refactoring_candidates"
    if check not in QUALITY_CHECKS:
        raise ApiError(400, "unsupported code quality check")
    thresholds = _thresholds(fields)
    limit = clamp_limit(fields.integer("limit", 10), default=10, maximum=100)
    offset = max(fields.integer("offset"), 0)
    if offset > MAX_QUALITY_OFFSET:
        raise ApiError(400, f"offset exceeds maximum of {MAX_QUALITY_OFFSET}")
    language = fields.string("language").strip()
    repo_id = scope_repository(ctx, fields.string("repo_id"))
    results, truncated = quality_findings(
        ctx.conn,
        check=check,
        thresholds=thresholds,
        repo_id=repo_id,
        language=language,
        entity_id=fields.string("entity_id").strip(),
        function_name=fields.string("function_name").strip(),
        limit=limit,
        offset=offset,
    )
    data = {
        "check": check,
        "language": language,
        "limit": limit,
        "offset": offset,
        "recommended_next_calls": [
            {"tool": "get_entity_content", "args": {"entity_id": r["entity_id"]}}
            for r in results[:3]
        ],
        "repo_id": repo_id,
        "results": results,
        "thresholds": thresholds,
        "truncated": truncated,
    }
    capability = "code_quality.complexity" if check == "complexity" else "code_quality.refactoring"
    truth = ctx.truth(capability, reason="resolved from indexed function metrics")
    return Answer(data, truth)
