"""
Ranked search over the definition index (``search_docs``/``search_fts``): plain words in,
definitions out, each with the words that made it match and where.

FTS5 ranks every document holding any of the question's words (``question_words``) with
``bm25()`` and field weights (on a large index, where a common word matches tens of
thousands, only those holding one of its rarer words: ``_selective``). The best few
hundred are re-ranked by their concept score:
each concept of the question counts its rarity times the best field it was found in (a
name most, then the docstring, class, path, signature; a synonym less). Definitions come
before files and documentation pages, code before tests, examples, changelogs and
generated files (unless the question names them), documented definitions a little
higher, and the third and later definitions of one name lower.
"""

from __future__ import annotations

import math
import re
import sqlite3
from operator import methodcaller
from typing import Any

from attrs import define, field

from eshu_mcp.query.local.api.code.common import in_clauses
from eshu_mcp.query.local.api.code.question_words import (
    PREFIX_FROM,
    QueryWords,
    fts_query,
    fts_terms,
    query_words,
    stem,
)
from eshu_mcp.query.local.api.code.scope import repo_clause
from eshu_mcp.query.local.index.store.search import (
    CODE_FILE,
    DEFINITION,
    DOCUMENT,
    SIDE,
    candidate_documents,
)

FIELDS = ("name", "qualified", "signature", "doc", "path")
_WORDS = re.compile(r"[^\W_]+")
WEIGHTS = (10.0, 3.0, 1.5, 4.0, 3.0)
"""bm25 weights of FIELDS."""
KIND_FACTOR = {DEFINITION: 1.0, CODE_FILE: 0.4, DOCUMENT: 0.3}
SIDE_FACTOR = 0.25
"""How much a test, example, changelog or generated file's document keeps of its score."""
CONCEPT_FIELDS = {
    "name": 3.0,
    "qualified": 1.2,
    "doc": 2.0,
    "path": 1.0,
    "signature": 0.6,
    "text": 0.8,
}
"""What a question concept found in each field of a document is worth."""
EXPANSION_SHARE = 0.6
"""What a concept found only through a synonym or joined pair is worth, as a share."""
BM25_SHARE = 0.03
DOCUMENTED_FACTOR = 1.1
"""A documented definition's score factor: someone explained what it does."""
"""bm25's part in the final score beside the concept score (it mostly breaks ties)."""
CANDIDATES = 400
"""Documents bm25 hands to the re-ranking."""


@define
class Hit:
    """One ranked document: a definition, a source file or a documentation file."""

    doc_id: int
    kind: int
    tier: int
    file_id: int
    rid: int | None
    bm25: float
    score: float = 0.0
    similarity: float | None = None
    key: str = ""  # the definition's name words (repeats of a name are demoted)
    documented: bool = False  # the definition has a docstring or leading comment
    matched: dict[str, list[str]] = field(factory=dict)  # field -> question words found there
    row: dict[str, Any] = field(factory=dict)

    @property
    def matched_words(self) -> list[str]:
        """The question's words this document holds, in the question's order."""
        found: dict[str, None] = {}
        for words in self.matched.values():
            for word in words:
                found.setdefault(word, None)
        return list(found)

    def why(self) -> str:
        """``name: add, timeout; doc: cancel``: which words matched where."""
        return "; ".join(
            f"{name}: {', '.join(words)}" for name, words in self.matched.items() if words
        )


def search(
    conn: sqlite3.Connection,
    words: QueryWords,
    repo_scope: Any,
    languages: list[str] | tuple[str, ...] = (),
    kinds: tuple[int, ...] = (DEFINITION, CODE_FILE, DOCUMENT),
    limit: int = 25,
) -> list[Hit]:
    """
    The best ``limit`` documents for the words, re-ranked (see the module docstring), of
    the repositories in scope and files of ``languages`` (stored language keys; all when
    empty).
    """
    if not words.all:
        return []
    repo_where, repo_params = repo_clause("f.repo_id", repo_scope)
    languages = list(languages)
    language_where = ""
    if languages:
        language_where = f" AND f.language IN ({','.join('?' * len(languages))})"
    kind_where = f" AND d.kind IN ({','.join(str(int(k)) for k in kinds)})"
    total = conn.execute("SELECT COUNT(*) FROM search_docs").fetchone()[0] or 1
    rows = _candidates(
        conn,
        fts_query(words),
        _selective(conn, words, total),
        f"{repo_where}{language_where}{kind_where}",
        [*repo_params, *languages],
    )
    hits = [Hit(r[0], r[1], r[2], r[3], r[4], -float(r[5])) for r in rows]
    _weigh_concepts(conn, words, total)
    _explain(conn, hits, words)
    if CODE_FILE in kinds or DOCUMENT in kinds:
        scope = (repo_where, repo_params, language_where, languages)
        _add_body_matches(conn, hits, words, scope, kinds)
    for hit in hits:
        hit.score = (concept_score(hit, words) + BM25_SHARE * hit.bm25) * KIND_FACTOR.get(
            hit.kind, 0.3
        )
        if hit.tier == SIDE and not words.wants_side:
            hit.score *= SIDE_FACTOR
        if hit.documented:
            hit.score *= DOCUMENTED_FACTOR
    hits.sort(key=lambda h: (-h.score, h.doc_id))
    _diversify(hits)
    return hits[:limit]


