"""
``POST /code/dead-code/cross-repo``: a producer repository's dead-code candidates checked
against consumer repositories indexed in the same database.

The embedded graph resolves calls inside one repository, so consumer evidence here is
name-level: an import of the symbol's name, or a call site naming it that did not
resolve inside the consumer. A candidate with such evidence is ``live_by_consumer``;
repositories that are not indexed cannot be seen, which the answer says.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.common import (
    RequestFields,
    clamp_limit,
    in_clause,
)
from eshu_mcp.query.local.api.code.scope import (
    may_read,
    scope_repository,
)
from eshu_mcp.query.local.api.deadcode.roots import analysis_block
from eshu_mcp.query.local.api.deadcode.routes import SUPPRESSED_CAP
from eshu_mcp.query.local.api.deadcode.scan import Candidate, hydrate, scan
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError

EVIDENCE_PER_ROW = 25
HANDLE_GROUPS = 5


def consumer_evidence(
    conn: sqlite3.Connection, names: list[str], consumers: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """Name-level evidence per symbol name from consumer repositories (bounded)."""
    evidence: dict[str, list[dict[str, Any]]] = {}
    if not names or not consumers:
        return evidence
    repo_clause, repo_params = in_clause("i.repo_id", consumers)
    for start in range(0, len(names), 200):
        chunk = names[start : start + 200]
        name_clause, name_params = in_clause("i.imported_name", chunk)
        for row in conn.execute(
            "SELECT i.repo_id, i.imported_name AS name, i.module, i.line_number,"
            f" f.relative_path FROM imports i JOIN files f ON f.file_id = i.file_id"
            f" WHERE {repo_clause} AND {name_clause} AND i.is_external = 1"
            " ORDER BY i.repo_id, f.relative_path, i.line_number LIMIT 5000",
            [*repo_params, *name_params],
        ):
            _add(evidence, row, "IMPORTS", "import", f"imports {row['name']} from {row['module']}")
        call_repo, call_params = in_clause("c.repo_id", consumers)
        call_names, call_name_params = in_clause("c.callee_name", chunk)
        for row in conn.execute(
            "SELECT c.repo_id, c.callee_name AS name, c.full_name, c.line_number,"
            " f.relative_path FROM call_sites c JOIN files f ON f.file_id = c.file_id"
            " JOIN unresolved_calls u ON u.call_id = c.call_id"
            f" WHERE {call_repo} AND {call_names} AND u.reason = 'external'"
            " ORDER BY c.repo_id, f.relative_path, c.line_number LIMIT 5000",
            [*call_params, *call_name_params],
        ):
            _add(evidence, row, "CALLS", "call_site", f"calls {row['full_name'] or row['name']}")
    return evidence


def _add(evidence: dict, row: sqlite3.Row, kind: str, family: str, citation: str) -> None:
    items = evidence.setdefault(row["name"], [])
    if len(items) < EVIDENCE_PER_ROW:
        items.append(
            {
                "consumer_repo_id": row["repo_id"],
                "relationship_type": kind,
                "evidence_family": family,
                "confidence_label": "name_match",
                "relative_path": row["relative_path"],
                "line_number": row["line_number"],
                "citation": citation,
            }
        )


def _handles(items: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int, bool]:
    groups: dict[tuple[str, str, str], int] = {}
    for item in items:
        key = (item["consumer_repo_id"], item["relationship_type"], item["evidence_family"])
        groups[key] = groups.get(key, 0) + 1
    ordered = sorted(groups.items(), key=lambda kv: (-kv[1], kv[0]))
    rows = [
        {
            "consumer_repo_id": repo,
            "relationship_type": kind,
            "evidence_family": family,
            "confidence_label": "name_match",
            "item_count": count,
        }
        for (repo, kind, family), count in ordered[:HANDLE_GROUPS]
    ]
    return rows, len(ordered), len(ordered) > HANDLE_GROUPS


def _row(candidate: Candidate, items: list[dict[str, Any]], detail: str) -> dict[str, Any]:
    row = candidate.render()
    row["consumer_evidence_source"] = "entity"
    row["consumer_evidence_count"] = len(items)
    if detail == "handles":
        groups, group_count, cut = _handles(items)
        row["consumer_evidence"] = groups
        row["consumer_evidence_group_count"] = group_count
        row["consumer_evidence_handles_truncated"] = cut
    else:
        row["consumer_evidence"] = items
    return row


@ROUTES.route("POST", "/code/dead-code/cross-repo")
def cross_repo_dead_code(ctx: ApiContext) -> Answer:
    """MCP ``find_cross_repo_dead_code``: producer candidates against indexed consumers."""
    fields = RequestFields.of(ctx)
    selector = fields.string("repo_id")
    if not selector.strip():
        raise ApiError(400, "repo_id is required")
    detail = fields.string("evidence_detail").strip() or "full"
    if detail not in ("full", "handles"):
        raise ApiError(400, "evidence_detail must be full or handles")
    language = fields.string("language").strip().lower()
    limit = clamp_limit(fields.integer("limit", 100), default=100, maximum=500)
    excluded = [d for d in fields.strings("exclude_decorated_with") if d.strip()]
    repo_id = scope_repository(ctx, selector)
    consumers = [scope_repository(ctx, s) for s in fields.strings("consumer_repo_ids") if s.strip()]
    if not consumers:
        consumers = [
            r
            for (r,) in ctx.conn.execute(
                "SELECT repo_id FROM repositories WHERE repo_id <> ? ORDER BY repo_id", (repo_id,)
            )
        ]
    consumers = [c for c in consumers if c != repo_id and may_read(ctx, c)]
    result = scan(ctx.conn, repo=repo_id, language=language, excluded_decorators=excluded)
    active, suppressed = result.active, result.suppressed
    shown = hydrate(ctx.conn, active[:limit])
    evidence = consumer_evidence(ctx.conn, sorted({c.row["entity_name"] for c in shown}), consumers)
    buckets: dict[str, list[dict[str, Any]]] = {
        "dead": [],
        "live_by_consumer": [],
        "unknown": [],
        "suppressed": [],
    }
    for candidate in shown:
        items = evidence.get(candidate.row["entity_name"], [])
        if items:
            bucket = "live_by_consumer"
        elif candidate.classification == "unused":
            bucket = "dead"
        else:
            bucket = "unknown"
        buckets[bucket].append(_row(candidate, items, detail))
    suppressed_limit = min(limit, SUPPRESSED_CAP)
    buckets["suppressed"] = [c.render() for c in hydrate(ctx.conn, suppressed[:suppressed_limit])]
    data = {
        "repo_id": repo_id,
        "language": language,
        "limit": limit,
        "consumer_repo_ids": consumers,
        "query_shape": "bounded_cross_repo_dead_code",
        "truncated": len(active) > limit or result.truncated,
        "display_truncated": len(active) > limit,
        "candidate_scan_truncated": result.truncated,
        "suppressed_truncated": len(suppressed) > suppressed_limit,
        "suppressed_limit": suppressed_limit,
        "candidate_scan_limit": result.limit,
        "candidate_scan_limit_per_label": result.limit,
        "candidate_scan_pages": result.pages,
        "candidate_scan_rows": result.rows,
        "candidate_buckets": buckets,
        "boundary_consumer_evidence": [],
        "boundary_consumer_evidence_count": 0,
        "boundary_consumer_evidence_truncated": False,
        "evidence_detail": detail,
        "bucket_counts": {name: len(rows) for name, rows in buckets.items()},
        "analysis": {
            **analysis_block({c.row["language"] or "" for c in shown} - {""}, {}, bool(excluded)),
            "consumer_evidence_mode": "name_match_within_embedded_index",
            "partial_reasons": [
                "only repositories indexed in this embedded database are consulted as"
                " consumers; a repository that is not indexed cannot keep a symbol live",
            ],
        },
    }
    truth = ctx.truth(
        "code_quality.dead_code",
        basis="hybrid",
        reason="resolved from the embedded index: consumers limited to indexed repositories",
    )
    return Answer(data, truth)
