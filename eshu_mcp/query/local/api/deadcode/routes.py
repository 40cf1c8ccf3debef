"""
Dead-code routes: ``/code/dead-code``, ``/code/dead-code/investigate`` and
``/code/dead-code/cross-repo``.

Every candidate in scope (Functions, Classes, Structs, Interfaces, Traits, SqlFunctions) is
scanned by :mod:`.scan`; roots are set aside by the policy in
:mod:`.roots`, and what is left is classified by its incoming edges in the
embedded call graph. Answers page the active candidates exactly by ``offset`` (scan order:
repository, path, line) and give the ``next_offset``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from eshu_mcp.query.local.api.code.common import (
    RequestFields,
    check_offset,
    clamp_limit,
    language_values,
)
from eshu_mcp.query.local.api.code.scope import scope_repository
from eshu_mcp.query.local.api.deadcode.roots import (
    CANDIDATE_LABELS,
    EXACTNESS_BLOCKERS,
    LANGUAGE_MATURITY,
    analysis_block,
    packet_bucket,
)
from eshu_mcp.query.local.api.deadcode.scan import (
    Candidate,
    Scan,
    hydrate,
    scan,
)
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError

PAGE_BYTES = 96 * 1024
"""Rendered candidate rows one page carries at most; a page cut short keeps exact paging
through ``next_offset``."""
SUPPRESSED_CAP = 50
MAX_INVESTIGATE_OFFSET = 2000
MAX_DEAD_CODE_OFFSET = 1_000_000


def _observed_blockers(candidates: list[Candidate]) -> dict[str, list[str]]:
    observed: dict[str, list[str]] = {}
    for candidate in candidates:
        for blocker in candidate.metadata.get("exactness_blockers") or []:
            bucket = observed.setdefault(candidate.row["language"] or "", [])
            if blocker not in bucket:
                bucket.append(str(blocker))
    return observed


def _request(ctx: ApiContext) -> tuple[RequestFields, str, str, list[str]]:
    fields = RequestFields.of(ctx)
    language = fields.string("language").strip().lower()
    if language in ("c#", "csharp"):
        language = "c_sharp"
    excluded = [d for d in fields.strings("exclude_decorated_with") if d.strip()]
    return fields, language, fields.string("repo_id"), excluded


def scan_fields(result: Scan) -> dict[str, Any]:
    """How much of the scope a scan read, in Eshu's ``candidate_scan_*`` numbers."""
    return {
        "candidate_scan_truncated": result.truncated,
        "candidate_scan_limit": result.limit,
        "candidate_scan_limit_per_label": result.limit,
        "candidate_scan_pages": result.pages,
        "candidate_scan_rows": result.rows,
        "candidate_scan_files": result.files_scanned,
        "scope_files": result.scope_files,
        "suppressed_candidates": result.suppressed_total,
        "suppressed_by_name_use": result.excluded_by_name,
    }


def page_of(active: list[Candidate], offset: int, limit: int) -> tuple[list[Candidate], bool]:
    """One page of the active candidates and whether any follow it."""
    return active[offset : offset + limit], len(active) > offset + limit


def fitted(rows: list[dict[str, Any]]) -> int:
    """How many leading rendered rows fit :data:`PAGE_BYTES` (always at least one), so any
    ``limit`` answers within the MCP response budget, which counts the payload twice."""
    total = 0
    for count, row in enumerate(rows):
        total += len(json.dumps(row, separators=(",", ":")))
        if total > PAGE_BYTES and count:
            return count
    return len(rows)


@ROUTES.route("POST", "/code/dead-code")
def dead_code(ctx: ApiContext) -> Answer:
    """MCP ``find_dead_code``: unreferenced candidates of one kind or all kinds, paged."""
    fields, language, selector, excluded = _request(ctx)
    candidate_kind = fields.string("candidate_kind").strip()
    if candidate_kind and candidate_kind not in CANDIDATE_LABELS:
        raise ApiError(400, "unsupported candidate_kind")
    limit = clamp_limit(fields.integer("limit", 100), default=100, maximum=500)
    offset = check_offset(fields.integer("offset"), MAX_DEAD_CODE_OFFSET)
    repo_id = scope_repository(ctx, selector)
    result = scan(
        ctx.conn,
        repo=repo_id,
        language=language,
        excluded_decorators=excluded,
        candidate_kind=candidate_kind,
    )
    active = result.active
    shown, more = page_of(active, offset, limit)
    rows = [c.render() for c in hydrate(ctx.conn, shown)]
    kept = fitted(rows)
    if kept < len(rows):
        shown, rows, more = shown[:kept], rows[:kept], True
    languages = set(result.languages)
    data = {
        "candidate_kind": candidate_kind,
        "repo_id": repo_id,
        "language": language,
        "limit": limit,
        "offset": offset,
        "truncated": more or result.truncated,
        "display_truncated": more,
        "next_offset": offset + len(shown) if more else None,
        "active_candidates": len(active),
        "active_by_classification": dict(sorted(Counter(c.classification for c in active).items())),
        **scan_fields(result),
        "results": rows,
        "analysis": analysis_block(languages, _observed_blockers(shown), bool(excluded)),
    }
    return Answer(data, _truth(ctx, "resolved from a whole-scope dead-code candidate scan"))