BEST_FIRST = 4 * CANDIDATES
"""Documents the word index ranks on its own before they are filtered by repository,
language and kind (see ``_candidates``)."""


SELECTIVE_SHARE = 0.02
SELECTIVE_FLOOR = 4 * BEST_FIRST
"""Past max(SELECTIVE_FLOOR, SELECTIVE_SHARE x documents) matches, bm25 ranks only the
documents holding one of the question's rarer terms (see ``_selective``)."""


def _selective(conn: sqlite3.Connection, words: QueryWords, total: int) -> str | None:
    """
    The rarer terms of the question as an FTS5 expression, or None when all its terms
    together match few enough documents to rank every match.

    bm25 costs a lookup per document it ranks, and a common word (``call``, ``result``)
    matches tens of thousands of documents of a large index; a document holding only
    common words ranks low in bm25 and in the concept score alike. So terms are taken
    rarest first while their matches stay within the budget (and at least until they
    match BEST_FIRST documents), each counted no further than the budget.
    """
    budget = max(SELECTIVE_FLOOR, int(SELECTIVE_SHARE * total))
    terms = fts_terms(words)
    counts = [
        conn.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM search_fts WHERE search_fts MATCH ? LIMIT ?)",
            (term, budget + 1),
        ).fetchone()[0]
        for term in terms
    ]
    if sum(counts) <= budget:
        return None
    kept, matched = [], 0
    for count, term in sorted(zip(counts, terms, strict=True)):
        if matched >= BEST_FIRST and matched + count > budget:
            break
        kept.append(term)
        matched += count
    return " OR ".join(kept)


def _candidates(
    conn: sqlite3.Connection, expression: str, selective: str | None, where: str, params: list
) -> list[tuple]:
    """
    The CANDIDATES best documents matching ``expression`` (and ``selective`` when given)
    that pass ``where``, as ``(doc_id, kind, tier, file_id, rid, bm25)`` rows, best first.

    The word index ranks its matches alone first and only its best BEST_FIRST are joined
    to their documents and files and filtered: on a large index a common word matches
    tens of thousands of documents, and looking each one up costs as much as ranking it.
    When the filter leaves fewer than CANDIDATES of them and there were more matches, every
    match is filtered before ranking instead.
    """
    weights = ", ".join(map(str, WEIGHTS))
    join = (
        " CROSS JOIN search_docs d ON d.doc_id = m.rowid CROSS JOIN files f"
        f" ON f.file_id = d.file_id WHERE {where} ORDER BY m.score, m.rowid LIMIT ?"
    )
    columns = "SELECT d.doc_id, d.kind, d.tier, d.file_id, d.rid, m.score FROM"
    # +rowid: a set to test each match against, not rowids to look up one by one
    within = (
        " AND +rowid IN (SELECT rowid FROM search_fts WHERE search_fts MATCH ?)"
        if selective
        else ""
    )
    rows = conn.execute(
        f"{columns} (SELECT rowid, bm25(search_fts, {weights}) AS score FROM search_fts"
        f" WHERE search_fts MATCH ?{within} ORDER BY score, rowid LIMIT ?) m" + join,
        [expression, *([selective] if selective else []), BEST_FIRST, *params, CANDIDATES],
    ).fetchall()
    if len(rows) >= CANDIDATES:
        return rows
    matches = conn.execute(
        "SELECT COUNT(*) FROM (SELECT 1 FROM search_fts WHERE search_fts MATCH ? LIMIT ?)",
        (selective or expression, BEST_FIRST + 1),
    ).fetchone()[0]
    if matches <= BEST_FIRST:
        return rows
    # CROSS JOIN: the word index drives (a repository filter first would test MATCH once
    # per document of the repository)
    return conn.execute(
        f"{columns} (SELECT rowid, bm25(search_fts, {weights}) AS score FROM search_fts"
        " WHERE search_fts MATCH ?) m" + join,
        [expression, *params, CANDIDATES],
    ).fetchall()


