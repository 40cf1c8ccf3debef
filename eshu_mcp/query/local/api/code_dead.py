"""
Dead-code routes: ``/code/dead-code``, ``/code/dead-code/investigate`` and
``/code/dead-code/cross-repo``.

Candidates (Functions, Classes, Structs, Interfaces, Traits, SqlFunctions) are scanned in
bounded pages with Eshu's paging numbers, roots are set aside by the policy in
:mod:`.code_dead_roots`, and what is left is classified by its incoming edges in the
embedded call graph.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from attrs import define, field

from eshu_mcp.query.local.api.code_common import (
    ENTITY_COLUMNS,
    IN_BATCH,
    RequestFields,
    attach_sources,
    check_offset,
    clamp_limit,
    decode_metadata,
    entity_location,
    in_clause,
    in_clauses,
    language_values,
)
from eshu_mcp.query.local.api.code_dead_roots import (
    CANDIDATE_LABELS,
    EXACTNESS_BLOCKERS,
    LANGUAGE_MATURITY,
    REACHING_EDGE_TYPES,
    analysis_block,
    classify,
    has_generated_marker,
    packet_bucket,
    root_reasons,
)
from eshu_mcp.query.local.api.code_scope import (
    scope_predicate,
    scope_repository,
)
from eshu_mcp.query.local.api.framework import ROUTES, Answer, ApiContext, ApiError

SCAN_PAGES = 10
SUPPRESSED_CAP = 50
MAX_INVESTIGATE_OFFSET = 2000


@define
class Candidate:
    """One scanned candidate with its root reasons and classification."""

    row: dict[str, Any]
    metadata: dict[str, Any]
    roots: list[str]
    classification: str
    reasons: list[str] = field(factory=list)

    def render(self, bucket_reasons: list[str] | None = None) -> dict[str, Any]:
        """Eshu's candidate row."""
        row = self.row
        item = entity_location(row)
        if self.metadata:
            item["metadata"] = self.metadata
        item["classification"] = "excluded" if self.roots else self.classification
        if self.roots:
            item["suppression_reasons"] = self.roots
        elif bucket_reasons or self.reasons:
            item["ambiguity_reasons"] = bucket_reasons or self.reasons
        item["source_handle"] = {
            "repo_id": row["repo_id"],
            "relative_path": row["relative_path"],
            "entity_id": row["entity_id"],
            "start_line": row["start_line"],
            "end_line": row["end_line"],
        }
        return item


@define
class Scan:
    """The outcome of a bounded candidate scan."""

    candidates: list[Candidate]
    page_size: int
    pages: int
    rows: int
    truncated: bool

    @property
    def limit(self) -> int:
        """Raw candidate rows the scan may read (``candidate_scan_limit``)."""
        return self.page_size * SCAN_PAGES

    @property
    def active(self) -> list[Candidate]:
        """Candidates no root reason suppresses, in scan order."""
        return [c for c in self.candidates if not c.roots]

    @property
    def suppressed(self) -> list[Candidate]:
        """Candidates a root reason (entry point, decorator, ...) keeps alive."""
        return [c for c in self.candidates if c.roots]


def candidate_labels(language: str, candidate_kind: str = "") -> list[str]:
    """Labels to scan for a language filter (Eshu: SQL only SqlFunction, HCL nothing)."""
    if candidate_kind:
        return [candidate_kind]
    key = language.strip().lower()
    if not key:
        return list(CANDIDATE_LABELS)
    if key == "sql":
        return ["SqlFunction"]
    if key in ("hcl", "terraform"):
        return []
    return [
        label
        for label in CANDIDATE_LABELS
        if label != "SqlFunction" and (label != "Trait" or key == "scala")
    ]


