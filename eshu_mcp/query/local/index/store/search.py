"""
The definition search index: one short document per definition (its name split into words,
its class, signature, docstring or leading comment, and its file's path words), and one per
file, written with the file's other rows and ranked with FTS5's ``bm25()``
(``search_docs`` and ``search_fts`` in ``schema.sql``).

Documents are built from a parsed file in the parser workers (:func:`document_rows`), or from
the rows already stored (:func:`index_stored_files`, for indexes written row by row).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable
from itertools import chain, repeat

from eshu_mcp.query.local.index.store import embedding
from eshu_mcp.query.local.index.store.bulk import insert_rows

DEFINITION, CODE_FILE, DOCUMENT = 1, 2, 3
"""``search_docs.kind``: a definition, a source file, a documentation file."""
CODE, SIDE = 0, 1
"""``search_docs.tier``: code, or tests/examples/changelogs/generated files (ranked after)."""

SKIPPED_TYPES = frozenset(("Module", "ImplBlock", "Variable"))
"""Entity types with no document of their own (a module's docstring goes to its file's)."""
DOC_CHARS = 320
"""How much of a docstring a document keeps: its summary, not the whole manual."""
SIGNATURE_CHARS = 200
HEADING_CHARS = 400
DOCUMENT_SUFFIXES = (".md", ".markdown", ".rst", ".txt", ".adoc")
SIDE_DIRECTORIES = frozenset(
    (
        "example",
        "examples",
        "demo",
        "demos",
        "sample",
        "samples",
        "newsfragments",
        "changelog.d",
        "testdata",
        "fixtures",
        "benchmarks",
    )
)
SIDE_NAMES = re.compile(r"^(changelog|changes|history|news|release[-_]?notes)\b", re.I)
PATH_NOISE = frozenset(("src", "lib", "pkg", "internal", "init", "main", "index", "mod"))
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_UNICODE_PARTS = re.compile(r"[^\W_]+")
_IDENTIFIERS = re.compile(r"[^\W\d]\w*")
_ASCII_IDENTIFIERS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""``_IDENTIFIERS`` in ASCII text, where it is faster."""


WORDS_REMEMBERED = 65536
"""Identifiers whose words are kept (names, classes, paths and signature tokens repeat)."""
_words_of: dict[str, tuple[str, ...]] = {}
_name_words_of: dict[str, str] = {}


def split_words(identifier: str) -> list[str]:
    """``addTimeout``: add, timeout; ``HTTPServer``: http, server; ``soft_wrap``: soft, wrap."""
    return list(_split(identifier))


def _split(identifier: str) -> tuple[str, ...]:
    """:func:`split_words`, remembered (the tuple is shared: never changed)."""
    found = _words_of.get(identifier)
    if found is None:
        if len(_words_of) >= WORDS_REMEMBERED:
            _words_of.clear()
        if not identifier.isascii():  # café, naïve_path: whole words (the index folds accents)
            found = tuple(map(str.lower, _UNICODE_PARTS.findall(identifier)))
        elif identifier.islower() and identifier.replace("_", "").isalpha():
            found = tuple(filter(None, identifier.split("_")))  # snake_case: what _PARTS finds
        else:
            found = tuple(map(str.lower, _PARTS.findall(identifier)))
        _words_of[identifier] = found
    return found


def name_words(identifier: str) -> str:
    """An identifier's words, then the identifier itself when it has several (``add timeout
    addtimeout``), so a query may name it either way."""
    found = _name_words_of.get(identifier)
    if found is None:
        if len(_name_words_of) >= WORDS_REMEMBERED:
            _name_words_of.clear()
        words = _split(identifier)
        if len(words) > 1:
            words = (*words, "".join(words))
        found = _name_words_of[identifier] = " ".join(words)
    return found


def text_words(text: str) -> str:
    """Prose and code alike: every identifier in ``text`` as words, in order."""
    return " ".join(_identifier_words(text))


def _identifier_words(text: str) -> list[str]:
    """:func:`text_words` as a list (its words hold no space and are never empty)."""
    tokens = (_ASCII_IDENTIFIERS if text.isascii() else _IDENTIFIERS).findall(text)
    try:
        parts = list(map(_words_of.__getitem__, tokens))  # tokens repeat: all known, usually
    except KeyError:
        parts = [_split(token) for token in tokens]
    return list(chain.from_iterable(parts))


def path_words(relative_path: str) -> str:
    """A path's folder and file names as words, without the extension and noise folders."""
    stem = relative_path.rsplit(".", 1)[0] if "." in relative_path.rsplit("/", 1)[-1] else ""
    words = split_words(stem or relative_path)
    return " ".join(word for word in words if word not in PATH_NOISE)


def tier_of(relative_path: str, is_test: bool, is_generated: bool) -> int:
    """SIDE for tests, examples, changelogs and generated files; CODE for the rest."""
    if is_test or is_generated:
        return SIDE
    parts = relative_path.lower().split("/")
    if any(part in SIDE_DIRECTORIES for part in parts[:-1]):
        return SIDE
    return SIDE if SIDE_NAMES.match(parts[-1]) else CODE


