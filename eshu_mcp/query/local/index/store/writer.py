"""
Writing one file's rows (files, entities, call sites, imports, bases, secrets) inside the
generation's write transaction, into the compact storage tables of ``schema.sql``.

Workers turn a parsed file into row tuples (:func:`prepare_rows`); the writer numbers the
file's graph nodes (:class:`NodeNumbers`) and queues the rows in a :class:`RowBatch`, which
inserts many files' rows per statement.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from hashlib import sha256
from typing import Any

from attrs import Factory, define, evolve, frozen

from eshu_mcp.query.local.index.parse.rows import ParsedFile
from eshu_mcp.query.local.index.store.bulk import insert_rows
from eshu_mcp.query.local.index.store.codes import CALL_KINDS
from eshu_mcp.query.local.index.store.database import utc_now
from eshu_mcp.query.local.index.store.generations import (
    ENTITY_KEY_PREFIX,
    FactLedger,
    entity_key,
    payload_hash,
)
from eshu_mcp.query.local.index.store.identity import entity_ids_in
from eshu_mcp.query.local.index.store.search import document_rows, forget_file, write_documents

CHILD_TABLES = (
    "call_rows",
    "imports",
    "bases",
    "secret_candidates",
    "reference_rows",
    "artifact_facts",
)


def file_node(file_id: int) -> str:
    """The graph node id of a file."""
    return f"file:{file_id}"


def module_nodes(conn: sqlite3.Connection, repo_id: str) -> dict[str, int]:
    """Node numbers of the repository's module keys ('<repo_id>|<module>')."""
    prefix = f"{repo_id}|"
    return dict(
        conn.execute(
            "SELECT node_id, nid FROM nodes WHERE node_id >= ? AND node_id < ?",
            (prefix, prefix[:-1] + chr(ord("|") + 1)),
        ).fetchall()
    )


@frozen
class OldEntity:
    """An entity a re-written or deleted file had."""

    entity_id: str
    name: str
    nid: int
    signature: str | None = None


def clear_file(conn: sqlite3.Connection, file_id: int) -> list[OldEntity]:
    """Remove a file's derived rows (keeping the files row and all nodes); return its entities."""
    forget_file(conn, file_id)
    old = [
        OldEntity(*row)
        for row in conn.execute(
            "SELECT n.node_id, r.entity_name, r.rid, r.signature FROM entity_rows r"
            " JOIN nodes n ON n.nid = r.rid WHERE r.file_id = ?",
            (file_id,),
        )
    ]
    if old:
        conn.execute("DELETE FROM entity_rows WHERE file_id = ?", (file_id,))
    for table in CHILD_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE file_id = ?", (file_id,))
    return old


def delete_file(conn: sqlite3.Connection, file_id: int) -> list[OldEntity]:
    """Remove a file, its nodes and everything derived from it; return its old entities."""
    old = clear_file(conn, file_id)
    forget_nodes(conn, [e.nid for e in old])
    conn.execute("DELETE FROM nodes WHERE node_id = ?", (file_node(file_id),))
    conn.execute("DELETE FROM files WHERE file_id = ?", (file_id,))
    return old


def forget_nodes(conn: sqlite3.Connection, nids: list[int]) -> None:
    """Delete node numbers nothing stores any more."""
    if nids:
        conn.executemany("DELETE FROM nodes WHERE nid = ?", [(nid,) for nid in nids])


