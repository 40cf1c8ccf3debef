"""
``POST /code/topics/investigate``: where a topic lives in the code.

The topic and intent become search terms (Eshu's tokenizer, stop words and synonyms);
each term is matched case-insensitively (LIKE's rule) against entity names and source and
against file paths and bodies, by one scan of the file bodies (see ``source_scan``); a
hit's score is the number of distinct terms it matched.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.common import (
    CONTENT_BACKEND,
    RequestFields,
    check_offset,
    clamp_limit,
    entity_handle,
    file_handle,
    in_clauses,
    language_values,
    like_pattern,
    next_offset,
)
from eshu_mcp.query.local.api.code.scope import (
    repo_clause,
    scope_predicate,
    scope_repository,
)
from eshu_mcp.query.local.api.code.text_scan import fold, plain_rows, scan_files
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError

STOP_WORDS = frozenset(
    (
        "all",
        "and",
        "are",
        "code",
        "for",
        "how",
        "in",
        "into",
        "is",
        "of",
        "or",
        "responsible",
        "show",
        "the",
        "this",
        "to",
        "where",
        "who",
    )
)
SYNONYMS = {
    "authentication": ("auth", "token"),
    "credentials": ("auth", "token"),
    "github": ("installation", "app"),
    "locking": ("lock",),
    "repositories": ("repo",),
    "synchronize": ("sync",),
}
MAX_TERMS = 16
HITS_PER_TERM = 500
FILE_GROUP_LINES = 80


def search_terms(topic: str, intent: str, explicit: list[str]) -> list[str]:
    """Explicit terms plus topic/intent tokens and synonyms: at most 16, sorted."""
    terms = {t.strip().lower() for t in explicit if t.strip()}
    for token in re.findall(r"[a-z0-9]+", f"{topic} {intent}".lower()):
        if len(token) < 3 or token in STOP_WORDS:
            continue
        terms.add(token)
        terms.update(SYNONYMS.get(token, ()))
    return sorted(terms)[:MAX_TERMS]


def _capped(matches: dict[str, set[int]]) -> dict[int, set[str]]:
    """Each term's first ``HITS_PER_TERM`` ids, inverted to id -> matched terms."""
    by_id: dict[int, set[str]] = {}
    for term, ids in matches.items():
        for key in sorted(ids)[:HITS_PER_TERM]:
            by_id.setdefault(key, set()).add(term)
    return by_id


def term_matches(
    conn: sqlite3.Connection, terms: list[str], repo_id: str, language: str
) -> tuple[dict[int, set[str]], dict[int, set[str]]]:
    """
    Entity rids and file ids with the terms each one matched (LIKE's case rule).

    An entity matches a term through its name or its source, a file through its path or
    its body; every term keeps its first ``HITS_PER_TERM`` entities and files (by id).
    One LIKE scan of the file bodies serves every term, for files and entities alike.
    """
    needles = {term: fold(term) for term in terms}
    patterns = [like_pattern(term) for term in terms]
    entity_scope, entity_params = scope_predicate(repo_id, language, "e")
    file_scope, file_params = scope_predicate(repo_id, language, "f")
    entity_hits: dict[str, set[int]] = {term: set() for term in terms}
    file_hits: dict[str, set[int]] = {term: set() for term in terms}
    names = " OR ".join("e.entity_name LIKE ? ESCAPE '\\'" for _ in terms)
    for rid, name in conn.execute(
        f"SELECT e.rid, e.entity_name FROM entities e WHERE {entity_scope} AND ({names})",
        [*entity_params, *patterns],
    ):
        _add(entity_hits, needles, fold(name), rid)
    paths = " OR ".join("f.relative_path LIKE ? ESCAPE '\\'" for _ in terms)
    for file_id, path in conn.execute(
        f"SELECT f.file_id, f.relative_path FROM files f WHERE {file_scope} AND ({paths})",
        [*file_params, *patterns],
    ):
        _add(file_hits, needles, fold(path), file_id)
    languages = language_values(language)
    repo_where, repo_params = repo_clause("f.repo_id", repo_id)
    for scanned in scan_files(conn, terms, repo_where, repo_params, order="f.file_id"):
        present = [(term, needle) for term, needle in needles.items() if scanned.contains(needle)]
        if not languages or scanned.row["language"] in languages:
            for term, _ in present:
                file_hits[term].add(scanned.file_id)
        spans = plain_rows(
            conn,
            "SELECT e.rid, e.start_byte, e.end_byte FROM entities e"
            f" WHERE e.file_id = ? AND {entity_scope}",
            [scanned.file_id, *entity_params],
        )
        for term, needle in present:
            entity_hits[term].update(rid for rid, _, _ in scanned.rows_holding(needle, spans))
    return _capped(entity_hits), _capped(file_hits)


