"""
Writing one file's rows (files, entities, call sites, imports, bases, secrets, FTS) inside
the generation's write transaction.
"""

from __future__ import annotations

import json
import sqlite3

from attrs import Factory, evolve, frozen

from .fts_build import FtsBuilder
from .generations import FactLedger, entity_key, payload_hash
from .identity import entity_id
from .parse import ParsedFile
from .store import utc_now

CHILD_TABLES = ("call_sites", "imports", "bases", "secret_candidates")


def clear_file(conn: sqlite3.Connection, file_id: int) -> list[tuple[str, str]]:
    """Remove a file's derived rows (keeping the files row); return its old (id, name) pairs."""
    old = conn.execute(
        "SELECT entity_id, entity_name FROM entities WHERE file_id = ?", (file_id,)
    ).fetchall()
    if old:
        conn.execute(
            "INSERT INTO entities_fts (entities_fts, rowid, entity_name, source_cache)"
            " SELECT 'delete', rid, entity_name, source_cache FROM entity_source WHERE file_id = ?",
            (file_id,),
        )
        conn.execute("DELETE FROM entities WHERE file_id = ?", (file_id,))
    for table in CHILD_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE file_id = ?", (file_id,))
    return old


def delete_file(conn: sqlite3.Connection, file_id: int) -> list[tuple[str, str]]:
    """Remove a file and everything derived from it; return its old (id, name) pairs."""
    old = clear_file(conn, file_id)
    conn.execute("DELETE FROM files WHERE file_id = ?", (file_id,))
    return old


def write_file(
    conn: sqlite3.Connection,
    repo_id: str,
    generation_id: str,
    commit_sha: str | None,
    parsed: ParsedFile,
    mtime_ns: int,
    file_id: int | None,
) -> int:
    """Insert or update the files row; return its file_id."""
    values = (
        parsed.language,
        parsed.content,
        parsed.content_hash,
        parsed.byte_size,
        parsed.line_count,
        mtime_ns,
        commit_sha,
        parsed.parse_status,
        parsed.parse_errors,
        int(parsed.is_test),
        int(parsed.is_generated),
        utc_now(),
        generation_id,
    )
    if file_id is not None:
        conn.execute(
            "UPDATE files SET language = ?, content = ?, content_hash = ?, byte_size = ?,"
            " line_count = ?, mtime_ns = ?, commit_sha = ?, parse_status = ?, parse_errors = ?,"
            " is_test = ?, is_generated = ?, indexed_at = ?, generation_id = ? WHERE file_id = ?",
            (*values, file_id),
        )
        return file_id
    cursor = conn.execute(
        "INSERT INTO files (repo_id, relative_path, language, content, content_hash, byte_size,"
        " line_count, mtime_ns, commit_sha, parse_status, parse_errors, is_test, is_generated,"
        " indexed_at, generation_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (repo_id, parsed.relative_path, *values),
    )
    return cursor.lastrowid


@frozen
class PreparedFile:
    """A parsed file's rows, built in the worker process so the writer only inserts them."""

    parsed: ParsedFile  # without its extraction lists (they live in the rows below)
    entity_rows: list[tuple] = Factory(list)  # entities columns after file_id
    fts_rows: list[tuple[str, str, str]] = Factory(list)  # entity id, name, source
    payloads: dict[str, str] = Factory(dict)  # entity id -> fact payload hash
    names: dict[str, str] = Factory(dict)  # entity id -> name
    call_rows: list[tuple] = Factory(list)
    import_rows: list[tuple] = Factory(list)
    base_rows: list[tuple] = Factory(list)
    secret_rows: list[tuple] = Factory(list)


