"""
Ranked search over the definition index (``search_docs``/``search_fts``): plain words in,
definitions out, each with the words that made it match.

A question becomes words (identifiers split like the index's names, stop words dropped,
adjacent pairs joined so "time out" also finds ``timeout``, a small programming thesaurus
added); FTS5 ranks every document holding any of them with ``bm25()`` and field weights
(a name counts most, then the docstring, class, path and signature). The best few hundred
are re-ranked: definitions before files and documentation, code before tests, examples,
changelogs and generated files (unless the question names them), and documents that hold
more of the question's words first.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import sqlite3
import unicodedata
from operator import methodcaller
from typing import Any

from attrs import define, field

from eshu_mcp.query.local.api.code.common import in_clauses
from eshu_mcp.query.local.api.code.scope import repo_clause
from eshu_mcp.query.local.index.store import embedding
from eshu_mcp.query.local.index.store.search import (
    CODE_FILE,
    DEFINITION,
    DOCUMENT,
    SIDE,
    candidate_documents,
    split_words,
)

FIELDS = ("name", "qualified", "signature", "doc", "path")
WEIGHTS = (10.0, 3.0, 1.5, 4.0, 3.0)
"""bm25 weights of FIELDS."""
KIND_FACTOR = {DEFINITION: 1.0, CODE_FILE: 0.4, DOCUMENT: 0.3}
SIDE_FACTOR = 0.25
SIDE_PENALTY = 0.15
"""Cosine similarity a side file's definition loses in semantic ranking."""
"""How much a test, example, changelog or generated file's document keeps of its score."""
SIDE_WORDS = frozenset(
    (
        "test",
        "tests",
        "testing",
        "unittest",
        "example",
        "examples",
        "demo",
        "sample",
        "changelog",
        "news",
        "release",
        "generated",
        "fixture",
        "fixtures",
        "benchmark",
    )
)
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
MAX_WORDS = 24
STOP_WORDS = frozenset(
    " ".join(
        (
            "a all an and another any are as at be been by can code could do does done each",
            "every everything find for from function functions get gets give has have how i",
            "if in into is it its let lets many may me method methods might must my of on one",
            "or other our over part piece place same show so some something that the their",
            "them then there these this those thing things to up use used uses using via want",
            "was we what when where which while who why will with would you your",
        )
    ).split()
)
"""Question words that say nothing about what the code does."""
THESAURUS: dict[str, tuple[str, ...]] = {
    "authentication": ("auth", "login", "credential"),
    "authenticate": ("auth", "login", "credential"),
    "credentials": ("auth", "password", "credential"),
    "password": ("passwd", "credential"),
    "login": ("auth", "logon"),
    "cancel": ("abort", "stop"),
    "abort": ("cancel",),
    "stop": ("cancel", "halt", "shutdown"),
    "timeout": ("deadline", "expire"),
    "deadline": ("timeout",),
    "delay": ("later", "wait", "sleep"),
    "later": ("delay", "schedule"),
    "schedule": ("later", "delay"),
    "retry": ("again", "backoff", "reconnect"),
    "reconnect": ("retry",),
    "wait": ("delay", "sleep"),
    "encrypt": ("cipher", "crypto", "tls", "ssl"),
    "certificate": ("cert", "tls", "ssl", "x509"),
    "compress": ("zip", "gzip", "deflate"),
    "decompress": ("unzip", "gzip", "inflate"),
    "parse": ("parser", "decode", "read"),
    "serialize": ("encode", "dump", "marshal"),
    "deserialize": ("decode", "load", "unmarshal"),
    "config": ("configuration", "settings", "options"),
    "configuration": ("config", "settings", "options"),
    "settings": ("config", "options"),
    "error": ("exception", "failure", "err"),
    "errors": ("exception", "failure", "err"),
    "failure": ("error", "exception", "fail"),
    "log": ("logger", "logging"),
    "logging": ("log", "logger"),
    "remove": ("delete", "drop"),
    "delete": ("remove", "drop"),
    "create": ("make", "new", "build"),
    "start": ("begin", "run", "launch", "spawn"),
    "print": ("output", "write", "display"),
    "prints": ("output", "write", "display"),
    "output": ("print", "write", "stdout"),
    "asynchronous": ("async", "deferred", "future", "promise"),
    "async": ("asynchronous", "deferred", "future", "promise"),
    "several": ("multiple", "list", "many"),
    "spawn": ("start", "process"),
    "mandatory": ("required", "require"),
    "required": ("mandatory", "require"),
    "idle": ("timeout", "inactive"),
    "big": ("size", "max", "limit"),
    "large": ("size", "max", "limit"),
    "message": ("msg",),
    "directory": ("dir", "folder"),
    "folder": ("dir", "directory"),
    "connection": ("conn", "connect"),
    "connect": ("connection", "dial"),
    "request": ("req",),
    "response": ("resp", "reply"),
    "reply": ("response", "answer"),
    "send": ("write", "transmit"),
    "receive": ("read", "recv"),
    "random": ("rand",),
    "number": ("num", "count"),
    "string": ("str", "text"),
    "text": ("string", "str"),
    "temporary": ("temp", "tmp"),
    "environment": ("env",),
    "argument": ("arg", "args"),
    "arguments": ("arg", "args"),
    "command": ("cmd",),
    "initialize": ("init", "setup"),
    "address": ("addr",),
    "buffer": ("buf",),
    "length": ("len", "size"),
    "size": ("length", "len"),
    "database": ("db", "sql"),
    "quote": ("escape",),
    "escape": ("quote",),
    "hash": ("digest", "checksum"),
    "checksum": ("hash", "digest"),
    "wrap": ("wrapping", "fold"),
    "terminal": ("tty", "console"),
    "thread": ("threads", "threadpool"),
}
"""Plain words and the words code often uses for them instead (both ways where it helps)."""
PHRASES: dict[str, tuple[str, ...]] = {
    "give up": ("cancel", "timeout", "abort"),
    "too long": ("timeout",),
    "time out": ("timeout",),
    "takes too long": ("timeout",),
    "try again": ("retry",),
    "shut down": ("shutdown", "stop"),
    "clean up": ("cleanup", "close"),
    "look up": ("lookup", "resolve"),
    "set up": ("setup",),
    "log in": ("login", "auth"),
    "sign in": ("login", "auth"),
    "in the background": ("thread", "async"),
    "at the same time": ("concurrent", "parallel"),
    "one after another": ("sequential", "serial"),
    "from the network": ("receive", "read"),
    "over the network": ("send", "transport"),
    "host name": ("hostname",),
    "file name": ("filename",),
    "user name": ("username",),
    "word wrap": ("wrap",),
    "cannot be used together": ("exclusive", "mutually", "conflict"),
    "mutually exclusive": ("exclusive", "mutually", "conflict"),
    "too big": ("size", "max", "limit"),
}
"""Phrases and the words code uses for them."""
_WORDS = re.compile(r"[^\W_]+")
_TOKENS = re.compile(r"[^\W\d]\w*|[0-9]+")