def summary(docstring: str | None, limit: int = DOC_CHARS) -> str:
    """A docstring's first paragraph (or more, up to ``limit`` characters)."""
    if not docstring:
        return ""
    text = docstring.strip()
    if len(text) <= limit:
        return text
    cut = text.rfind("\n\n", 0, limit)
    if cut < limit // 3:
        cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > 0 else limit]


def headings(content: str, limit: int = HEADING_CHARS) -> str:
    """A documentation file's headings (Markdown ``#`` lines, reStructuredText underlines)."""
    found: list[str] = []
    lines = content.splitlines()
    for index, line in enumerate(lines[:2000]):
        stripped = line.strip()
        if stripped.startswith("#"):
            found.append(stripped.lstrip("#").strip())
        elif (
            index
            and len(stripped) >= 3
            and len(set(stripped)) == 1
            and stripped[0] in "=-~^*"
            and lines[index - 1].strip()
        ):
            found.append(lines[index - 1].strip())
        if sum(len(h) + 2 for h in found) >= limit:
            break
    return "; ".join(found)[:limit]


def definition_document(
    entity_type: str,
    name: str,
    class_context: str | None,
    signature: str | None,
    docstring: str | None,
    path: str,
    tier: int = CODE,
) -> tuple[str, str, str, str, str] | None:
    """
    The (name, qualified, signature, doc, path) words of a definition, or None when the
    entity gets no document. Tests and other side files keep their names and paths only.
    """
    if entity_type in SKIPPED_TYPES or not name:
        return None
    qualified = name_words(class_context) if class_context else ""
    if tier == SIDE:
        return (name_words(name), qualified, "", "", path)
    return (
        name_words(name),
        qualified,
        signature_words(signature, name),
        summary(docstring),
        path,
    )


SIGNATURE_NOISE = frozenset(
    (
        "def",
        "func",
        "fn",
        "function",
        "async",
        "class",
        "struct",
        "interface",
        "type",
        "public",
        "private",
        "protected",
        "static",
        "final",
        "void",
        "self",
        "cls",
        "this",
        "const",
        "let",
        "var",
        "return",
        "returns",
        "none",
        "null",
        "nil",
    )
)


def signature_words(signature: str | None, name: str) -> str:
    """A signature's words without its keywords and the definition's own name."""
    words = _identifier_words((signature or "")[:SIGNATURE_CHARS])
    for own in _split(name):  # each of the name's words, its first time
        if own in words:
            words.remove(own)
    return " ".join([word for word in words if word not in SIGNATURE_NOISE])


Described = tuple[int, str, str, "str | None", "str | None", "str | None"]
"""An entity as documents need it: (row, type, name, class, signature, docstring)."""


def document_rows(
    relative_path: str,
    language: str | None,
    content: str,
    is_test: bool,
    is_generated: bool,
    entities: Iterable[Described],
) -> list[tuple]:
    """
    A file's search documents: ``(entity row or None, kind, tier, name, qualified,
    signature, doc, path)``, its definitions first and its own document last.
    """
    tier = tier_of(relative_path, is_test, is_generated)
    where = path_words(relative_path)
    rows: list[tuple] = []
    add = rows.append
    module_doc = ""
    known = _name_words_of.get  # definition_document's words, its calls inlined
    for row, entity_type, name, class_context, signature, docstring in entities:
        if entity_type in SKIPPED_TYPES or not name:
            if entity_type == "Module" and docstring and not module_doc:
                module_doc = summary(docstring)
            continue
        named = known(name) or name_words(name)
        qualified = (known(class_context) or name_words(class_context)) if class_context else ""
        if tier == SIDE:
            add((row, DEFINITION, SIDE, named, qualified, "", "", where))
        else:
            signature = signature_words(signature, name)
            add((row, DEFINITION, tier, named, qualified, signature, summary(docstring), where))
    base = relative_path.rsplit("/", 1)[-1]
    title = name_words(base.rsplit(".", 1)[0] if "." in base else base)
    if base.lower().endswith(DOCUMENT_SUFFIXES):
        rows.append((None, DOCUMENT, tier, title, "", "", headings(content), where))
    else:
        rows.append((None, CODE_FILE, tier, title, "", "", module_doc, where))
    return rows


