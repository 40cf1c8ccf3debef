"""
Symbol and code search: ``/code/search``, ``/code/symbols/search``, ``/code/language-query``.

All three read the ``entities`` table (source text through a scan of the file bodies,
see ``source_scan``); none of them touches the call graph.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.common import (
    CONTENT_BACKEND,
    ENTITY_COLUMNS,
    ENTITY_FROM,
    RequestFields,
    attach_sources,
    check_offset,
    clamp_limit,
    content_entity,
    entity_label,
    fetch_entities,
    in_clause,
    like_pattern,
    ranked_entities,
)
from eshu_mcp.query.local.api.code.names import names_containing
from eshu_mcp.query.local.api.code.near import nearest_names
from eshu_mcp.query.local.api.code.qualified import (
    qualified_matches,
    qualified_parts,
    without_call_parens,
)
from eshu_mcp.query.local.api.code.scope import (
    repo_clause,
    scope_predicate,
    scope_repository,
)
from eshu_mcp.query.local.api.code.text_scan import entities_containing
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError

_ENTITY_ORDER = "e.repo_id, e.relative_path, e.start_line, e.entity_name"
_DEFINITION_ORDER = (
    "CASE WHEN e.entity_type IN ('Class', 'Interface', 'Struct', 'Trait', 'Enum', 'Record')"
    " THEN 0 WHEN e.entity_type = 'Function' THEN 1 ELSE 2 END,"
    " instr(lower(e.relative_path), 'test') > 0, " + _ENTITY_ORDER
)
"""Whole-name matches: types, then functions, then the rest; code before tests."""


def search_code(
    conn: sqlite3.Connection,
    *,
    query: str,
    repo_id: str,
    language: str,
    limit: int,
    exact: bool,
    variables_only: bool = False,
) -> tuple[list[dict[str, Any]], bool]:
    """
    Entities whose name contains (or equals) ``query``, case-sensitively.

    Repository-scoped searches that find no name match fall back, as Eshu's content
    search does, to case-insensitive name matches then entity-source matches.
    Returns the rows (at most ``limit``) and whether more existed.
    """
    where, params = scope_predicate(repo_id, language)
    if variables_only:
        where += " AND e.entity_type = 'Variable'"
    probe = limit + 1
    # Whole-name matches lead: searching "Deferred" answers the class before the hundreds
    # of names that merely contain the word.
    named = fetch_entities(
        conn, f"{where} AND e.entity_name = ?", [*params, query], _DEFINITION_ORDER, probe
    )
    if exact:
        rows = named
    else:
        probe += len(named)  # the substring scan finds the whole-name matches again
        hits = names_containing(conn, query)
        if hits is not None:
            rows = fetch_entities(
                conn,
                f"{where} AND e.rid IN (SELECT value FROM json_each(?))",
                [*params, json.dumps(hits)],
                _ENTITY_ORDER,
                probe,
            )
        else:
            # Scan the name index (covering: name + rowid) rather than the wide entity rows.
            rows = fetch_entities(
                conn,
                f"{where} AND e.rid IN (SELECT rid FROM entity_rows INDEXED BY entity_rows_name"
                " WHERE instr(entity_name, ?) > 0)",
                [*params, query],
                _ENTITY_ORDER,
                probe,
            )
        if named:
            leading = {row["entity_id"] for row in named}
            rows = named + [row for row in rows if row["entity_id"] not in leading]
            probe -= len(named)
            rows = rows[:probe]
    if not rows and repo_id:
        rows = _content_fallback(conn, repo_id, where, params, query, exact, probe)
    kept = rows[:limit]
    attach_sources(conn, kept)
    return [content_entity(row) for row in kept], len(rows) > limit


def _content_fallback(
    conn: sqlite3.Connection,
    repo_id: str,
    where: str,
    params: list[Any],
    query: str,
    exact: bool,
    probe: int,
) -> list[dict[str, Any]]:
    by_name = fetch_entities(
        conn,
        f"{where} AND e.entity_name LIKE ? ESCAPE '\\'",
        [*params, like_pattern(query)],
        _ENTITY_ORDER,
        probe,
    )
    seen = {row["entity_id"] for row in by_name}
    rows = list(by_name)
    if len(rows) < probe:
        rows.extend(
            row
            for row in _source_matches(conn, repo_id, where, params, query, probe)
            if row["entity_id"] not in seen
        )
    if exact:
        rows = [row for row in rows if row["entity_name"] == query]
    return rows[:probe]


def _source_matches(
    conn: sqlite3.Connection,
    repo_id: str,
    where: str,
    params: list[Any],
    query: str,
    probe: int,
) -> list[dict[str, Any]]:
    """The first ``probe`` entities in scope whose source contains ``query`` (LIKE case rule)."""
    file_where, file_params = repo_clause("f.repo_id", repo_id)
    found = entities_containing(
        conn,
        query,
        file_where=file_where,
        file_params=file_params,
        entity_sql=(
            f"SELECT {ENTITY_COLUMNS}, e.start_byte, e.end_byte FROM {ENTITY_FROM}"
            f" WHERE e.file_id = ? AND {where} ORDER BY e.start_line, e.entity_name, e.rid"
        ),
        entity_params=params,
    )
    rows = []
    for row, _ in itertools.islice(found, probe):
        item = dict(row)
        del item["start_byte"], item["end_byte"]
        rows.append(item)
    return rows


@ROUTES.route("POST", "/code/search")
def code_search(ctx: ApiContext) -> Answer:
    """MCP ``find_code``: entity-name search over the content index."""
    fields = RequestFields.of(ctx)
    query = fields.string("query")
    if not query.strip():
        raise ApiError(400, "query is required")
    repo_selector = fields.string("repo_id")
    exact = fields.boolean("exact")
    limit = clamp_limit(fields.integer("limit", 50), default=50, maximum=200)
    search_type = fields.string("search_type").strip().lower()
    if not repo_selector.strip() and not exact and len(query) < 3:
        raise ApiError(400, "global substring code search requires at least 3 Unicode characters")
    repo_id = scope_repository(ctx, repo_selector)
    variables = search_type == "variable"
    results, truncated = search_code(
        ctx.conn,
        query=query,
        repo_id=repo_id,
        language=fields.string("language"),
        limit=limit,
        exact=exact,
        variables_only=variables,
    )
    if variables:
        capability = "code_search.variable_lookup"
    elif exact:
        capability = "code_search.exact_symbol"
    else:
        capability = "code_search.fuzzy_symbol"
    data = {
        "source": "content",
        "source_backend": CONTENT_BACKEND,
        "query": query,
        "repo_id": repo_id,
        "results": results,
        "matches": results,
        "count": len(results),
        "limit": limit,
        "truncated": truncated,
    }
    truth = ctx.truth(capability, reason="resolved from the embedded content entity index")
    return Answer(data, truth)


def _named(conn: sqlite3.Connection, scope: str, params: list[Any], name: str) -> bool:
    """Whether an entity in scope is named exactly ``name`` (on any page)."""
    return bool(fetch_entities(conn, f"{scope} AND e.entity_name = ?", [*params, name], "e.rid", 1))


def find_symbols(
    conn: sqlite3.Connection,
    *,
    symbol: str,
    match_mode: str,
    repo_id: str,
    language: str,
    labels: list[str],
    limit: int,
    offset: int,
) -> tuple[list[dict[str, Any]], bool, int]:
    """Symbol definitions by exact name or case-insensitive substring, paged; and how many
    match in all (counted up to :data:`TOTAL_CEILING` when there is more than this page)."""
    where, params = scope_predicate(repo_id, language)
    if labels:
        clause, values = in_clause("e.entity_type", labels)
        where += " AND " + clause
        params += values
    scope, scope_params = where, list(params)
    if match_mode == "exact":
        bare = without_call_parens(symbol)
        if bare and not _named(conn, scope, scope_params, symbol):
            symbol = bare  # "callLater()" names callLater
        where += " AND e.entity_name = ?"
        params.append(symbol)
    else:
        where += " AND e.entity_name LIKE ? ESCAPE '\\'"
        params.append(like_pattern(symbol))
    rows = fetch_entities(conn, where, params, _ENTITY_ORDER, limit + 1, offset)
    parts = qualified_parts(symbol) if match_mode == "exact" else []
    if not rows and parts and not _named(conn, scope, scope_params, symbol):
        # No entity is named ``app.listen``: read it as the definitions that path names.
        clause, values = in_clause(
            "e.entity_id", qualified_matches(conn, parts, scope, scope_params)
        )
        where, params = f"{scope} AND {clause}", [*scope_params, *values]
        rows = fetch_entities(conn, where, params, _ENTITY_ORDER, limit + 1, offset)
    results = ranked_entities(
        conn, rows[:limit], offset, classification="definition", match_kind=match_mode
    )
    for result, row in zip(results, rows, strict=False):
        result["definition_kind"] = row["entity_type"]
    truncated = len(rows) > limit
    total = offset + len(results)
    if truncated or offset:
        total = conn.execute(
            f"SELECT COUNT(*) FROM (SELECT 1 FROM {ENTITY_FROM} WHERE {where} LIMIT ?)",
            [*params, TOTAL_CEILING],
        ).fetchone()[0]
    return results, truncated, total


TOTAL_CEILING = 10_000
"""Matches counted at most, for an answer's total."""