@define
class QueryWords:
    """
    The words of a question: its own (``asked``; a known phrase stands for the words code
    uses for it), what they were expanded to (``extra``: joined pairs, synonyms), and its
    concepts (each asked word or phrase with its expansions) for measuring coverage.
    """

    asked: list[str]
    extra: list[str]
    wants_side: bool
    concepts: list[frozenset[str]] = field(factory=list)
    weights: list[float] = field(factory=list)  # per concept: its rarity (inverse frequency)

    @property
    def all(self) -> list[str]:
        """Every word searched, the question's own first."""
        return [*self.asked, *self.extra]

    def coverage(self, matched: list[str]) -> float:
        """
        The share of the question's concepts that some of the ``matched`` words carry, each
        concept weighted by how rare it is in the index (``weights``; equal when unknown).
        """
        if not self.concepts:
            return 0.0
        found = set(matched)
        weights = self.weights or [1.0] * len(self.concepts)
        held = sum(w for concept, w in zip(self.concepts, weights, strict=True) if concept & found)
        return held / (sum(weights) or 1.0)


def query_words(question: str, explicit: list[str] | None = None) -> QueryWords:
    """Words of a question: identifiers split, stop words dropped, pairs joined, synonyms."""
    raw = [word.lower() for word in _TOKENS.findall(question)]
    spaced = " " + " ".join(raw) + " "
    phrases = [phrase for phrase in PHRASES if f" {phrase} " in spaced]
    in_phrases = {word for phrase in phrases for word in phrase.split()}
    concepts: dict[str, set[str]] = {}  # a concept's first word -> its words
    for term in explicit or []:
        for word in split_words(term):
            concepts.setdefault(word, {word})
    kept: list[str] = []
    for token in _TOKENS.findall(question):
        for word in split_words(token) or [token.lower()]:
            if word in STOP_WORDS or word in in_phrases or (len(word) < 2 and not word.isdigit()):
                continue
            kept.append(word)
            concepts.setdefault(word, {word})
    for phrase in phrases:
        meaning = PHRASES[phrase]
        if not any(word in concepts for word in meaning):
            concepts[meaning[0]] = set(meaning)
    asked = [word for words in concepts.values() for word in sorted(words, key=list(words).index)]
    asked = list(dict.fromkeys([*concepts, *asked]))
    extra: dict[str, None] = {}
    for first, second in itertools.pairwise(kept):
        joined = first + second
        extra.setdefault(joined, None)
        concepts[first].add(joined)
        concepts[second].add(joined)
    for word in kept:
        for synonym in (*THESAURUS.get(word, ()), *_decompounded(word)):
            extra.setdefault(synonym, None)
            concepts[word].add(synonym)
    wants_side = any(word in SIDE_WORDS for word in raw)
    asked_words = asked[:MAX_WORDS]
    extra_words = [word for word in extra if word not in asked][: MAX_WORDS - len(asked_words)]
    return QueryWords(
        asked_words, extra_words, wants_side, [frozenset(c) for c in concepts.values()]
    )


