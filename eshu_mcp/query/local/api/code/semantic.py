"""
``POST /search/semantic`` (§2.7): ranked retrieval over the definition index.

``keyword`` ranks definitions (and, when asked, files and documentation pages) with the
index's bm25 search (``definition_search``). ``semantic`` ranks them by cosine similarity
of embeddings computed offline by the model of the ``semantic`` extra
(``index/store/embedding.py``); ``hybrid`` fuses both rankings (reciprocal rank fusion).
Without the extra, ``semantic`` and ``hybrid`` answer with the keyword ranking and say
how to install it (``retrieval_state`` ``semantic_unavailable`` / ``hybrid_degraded``).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.common import in_clauses, language_values
from eshu_mcp.query.local.api.code.definition_search import Hit, attach_rows, explain, search
from eshu_mcp.query.local.api.code.question_words import query_words
from eshu_mcp.query.local.api.code.similarity import nearest
from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    body_object,
    bool_param,
    int_param,
    str_list_param,
    str_param,
)
from eshu_mcp.query.local.index.store import embedding
from eshu_mcp.query.local.index.store.search import CODE_FILE, DEFINITION, DOCUMENT

CAPABILITY = "semantic_search.curated_retrieval"
MODES = ("keyword", "semantic", "hybrid")
SOURCE_KINDS = ("code_entity", "repository_file", "runtime_summary", "semantic_context")
CORPUS_LIMIT = 400
"""Documents each ranking hands to the result (and to fusion)."""
CONTEXT_CHARS = 400
RRF_K = 60
"""Reciprocal rank fusion's constant: weight / (RRF_K + rank) from each ranking."""
SEMANTIC_WEIGHT = 0.3
"""The embedding ranking's weight in hybrid fusion (bm25's is 1): on the bench's question
sets the static word vectors alone find the definition far less often than the keyword
ranking (scripts/bench_topics.py), so they nudge it rather than halve it."""


def semantic_error(status: int, code: str, message: str) -> ApiError:
    """An error in the semantic-search shape (plain ``error_code``/``message``)."""
    return ApiError(
        status,
        message,
        code=code,
        capability=CAPABILITY,
        plain={"error_code": code, "message": message, "capability": CAPABILITY},
    )


def _invalid(message: str) -> ApiError:
    return semantic_error(400, "invalid_argument", message)


def _fields(body: dict[str, Any]) -> dict[str, Any]:
    try:
        return {
            "repo_id": str_param(body, "repo_id").strip(),
            "query": str_param(body, "query").strip(),
            "mode": str_param(body, "mode").strip(),
            "limit": int_param(body, "limit", 0),
            "timeout_ms": int_param(body, "timeout_ms", 0),
            "source_kinds": str_list_param(body, "source_kinds"),
            "languages": [lang.lower() for lang in str_list_param(body, "languages")],
            "rerank": bool_param(body, "rerank"),
        }
    except ApiError as error:
        raise _invalid(error.detail) from error


def _validate(fields: dict[str, Any]) -> None:
    for name in ("repo_id", "query", "mode"):
        if not fields[name]:
            raise _invalid(f"{name} is required")
    if fields["mode"] not in MODES:
        raise _invalid("mode must be one of " + ", ".join(MODES))
    if not 1 <= fields["limit"] <= 100:
        raise _invalid("limit must be between 1 and 100")
    if fields["timeout_ms"] < 1:
        raise _invalid("timeout_ms must be at least 1")
    for kind in fields["source_kinds"]:
        if kind not in SOURCE_KINDS:
            raise _invalid(f'source_kinds contains unsupported value "{kind}"')


def _kinds(source_kinds: list[str]) -> tuple[int, ...]:
    kinds: list[int] = []
    if "code_entity" in source_kinds:
        kinds.append(DEFINITION)
    if "repository_file" in source_kinds:
        kinds += [CODE_FILE, DOCUMENT]
    return tuple(kinds)


def _languages(wanted: list[str]) -> list[str]:
    """Stored language keys for the requested languages (``typescript`` covers ``tsx``)."""
    return [key for language in wanted for key in language_values(language)]


def fuse(rankings: list[list[Hit]], limit: int, weights: list[float] | None = None) -> list[Hit]:
    """Reciprocal rank fusion: a document scores the sum of weight / (RRF_K + its rank)."""
    fused: dict[int, Hit] = {}
    scores: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        for rank, hit in enumerate(ranking, start=1):
            kept = fused.setdefault(hit.doc_id, hit)
            if kept is not hit:
                for name, words in hit.matched.items():
                    kept.matched.setdefault(name, words)
                kept.similarity = kept.similarity or hit.similarity
            scores[hit.doc_id] = scores.get(hit.doc_id, 0.0) + weight / (RRF_K + rank)
    ordered = sorted(fused.values(), key=lambda h: (-scores[h.doc_id], h.doc_id))[:limit]
    for hit in ordered:
        hit.score = scores[hit.doc_id]
    return ordered


