"""
``POST /evidence/citations``: ranked citations with short excerpts, built from file
handles (repository + path, optionally a line span) and ``entity:<id>`` handles.
"""

from __future__ import annotations

from typing import Any

from eshu_mcp.query.local.api.content.reads import ENTITY_SELECT, cap_source, select_lines
from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    body_object,
    int_param,
    limit_offset,
    page,
    relative_path,
    str_param,
)
from eshu_mcp.query.local.api.platform.grants import readable

CITATIONS = "evidence_citation.packet"
EXCERPT_LINES = 12


def _cite_entity(ctx: ApiContext, handle: dict[str, Any]) -> dict[str, Any] | None:
    entity_id = str(handle.get("entity_id") or "").removeprefix("entity:")
    row = ctx.conn.execute(ENTITY_SELECT + " WHERE e.entity_id = ?", (entity_id,)).fetchone()
    if row is None or not readable(ctx.principal, row["repo_id"]):
        return None
    source, _ = cap_source(row["entity_type"], row["source_cache"])
    excerpt = "\n".join(source.split("\n")[:EXCERPT_LINES])
    return {
        "kind": "entity",
        "entity_id": row["entity_id"],
        "repo_id": row["repo_id"],
        "relative_path": row["relative_path"],
        "start_line": row["start_line"],
        "end_line": min(row["end_line"], row["start_line"] + EXCERPT_LINES - 1),
        "title": f"{row['entity_type']} {row['entity_name']}",
        "excerpt": excerpt,
        "language": row["language"] or "",
        "handle": "entity:" + row["entity_id"],
    }


def _cite_file(ctx: ApiContext, handle: dict[str, Any]) -> dict[str, Any] | None:
    selector = str(handle.get("repo_id") or "")
    path = relative_path(str(handle.get("relative_path") or ""))
    if not selector or not path:
        return None
    try:
        repo = ctx.repository(selector, not_found_status=404)
    except ApiError as error:
        if error.status == 404:
            return None
        raise
    row = ctx.conn.execute(
        "SELECT * FROM files WHERE repo_id = ? AND relative_path = ?", (repo["repo_id"], path)
    ).fetchone()
    if row is None:
        return None
    start = int_param(handle, "start_line", 1)
    end = int_param(handle, "end_line", start + EXCERPT_LINES - 1)
    end = min(end, max(start, 1) + EXCERPT_LINES - 1)
    excerpt, count = select_lines(row["content"], start, end)
    return {
        "kind": "file",
        "repo_id": repo["repo_id"],
        "relative_path": path,
        "start_line": max(start, 1),
        "end_line": max(start, 1) + max(count, 1) - 1,
        "title": path,
        "excerpt": excerpt,
        "language": row["language"] or "",
        "handle": {"repo_id": repo["repo_id"], "relative_path": path},
    }


def _question_terms(question: str) -> list[str]:
    return [term.lower() for term in question.split() if len(term) >= 3]


@ROUTES.route("POST", "/evidence/citations")
def evidence_citations(ctx: ApiContext) -> Answer:
    """Ranked citations with short excerpts for file and entity handles."""
    body = body_object(ctx)
    handles = body.get("handles")
    if not isinstance(handles, list) or not handles:
        raise ApiError(400, "handles is required")
    if len(handles) > 500:
        raise ApiError(400, "handles must contain at most 500 entries")
    limit, _ = limit_offset(body, default=10, maximum=50)
    terms = _question_terms(str_param(body, "question"))
    citations, missing = [], []
    for position, handle in enumerate(handles):
        if isinstance(handle, str):
            handle = {"kind": "entity", "entity_id": handle}
        if not isinstance(handle, dict):
            missing.append({"index": position, "reason": "handle must be an object or string"})
            continue
        is_entity = handle.get("kind") == "entity" or (
            handle.get("entity_id") and handle.get("kind") != "file"
        )
        cited = _cite_entity(ctx, handle) if is_entity else _cite_file(ctx, handle)
        if cited is None:
            missing.append({"index": position, "reason": "handle did not resolve in the index"})
            continue
        text = (cited["title"] + "\n" + cited["excerpt"]).lower()
        cited["score"] = sum(1 for term in terms if term in text)
        cited["position"] = position
        if handle.get("reason"):
            cited["reason"] = handle["reason"]
        citations.append(cited)
    citations.sort(key=lambda c: (-c["score"], c["position"]))
    chosen, truncated = page(citations, limit)
    for rank, cited in enumerate(chosen, start=1):
        cited["rank"] = rank
        del cited["position"]
    data = {
        "citations": chosen,
        "count": len(chosen),
        "total": len(citations),
        "limit": limit,
        "truncated": truncated,
        "missing_handles": missing,
        "question": str_param(body, "question"),
    }
    return Answer(data, ctx.truth(CITATIONS, reason="hydrated handles from the content index"))