@ROUTES.route("POST", "/code/symbols/search")
def symbols_search(ctx: ApiContext) -> Answer:
    """MCP ``find_symbol``: bounded symbol definition lookup."""
    fields = RequestFields.of(ctx)
    symbol = fields.string("symbol").strip() or fields.string("query").strip()
    if not symbol:
        raise ApiError(400, "symbol is required")
    offset = check_offset(fields.integer("offset"))
    match_mode = fields.string("match_mode").strip().lower() or "exact"
    if match_mode not in ("exact", "fuzzy"):
        raise ApiError(400, "match_mode must be exact or fuzzy")
    limit = clamp_limit(fields.integer("limit", 25), default=25, maximum=200)
    labels: list[str] = []
    for name in [fields.string("entity_type"), *fields.strings("entity_types")]:
        label = entity_label(name)
        if label and label not in labels:
            labels.append(label)
    language = fields.string("language")
    repo_id = scope_repository(ctx, fields.string("repo_id"))
    results, truncated, total = find_symbols(
        ctx.conn,
        symbol=symbol,
        match_mode=match_mode,
        repo_id=repo_id,
        language=language,
        labels=labels,
        limit=limit,
        offset=offset,
    )
    if truncated:
        reason = "more results are available; use offset to page"
    elif total > 1:
        reason = "multiple definitions matched the symbol"
    else:
        reason = ""
    data = {
        "symbol": symbol,
        "query": symbol,
        "match_mode": match_mode,
        "repo_id": repo_id,
        "language": language,
        "entity_types": labels,
        "limit": limit,
        "offset": offset,
        "results": results,
        "matches": results,
        "count": len(results),
        "total": total,
        "truncated": truncated,
        "source_backend": CONTENT_BACKEND,
        "ambiguity": {"ambiguous": total > 1, "reason": reason},
    }
    bare = without_call_parens(symbol) or symbol
    if not results and not offset and not qualified_parts(bare):
        near = nearest_names(ctx.conn, bare, repo_id)
        if near:
            data["did_you_mean"] = near
    truth = ctx.truth(
        "code_search.symbol_lookup", reason="resolved from bounded symbol definition lookup"
    )
    return Answer(data, truth)