def scan(
    conn: sqlite3.Connection,
    *,
    repo: str,
    language: str,
    page_size: int,
    excluded_decorators: list[str],
    candidate_kind: str = "",
) -> Scan:
    """Read up to ``SCAN_PAGES`` pages of one kind's (or every kind's) candidates."""
    labels = candidate_labels(language, candidate_kind)
    if not labels:
        return Scan([], page_size, 0, 0, False)
    where, params = in_clause("e.entity_type", labels)
    scope, values = scope_predicate(repo, language, "e")
    where += " AND " + scope
    params += values
    sql = (
        f"SELECT {ENTITY_COLUMNS}, f.is_test AS file_is_test,"
        " f.is_generated AS file_is_generated, p.entity_type AS parent_type"
        " FROM entities e JOIN files f ON f.file_id = e.file_id"
        " LEFT JOIN repositories r ON r.repo_id = e.repo_id"
        " LEFT JOIN entities p ON p.entity_id = e.parent_entity_id"
        f" WHERE {where} ORDER BY e.repo_id, e.relative_path, e.start_line, e.entity_id"
        " LIMIT ?"
    )
    # One ordered read of the whole scan window (plus a probe row), classified page by
    # page: the pages keep Eshu's accounting without re-sorting the candidates per page.
    scan_limit = page_size * SCAN_PAGES
    rows = [dict(r) for r in conn.execute(sql, [*params, scan_limit + 1])]
    truncated = len(rows) > scan_limit
    rows = rows[:scan_limit]
    candidates: list[Candidate] = []
    pages = 0
    for start in range(0, max(len(rows), 1), page_size):
        pages += 1
        candidates += _classify_page(conn, rows[start : start + page_size], excluded_decorators)
    rows_seen = len(rows)
    return Scan(candidates, page_size, pages, rows_seen, truncated)


def _classify_page(
    conn: sqlite3.Connection, batch: list[dict[str, Any]], excluded: list[str]
) -> list[Candidate]:
    if not batch:
        return []
    # Source text is only consulted by the language rules that read it (exports, pub,
    # annotations); slicing it for every candidate would dominate the scan.
    attach_sources(conn, [row for row in batch if (row["language"] or "") in _SOURCE_LANGUAGES])
    generated = _generated_files(conn, {row["file_id"] for row in batch})
    ids = [row["entity_id"] for row in batch]
    incoming: dict[str, set[str]] = {}
    overriding: set[str] = set()
    for start in range(0, len(ids), IN_BATCH):
        clause, params = in_clause("target_id", ids[start : start + IN_BATCH])
        types, type_params = in_clause("type", REACHING_EDGE_TYPES)
        for target, method in conn.execute(
            f"SELECT target_id, COALESCE(resolution_method, '') FROM edges WHERE {clause}"
            f" AND {types} AND source_id <> target_id",
            [*params, *type_params],
        ):
            incoming.setdefault(target, set()).add(method or "unspecified")
        clause, params = in_clause("source_id", ids[start : start + IN_BATCH])
        overriding.update(
            source
            for (source,) in conn.execute(
                f"SELECT DISTINCT source_id FROM edges WHERE {clause} AND type = 'OVERRIDES'",
                params,
            )
        )
    found = []
    for row in batch:
        metadata = decode_metadata(row["metadata"])
        if row["file_id"] in generated:
            row["is_generated"] = 1
        roots = root_reasons(
            row,
            metadata,
            excluded_decorators=excluded,
            overrides_base=row["entity_id"] in overriding,
        )
        classification, reasons = classify(row, metadata, incoming.get(row["entity_id"], set()))
        if roots or classification != "live":
            found.append(Candidate(row, metadata, roots, classification, reasons))
    return found


_SOURCE_LANGUAGES = frozenset(
    ("rust", "javascript", "jsx", "typescript", "tsx", "java", "kotlin", "scala", "c_sharp")
)


def _generated_files(conn: sqlite3.Connection, file_ids: set[int]) -> set[int]:
    """Files whose header carries a generated-code marker."""
    found: set[int] = set()
    ordered = sorted(file_ids)
    for clause, params in in_clauses("file_id", ordered):
        found.update(
            file_id
            for file_id, head in conn.execute(
                f"SELECT file_id, substr(content, 1, 2048) FROM files WHERE {clause}", params
            )
            if has_generated_marker(head or "")
        )
    return found


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