def _resolve_repo(ctx: ApiContext, selector: str) -> sqlite3.Row:
    selector = selector.removeprefix("git-repository-scope:")
    try:
        repo = ctx.repository(selector, not_found_status=404)
    except ApiError as error:
        if error.status == 404:
            raise semantic_error(404, "not_found", "repository not found") from error
        raise _invalid(error.detail) from error
    assert repo is not None
    return repo


def _rank(ctx: ApiContext, fields: dict[str, Any], repo_id: str) -> tuple[list[Hit], str, str]:
    """The ranked hits, how they were ranked, and the retrieval state."""
    kinds = _kinds(fields["source_kinds"] or ["code_entity", "repository_file"])
    if not kinds:
        return [], "keyword", "keyword_only"
    languages = _languages(fields["languages"])
    mode = fields["mode"]
    keyword: list[Hit] = []
    if mode != "semantic":
        words = query_words(fields["query"])
        keyword = search(ctx.conn, words, repo_id, languages, kinds, limit=CORPUS_LIMIT)
    if mode == "keyword":
        return keyword, "keyword", "keyword_only"
    if not embedding.available() or not _has_vectors(ctx.conn, repo_id):
        if mode == "semantic":  # the keyword ranking, and how to get the semantic one
            words = query_words(fields["query"])
            keyword = search(ctx.conn, words, repo_id, languages, kinds, limit=CORPUS_LIMIT)
            return keyword, "keyword", "semantic_unavailable"
        return keyword, "keyword", "hybrid_degraded"
    if mode == "semantic":
        limit = fields["limit"] + 1  # one more: whether the answer is truncated
        similar = nearest(ctx.conn, fields["query"], repo_id, languages, kinds, limit)
        return similar, "semantic", "semantic_active"
    similar = nearest(ctx.conn, fields["query"], repo_id, languages, kinds, CORPUS_LIMIT, 0)
    fused = fuse([keyword, similar], CORPUS_LIMIT, [1.0, SEMANTIC_WEIGHT])
    return fused, "hybrid", "hybrid_active"


def _has_vectors(conn: sqlite3.Connection, repo_id: str) -> bool:
    """Whether the repository's definitions were indexed with the embedding model."""
    return (
        conn.execute(
            "SELECT 1 FROM files f CROSS JOIN search_docs d ON d.file_id = f.file_id"
            " WHERE f.repo_id = ? AND d.vector IS NOT NULL LIMIT 1",
            (repo_id,),
        ).fetchone()
        is not None
    )


def _indexed_documents(conn: sqlite3.Connection, repo_id: str) -> int:
    """How many search documents the repository has (all of them when no other
    repository has a file: counting them is then no join over every document)."""
    alone = conn.execute(
        "SELECT NOT EXISTS (SELECT 1 FROM files WHERE repo_id < ? OR repo_id > ?)",
        (repo_id, repo_id),
    ).fetchone()[0]
    if alone:
        return conn.execute("SELECT COUNT(*) FROM search_docs").fetchone()[0]
    return conn.execute(
        "SELECT COUNT(*) FROM search_docs d JOIN files f ON f.file_id = d.file_id"
        " WHERE f.repo_id = ?",
        (repo_id,),
    ).fetchone()[0]


def _context_texts(conn: sqlite3.Connection, hits: list[Hit]) -> dict[int, str]:
    """The first CONTEXT_CHARS characters of each definition's source, by rid."""
    texts: dict[int, str] = {}
    rids = [hit.rid for hit in hits if hit.rid is not None]
    for clause, params in in_clauses("rid", rids):
        for rid, text in conn.execute(
            f"SELECT rid, substr(source_cache, 1, {CONTEXT_CHARS}) FROM entity_source"
            f" WHERE {clause}",
            params,
        ):
            texts[rid] = text or ""
    return texts


