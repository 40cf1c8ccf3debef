"""
Repository catalog routes: list, languages, stats and coverage (local-backend.md §2.3).

Everything is answered from the index's ``repositories`` and ``files`` tables, so the
truth basis is ``content_index`` and the level ``derived``.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    int_param,
    limit_offset,
    page,
)
from eshu_mcp.query.local.api.platform.generation_answers import GENERATION_ANSWERS
from eshu_mcp.query.local.api.platform.grants import readable_repositories
from eshu_mcp.query.local.api.platform.work_trees import WORK_TREES
from eshu_mcp.query.local.api.repository.rows import catalog_row, language_family

CONTEXT = "platform_impact.context_overview"
CATALOG = "platform_impact.catalog"
MAX_OFFSET = 10_000
STATS_LIST_CAP = 50
STATS_DEADLINE = 2.0


def _placeholders(values: list) -> str:
    return ",".join("?" for _ in values)


@ROUTES.route("GET", "/repositories")
def list_repositories(ctx: ApiContext) -> Answer:
    """Every indexed repository the caller may read, sorted by name then id."""
    limit, offset = limit_offset(ctx.query, default=100, maximum=500)
    offset = min(offset, MAX_OFFSET)
    rows = readable_repositories(ctx.conn, ctx.principal)
    window, truncated = page(rows[offset : offset + limit + 1], limit)
    repositories = [catalog_row(row) for row in window]
    for item in repositories:
        present, _ = WORK_TREES.state(item["local_path"] or "")
        if not present:  # indexed once, its directory gone since: say so on its row
            item["missing"] = True
            item["missing_reason"] = (
                "the repository directory is gone; answers come from its last index"
                f" (`eshu-mcp index --forget {item['id']}` or `eshu-mcp index --prune`)"
            )
    reasons = []
    if truncated:
        reasons.append("repository_inventory_truncated")
    if any(item.get("missing") for item in repositories):
        reasons.append("repository_directory_missing")
    if any(item["group_source"] == "missing_evidence" for item in repositories):
        reasons.append("repository_group_evidence_missing")
    data = {
        "repositories": repositories,
        "count": len(repositories),
        "total": len(rows),
        "limit": limit,
        "offset": offset,
        "truncated": truncated,
        "result_limits": {
            "limit": limit,
            "offset": offset,
            "ordering": "deterministic",
            "repository_count": len(repositories),
            "truncated": truncated,
            "drilldown_basis": "repository_id",
            "drilldown_tool": "get_repository_stats",
            "context_path": "/api/v0/repositories",
        },
        "partial_reasons": reasons,
    }
    return Answer(
        data, ctx.truth(CONTEXT, reason="resolved from bounded repository content catalog")
    )


def _language_counts(conn: sqlite3.Connection, repo_id: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT language, COUNT(*) AS file_count FROM files"
        " WHERE repo_id = ? AND language IS NOT NULL AND language <> ''"
        " GROUP BY language ORDER BY file_count DESC, language",
        (repo_id,),
    ).fetchall()
    return [{"language": r["language"], "file_count": r["file_count"]} for r in rows]


@ROUTES.route("GET", "/repositories/by-language")
def repositories_by_language(ctx: ApiContext) -> Answer:
    """Repositories holding files of one language family, with per-language counts."""
    language = ctx.query.get("language", "").strip()
    if not language:
        raise ApiError(400, "language is required")
    languages = language_family(language)
    limit = int_param(ctx.query, "limit", 100)
    limit = 100 if limit < 0 else min(limit, 500)
    offset = min(max(int_param(ctx.query, "offset", 0), 0), MAX_OFFSET)
    marks = _placeholders(languages)
    grouped = ctx.conn.execute(
        f"SELECT repo_id, COUNT(*) AS file_count, MAX(indexed_at) AS last_indexed_at"
        f" FROM files WHERE language IN ({marks}) GROUP BY repo_id",
        languages,
    ).fetchall()
    by_repo = {row["repo_id"]: row for row in grouped}
    repos = [r for r in readable_repositories(ctx.conn, ctx.principal) if r["repo_id"] in by_repo]
    file_count = sum(by_repo[r["repo_id"]]["file_count"] for r in repos)
    last = max((by_repo[r["repo_id"]]["last_indexed_at"] or "" for r in repos), default="")
    items: list[dict[str, Any]] = []
    truncated = False
    if limit > 0:
        window, truncated = page(repos[offset : offset + limit + 1], limit)
        for repo in window:
            item = catalog_row(repo)
            item["file_count"] = by_repo[repo["repo_id"]]["file_count"]
            item["languages"] = _language_counts(ctx.conn, repo["repo_id"])
            item["last_indexed_at"] = by_repo[repo["repo_id"]]["last_indexed_at"] or ""
            items.append(item)
    data = {
        "language": language,
        "normalized_languages": languages,
        "repository_count": len(repos),
        "file_count": file_count,
        "last_indexed_at": last,
        "repositories": items,
        "limit": limit,
        "offset": offset,
        "truncated": truncated,
    }
    return Answer(data, ctx.truth(CATALOG, reason="resolved from indexed file languages"))


@ROUTES.route("GET", "/repositories/language-inventory")
def language_inventory(ctx: ApiContext) -> Answer:
    """Languages across the index with repository and file counts."""
    limit, offset = limit_offset(ctx.query, default=100, maximum=500)
    offset = min(offset, MAX_OFFSET)
    allowed = {r["repo_id"] for r in readable_repositories(ctx.conn, ctx.principal)}
    rows = ctx.conn.execute(
        "SELECT language, repo_id, COUNT(*) AS file_count, MAX(indexed_at) AS last_indexed_at"
        " FROM files WHERE language IS NOT NULL AND language <> ''"
        " GROUP BY language, repo_id"
    ).fetchall()
    totals: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["repo_id"] not in allowed:
            continue
        entry = totals.setdefault(
            row["language"],
            {"language": row["language"], "repository_count": 0, "file_count": 0},
        )
        entry["repository_count"] += 1
        entry["file_count"] += row["file_count"]
        entry["last_indexed_at"] = max(entry.get("last_indexed_at", ""), row["last_indexed_at"])
    ordered = sorted(totals.values(), key=lambda e: (-e["file_count"], e["language"]))
    window, truncated = page(ordered[offset : offset + limit + 1], limit)
    data = {
        "languages": window,
        "count": len(window),
        "total": len(ordered),
        "limit": limit,
        "offset": offset,
        "truncated": truncated,
    }
    return Answer(data, ctx.truth(CATALOG, reason="resolved from indexed file languages"))


def require_repository(ctx: ApiContext) -> sqlite3.Row:
    """The ``{repo_id}`` path selector, resolved (404 when it matches nothing)."""
    selector = ctx.path_args.get("repo_id", "").strip()
    if not selector:
        raise ApiError(400, "repo_id is required")
    repo = ctx.repository(selector, not_found_status=404)
    assert repo is not None
    return repo


def _content_last_indexed(conn: sqlite3.Connection, repo_id: str) -> str:
    row = conn.execute("SELECT MAX(indexed_at) FROM files WHERE repo_id = ?", (repo_id,)).fetchone()
    return row[0] or ""


def _file_and_entity_counts(conn: sqlite3.Connection, repo_id: str) -> tuple[int, int]:
    """How many files and entities the index holds for one repository."""
    files = conn.execute("SELECT COUNT(*) FROM files WHERE repo_id = ?", (repo_id,)).fetchone()
    entities = conn.execute(  # the storage table: the entities view joins two more
        "SELECT COUNT(*) FROM entity_rows r JOIN files f ON f.file_id = r.file_id"
        " WHERE f.repo_id = ?",
        (repo_id,),
    ).fetchone()
    return files[0], entities[0]


def _stats_counts(conn: sqlite3.Connection, repo_id: str) -> tuple:
    """A repository's file and entity counts, languages, entity types, last indexed time."""
    file_count, entity_count = _file_and_entity_counts(conn, repo_id)
    languages = [item["language"] for item in _language_counts(conn, repo_id)]
    types = [
        row[0]
        for row in conn.execute(
            "SELECT r.entity_type FROM entity_rows r JOIN files f ON f.file_id = r.file_id"
            " WHERE f.repo_id = ? GROUP BY r.entity_type ORDER BY COUNT(*) DESC, r.entity_type",
            (repo_id,),
        )
    ]
    return file_count, entity_count, languages, types, _content_last_indexed(conn, repo_id)