def write_documents(conn: sqlite3.Connection, rows: list[tuple]) -> None:
    """
    Insert ``(file_id, entity rid or None, kind, tier, *words)`` documents; definitions in
    code (not tests, examples or generated files) with their vectors when the embedding
    model is installed.
    """
    if not rows:
        return
    first = conn.execute("SELECT COALESCE(MAX(doc_id), 0) + 1 FROM search_docs").fetchone()[0]
    wanted = [row[4:] for row in rows if row[2] == DEFINITION and row[3] == CODE]
    if wanted and embedding.available():  # no definition in code: no model to load
        found = iter(embedding.vectors(wanted)).__next__
    else:
        found = repeat(0).__next__  # no vectors: 0 for each, stored as NULL
    documents: list[tuple] = []
    words: list[tuple] = []
    add_document, add_words = documents.append, words.append
    for doc_id, (file_id, rid, kind, tier, name, qualified, signature, doc, path) in enumerate(
        rows, first
    ):
        vector = found() if kind == DEFINITION and tier == CODE else 0
        add_document((doc_id, file_id, rid, kind, tier, vector))
        add_words((doc_id, name, qualified, signature, doc, path))
    # 64 rows per statement: the same rows, faster. A document without a vector binds 0,
    # stored as NULL: the sqlite3 module adapts None (and bytes) before binding it, even
    # with database.adapt_none_and_bytes_cheaply's adapters, which costs more than NULLIF.
    insert_rows(
        conn,
        "INSERT INTO search_docs (doc_id, file_id, rid, kind, tier, vector)"
        " VALUES (?, ?, ?, ?, ?, NULLIF(?, 0))",
        documents,
    )
    # One row per step: FTS5 tokenizes each row either way, and takes a multi-row
    # statement's rows about 1.6 times slower.
    conn.executemany(
        "INSERT INTO search_fts (rowid, name, qualified, signature, doc, path)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        words,
    )


def stored_documents(conn: sqlite3.Connection, file_id: int) -> dict[int | None, tuple]:
    """
    A stored file's documents rebuilt from its stored rows, by entity rid (None for the
    file's own): exactly the words its documents were indexed with.
    """
    found = conn.execute(
        "SELECT relative_path, language, content, is_test, is_generated FROM files"
        " WHERE file_id = ?",
        (file_id,),
    ).fetchone()
    if found is None:
        return {}
    path, language, content, is_test, is_generated = found
    entities = [
        (rid, entity_type, name, context, signature, _docstring(metadata))
        for rid, entity_type, name, context, signature, metadata in conn.execute(
            "SELECT rid, entity_type, entity_name, class_context, signature, metadata"
            " FROM entity_rows WHERE file_id = ? ORDER BY rid",
            (file_id,),
        )
    ]
    rows = document_rows(path, language, content, bool(is_test), bool(is_generated), entities)
    return {row[0]: row for row in rows}


def candidate_documents(
    conn: sqlite3.Connection, doc_ids: list[int]
) -> dict[int, tuple[str, str, str, str, str]]:
    """
    The words of some documents by doc_id, rebuilt from their stored rows (a file's own
    document without its headings or module docstring: enough to say why it matched).
    """
    found: dict[int, tuple[str, str, str, str, str]] = {}
    for start in range(0, len(doc_ids), 500):
        chunk = doc_ids[start : start + 500]
        for (
            doc_id,
            rid,
            path,
            is_test,
            is_generated,
            entity_type,
            name,
            context,
            signature,
            doc,
        ) in conn.execute(
            "SELECT d.doc_id, d.rid, f.relative_path, f.is_test, f.is_generated, r.entity_type,"
            " r.entity_name, r.class_context, r.signature,"
            " json_extract(r.metadata, '$.docstring')"
            " FROM search_docs d JOIN files f ON f.file_id = d.file_id"
            " LEFT JOIN entity_rows r ON r.rid = d.rid"
            f" WHERE d.doc_id IN ({','.join('?' * len(chunk))})",
            chunk,
        ):
            tier = tier_of(path, bool(is_test), bool(is_generated))
            where = path_words(path)
            if rid is None:
                base = path.rsplit("/", 1)[-1]
                title = name_words(base.rsplit(".", 1)[0] if "." in base else base)
                found[doc_id] = (title, "", "", "", where)
                continue
            columns = definition_document(
                entity_type,
                name,
                context,
                signature,
                doc if isinstance(doc, str) else None,
                where,
                tier,
            )
            if columns is not None:
                found[doc_id] = columns
    return found


def forget_file(conn: sqlite3.Connection, file_id: int) -> None:
    """Remove a file's documents (before its entity rows go: their words are rebuilt)."""
    stored = conn.execute(
        "SELECT doc_id, rid FROM search_docs WHERE file_id = ?", (file_id,)
    ).fetchall()
    if not stored:
        return
    words = stored_documents(conn, file_id)
    deletions = [(doc_id, *words[rid][3:]) for doc_id, rid in stored if rid in words]
    conn.executemany(
        "INSERT INTO search_fts (search_fts, rowid, name, qualified, signature, doc, path)"
        " VALUES ('delete', ?, ?, ?, ?, ?, ?)",
        deletions,
    )
    conn.execute("DELETE FROM search_docs WHERE file_id = ?", (file_id,))


def index_stored_files(conn: sqlite3.Connection) -> int:
    """
    Write search documents for every stored file that has none, from its stored rows (an
    index written row by row rather than by the indexer). Returns how many files.
    """
    file_ids = [
        row[0]
        for row in conn.execute(
            "SELECT file_id FROM files WHERE file_id NOT IN (SELECT file_id FROM search_docs)"
        )
    ]
    for file_id in file_ids:
        rows = stored_documents(conn, file_id).values()
        write_documents(conn, [(file_id, *row) for row in rows])
    return len(file_ids)


def _docstring(metadata: str | None) -> str | None:
    try:
        found = json.loads(metadata or "{}").get("docstring")
    except (ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None
