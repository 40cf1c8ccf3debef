"""
``POST /code/security/secrets/investigate``: hardcoded-secret candidates, redacted.

The indexer stores each candidate line already redacted (local-backend.md §3.7); this
route redacts the excerpt once more with the same rules before it leaves, so a value
can never be returned in clear even from an index written by an older extractor.
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.common import (
    CONTENT_BACKEND,
    RequestFields,
    check_offset,
    clamp_limit,
    in_clause,
    language_values,
)
from eshu_mcp.query.local.api.code.scope import (
    repo_clause,
    scope_repository,
)
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError

FINDING_KINDS = (
    "api_token",
    "aws_access_key",
    "password_literal",
    "private_key",
    "secret_literal",
    "slack_token",
)
_HIGH_RISK = ("aws_access_key", "private_key", "slack_token")
REDACTED = "[REDACTED]"

_ASSIGNED_VALUE = re.compile(
    r"(?i)(password|passwd|pwd|api[_-]?key|apikey|token|secret|client[_-]?secret|"
    r"private[_-]?key|authorization)(\s*[:=]\s*[\"']?)([^\"',;\s]{6,})"
)
_WHOLE_VALUES = (
    re.compile(r"AKIA[0-9A-Z]{16}"),
    re.compile(r"(?i)sk_live_[A-Za-z0-9]{8,}"),
    re.compile(r"xox[baprs]-[A-Za-z0-9-]{10,}"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
)


def redact(line: str) -> str:
    """Replace secret values in a line with ``[REDACTED]`` (Eshu's redaction rules)."""

    def keep_marker(match: re.Match[str]) -> str:
        value = match.group(3)
        if value.startswith(REDACTED):
            return match.group(0)
        return match.group(1) + match.group(2) + REDACTED

    line = _ASSIGNED_VALUE.sub(keep_marker, line)
    for pattern in _WHOLE_VALUES:
        line = pattern.sub(REDACTED, line)
    return line


def risk(finding_kind: str) -> tuple[str, str]:
    """(confidence, severity) of a finding kind."""
    return ("high", "critical") if finding_kind in _HIGH_RISK else ("medium", "high")


def secret_findings(
    conn: sqlite3.Connection,
    *,
    repo_id: str,
    language: str,
    kinds: list[str],
    include_suppressed: bool,
    limit: int,
    offset: int,
) -> tuple[list[dict[str, Any]], bool, int]:
    """Findings in Eshu's order (``limit+1`` probe) and the suppressed count in scope."""
    clause, params = repo_clause("repo_id", repo_id)
    where = [clause]
    languages = language_values(language)
    if languages:
        clause, values = in_clause("language", languages)
        where.append(clause)
        params += values
    if kinds:
        clause, values = in_clause("finding_kind", kinds)
        where.append(clause)
        params += values
    scope = " AND ".join(where)
    suppressed_count = conn.execute(
        f"SELECT COUNT(*) FROM (SELECT 1 FROM secret_candidates WHERE {scope}"
        " AND suppression_notes <> '[]' LIMIT 100001)",
        params,
    ).fetchone()[0]
    rows = conn.execute(
        "SELECT repo_id, relative_path, language, line_number, finding_kind, redacted_excerpt,"
        f" suppression_notes FROM secret_candidates WHERE {scope}"
        " AND (? OR suppression_notes = '[]')"
        " ORDER BY repo_id, relative_path, line_number, finding_kind LIMIT ? OFFSET ?",
        [*params, int(include_suppressed), limit + 1, offset],
    ).fetchall()
    findings = []
    for rank, row in enumerate(rows[:limit], start=offset + 1):
        notes = json.loads(row["suppression_notes"] or "[]")
        confidence, severity = risk(row["finding_kind"])
        findings.append(
            {
                "rank": rank,
                "repo_id": row["repo_id"],
                "relative_path": row["relative_path"],
                "language": row["language"] or "",
                "line_number": row["line_number"],
                "finding_kind": row["finding_kind"],
                "confidence": confidence,
                "severity": severity,
                "redacted_excerpt": redact(row["redacted_excerpt"]),
                "suppressed": bool(notes),
                "suppression_notes": notes,
                "source_handle": {
                    "repo_id": row["repo_id"],
                    "relative_path": row["relative_path"],
                    "start_line": row["line_number"],
                    "end_line": row["line_number"],
                },
            }
        )
    return findings, len(rows) > limit, int(suppressed_count)


@ROUTES.route("POST", "/code/security/secrets/investigate")
def investigate_secrets(ctx: ApiContext) -> Answer:
    """MCP ``investigate_hardcoded_secrets``: redacted candidate findings, paged."""
    fields = RequestFields.of(ctx)
    kinds = []
    for kind in fields.strings("finding_kinds"):
        kind = kind.strip()
        if kind not in FINDING_KINDS:
            raise ApiError(400, f'unsupported finding_kind "{kind}"')
        if kind not in kinds:
            kinds.append(kind)
    include_suppressed = fields.boolean("include_suppressed")
    limit = clamp_limit(fields.integer("limit", 25), default=25, maximum=200)
    offset = check_offset(fields.integer("offset"))
    language = fields.string("language").strip()
    repo_id = scope_repository(ctx, fields.string("repo_id"))
    findings, truncated, suppressed_count = secret_findings(
        ctx.conn,
        repo_id=repo_id,
        language=language,
        kinds=kinds,
        include_suppressed=include_suppressed,
        limit=limit,
        offset=offset,
    )
    handles = [
        {
            "kind": "file",
            **f["source_handle"],
            "evidence_family": "security",
            "reason": "hardcoded secret candidate",
        }
        for f in findings[:10]
    ]
    data = {
        "scope": {"repo_id": repo_id, "language": language},
        "finding_kinds": kinds,
        "findings": findings,
        "recommended_next_calls": [
            {
                "tool": "build_evidence_citation_packet",
                "reason": "hydrate exact redacted source context for selected findings",
                "args": {"handles": handles},
            }
        ]
        if handles
        else [],
        "count": len(findings),
        "limit": limit,
        "offset": offset,
        "truncated": truncated,
        "source_backend": CONTENT_BACKEND,
        "coverage": {
            "query_shape": "content_secret_investigation",
            "returned_count": len(findings),
            "suppressed_count": suppressed_count,
            "include_suppressed": include_suppressed,
            "limit": limit,
            "offset": offset,
            "truncated": truncated,
            "redaction": "secret_values_replaced_with_redacted_marker",
            "empty": not findings,
            "searched_all_kinds": not kinds,
            "requires_repo_scope": False,
        },
    }
    truth = ctx.truth(
        "security.hardcoded_secrets",
        reason="resolved from bounded content-index hardcoded secret investigation with"
        " redacted findings",
    )
    return Answer(data, truth)