PREFIX_FROM = 4
"""A question's own words this long also match longer words (date: datetime, updated)."""


COMPOUND_PREFIXES = ("sub", "multi", "super")


def _decompounded(word: str) -> tuple[str, ...]:
    """``subcommand``: command; code often spells the parts apart (``SubCommand``)."""
    for prefix in COMPOUND_PREFIXES:
        rest = word[len(prefix) :]
        if word.startswith(prefix) and len(rest) >= 4:
            return (rest,)
    return ()


def fts_query(words: QueryWords) -> str:
    """
    An FTS5 expression matching any of the words (each quoted: never FTS syntax); the
    question's own words of PREFIX_FROM letters or more as prefixes too.
    """
    terms = [
        f'"{word}"*' if len(word) >= PREFIX_FROM and not word.isdigit() else f'"{word}"'
        for word in words.asked
    ]
    terms += [f'"{word}"' for word in words.extra]
    return " OR ".join(terms)


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A rough stem for telling which words matched (the index itself uses Porter)."""
    if not word.isascii():  # the index folds accents: café matches cafe
        decomposed = unicodedata.normalize("NFKD", word)
        word = "".join(c for c in decomposed if not unicodedata.combining(c))
    for suffix in ("ations", "ation", "ings", "ing", "ers", "er", "ies", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                word = word[:-1]  # wrapp(ing) -> wrap
            break
    return word[:-1] if len(word) > 4 and word[-1] == "e" else word


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
    rows = conn.execute(
        f"SELECT d.doc_id, d.kind, d.tier, d.file_id, d.rid,"
        f" bm25(search_fts, {', '.join(map(str, WEIGHTS))}) AS score"
        # CROSS JOIN: the word index drives (a repository filter first would test MATCH
        # once per document of the repository)
        " FROM search_fts CROSS JOIN search_docs d ON d.doc_id = search_fts.rowid"
        " CROSS JOIN files f ON f.file_id = d.file_id"
        f" WHERE search_fts MATCH ? AND {repo_where}{language_where}{kind_where}"
        " ORDER BY score LIMIT ?",
        [fts_query(words), *repo_params, *languages, CANDIDATES],
    ).fetchall()
    hits = [Hit(r[0], r[1], r[2], r[3], r[4], -float(r[5])) for r in rows]
    _weigh_concepts(conn, words)
    _explain(conn, hits, words)
    if CODE_FILE in kinds or DOCUMENT in kinds:
        _add_body_matches(conn, hits, words, repo_where, repo_params, language_where, languages)
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
    for hit in hits:
        document = documents.get(hit.doc_id)
        if document is None:
            continue
        hit.key = document[0]
        hit.documented = bool(document[3])
        for name, text in zip(FIELDS, document, strict=True):
            stems = {stem(word) for word in _WORDS.findall(text.lower())}
            found = [
                word
                for word, root, prefix in wanted
                if root in stems or (prefix and any(map(methodcaller("startswith", root), stems)))
            ]
            if found:
                hit.matched[name] = found


def _weigh_concepts(conn: sqlite3.Connection, words: QueryWords) -> None:
    """Each concept's rarity: log(documents / documents holding its first word)."""
    total = conn.execute("SELECT COUNT(*) FROM search_docs").fetchone()[0] or 1
    weights = []
    for concept in words.concepts:
        word = next((w for w in words.asked if w in concept), None) or min(concept)
        pattern = f'"{word}"*' if len(word) >= PREFIX_FROM and not word.isdigit() else f'"{word}"'
        held = conn.execute(
            "SELECT COUNT(*) FROM search_fts WHERE search_fts MATCH ?", (pattern,)
        ).fetchone()[0]
        weights.append(math.log(1 + total / (1 + held)))
    words.weights = weights