def _document(hit: Hit, text: str) -> dict[str, Any]:
    row = hit.row
    if hit.rid is not None and "entity_id" in row:
        context = row.get("class_context")
        return {
            "id": row["entity_id"],
            "source_kind": "code_entity",
            "title": f"{row['entity_type']} {row['entity_name']}",
            "path": row["relative_path"],
            "context_text": text,
            "labels": [f"language:{row['language'] or ''}", f"kind:{row['entity_type']}"],
            "entity_refs": [{"entity_id": row["entity_id"], "kind": "code_entity"}],
            "graph_handles": [{"handle": "entity:" + row["entity_id"], "kind": "entity"}],
            "start_line": row["start_line"],
            "end_line": row["end_line"],
            "qualified_name": f"{context}.{row['entity_name']}" if context else row["entity_name"],
        }
    return {
        "id": f"file:{row['repo_id']}:{row['relative_path']}",
        "source_kind": "repository_file",
        "title": row["relative_path"],
        "path": row["relative_path"],
        "context_text": "",
        "labels": [f"language:{row['language'] or ''}", "kind:file"],
        "entity_refs": [],
        "graph_handles": [],
    }


@ROUTES.route("POST", "/search/semantic")
def search_semantic(ctx: ApiContext) -> Answer:
    """Keyword, semantic or hybrid retrieval over the repository's definitions and files."""
    fields = _fields(body_object(ctx))
    _validate(fields)
    repo = _resolve_repo(ctx, fields["repo_id"])
    repo_id = repo["repo_id"]
    ranked, method, state = _rank(ctx, fields, repo_id)
    limit = fields["limit"]
    shown = ranked[:limit]
    explain(ctx.conn, shown, fields["query"])
    attach_rows(ctx.conn, shown)
    shown = [hit for hit in shown if hit.row.get("relative_path")]
    texts = _context_texts(ctx.conn, shown)
    indexed = _indexed_documents(ctx.conn, repo_id)
    freshness = ctx.freshness()
    truth_scope = {"level": "derived", "basis": "content_index"}
    updated_at = repo["last_indexed_at"] or ""
    results, facets = [], {}
    for position, hit in enumerate(shown, start=1):
        doc = _document(hit, texts.get(hit.rid or -1, ""))
        language = hit.row.get("language") or ""
        facets[language] = facets.get(language, 0) + 1
        document = {
            **doc,
            "repo_id": repo_id,
            "updated_at": updated_at,
            "truth_scope": truth_scope,
            "freshness": {"state": freshness["state"]},
            "access_scope": {"kind": "repository", "repo_id": repo_id},
            "provenance": {
                "source": "embedded_content_index",
                "generation_id": repo["active_generation_id"] or "",
            },
        }
        score = round(hit.score, 6)
        why = hit.why()
        if hit.similarity is not None:
            similarity = f"similarity {hit.similarity:.2f}"
            why = f"{why}; {similarity}" if why else similarity
        results.append(
            {
                "rank": position,
                "score": score,
                "search_method": method,
                "document": document,
                "graph_handles": doc["graph_handles"],
                "truth_scope": truth_scope,
                "freshness": {"state": freshness["state"]},
                "matched_terms": hit.matched_words,
                "matched_fields": hit.matched,
                "similarity": None if hit.similarity is None else round(hit.similarity, 4),
                "why": why,
                "ranking_basis": {
                    "baseline_rank": position,
                    "baseline_score": score,
                    "final_rank": position,
                    "graph_boost": 0,
                    "contributions": [],
                },
            }
        )
    data: dict[str, Any] = {
        "query": fields["query"],
        "repo_id": repo_id,
        "anchor": {"kind": "repository", "repo_id": repo_id},
        "mode": fields["mode"],
        "search_mode": method,
        "limit": limit,
        "timeout_ms": fields["timeout_ms"],
        "results": results,
        "truncated": len(ranked) > limit,
        "false_canonical_claim_count": 0,
        "indexed_document_count": indexed,
        "corpus_limit": CORPUS_LIMIT,
        "corpus_may_be_truncated": len(ranked) >= CORPUS_LIMIT,
        "retrieval_state": state,
        "facets": {"languages": facets},
        "rerank": {"applied": False, "state": "inactive"},
    }
    if state in ("semantic_unavailable", "hybrid_degraded"):
        data["semantic_unavailable_reason"] = embedding.unavailable_reason()
    if results and results[0]["document"]["entity_refs"]:
        data["recommended_next_calls"] = [
            {
                "tool": "get_entity_content",
                "params": {"entity_id": results[0]["document"]["entity_refs"][0]["entity_id"]},
            }
        ]
    reason = {
        "keyword": "bm25 over the definition search index",
        "semantic": "cosine similarity of offline embeddings in the definition search index",
        "hybrid": "reciprocal rank fusion of bm25 and embedding similarity",
    }[method]
    truth = ctx.truth(CAPABILITY, reason=reason, freshness=freshness)
    return Answer(data, truth)