def _truth(ctx: ApiContext, reason: str) -> dict[str, Any]:
    return ctx.truth("code_quality.dead_code", basis="hybrid", reason=reason)


@ROUTES.route("POST", "/code/dead-code/investigate")
def investigate_dead_code(ctx: ApiContext) -> Answer:
    """MCP ``investigate_dead_code``: cleanup-ready, ambiguous and suppressed buckets."""
    fields, language, selector, excluded = _request(ctx)
    offset = check_offset(fields.integer("offset"), MAX_INVESTIGATE_OFFSET)
    limit = clamp_limit(fields.integer("limit", 100), default=100, maximum=500)
    repo_id = scope_repository(ctx, selector)
    result = scan(ctx.conn, repo=repo_id, language=language, excluded_decorators=excluded)
    active, suppressed = result.active, result.suppressed
    shown, display_truncated = page_of(active, offset, limit)
    hydrate(ctx.conn, shown)
    placed = []
    for candidate in shown:
        bucket, reasons = packet_bucket(
            candidate.row["language"] or "", candidate.classification, candidate.reasons
        )
        placed.append((bucket, candidate.render(reasons)))
    kept = fitted([row for _, row in placed])
    if kept < len(placed):
        shown, placed, display_truncated = shown[:kept], placed[:kept], True
    truncated = display_truncated or result.truncated
    buckets: dict[str, list[dict[str, Any]]] = {
        "cleanup_ready": [],
        "ambiguous": [],
        "suppressed": [],
    }
    for bucket, row in placed:
        buckets[bucket].append(row)
    suppressed_cap = min(limit, SUPPRESSED_CAP)
    buckets["suppressed"] = [c.render() for c in hydrate(ctx.conn, suppressed[:suppressed_cap])]
    suppressed_truncated = len(suppressed) > suppressed_cap
    following = offset + len(shown)
    languages = set(result.languages) | set(language_values(language))
    observed = _observed_blockers(active)
    scanned = {**scan_fields(result), "suppressed_truncated": suppressed_truncated}
    freshness = ctx.freshness()
    data = {
        "repo_id": repo_id,
        "language": language,
        "limit": limit,
        "offset": offset,
        "truncated": truncated,
        "display_truncated": display_truncated,
        **scanned,
        "next_offset": following if truncated and following <= MAX_INVESTIGATE_OFFSET else None,
        "coverage": {
            "query_shape": "bounded_dead_code_investigation",
            "scope_type": "repository" if repo_id else "index",
            "repo_id": repo_id,
            "language": language,
            "limit": limit,
            "offset": offset,
            "paging_mode": "filtered_active_candidate_offset",
            "truncated": truncated,
            **scanned,
            "active_candidates_seen": len(active),
            "content_coverage_available": True,
            "freshness_state": freshness.get("state", "fresh"),
        },
        "candidate_buckets": buckets,
        "bucket_counts": {
            "cleanup_ready": len(buckets["cleanup_ready"]),
            "ambiguous": len(buckets["ambiguous"]),
            "suppressed": len(buckets["suppressed"]),
            "suppressed_truncated": suppressed_truncated,
        },
        "root_policy": {
            "tests_excluded": True,
            "generated_code_excluded": True,
            "requires_source_before_cleanup_decision": True,
            "user_decorator_exclusions": excluded,
        },
        "language_maturity": {
            k: LANGUAGE_MATURITY.get(k, "unsupported") for k in sorted(languages) if k
        },
        "exactness_blockers": {
            k: EXACTNESS_BLOCKERS[k] for k in sorted(languages) if k in EXACTNESS_BLOCKERS
        },
        "observed_exactness_blockers": observed,
        "recommended_next_calls": [
            {"tool": "get_entity_content", "args": {"entity_id": row["entity_id"]}}
            for row in buckets["cleanup_ready"][:5]
        ],
        "analysis": analysis_block(languages - {""}, observed, bool(excluded)),
    }
    reason = "resolved from bounded dead-code investigation with coverage and root-policy metadata"
    return Answer(data, _truth(ctx, reason))