REPEATS_KEPT = 2
REPEAT_FACTOR = 0.6
"""Past the first REPEATS_KEPT definitions of one name (overrides of one callback), each
further one keeps this share of its score: the answer is rarely the 30th lineReceived."""


def _diversify(hits: list[Hit]) -> None:
    """Demote the repeats of a name in the ranking, then sort again."""
    seen: dict[str, int] = {}
    for hit in hits:
        if hit.kind != DEFINITION or not hit.key:
            continue
        count = seen[hit.key] = seen.get(hit.key, 0) + 1
        if count > REPEATS_KEPT:
            hit.score *= REPEAT_FACTOR
    hits.sort(key=lambda h: (-h.score, h.doc_id))


def concept_score(hit: Hit, words: QueryWords) -> float:
    """
    How much of the question a document says and where: each concept (weighted by its
    rarity) counts the best field it was found in (a name most), less when only a synonym
    was found; normalised by the weight of all the question's concepts.
    """
    asked = set(words.asked)
    weights = words.weights or [1.0] * len(words.concepts)
    total = sum(weights) or 1.0
    score = 0.0
    for concept, weight in zip(words.concepts, weights, strict=True):
        best = 0.0
        for name, found in hit.matched.items():
            held = concept.intersection(found)
            if held:
                value = CONCEPT_FIELDS.get(name, 0.5)
                if not held & asked:
                    value *= EXPANSION_SHARE
                best = max(best, value)
        score += weight * best
    return score / total


def explain(conn: sqlite3.Connection, hits: list[Hit], question: str) -> None:
    """Fill the ``matched`` fields of hits that have none yet (ranked without words)."""
    missing = [hit for hit in hits if not hit.matched]
    if missing:
        _explain(conn, missing, query_words(question))


def _explain(conn: sqlite3.Connection, hits: list[Hit], words: QueryWords) -> None:
    """Fill each hit's ``matched`` fields from its document's words."""
    asked = set(words.asked)
    wanted = [(word, stem(word), word in asked and len(word) >= PREFIX_FROM) for word in words.all]
    documents = candidate_documents(conn, [hit.doc_id for hit in hits])
    seen: dict[str, list[str]] = {}  # a field's text -> the words found in it
    for hit in hits:
        document = documents.get(hit.doc_id)
        if document is None:
            continue
        hit.key = document[0]
        hit.documented = bool(document[3])
        for name, text in zip(FIELDS, document, strict=True):
            found = seen.get(text)
            if found is None:
                found = seen[text] = _found_in(text, wanted)
            if found:
                hit.matched[name] = list(found)


def _found_in(text: str, wanted: list[tuple[str, str, bool]]) -> list[str]:
    """The wanted words whose stem (or, for a prefix word, stem's start) ``text`` holds."""
    if not text:
        return []
    stems = {stem(word) for word in _WORDS.findall(text.lower())}
    return [
        word
        for word, root, prefix in wanted
        if root in stems or (prefix and any(map(methodcaller("startswith", root), stems)))
    ]


def _weigh_concepts(conn: sqlite3.Connection, words: QueryWords, total: int) -> None:
    """
    Each concept's rarity: log(documents / documents holding its first word), both counted
    through ``search_docs`` (``total``) so a scoped caller counts only the repositories it
    may read.
    """
    # every document has its row in search_docs: unless a grant hides some, the word
    # index counts them alone (a lookup per matching document costs more than the count)
    counted = (
        "search_fts CROSS JOIN search_docs d ON d.doc_id = search_fts.rowid"
        if _shadowed(conn, "search_docs")
        else "search_fts"
    )
    weights = []
    for concept in words.concepts:
        word = next((w for w in words.asked if w in concept), None) or min(concept)
        pattern = f'"{word}"*' if len(word) >= PREFIX_FROM and not word.isdigit() else f'"{word}"'
        held = conn.execute(
            f"SELECT COUNT(*) FROM {counted} WHERE search_fts MATCH ?", (pattern,)
        ).fetchone()[0]
        weights.append(math.log(1 + total / (1 + held)))
    words.weights = weights


def _shadowed(conn: sqlite3.Connection, table: str) -> bool:
    """Whether a granted reader's temporary view stands in for ``table`` (``grants``)."""
    return (
        conn.execute(
            "SELECT 1 FROM sqlite_temp_master WHERE name = ? AND type = 'view'", (table,)
        ).fetchone()
        is not None
    )


BODY_SHARE = 0.8
"""What a file whose text holds every word of the question gets from its text alone, as a
share of the best word-index score (before the file's kind and coverage factors)."""
BODY_FILES = 200