class NodeNumbers:
    """Hands out ``nodes.nid`` for new node ids within one write transaction."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.next = conn.execute("SELECT COALESCE(MAX(nid), 0) + 1 FROM nodes").fetchone()[0]
        self.pending: list[tuple[int, str]] = []

    def new(self, node_id: str) -> int:
        """A fresh number for a node id that has none."""
        nid = self.next
        self.next += 1
        self.pending.append((nid, node_id))
        return nid

    def many(self, node_ids: list[str]) -> list[int]:
        """Fresh numbers for node ids that have none, in order (as :meth:`new` one by one)."""
        first = self.next
        self.next += len(node_ids)
        nids = list(range(first, self.next))
        self.pending.extend(zip(nids, node_ids, strict=True))
        return nids


def file_values(
    parsed: ParsedFile, generation_id: str, commit_sha: str | None, mtime_ns: int
) -> tuple:
    """The files columns after repo_id/relative_path, in :data:`FILE_COLUMNS` order."""
    return (
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
        parsed.artifact_type,
        utc_now(),
        generation_id,
    )


FILE_COLUMNS = (
    "language, content, content_hash, byte_size, line_count, mtime_ns, commit_sha,"
    " parse_status, parse_errors, is_test, is_generated, artifact_type, indexed_at,"
    " generation_id"
)
FILE_COLUMN_COUNT = FILE_COLUMNS.count(",") + 1


def update_file(conn: sqlite3.Connection, file_id: int, values: tuple) -> None:
    """Re-write an existing files row with :func:`file_values`."""
    assignments = ", ".join(f"{c.strip()} = ?" for c in FILE_COLUMNS.split(","))
    conn.execute(f"UPDATE files SET {assignments} WHERE file_id = ?", (*values, file_id))


@frozen
class PreparedFile:
    """A parsed file's rows, built in the worker process so the writer only numbers them."""

    parsed: ParsedFile  # without its extraction lists (they live in the rows below)
    entity_ids: list[str] = Factory(list)  # one per entity row
    entity_rows: list[tuple] = Factory(list)  # entity_rows columns after rid/file_id; parent
    payloads: dict[str, str] = Factory(dict)  # entity id -> fact payload hash
    call_rows: list[tuple] = Factory(list)  # call_rows columns after file_id; caller
    import_rows: list[tuple] = Factory(list)
    base_rows: list[tuple] = Factory(list)  # (entity row, base name, kind)
    secret_rows: list[tuple] = Factory(list)
    reference_rows: list[tuple] = Factory(list)  # (name, receiver or '', owner row, line)
    fact_rows: list[tuple] = Factory(list)  # artifact_facts columns after repo_id/file_id
    search_rows: list[tuple] = Factory(list)  # search_docs columns after file_id; entity row


PARENT = 6
"""Index of the parent (an entity row number until the writer numbers it) in entity rows."""
ARG_COUNT, SIGNATURE, METADATA = 9, 10, 11
"""Indexes of the parameter count, the signature and the metadata JSON in entity rows."""


def _json_with_sorted_keys() -> Callable[[Any], str]:
    """
    ``json.JSONEncoder(sort_keys=True).encode`` without building a new C encoder per call
    (which ``encode`` does): one C encoder, made as ``iterencode`` makes it.
    """
    settings = json.JSONEncoder(sort_keys=True, check_circular=False)
    make = json.encoder.c_make_encoder
    if make is None:  # no C accelerator: the plain encoder
        return settings.encode
    encode = make(
        None,
        settings.default,
        json.encoder.encode_basestring_ascii,
        settings.indent,
        settings.key_separator,
        settings.item_separator,
        settings.sort_keys,
        settings.skipkeys,
        settings.allow_nan,
    )
    return lambda value: "".join(encode(value, 0))


metadata_json = _json_with_sorted_keys()
"""An entity's metadata as stored (sorted keys, ASCII, ``", "`` and ``": "``)."""


def prepare_rows(parsed: ParsedFile, repo_id: str) -> PreparedFile:
    """Entity ids, metadata JSON, fact payloads and row tuples for one parsed file (pure)."""
    path = parsed.relative_path
    row_of: list[int] = []  # extractor entity index -> entity row (duplicates share one)
    first: dict[str, int] = {}
    prepared = PreparedFile(
        evolve(
            parsed,
            entities=[],
            calls=[],
            imports=[],
            bases=[],
            secrets=[],
            references=[],
            facts=[],
        )
    )
    source = parsed.content.encode("utf-8") if parsed.entities else b""
    entity_id_of = entity_ids_in(repo_id, path)
    described: list[tuple] = []  # (row, type, name, class, signature, docstring) for search
    entity_ids, entity_rows = prepared.entity_ids, prepared.entity_rows
    payloads = prepared.payloads
    for entity in parsed.entities:
        entity_type, name = entity["entity_type"], entity["entity_name"]
        eid = entity_id_of(entity_type, name, entity["start_line"])
        row = first.get(eid)
        if row is not None:
            row_of.append(row)
            continue
        row = first[eid] = len(entity_rows)
        row_of.append(row)
        parent = entity["parent"]
        context, signature, fields = (
            entity["class_context"],
            entity["signature"],
            entity["metadata"],
        )
        metadata = metadata_json(fields)
        start, end = entity["start_byte"], entity["end_byte"]
        entity_ids.append(eid)
        entity_rows.append(
            (
                entity_type,
                name,
                entity["start_line"],
                entity["end_line"],
                start,
                end,
                None if parent is None else row_of[parent],
                context,
                entity["cyclomatic_complexity"],
                entity["arg_count"],
                signature,
                metadata,
            )
        )
        payloads[eid] = source_payload_hash(source, start, end, metadata)
        described.append((row, entity_type, name, context, signature, fields.get("docstring")))
    kinds = CALL_KINDS
    prepared.call_rows.extend(
        (
            None if caller is None else row_of[caller],
            name,
            # NULL when the full name is what the call_sites view rebuilds from its parts;
            # written out here, not called per row (Twisted's files have 118,000 calls)
            None
            if full_name == (name if receiver is None else f"{receiver}.{name}")
            else full_name,
            receiver,
            inferred,
            kinds.get(kind, kind),
            arg_count,
            line,
        )
        for caller, name, full_name, receiver, inferred, kind, arg_count, line in parsed.calls
    )
    prepared.import_rows.extend(parsed.imports)
    prepared.base_rows.extend((row_of[index], name, kind) for index, name, kind in parsed.bases)
    prepared.reference_rows.extend(reference_rows(parsed.references, row_of))
    prepared.secret_rows.extend(
        (path, parsed.language, line, kind, severity, excerpt, value_hash, json.dumps(notes))
        for line, kind, severity, excerpt, value_hash, notes in parsed.secrets
    )
    prepared.fact_rows.extend(
        (path, parsed.artifact_type, kind, name, line, payload)
        for kind, name, line, payload in parsed.facts
    )
    prepared.search_rows.extend(
        document_rows(
            path,
            parsed.language,
            parsed.content,
            parsed.is_test,
            parsed.is_generated,
            described,
        )
    )
    return prepared