def keep_repository_stats(conn: sqlite3.Connection, repo_id: str) -> None:
    """Count a repository's stats for its active generation now (after a build commits),
    so the first ``get_repo_summary`` of the generation need not, within its 2 s deadline."""
    GENERATION_ANSWERS.answer(
        conn, "repository-stats", {}, repo_id, lambda: _stats_counts(conn, repo_id)
    )


@ROUTES.route("GET", "/repositories/{repo_id}/stats", deadline=STATS_DEADLINE)
def repository_stats(ctx: ApiContext) -> Answer:
    """File and entity counts, languages and entity types of one repository."""
    repo = require_repository(ctx)
    repo_id = repo["repo_id"]
    # the counts read the whole repository: once per generation, then from memory
    file_count, entity_count, languages, types, last_indexed = GENERATION_ANSWERS.answer(
        ctx.conn, "repository-stats", {}, repo_id, lambda: _stats_counts(ctx.conn, repo_id)
    )
    truncated = len(languages) > STATS_LIST_CAP or len(types) > STATS_LIST_CAP
    reasons = ["repository_stats_truncated"] if truncated else []
    coverage = {
        "source_backend": "content_store",
        "query_shape": "content_store_repository_coverage",
        "counts_available": True,
        "entity_types_available": True,
        "whole_graph_traversal": False,
        "partial_results": truncated,
        "truncated": truncated,
        "timeout": False,
        "timeout_budget": "2s",
        "missing_evidence": [],
        "file_count_source": "content_files",
        "entity_count_source": "content_entities",
        "languages_source": "content_files",
        "entity_types_source": "content_entities",
        "content_last_indexed_at": last_indexed,
    }
    data = {
        "repository": catalog_row(repo),
        "file_count": file_count,
        "languages": languages[:STATS_LIST_CAP],
        "entity_count": entity_count,
        "entity_types": types[:STATS_LIST_CAP],
        "coverage": coverage,
        "result_limits": {
            "limit": STATS_LIST_CAP,
            "ordering": "deterministic",
            "language_count": min(len(languages), STATS_LIST_CAP),
            "entity_type_count": min(len(types), STATS_LIST_CAP),
            "truncated": truncated,
            "drilldown_basis": "repository_id",
            "drilldown_tool": "get_repository_coverage",
            "context_path": f"/api/v0/repositories/{repo_id}/coverage",
        },
        "partial_reasons": reasons,
    }
    return Answer(
        data, ctx.truth(CONTEXT, reason="resolved from bounded repository content counts")
    )