def _add(hits: dict[str, set[int]], needles: dict[str, bytes], text: bytes, key: int) -> None:
    for term, needle in needles.items():
        if needle in text:
            hits[term].add(key)


def topic_hits(
    conn: sqlite3.Connection, terms: list[str], repo_id: str, language: str
) -> list[dict[str, Any]]:
    """Entity and file hits with their matched terms, in Eshu's evidence order."""
    entity_terms, file_terms = term_matches(conn, terms, repo_id, language)
    hits: list[dict[str, Any]] = []
    rids = sorted(entity_terms)
    for clause, params in in_clauses("rid", rids):
        for row in conn.execute(
            "SELECT rid, entity_id, repo_id, relative_path, language, entity_type, entity_name,"
            f" start_line, end_line FROM entities WHERE {clause}",
            params,
        ):
            matched = sorted(entity_terms[row["rid"]])
            hits.append({"source_kind": "entity", **dict(row), "matched_terms": matched})
    file_ids = sorted(file_terms)
    for clause, params in in_clauses("file_id", file_ids):
        for row in conn.execute(
            "SELECT file_id, repo_id, relative_path, language, line_count FROM files"
            f" WHERE {clause}",
            params,
        ):
            matched = sorted(file_terms[row["file_id"]])
            hits.append(
                {
                    "source_kind": "file",
                    **dict(row),
                    "entity_name": "",
                    "start_line": 1,
                    "end_line": min(row["line_count"], FILE_GROUP_LINES),
                    "matched_terms": matched,
                }
            )
    hits.sort(
        key=lambda h: (
            -len(h["matched_terms"]),
            h["repo_id"],
            h["relative_path"],
            h["entity_name"],
            h["source_kind"],
            h["start_line"],
        )
    )
    return hits


def _group(hit: dict[str, Any], rank: int) -> dict[str, Any]:
    handle = {
        "repo_id": hit["repo_id"],
        "relative_path": hit["relative_path"],
        "start_line": hit["start_line"],
        "end_line": hit["end_line"],
    }
    group: dict[str, Any] = {
        "rank": rank,
        "source_kind": hit["source_kind"],
        "repo_id": hit["repo_id"],
        "relative_path": hit["relative_path"],
        "language": hit["language"] or "",
        "matched_terms": hit["matched_terms"],
        "score": len(hit["matched_terms"]),
        "source_handle": handle,
    }
    if hit["source_kind"] == "entity":
        group.update(
            entity_id=hit["entity_id"],
            entity_name=hit["entity_name"],
            entity_type=hit["entity_type"],
            recommended_next_calls=[
                {"tool": "get_entity_content", "args": {"entity_id": hit["entity_id"]}}
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
    terms = search_terms(topic, intent, explicit)
    hits = topic_hits(ctx.conn, terms, repo_id, language) if terms else []
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
                "substring matching over the embedded content index; no semantic ranking"
            ],
            "truncated": truncated,
            "coverage": coverage,
            "partial_reasons": [],
            "recommended_next_calls": next_calls,
        },
    }
    truth = ctx.truth(
        "code_search.topic_investigation", reason="resolved from content-index term matching"
    )
    return Answer(data, truth)