def prepare_rows(parsed: ParsedFile, repo_id: str) -> PreparedFile:
    """Entity ids, metadata JSON, fact payloads and row tuples for one parsed file (pure)."""
    path = parsed.relative_path
    ids: list[str] = []
    seen: set[str] = set()
    prepared = PreparedFile(evolve(parsed, entities=[], calls=[], imports=[], bases=[], secrets=[]))
    source = parsed.content.encode("utf-8") if parsed.entities else b""
    is_test, is_generated = int(parsed.is_test), int(parsed.is_generated)
    for entity in parsed.entities:
        eid = entity_id(
            repo_id, path, entity["entity_type"], entity["entity_name"], entity["start_line"]
        )
        ids.append(eid)
        if eid in seen:
            continue
        seen.add(eid)
        parent = entity["parent"]
        metadata = json.dumps(entity["metadata"], sort_keys=True)
        prepared.entity_rows.append(
            (
                path,
                entity["entity_type"],
                entity["entity_name"],
                entity["qualified_name"],
                entity["start_line"],
                entity["end_line"],
                entity["start_byte"],
                entity["end_byte"],
                parsed.language,
                None if parent is None else ids[parent],
                entity["class_context"],
                entity["cyclomatic_complexity"],
                entity["arg_count"],
                entity["end_line"] - entity["start_line"] + 1,
                is_test,
                is_generated,
                entity["signature"],
                None,  # docstring lives in metadata only (index size)
                metadata,
                "",  # the file row carries the generation (index size)
                eid,
            )
        )
        body = source[entity["start_byte"] : entity["end_byte"]].decode("utf-8", "replace")
        prepared.payloads[eid] = payload_hash(body, metadata)
        prepared.names[eid] = entity["entity_name"]
        prepared.fts_rows.append((eid, entity["entity_name"], body))
    prepared.call_rows.extend((None if c[0] is None else ids[c[0]], *c[1:]) for c in parsed.calls)
    prepared.import_rows.extend(parsed.imports)
    prepared.base_rows.extend((ids[index], name, kind) for index, name, kind in parsed.bases)
    prepared.secret_rows.extend(
        (path, parsed.language, line, kind, severity, excerpt, value_hash, json.dumps(notes))
        for line, kind, severity, excerpt, value_hash, notes in parsed.secrets
    )
    return prepared


def write_extraction(
    conn: sqlite3.Connection,
    repo_id: str,
    file_id: int,
    prepared: PreparedFile,
    first_rid: int,
    fts: FtsBuilder | None = None,
) -> int:
    """
    Insert a prepared file's entities (and their FTS rows), calls, imports, bases, secrets.

    Entity rowids are assigned from ``first_rid`` (the caller tracks the next free one, so no
    query is needed to learn them); returns the next free rowid. With ``fts`` the entity FTS
    rows go to that builder instead of ``entities_fts``.
    """
    next_rid = first_rid + len(prepared.entity_rows)
    if prepared.entity_rows:
        conn.executemany(
            "INSERT INTO entities (repo_id, file_id, relative_path, entity_type,"
            " entity_name, qualified_name, start_line, end_line, start_byte, end_byte, language,"
            " parent_entity_id, class_context, cyclomatic_complexity, arg_count, line_span,"
            " is_test, is_generated, signature, docstring, metadata, generation_id, entity_id,"
            " rid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (repo_id, file_id, *row, rid)
                for rid, row in enumerate(prepared.entity_rows, first_rid)
            ],
        )
        fts_rows = [
            (rid, name, body) for rid, (_, name, body) in enumerate(prepared.fts_rows, first_rid)
        ]
        if fts is not None:
            fts.add_entities(fts_rows)
        else:
            conn.executemany(
                "INSERT INTO entities_fts (rowid, entity_name, source_cache) VALUES (?, ?, ?)",
                fts_rows,
            )
    if prepared.call_rows:
        conn.executemany(
            "INSERT INTO call_sites (repo_id, file_id, caller_entity_id, callee_name, full_name,"
            " receiver, inferred_type, call_kind, arg_count, line_number)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(repo_id, file_id, *row) for row in prepared.call_rows],
        )
    if prepared.import_rows:
        conn.executemany(
            "INSERT INTO imports (repo_id, file_id, module, imported_name, alias, import_type,"
            " line_number) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(repo_id, file_id, *row) for row in prepared.import_rows],
        )
    if prepared.base_rows:
        conn.executemany(
            "INSERT OR IGNORE INTO bases (entity_id, base_name, kind, repo_id, file_id)"
            " VALUES (?, ?, ?, ?, ?)",
            [(*row, repo_id, file_id) for row in prepared.base_rows],
        )
    if prepared.secret_rows:
        conn.executemany(
            "INSERT OR IGNORE INTO secret_candidates (repo_id, file_id, relative_path, language,"
            " line_number, finding_kind, severity, redacted_excerpt, value_hash,"
            " suppression_notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(repo_id, file_id, *row) for row in prepared.secret_rows],
        )
    return next_rid


def record_entity_facts(
    ledger: FactLedger, old_ids: list[str], payloads: dict[str, str], file_deleted: bool
) -> None:
    """Fact versions for a re-written or deleted file's entities."""
    live = ledger.live_payloads([entity_key(e) for e in set(old_ids) | set(payloads)])
    for old in old_ids:
        if old not in payloads:
            ledger.close(entity_key(old), "retired" if file_deleted else "superseded")
    for eid, payload in payloads.items():
        key = entity_key(eid)
        ledger.observe_known(key, "content_entity", payload, live.get(key))