@ROUTES.route("GET", "/repositories/{repo_id}/coverage")
def repository_coverage(ctx: ApiContext) -> Answer:
    """How complete the index is for one repository; graph and content share one store."""
    repo = require_repository(ctx)
    repo_id = repo["repo_id"]
    file_count, entity_count = _file_and_entity_counts(ctx.conn, repo_id)
    failed = ctx.conn.execute(
        "SELECT failure_class, failure_message FROM generations"
        " WHERE repo_id = ? AND status = 'failed' ORDER BY seq DESC LIMIT 1",
        (repo_id,),
    ).fetchone()
    active = repo["active_generation_id"]
    if not active:
        state = "content_unavailable"
    elif failed is not None:
        state = "content_partial"
    else:
        state = "complete"
    last_error = ""
    if failed is not None:
        last_error = ": ".join(x for x in (failed[0], failed[1]) if x)
    data = {
        "repo_id": repo_id,
        "file_count": file_count,
        "entity_count": entity_count,
        "languages": _language_counts(ctx.conn, repo_id),
        "graph_available": bool(active),
        "server_content_available": bool(active),
        "graph_gap_count": 0,
        "content_gap_count": 0,
        "completeness_state": state,
        "content_last_indexed_at": _content_last_indexed(ctx.conn, repo_id),
        "last_error": last_error,
        "summary": {
            "graph_file_count": file_count,
            "graph_entity_count": entity_count,
            "content_file_count": file_count,
            "content_entity_count": entity_count,
        },
    }
    return Answer(
        data,
        ctx.truth(CONTEXT, reason="graph and content come from the same embedded index"),
    )
