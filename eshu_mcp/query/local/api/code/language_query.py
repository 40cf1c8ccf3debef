"""
``POST /code/language-query``: entities (or files, directories, repositories) of one
language and entity type, served from the content index (real-partial: graph-only
properties of Eshu's answer are not modeled).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.common import (
    CONTENT_BACKEND,
    RequestFields,
    attach_sources,
    clamp_limit,
    content_entity,
    entity_label,
    fetch_entities,
    in_clause,
    language_values,
    like_pattern,
)
from eshu_mcp.query.local.api.code.scope import (
    repo_clause,
    scope_predicate,
    scope_repository,
)
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError

_ENTITY_ORDER = "e.repo_id, e.relative_path, e.start_line, e.entity_name"

LANGUAGE_QUERY_TYPES = (
    "repository",
    "directory",
    "file",
    "module",
    "function",
    "class",
    "struct",
    "enum",
    "union",
    "macro",
    "variable",
    "annotation",
    "protocol",
    "impl_block",
    "type_alias",
    "type_annotation",
    "typedef",
    "component",
    "terraform_module",
    "terragrunt_config",
    "terragrunt_dependency",
    "terragrunt_local",
    "terragrunt_input",
    "sql_table",
    "sql_view",
    "sql_function",
    "sql_trigger",
    "sql_index",
    "sql_migration",
    "sql_column",
)


def language_query(
    conn: sqlite3.Connection,
    *,
    language: str,
    entity_type: str,
    query: str,
    repo_id: str,
    limit: int,
) -> tuple[list[dict[str, Any]], bool]:
    """Entities (or files, directories, repositories) of one language and type."""
    languages = language_values(language)
    clause, params = in_clause("f.language", languages)
    repo_filter, repo_params = repo_clause("f.repo_id", repo_id)
    clause += " AND " + repo_filter
    params += repo_params
    if entity_type in ("file", "directory", "repository"):
        rows = conn.execute(
            "SELECT f.repo_id, f.relative_path, f.language, f.line_count,"
            " COALESCE(r.name, '') AS repo_name FROM files f"
            " LEFT JOIN repositories r ON r.repo_id = f.repo_id"
            f" WHERE {clause} ORDER BY f.repo_id, f.relative_path LIMIT 20000",
            params,
        ).fetchall()
        results = _container_rows(rows, entity_type, query)
        return results[:limit], len(results) > limit
    where, eparams = scope_predicate(repo_id, language)
    where += " AND e.entity_type = ?"
    eparams.append(entity_label(entity_type))
    if query:
        where += " AND e.entity_name LIKE ? ESCAPE '\\'"
        eparams.append(like_pattern(query))
    rows = fetch_entities(conn, where, eparams, _ENTITY_ORDER, limit + 1)
    attach_sources(conn, rows[:limit])
    return [content_entity(row) for row in rows[:limit]], len(rows) > limit


def _container_rows(rows: list[sqlite3.Row], entity_type: str, query: str) -> list[dict]:
    results: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    lowered = query.lower()
    for row in rows:
        if entity_type == "file":
            name = row["relative_path"]
        elif entity_type == "directory":
            name = row["relative_path"].rpartition("/")[0] or "."
        else:
            name = row["repo_name"]
        key = (row["repo_id"], name)
        if key in seen or (lowered and lowered not in name.lower()):
            continue
        seen.add(key)
        label = entity_type.capitalize()
        result = {
            "name": name,
            "labels": [label],
            "entity_type": label,
            "repo_id": row["repo_id"],
            "repo_name": row["repo_name"],
            "language": row["language"],
        }
        if entity_type == "file":
            result.update(file_path=name, relative_path=name, line_count=row["line_count"])
        elif entity_type == "directory":
            result.update(file_path=name, relative_path=name)
        results.append(result)
    return results


@ROUTES.route("POST", "/code/language-query")
def code_language_query(ctx: ApiContext) -> Answer:
    """MCP ``execute_language_query``: entities of one language and entity type."""
    fields = RequestFields.of(ctx)
    language = fields.string("language").strip().lower()
    entity_type = fields.string("entity_type").strip().lower()
    if not language:
        raise ApiError(400, "language is required")
    if not entity_type:
        raise ApiError(400, "entity_type is required")
    if entity_type not in LANGUAGE_QUERY_TYPES:
        raise ApiError(400, f'unsupported entity_type "{entity_type}"')
    query = fields.string("query").strip()
    limit = clamp_limit(fields.integer("limit", 50), default=50, maximum=200)
    repo_id = scope_repository(ctx, fields.string("repo_id"))
    results, truncated = language_query(
        ctx.conn,
        language=language,
        entity_type=entity_type,
        query=query,
        repo_id=repo_id,
        limit=limit,
    )
    data = {
        "language": language,
        "entity_type": entity_type,
        "query": query,
        "repo_id": repo_id,
        "results": results,
        "count": len(results),
        "limit": limit,
        "truncated": truncated,
        "source_backend": CONTENT_BACKEND,
        "partial_reasons": [
            "embedded backend answers from the content entity index; graph-only"
            " properties are not modeled"
        ],
    }
    truth = ctx.truth(
        "symbol_graph.language_entities",
        reason="resolved from the embedded content entity index by language and type",
    )
    return Answer(data, truth)
