"""
Writing one file's rows (files, entities, call sites, imports, bases, secrets, FTS) inside
the generation's write transaction.
"""

from __future__ import annotations

import json
import sqlite3

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


def write_extraction(
    conn: sqlite3.Connection,
    repo_id: str,
    generation_id: str,
    file_id: int,
    parsed: ParsedFile,
    names: dict[str, str] | None = None,
) -> dict[str, str]:
    """Insert the file's entities and evidence; return entity fact payloads by entity id.

    When ``names`` is given it receives each written entity's name by id.
    """
    path = parsed.relative_path
    ids: list[str | None] = []
    seen: set[str] = set()
    rows = []
    payloads: dict[str, str] = {}
    fts_rows = []
    source = parsed.content.encode("utf-8") if parsed.entities else b""
    for entity in parsed.entities:
        eid = entity_id(
            repo_id, path, entity["entity_type"], entity["entity_name"], entity["start_line"]
        )
        if eid in seen:
            ids.append(eid)
            continue
        seen.add(eid)
        ids.append(eid)
        parent = entity["parent"]
        metadata = json.dumps(entity["metadata"], sort_keys=True)
        rows.append(
            (
                eid,
                repo_id,
                file_id,
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
                int(parsed.is_test),
                int(parsed.is_generated),
                entity["signature"],
                None,  # docstring lives in metadata only (index size)
                metadata,
                generation_id,
            )
        )
        body = source[entity["start_byte"] : entity["end_byte"]].decode("utf-8", "replace")
        payloads[eid] = payload_hash(body, metadata)
        if names is not None:
            names[eid] = entity["entity_name"]
        fts_rows.append((eid, entity["entity_name"], body))
    if rows:
        conn.executemany(
            "INSERT INTO entities (entity_id, repo_id, file_id, relative_path, entity_type,"
            " entity_name, qualified_name, start_line, end_line, start_byte, end_byte, language,"
            " parent_entity_id, class_context, cyclomatic_complexity, arg_count, line_span,"
            " is_test, is_generated, signature, docstring, metadata, generation_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        rids = dict(
            conn.execute("SELECT entity_id, rid FROM entities WHERE file_id = ?", (file_id,))
        )
        conn.executemany(
            "INSERT INTO entities_fts (rowid, entity_name, source_cache) VALUES (?, ?, ?)",
            [(rids[eid], name, body) for eid, name, body in fts_rows],
        )
    if parsed.calls:
        conn.executemany(
            "INSERT INTO call_sites (repo_id, file_id, caller_entity_id, callee_name, full_name,"
            " receiver, inferred_type, call_kind, arg_count, line_number)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(repo_id, file_id, None if c[0] is None else ids[c[0]], *c[1:]) for c in parsed.calls],
        )
    if parsed.imports:
        conn.executemany(
            "INSERT INTO imports (repo_id, file_id, module, imported_name, alias, import_type,"
            " line_number) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(repo_id, file_id, *row) for row in parsed.imports],
        )
    if parsed.bases:
        conn.executemany(
            "INSERT OR IGNORE INTO bases (entity_id, base_name, kind, repo_id, file_id)"
            " VALUES (?, ?, ?, ?, ?)",
            [(ids[index], name, kind, repo_id, file_id) for index, name, kind in parsed.bases],
        )
    if parsed.secrets:
        conn.executemany(
            "INSERT OR IGNORE INTO secret_candidates (repo_id, file_id, relative_path, language,"
            " line_number, finding_kind, severity, redacted_excerpt, value_hash,"
            " suppression_notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    repo_id,
                    file_id,
                    path,
                    parsed.language,
                    line,
                    kind,
                    severity,
                    excerpt,
                    value_hash,
                    json.dumps(notes),
                )
                for line, kind, severity, excerpt, value_hash, notes in parsed.secrets
            ],
        )
    return payloads


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
