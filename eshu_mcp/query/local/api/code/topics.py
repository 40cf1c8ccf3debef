"""
``POST /code/topics/investigate``: where a topic lives in the code.

The topic, intent and explicit terms are searched in the definition index (see
``definition_search``): each row is a definition (its own lines) or, ranked after them, a
file or documentation page, with the words that made it match and where they matched.
"""

from __future__ import annotations

from typing import Any

from eshu_mcp.query.local.api.code.common import (
    CONTENT_BACKEND,
    RequestFields,
    check_offset,
    clamp_limit,
    entity_handle,
    file_handle,
    language_values,
    next_offset,
)
from eshu_mcp.query.local.api.code.definition_search import Hit, attach_rows, search
from eshu_mcp.query.local.api.code.question_words import query_words
from eshu_mcp.query.local.api.code.scope import scope_repository
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError
from eshu_mcp.query.local.index.store.search import DEFINITION, DOCUMENT, SIDE

FILE_GROUP_LINES = 80
DOCUMENT_KINDS = {DEFINITION: "definition", DOCUMENT: "documentation"}


def topic_hits(
    conn, topic: str, intent: str, explicit: list[str], repo_id: Any, language: str, count: int
) -> tuple[list[str], list[Hit]]:
    """The words searched and the best ``count`` documents, with their rows."""
    words = query_words(f"{topic} {intent}", explicit)
    hits = search(conn, words, repo_id, language_values(language), limit=count)
    attach_rows(conn, hits)
    return words.all, [hit for hit in hits if hit.row.get("relative_path")]


def _group(hit: Hit, rank: int) -> dict[str, Any]:
    row = hit.row
    is_entity = hit.rid is not None and "entity_id" in row
    start = row["start_line"] if is_entity else 1
    end = row["end_line"] if is_entity else min(row["line_count"], FILE_GROUP_LINES)
    handle = {
        "repo_id": row["repo_id"],
        "relative_path": row["relative_path"],
        "start_line": start,
        "end_line": end,
    }
    matched = hit.matched_words
    group: dict[str, Any] = {
        "rank": rank,
        "source_kind": "entity" if is_entity else "file",
        "repo_id": row["repo_id"],
        "relative_path": row["relative_path"],
        "language": row["language"] or "",
        "matched_terms": matched,
        "score": len(matched),
        "relevance": round(hit.score, 4),
        "document_kind": DOCUMENT_KINDS.get(hit.kind, "file"),
        "side_file": hit.tier == SIDE,
        "matched_fields": hit.matched,
        "why": hit.why(),
        "start_line": start,
        "end_line": end,
        "source_handle": handle,
    }
    if is_entity:
        context = row.get("class_context")
        group.update(
            entity_id=row["entity_id"],
            entity_name=row["entity_name"],
            entity_type=row["entity_type"],
            qualified_name=f"{context}.{row['entity_name']}" if context else row["entity_name"],
            recommended_next_calls=[
                {"tool": "get_entity_content", "args": {"entity_id": row["entity_id"]}}
            ],
        )
    else:
        group["recommended_next_calls"] = [
            {"tool": "get_file_lines", "args": {**handle}},
        ]
    return group


@ROUTES.route("POST", "/code/topics/investigate")
def investigate_topic(ctx: ApiContext) -> Answer:
    """MCP ``investigate_code_topic``: files and symbols that carry a topic."""
    fields = RequestFields.of(ctx)
    topic = fields.string("topic").strip() or fields.string("query").strip()
    if not topic:
        raise ApiError(400, "topic is required")
    intent = fields.string("intent").strip()
    explicit = fields.strings("terms")
    limit = clamp_limit(fields.integer("limit", 25), default=25, maximum=200)
    offset = check_offset(fields.integer("offset"))
    language = fields.string("language").strip()
    repo_id = scope_repository(ctx, fields.string("repo_id"))
    terms, hits = topic_hits(
        ctx.conn, topic, intent, explicit, repo_id, language, offset + limit + 1
    )
    window = hits[offset : offset + limit + 1]
    shown, truncated = window[:limit], len(window) > limit
    groups = [_group(hit, rank) for rank, hit in enumerate(shown, start=offset + 1)]
    files = [g for g in groups if g["source_kind"] == "file"]
    symbols = [g for g in groups if g["source_kind"] == "entity"]
    call_graph = [
        {
            "entity_id": g["entity_id"],
            "name": g["entity_name"],
            "handle": entity_handle(g["entity_id"]),
            "tool": "get_code_relationship_story",
        }
        for g in symbols
        if g["entity_type"] == "Function"
    ]
    next_calls = [
        {"tool": "get_code_relationship_story", "args": {"entity_id": c["entity_id"]}}
        for c in call_graph[:3]
    ]
    coverage = {
        "query_shape": "content_topic_investigation",
        "searched_terms": terms,
        "searched_term_count": len(terms),
        "returned_count": len(groups),
        "limit": limit,
        "offset": offset,
        "truncated": truncated,
        "empty": not groups,
    }
    data = {
        "topic": topic,
        "intent": intent,
        "scope": {"repo_id": repo_id, "language": language},
        "searched_terms": terms,
        "matched_files": files,
        "matched_symbols": symbols,
        "evidence_groups": groups,
        "call_graph_handles": call_graph,
        "recommended_next_calls": next_calls,
        "count": len(groups),
        "limit": limit,
        "offset": offset,
        "truncated": truncated,
        "next_offset": next_offset(offset, len(groups), truncated),
        "source_backend": CONTENT_BACKEND,
        "coverage": coverage,
        "answer_metadata": {
            "schema_version": "answer_metadata.v1",
            "evidence_handles": [
                entity_handle(g["entity_id"])
                if g["source_kind"] == "entity"
                else file_handle(g["repo_id"], g["relative_path"])
                for g in groups
            ],
            "missing_evidence": [] if groups else ["no indexed file or symbol matched the terms"],
            "limitations": [
                "ranked by bm25 over each definition's name, class, signature, docstring and"
                " path words (Porter stems, a small programming thesaurus); no embedding model"
            ],
            "truncated": truncated,
            "coverage": coverage,
            "partial_reasons": [],
            "recommended_next_calls": next_calls,
        },
    }
    truth = ctx.truth(
        "code_search.topic_investigation", reason="ranked from the definition search index"
    )
    return Answer(data, truth)
