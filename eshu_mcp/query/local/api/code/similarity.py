"""
Definitions ranked by how close their offline embedding is to a question's (the
``semantic`` extra, see ``index/store/embedding.py``); ``search_semantic_context``'s
``semantic`` mode and half of its ``hybrid`` mode.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.definition_search import Hit, explain
from eshu_mcp.query.local.api.code.question_words import query_words
from eshu_mcp.query.local.api.code.scope import repo_clause
from eshu_mcp.query.local.index.store import embedding
from eshu_mcp.query.local.index.store.search import DEFINITION, SIDE

SIDE_PENALTY = 0.15
"""Cosine similarity a side file's definition loses in semantic ranking."""


def nearest(
    conn: sqlite3.Connection,
    question: str,
    repo_scope: Any,
    languages: list[str] | tuple[str, ...] = (),
    kinds: tuple[int, ...] = (DEFINITION,),
    limit: int = 25,
    explained: int | None = None,
) -> list[Hit]:
    """
    Definitions by cosine similarity of their stored vectors to the question's (the
    ``semantic`` extra must be installed); tests and other side files after code unless
    the question names them. Only definitions carry vectors. The first ``explained`` hits
    (all when None) say which words matched (:func:`explain`).
    """
    found = embedding.model()
    if found is None or DEFINITION not in kinds:
        return []
    numpy = found.numpy
    words = query_words(question)
    query = found.embed([" ".join(words.asked)], (1.0,))
    if not query.any():
        return []
    rows, matrix, side = _vectors(conn, repo_scope, tuple(languages), numpy)
    if not rows:
        return []
    similarity = matrix @ query
    if not words.wants_side:
        similarity = numpy.where(side, similarity - SIDE_PENALTY, similarity)
    best = _best(numpy, similarity, limit)
    hits = []
    for index in best.tolist():
        row = rows[index]
        hit = Hit(row[0], row[1], row[2], row[3], row[4], 0.0)
        hit.similarity = hit.score = float(similarity[index])
        hits.append(hit)
    explain(conn, hits[:explained], question)
    return hits


def _best(numpy: Any, similarity: Any, limit: int) -> Any:
    """
    The indexes of the ``limit`` most similar rows, most similar first (ties in row
    order), without sorting all of them: only those at least as similar as the
    ``limit``-th are.
    """
    if limit <= 0:
        return similarity[:0].astype(int)
    if limit < len(similarity):
        threshold = numpy.partition(similarity, len(similarity) - limit)[len(similarity) - limit]
        (kept,) = numpy.nonzero(similarity >= threshold)
    else:
        kept = numpy.arange(len(similarity))
    return kept[numpy.argsort(-similarity[kept], kind="stable")][:limit]


_VECTOR_CACHE: dict[tuple, tuple[list[tuple], Any, Any]] = {}
VECTOR_CACHE_ENTRIES = 4


def _vectors(
    conn: sqlite3.Connection, repo_scope: Any, languages: tuple[str, ...], numpy: Any
) -> tuple[list[tuple], Any, Any]:
    """
    The scope's definition rows, their vectors as one matrix and which rows are of side
    files, read once per index generation (a new generation of any repository in scope
    reads them again).
    """
    repo_where, repo_params = repo_clause("f.repo_id", repo_scope)
    generations = conn.execute(
        "SELECT group_concat(active_generation_id) FROM (SELECT f.active_generation_id"
        f" FROM repositories f WHERE {repo_where} ORDER BY f.repo_id)",
        repo_params,
    ).fetchone()[0]
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    key = (path, repr(repo_scope), languages, generations)
    cached = _VECTOR_CACHE.get(key)
    if cached is not None:
        return cached
    language_where = ""
    if languages:
        language_where = f" AND f.language IN ({','.join('?' * len(languages))})"
    found = conn.execute(
        "SELECT d.doc_id, d.kind, d.tier, d.file_id, d.rid, d.vector FROM search_docs d"
        " JOIN files f ON f.file_id = d.file_id"
        f" WHERE d.vector IS NOT NULL AND {repo_where}{language_where}",
        [*repo_params, *languages],
    ).fetchall()
    rows = [tuple(row[:5]) for row in found]
    matrix = side = None
    if found:
        matrix = embedding.matrix_of([row[5] for row in found])
        side = numpy.fromiter((row[2] == SIDE for row in rows), dtype=bool)
    while len(_VECTOR_CACHE) >= VECTOR_CACHE_ENTRIES:
        _VECTOR_CACHE.pop(next(iter(_VECTOR_CACHE)))
    _VECTOR_CACHE[key] = (rows, matrix, side)
    return rows, matrix, side
