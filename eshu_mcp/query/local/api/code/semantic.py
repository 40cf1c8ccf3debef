"""
``POST /search/semantic`` in keyword mode (§2.7): ranked retrieval over entity and file
documents with no embedding model.

Candidates are the entities and files holding a term as a substring (one LIKE scan of the
file bodies, see ``source_scan``), capped per kind; they are ranked in Python with BM25
over term occurrences. ``semantic`` mode needs an embedder the embedded backend does
not have, so it answers 503 ``backend_unavailable``; ``hybrid`` degrades to keyword.
"""

from __future__ import annotations

import json
import math
import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.common import in_clauses
from eshu_mcp.query.local.api.code.text_scan import FileBodies, file_ids_containing, fold
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

CAPABILITY = "semantic_search.curated_retrieval"
MODES = ("keyword", "semantic", "hybrid")
SOURCE_KINDS = ("code_entity", "repository_file", "runtime_summary", "semantic_context")
CORPUS_LIMIT = 2000
CONTEXT_CHARS = 400
# Only this much of each document is scored (keeps ranking linear in a bounded size).
SCORED_CHARS = 16 * 1024
BM25_K1, BM25_B = 1.2, 0.75


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


def query_terms(query: str) -> list[str]:
    """Distinct lower-cased terms of three or more characters (shorter ones match too much)."""
    seen: dict[str, None] = {}
    for raw in query.lower().replace(",", " ").split():
        term = raw.strip("\"'()[]{}.;:!?")
        if len(term) >= 3:
            seen.setdefault(term, None)
    return list(seen)


def _corpus_documents(
    conn: sqlite3.Connection, repo_id: str, terms: list[str], kinds: list[str], cap: int
) -> list[dict[str, Any]]:
    """
    Entity then file documents holding any term: at most ``cap`` of each.

    A LIKE scan of the repository's file bodies finds the files holding a term. Entities
    are taken in (type, rid) order and files in (language, file id) order, the order of
    the repository/type and repository/language indexes this corpus has always been read
    in, so the capped corpus (and ranking ties) stay the same.
    """
    if not terms or ("code_entity" not in kinds and "repository_file" not in kinds):
        return []
    file_ids = file_ids_containing(conn, terms, "f.repo_id = ?", [repo_id])
    documents: list[dict[str, Any]] = []
    if "code_entity" in kinds and file_ids:
        bodies = FileBodies(conn)
        rids = _entities_holding(conn, bodies, file_ids, [fold(term) for term in terms], cap)
        documents += _entity_documents(conn, bodies, rids)
    if "repository_file" in kinds and file_ids:
        documents += [
            _file_document(repo_id, row)
            # Ranking and context read only the first SCORED_CHARS characters of a body.
            for row in conn.execute(
                "SELECT f.relative_path, f.language, substr(f.content, 1, ?) AS content"
                " FROM files f WHERE f.file_id IN (SELECT value FROM json_each(?))"
                " ORDER BY f.language, f.file_id LIMIT ?",
                [SCORED_CHARS, json.dumps(file_ids), cap],
            )
        ]
    return documents


def _entities_holding(
    conn: sqlite3.Connection,
    bodies: FileBodies,
    file_ids: list[int],
    needles: list[bytes],
    cap: int,
) -> list[int]:
    """The first ``cap`` entities of those files, in (type, rid) order, holding a needle."""
    cursor = conn.cursor()
    cursor.row_factory = None
    cursor.execute(
        "SELECT e.rid, e.file_id, e.start_byte, e.end_byte FROM entities e"
        " WHERE e.file_id IN (SELECT value FROM json_each(?)) ORDER BY e.entity_type, e.rid",
        [json.dumps(file_ids)],
    )
    rids: list[int] = []
    current, find = None, b"".find
    try:
        # The hot loop of a common term: no per-entity calls beyond bytes.find.
        for rid, file_id, start, end in cursor:
            if start is None or end is None or start < 0:
                continue
            if file_id != current:
                current, find = file_id, bodies.get(file_id).folded.find
            for needle in needles:
                if find(needle, start, end) >= 0:
                    rids.append(rid)
                    break
            if len(rids) >= cap:
                break
    finally:
        cursor.close()
    return rids


def _entity_documents(
    conn: sqlite3.Connection, bodies: FileBodies, rids: list[int]
) -> list[dict[str, Any]]:
    """Entity documents in the order of ``rids``, sources sliced from the read bodies."""
    rows: dict[int, sqlite3.Row] = {}
    for clause, params in in_clauses("e.rid", rids):
        for row in conn.execute(
            "SELECT e.rid, e.entity_id, e.entity_type, e.entity_name, e.relative_path,"
            f" e.language, e.file_id, e.start_byte, e.end_byte FROM entities e WHERE {clause}",
            params,
        ):
            rows[row["rid"]] = row
    documents = []
    for rid in rids:
        row = rows[rid]
        text = bodies.get(row["file_id"]).source(row["start_byte"], row["end_byte"])
        documents.append(
            {
                "id": row["entity_id"],
                "source_kind": "code_entity",
                "title": f"{row['entity_type']} {row['entity_name']}",
                "path": row["relative_path"],
                "text": text,
                "language": row["language"] or "",
                "labels": [f"language:{row['language'] or ''}", f"kind:{row['entity_type']}"],
                "entity_refs": [{"entity_id": row["entity_id"], "kind": "code_entity"}],
                "graph_handles": [{"handle": "entity:" + row["entity_id"], "kind": "entity"}],
            }
        )
    return documents