@ROUTES.route("POST", "/code/dead-code")
def dead_code(ctx: ApiContext) -> Answer:
    """MCP ``find_dead_code``: unreferenced candidates of one kind or all kinds."""
    fields, language, selector, excluded = _request(ctx)
    candidate_kind = fields.string("candidate_kind").strip()
    if candidate_kind and candidate_kind not in CANDIDATE_LABELS:
        raise ApiError(400, "unsupported candidate_kind")
    limit = clamp_limit(fields.integer("limit", 100), default=100, maximum=500)
    repo_id = scope_repository(ctx, selector)
    page_size = min(max(10 * limit + 1, 100), 250)
    result = scan(
        ctx.conn,
        repo=repo_id,
        language=language,
        page_size=page_size,
        excluded_decorators=excluded,
        candidate_kind=candidate_kind,
    )
    active = result.active
    rows = [c.render() for c in active[:limit]]
    languages = {c.row["language"] or "" for c in result.candidates}
    data = {
        "candidate_kind": candidate_kind,
        "repo_id": repo_id,
        "language": language,
        "limit": limit,
        "truncated": len(active) > limit or result.truncated,
        "display_truncated": len(active) > limit,
        "candidate_scan_truncated": result.truncated,
        "candidate_scan_limit": result.limit,
        "candidate_scan_limit_per_label": result.limit,
        "candidate_scan_pages": result.pages,
        "candidate_scan_rows": result.rows,
        "results": rows,
        "analysis": analysis_block(languages, _observed_blockers(active), bool(excluded)),
    }
    return Answer(data, _truth(ctx, "resolved from bounded dead-code candidate scan"))


def _truth(ctx: ApiContext, reason: str) -> dict[str, Any]:
    return ctx.truth("code_quality.dead_code", basis="hybrid", reason=reason)


@ROUTES.route("POST", "/code/dead-code/investigate")
def investigate_dead_code(ctx: ApiContext) -> Answer:
    """MCP ``investigate_dead_code``: cleanup-ready, ambiguous and suppressed buckets."""
    fields, language, selector, excluded = _request(ctx)
    offset = check_offset(fields.integer("offset"), MAX_INVESTIGATE_OFFSET)
    limit = clamp_limit(fields.integer("limit", 100), default=100, maximum=500)
    repo_id = scope_repository(ctx, selector)
    page_size = min(max(10 * (offset + limit) + 1, 100), 250)
    result = scan(
        ctx.conn, repo=repo_id, language=language, page_size=page_size, excluded_decorators=excluded
    )
    active, suppressed = result.active, result.suppressed
    shown = active[offset : offset + limit]
    display_truncated = len(active) > offset + limit
    truncated = display_truncated or result.truncated
    buckets: dict[str, list[dict[str, Any]]] = {
        "cleanup_ready": [],
        "ambiguous": [],
        "suppressed": [],
    }
    for candidate in shown:
        bucket, reasons = packet_bucket(
            candidate.row["language"] or "", candidate.classification, candidate.reasons
        )
        buckets[bucket].append(candidate.render(reasons))
    suppressed_cap = min(limit, SUPPRESSED_CAP)
    buckets["suppressed"] = [c.render() for c in suppressed[:suppressed_cap]]
    suppressed_truncated = len(suppressed) > suppressed_cap
    following = offset + len(shown)
    languages = {c.row["language"] or "" for c in result.candidates} | set(
        language_values(language)
    )
    observed = _observed_blockers(active)
    scan_fields = {
        "candidate_scan_truncated": result.truncated,
        "suppressed_truncated": suppressed_truncated,
        "candidate_scan_limit": result.limit,
        "candidate_scan_limit_per_label": result.limit,
        "candidate_scan_pages": result.pages,
        "candidate_scan_rows": result.rows,
    }
    freshness = ctx.freshness()
    data = {
        "repo_id": repo_id,
        "language": language,
        "limit": limit,
        "offset": offset,
        "truncated": truncated,
        "display_truncated": display_truncated,
        **scan_fields,
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
            **scan_fields,
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