def source_payload_hash(source: bytes, start: int, end: int, metadata: str) -> str:
    """
    ``payload_hash(body, metadata)`` of the entity whose UTF-8 ``source[start:end]`` is
    ``body`` (decoded with replacement), hashing the bytes without decoding them when the
    span starts and ends on character boundaries (they then encode back to themselves).
    """
    size = len(source)
    if (
        type(start) is int
        and type(end) is int
        and start >= 0
        and end >= 0
        and (start >= size or source[start] & 0xC0 != 0x80)
        and (end >= size or source[end] & 0xC0 != 0x80)
    ):
        hashed = b"%b\0%b" % (source[start:end], metadata.encode("utf-8", "surrogateescape"))
        return sha256(hashed).hexdigest()[:16]
    return payload_hash(source[start:end].decode("utf-8", "replace"), metadata)


def reference_rows(references: list[tuple], row_of: list[int]) -> list[tuple]:
    """A file's value references, once per (name, receiver, owner), at their first line."""
    first: dict[tuple, int] = {}
    for owner, name, receiver, line in references:
        key = (name, receiver or "", None if owner is None else row_of[owner])
        if key not in first:
            first[key] = line
    return [(*key, line) for key, line in first.items()]


@define
class RowBatch:
    """
    Rows of many files, inserted together (one statement per table per flush).

    Call ids are numbered here, so a first build can resolve from the rows it queued
    instead of reading them back.
    """

    next_call_id: int
    nodes: list[tuple[int, str]] = Factory(list)
    entities: list[tuple] = Factory(list)
    calls: list[tuple] = Factory(list)
    imports: list[tuple] = Factory(list)
    bases: list[tuple] = Factory(list)
    secrets: list[tuple] = Factory(list)
    edges: list[tuple] = Factory(list)
    references: list[tuple] = Factory(list)  # reference_rows columns
    facts: list[tuple] = Factory(list)  # artifact_facts columns
    search: list[tuple] = Factory(list)  # search_docs columns

    def add(
        self,
        repo_id: str,
        file_id: int,
        prepared: PreparedFile,
        nids: list[int],
        resolved: list[int | None] | None = None,
    ) -> None:
        """
        Queue a prepared file's rows; ``nids[i]`` numbers its entity row ``i`` and
        ``resolved[i]`` is the file its import row ``i`` resolves to (when known already).
        """
        # rows are unpacked into their fields: building each tuple from slices of another
        # cost twice as much (a first build queues Twisted's 118,000 call rows here)
        self.entities.extend(
            (
                nid,
                file_id,
                kind,
                name,
                start,
                end,
                first_byte,
                last_byte,
                None if parent is None else nids[parent],
                context,
                complexity,
                args,
                sig,
                meta,
            )
            for nid, (
                kind,
                name,
                start,
                end,
                first_byte,
                last_byte,
                parent,
                context,
                complexity,
                args,
                sig,
                meta,
            ) in zip(nids, prepared.entity_rows, strict=True)
        )
        first = self.next_call_id
        self.next_call_id += len(prepared.call_rows)
        self.calls.extend(
            (
                call_id,
                file_id,
                None if caller is None else nids[caller],
                name,
                full_name,
                receiver,
                inferred,
                kind,
                arg_count,
                line,
            )
            for call_id, (
                caller,
                name,
                full_name,
                receiver,
                inferred,
                kind,
                arg_count,
                line,
            ) in enumerate(prepared.call_rows, first)
        )
        targets = resolved or [None] * len(prepared.import_rows)
        self.imports.extend(
            (repo_id, file_id, *row, target, int(target is None))
            for row, target in zip(prepared.import_rows, targets, strict=True)
        )
        self.bases.extend(
            (prepared.entity_ids[row], name, kind, repo_id, file_id)
            for row, name, kind in prepared.base_rows
        )
        self.secrets.extend((repo_id, file_id, *row) for row in prepared.secret_rows)
        self.references.extend(
            (file_id, name, receiver, 0 if owner is None else nids[owner], line)
            for name, receiver, owner, line in prepared.reference_rows
        )
        self.facts.extend((repo_id, file_id, *row) for row in prepared.fact_rows)
        self.search.extend(
            (file_id, None if row[0] is None else nids[row[0]], *row[1:])
            for row in prepared.search_rows
        )

    def flush(self, conn: sqlite3.Connection, numbers: NodeNumbers) -> None:
        """Insert everything queued (new node numbers first)."""
        if numbers.pending:
            insert_rows(conn, "INSERT INTO nodes (nid, node_id) VALUES (?, ?)", numbers.pending)
            numbers.pending.clear()
        for sql, rows in (
            (
                "INSERT INTO entity_rows (rid, file_id, entity_type, entity_name, start_line,"
                " end_line, start_byte, end_byte, parent, class_context, cyclomatic_complexity,"
                " arg_count, signature, metadata)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                self.entities,
            ),
            (
                "INSERT INTO call_rows (call_id, file_id, caller, callee_name, full_name,"
                " receiver, inferred_type, call_kind, arg_count, line_number)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                self.calls,
            ),
            (
                "INSERT INTO imports (repo_id, file_id, module, imported_name, alias, import_type,"
                " line_number, resolved_file_id, is_external) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                self.imports,
            ),
            (
                "INSERT OR IGNORE INTO bases (entity_id, base_name, kind, repo_id, file_id)"
                " VALUES (?, ?, ?, ?, ?)",
                self.bases,
            ),
            (
                "INSERT OR IGNORE INTO secret_candidates (repo_id, file_id, relative_path,"
                " language, line_number, finding_kind, severity, redacted_excerpt, value_hash,"
                " suppression_notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                self.secrets,
            ),
            (INSERT_EDGES, self.edges),
            (
                "INSERT OR IGNORE INTO reference_rows (file_id, name, receiver, source,"
                " line_number) VALUES (?, ?, ?, ?, ?)",
                self.references,
            ),
            (
                "INSERT INTO artifact_facts (repo_id, file_id, relative_path, artifact_type,"
                " fact_kind, name, line_number, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                self.facts,
            ),
        ):
            if rows:
                insert_rows(conn, sql, rows)
                rows.clear()
        write_documents(conn, self.search)
        self.search.clear()


INSERT_EDGES = (
    "INSERT INTO edge_rows (repo, type, src, dst, call_kind, reason, method, confidence,"
    " line_number, evidence_file_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def insert_edges_of(repo_key: int) -> str:
    """INSERT_EDGES with the repository's key written in: its rows start at ``type``."""
    return (
        "INSERT INTO edge_rows (repo, type, src, dst, call_kind, reason, method, confidence,"
        f" line_number, evidence_file_id) VALUES ({int(repo_key)}, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )


def record_entity_facts(
    ledger: FactLedger, old_ids: list[str], payloads: dict[str, str], file_deleted: bool
) -> None:
    """Fact versions for a re-written or deleted file's entities."""
    if not old_ids:  # a new file: nothing can be live yet
        ledger.open_new("content_entity", payloads.items(), ENTITY_KEY_PREFIX)
        return
    live = ledger.live_payloads([entity_key(e) for e in set(old_ids) | set(payloads)])
    for old in old_ids:
        if old not in payloads:
            ledger.close(entity_key(old), "retired" if file_deleted else "superseded")
    for eid, payload in payloads.items():
        key = entity_key(eid)
        ledger.observe_known(key, "content_entity", payload, live.get(key))