def _file_document(repo_id: str, row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": f"file:{repo_id}:{row['relative_path']}",
        "source_kind": "repository_file",
        "title": row["relative_path"],
        "path": row["relative_path"],
        "text": row["content"],
        "language": row["language"] or "",
        "labels": [f"language:{row['language'] or ''}", "kind:file"],
        "entity_refs": [],
        "graph_handles": [],
    }


def rank(documents: list[dict[str, Any]], terms: list[str]) -> list[tuple[float, dict]]:
    """BM25 over case-insensitive term occurrences; ties keep corpus order."""
    if not documents:
        return []
    lowered = [(doc["title"] + "\n" + doc["text"][:SCORED_CHARS]).lower() for doc in documents]
    lengths = [max(len(text), 1) for text in lowered]
    average = sum(lengths) / len(lengths)
    frequencies = {t: sum(1 for text in lowered if t in text) for t in terms}
    scored = []
    for doc, text, length in zip(documents, lowered, lengths, strict=True):
        score = 0.0
        for term in terms:
            tf = text.count(term)
            if not tf:
                continue
            df = frequencies[term]
            idf = math.log(1 + (len(documents) - df + 0.5) / (df + 0.5))
            norm = tf + BM25_K1 * (1 - BM25_B + BM25_B * length / average)
            score += idf * tf * (BM25_K1 + 1) / norm
        if score > 0:
            scored.append((round(score, 6), doc))
    scored.sort(key=lambda item: -item[0])
    return scored


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


@ROUTES.route("POST", "/search/semantic")
def search_semantic(ctx: ApiContext) -> Answer:
    """Keyword retrieval over the repository's entities and files."""
    fields = _fields(body_object(ctx))
    _validate(fields)
    repo = _resolve_repo(ctx, fields["repo_id"])
    if fields["mode"] == "semantic":
        raise semantic_error(
            503,
            "backend_unavailable",
            "semantic retrieval needs an embedding provider; the embedded backend"
            " answers keyword and hybrid (degraded to keyword) modes only",
        )
    repo_id = repo["repo_id"]
    kinds = fields["source_kinds"] or ["code_entity", "repository_file"]
    terms = query_terms(fields["query"])
    documents = _corpus_documents(ctx.conn, repo_id, terms, kinds, CORPUS_LIMIT)
    may_truncate = len(documents) >= CORPUS_LIMIT
    if fields["languages"]:
        documents = [d for d in documents if d["language"] in fields["languages"]]
    ranked = rank(documents, terms)
    limit = fields["limit"]
    indexed = ctx.conn.execute(
        "SELECT (SELECT COUNT(*) FROM entities WHERE repo_id = ?1)"
        " + (SELECT COUNT(*) FROM files WHERE repo_id = ?1)",
        (repo_id,),
    ).fetchone()[0]
    freshness = ctx.freshness()
    truth_scope = {"level": "derived", "basis": "content_index"}
    updated_at = repo["last_indexed_at"] or ""
    results, facets = [], {}
    for position, (score, doc) in enumerate(ranked[:limit], start=1):
        facets[doc["language"]] = facets.get(doc["language"], 0) + 1
        document = {
            "id": doc["id"],
            "repo_id": repo_id,
            "source_kind": doc["source_kind"],
            "title": doc["title"],
            "path": doc["path"],
            "context_text": doc["text"][:CONTEXT_CHARS],
            "entity_refs": doc["entity_refs"],
            "graph_handles": doc["graph_handles"],
            "labels": doc["labels"],
            "updated_at": updated_at,
            "truth_scope": truth_scope,
            "freshness": {"state": freshness["state"]},
            "access_scope": {"kind": "repository", "repo_id": repo_id},
            "provenance": {
                "source": "embedded_content_index",
                "generation_id": repo["active_generation_id"] or "",
            },
        }
        results.append(
            {
                "rank": position,
                "score": score,
                "search_method": "keyword",
                "document": document,
                "graph_handles": doc["graph_handles"],
                "truth_scope": truth_scope,
                "freshness": {"state": freshness["state"]},
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
        "search_mode": "keyword",
        "limit": limit,
        "timeout_ms": fields["timeout_ms"],
        "results": results,
        "truncated": len(ranked) > limit,
        "false_canonical_claim_count": 0,
        "indexed_document_count": indexed,
        "corpus_limit": CORPUS_LIMIT,
        "corpus_may_be_truncated": may_truncate,
        "retrieval_state": "keyword_only" if fields["mode"] == "keyword" else "hybrid_degraded",
        "facets": {"languages": facets},
        "rerank": {"applied": False, "state": "inactive"},
    }
    if results and results[0]["document"]["entity_refs"]:
        data["recommended_next_calls"] = [
            {
                "tool": "get_entity_content",
                "params": {"entity_id": results[0]["document"]["entity_refs"][0]["entity_id"]},
            }
        ]
    truth = ctx.truth(
        CAPABILITY,
        reason="keyword retrieval over the embedded content index; no embedding model",
        freshness=freshness,
    )
    return Answer(data, truth)