BODY_SHARE = 0.8
"""What a file whose text holds every word of the question gets from its text alone, as a
share of the best word-index score (before the file's kind and coverage factors)."""
BODY_FILES = 200


def _add_body_matches(
    conn: sqlite3.Connection,
    hits: list[Hit],
    words: QueryWords,
    repo_where: str,
    repo_params: list[Any],
    language_where: str,
    languages: list[str],
) -> None:
    """
    Files whose text (comments, strings, code) holds the question's words, from the file
    word index: their file document gains the best score times ``BODY_SHARE`` times the
    square of the share of words held.
    """
    held: dict[int, list[str]] = {}
    for word in words.asked:
        root = stem(word)
        pattern = f'"{root}"*' if len(root) >= 4 else f'"{word}"'
        for (file_id,) in conn.execute(
            "SELECT f.file_id FROM files_fts CROSS JOIN files f ON f.file_id = files_fts.rowid"
            f" WHERE files_fts MATCH ? AND {repo_where}{language_where}",
            [pattern, *repo_params, *languages],
        ):
            held.setdefault(file_id, []).append(word)
    if not held:
        return
    needed = min(2, len(words.concepts)) / max(len(words.concepts), 1)
    shares = {file_id: words.coverage(found) for file_id, found in held.items()}
    ranked = sorted(
        ((file_id, found) for file_id, found in held.items() if shares[file_id] >= needed),
        key=lambda item: (-shares[item[0]], item[0]),
    )[:BODY_FILES]
    if not ranked:
        return
    best = max((hit.bm25 for hit in hits), default=0.0) or 1.0
    by_file = {hit.file_id: hit for hit in hits if hit.rid is None}
    missing = [file_id for file_id, _ in ranked if file_id not in by_file]
    for clause, params in in_clauses("file_id", missing):
        for doc_id, file_id, kind, tier in conn.execute(
            f"SELECT doc_id, file_id, kind, tier FROM search_docs WHERE rid IS NULL AND {clause}",
            params,
        ):
            hit = by_file[file_id] = Hit(doc_id, kind, tier, file_id, None, 0.0)
            hits.append(hit)
    for file_id, found in ranked:
        hit = by_file.get(file_id)
        if hit is not None:
            hit.matched["text"] = found
            hit.bm25 += BODY_SHARE * best * shares[file_id] ** 2


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
    rows, matrix = _vectors(conn, repo_scope, tuple(languages))
    if not rows:
        return []
    similarity = matrix @ query
    if not words.wants_side:
        side = numpy.fromiter((row[2] == SIDE for row in rows), dtype=bool, count=len(rows))
        similarity = numpy.where(side, similarity - SIDE_PENALTY, similarity)
    best = numpy.argsort(-similarity, kind="stable")[:limit]
    hits = []
    for index in best.tolist():
        row = rows[index]
        hit = Hit(row[0], row[1], row[2], row[3], row[4], 0.0)
        hit.similarity = hit.score = float(similarity[index])
        hits.append(hit)
    explain(conn, hits[:explained], question)
    return hits


_VECTOR_CACHE: dict[tuple, tuple[list[tuple], Any]] = {}
VECTOR_CACHE_ENTRIES = 4


def _vectors(
    conn: sqlite3.Connection, repo_scope: Any, languages: tuple[str, ...]
) -> tuple[list[tuple], Any]:
    """
    The scope's definition rows and their vectors as one matrix, read once per index
    generation (a new generation of any repository in scope reads them again).
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
    matrix = embedding.matrix_of([row[5] for row in found]) if found else None
    while len(_VECTOR_CACHE) >= VECTOR_CACHE_ENTRIES:
        _VECTOR_CACHE.pop(next(iter(_VECTOR_CACHE)))
    _VECTOR_CACHE[key] = (rows, matrix)
    return rows, matrix


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