def _add_body_matches(
    conn: sqlite3.Connection,
    hits: list[Hit],
    words: QueryWords,
    scope: tuple[str, list[Any], str, list[str]],
    kinds: tuple[int, ...],
) -> None:
    """
    Files whose text (comments, strings, code) holds the question's words, from the file
    word index: their file document gains the best score times ``BODY_SHARE`` times the
    square of the share of words held.
    """
    held: dict[int, int] = {}  # file -> bit i set when it holds the question's word i
    for bit, word in enumerate(words.asked):
        root = stem(word)
        pattern = f'"{root}"*' if len(root) >= 4 else f'"{word}"'
        flag = 1 << bit
        # the word index alone (a files row looked up per match would cost more than
        # the match); the files in scope are kept below, among those that hold enough
        for (file_id,) in conn.execute(
            "SELECT rowid FROM files_fts WHERE files_fts MATCH ?", (pattern,)
        ):
            held[file_id] = held.get(file_id, 0) | flag
    if not held:
        return
    needed = min(2, len(words.concepts)) / max(len(words.concepts), 1)
    found_words = {
        bits: [word for bit, word in enumerate(words.asked) if bits >> bit & 1]
        for bits in set(held.values())
    }  # thousands of files share a few combinations of words
    share_of = {bits: words.coverage(found) for bits, found in found_words.items()}
    enough = [file_id for file_id, bits in held.items() if share_of[bits] >= needed]
    ranked = sorted(
        ((file_id, found_words[held[file_id]]) for file_id in _in_scope(conn, enough, scope)),
        key=lambda item: (-share_of[held[item[0]]], item[0]),
    )[:BODY_FILES]
    shares = {file_id: share_of[held[file_id]] for file_id, _ in ranked}
    if not ranked:
        return
    best = max((hit.bm25 for hit in hits), default=0.0) or 1.0
    by_file = {hit.file_id: hit for hit in hits if hit.rid is None}
    missing = [file_id for file_id, _ in ranked if file_id not in by_file]
    for clause, params in in_clauses("file_id", missing):
        for doc_id, file_id, kind, tier in conn.execute(
            "SELECT doc_id, file_id, kind, tier FROM search_docs WHERE rid IS NULL"
            f" AND kind IN ({','.join(str(int(k)) for k in kinds)}) AND {clause}",
            params,
        ):
            hit = by_file[file_id] = Hit(doc_id, kind, tier, file_id, None, 0.0)
            hits.append(hit)
    for file_id, found in ranked:
        hit = by_file.get(file_id)
        if hit is not None:
            hit.matched["text"] = list(found)
            hit.bm25 += BODY_SHARE * best * shares[file_id] ** 2


def _in_scope(
    conn: sqlite3.Connection, file_ids: list[int], scope: tuple[str, list[Any], str, list[str]]
) -> list[int]:
    """The files of ``file_ids`` in the repositories and languages of ``scope``."""
    repo_where, repo_params, language_where, languages = scope
    if repo_where == "1 = 1" and not languages and not _shadowed(conn, "files"):
        return file_ids
    kept: list[int] = []
    for clause, params in in_clauses("f.file_id", file_ids):
        kept += [
            file_id
            for (file_id,) in conn.execute(
                f"SELECT f.file_id FROM files f WHERE {clause} AND {repo_where}{language_where}",
                [*params, *repo_params, *languages],
            )
        ]
    return kept


def attach_rows(conn: sqlite3.Connection, hits: list[Hit]) -> None:
    """Fill each hit's ``row``: file path, language, lines and (definitions) the entity."""
    file_ids = sorted({hit.file_id for hit in hits})
    files: dict[int, dict[str, Any]] = {}
    for clause, params in in_clauses("file_id", file_ids):
        for row in conn.execute(
            "SELECT file_id, repo_id, relative_path, language, line_count FROM files"
            f" WHERE {clause}",
            params,
        ):
            files[row[0]] = dict(row)
    rids = sorted({hit.rid for hit in hits if hit.rid is not None})
    entities: dict[int, dict[str, Any]] = {}
    for clause, params in in_clauses("r.rid", rids):
        for row in conn.execute(
            "SELECT r.rid, n.node_id AS entity_id, r.entity_type, r.entity_name, r.start_line,"
            " r.end_line, r.class_context, r.signature FROM entity_rows r"
            f" JOIN nodes n ON n.nid = r.rid WHERE {clause}",
            params,
        ):
            entities[row[0]] = dict(row)
    for hit in hits:
        hit.row = {**files.get(hit.file_id, {}), **entities.get(hit.rid or -1, {})}
