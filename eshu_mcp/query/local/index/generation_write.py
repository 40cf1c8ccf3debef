"""
The body of one generation's write transaction: parse changed files in the worker pool and
insert their rows as they arrive, retire deleted files, record fact versions, then rebuild
the affected part of the graph and the repository's git facts.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

from . import writer
from .bulk import BulkLoad, worth_bulk_loading
from .fts_build import FtsBuilder, fts_is_empty
from .generations import (
    FactLedger,
    PendingGeneration,
    file_key,
    payload_hash,
    repository_key,
)
from .identity import repository_slug
from .parse import parse_file
from .resolve import ChangeSet, resolve_repository
from .walk import WalkedFile, WorkTree
from .writer import PreparedFile

IN_PROCESS_BELOW = 48
"""Batches smaller than this are parsed in-process: a pool costs more than it saves."""
INCREMENTAL_RESOLVE_FRACTION = 0.25
"""Above this share of changed files the whole graph is rebuilt (cheaper than scoping)."""


def _parse_walked(item: tuple[str, str, str]) -> PreparedFile | None:
    relative, absolute, repo_id = item
    try:
        with open(absolute, "rb") as handle:
            data = handle.read()
    except OSError:
        return None  # vanished or unreadable since the walk
    return writer.prepare_rows(parse_file(relative, data), repo_id)


def parse_many(
    items: list[tuple[str, str, str]], workers: int | None = None
) -> Iterator[PreparedFile | None]:
    """
    Parse (relative path, absolute path, repo id) items into prepared rows, in a process
    pool sized to the machine (in-process for tiny batches), in input order.
    """
    workers = workers or os.cpu_count() or 1
    if len(items) < IN_PROCESS_BELOW or workers < 2:
        yield from map(_parse_walked, items)
        return
    import multiprocessing

    context = multiprocessing.get_context("fork")
    chunk = max(1, min(32, len(items) // (workers * 8)))
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        yield from pool.map(_parse_walked, items, chunksize=chunk)


class GenerationWrite:
    """The body of one generation's write transaction."""

    def __init__(self, conn, tree: WorkTree, pending: PendingGeneration, existing, emit) -> None:
        self.conn = conn
        self.tree = tree
        self.pending = pending
        self.repo_id = pending.repo_id
        self.existing = existing
        self.emit = emit
        self.ledger = FactLedger(conn, self.repo_id, pending.seq)
        self.added: list[str] = []
        self.modified: list[str] = []
        self.deleted: list[str] = []
        self.file_facts: list[tuple[str, str]] = []
        self.entities = 0
        self.failed = 0
        self.source_bytes = 0
        self.changed_ids: set[int] = set()
        self.deleted_ids: set[int] = set()
        self.touched_names: set[str] = set()
        self.hierarchy_changed = False
        self.bulk: BulkLoad | None = None
        self.fts: FtsBuilder | None = None
        self.next_rid = conn.execute("SELECT COALESCE(MAX(rid), 0) + 1 FROM entities").fetchone()[0]

    def delete(self, paths: list[str]) -> None:
        """Retire deleted files: their rows, their entity facts and their file fact."""
        for path in paths:
            file_id = self.existing[path][1]
            old = writer.delete_file(self.conn, file_id)
            self.deleted_ids.add(file_id)
            self.touched_names.update(name for _, name in old)
            old_ids = [eid for eid, _ in old]
            writer.record_entity_facts(self.ledger, old_ids, {}, file_deleted=True)
            self.ledger.close(file_key(self.repo_id, path), "retired")
            self.deleted.append(path)

    def write_parsed(self, to_parse: list[WalkedFile], workers) -> None:
        """Parse in the pool and write each result as it arrives (parsing overlaps writing)."""
        started = time.monotonic()
        if worth_bulk_loading(self.conn, len(to_parse), len(self.existing)):
            if fts_is_empty(self.conn):
                self.fts = FtsBuilder(self.conn)
            self.bulk = BulkLoad(self.conn, self.repo_id, fill_file_fts=self.fts is None)
        items = [(w.relative_path, w.absolute_path, self.repo_id) for w in to_parse]
        results = parse_many(items, workers)
        for done, (walked, result) in enumerate(zip(to_parse, results, strict=True), 1):
            if result is None:
                if walked.relative_path in self.existing:
                    self.delete([walked.relative_path])
            else:
                self._write_one(walked, result)
            if done % 50 == 0 or done == len(to_parse):
                elapsed = time.monotonic() - started
                self.emit(
                    {
                        "phase": "parse",
                        "repo_id": self.repo_id,
                        "done": done,
                        "total": len(to_parse),
                        "rate": round(done / elapsed, 1) if elapsed > 0 else None,
                    }
                )

    def _write_one(self, walked: WalkedFile, prepared: PreparedFile) -> None:
        result = prepared.parsed
        row = self.existing.get(walked.relative_path)
        file_id = None if row is None else row[1]
        if file_id is not None:
            old_bases = set(
                self.conn.execute(
                    "SELECT e.entity_name, b.base_name, b.kind FROM bases b"
                    " JOIN entities e ON e.entity_id = b.entity_id WHERE b.file_id = ?",
                    (file_id,),
                ).fetchall()
            )
            new_bases = {
                (prepared.names[eid], base, kind) for eid, base, kind in prepared.base_rows
            }
            # A surviving class with other bases changes inherited-method resolution in files
            # this change set cannot name: rebuild the whole graph then.
            self.hierarchy_changed |= old_bases != new_bases
        old = writer.clear_file(self.conn, file_id) if file_id is not None else []
        old_ids = [eid for eid, _ in old]
        file_id = writer.write_file(
            self.conn,
            self.repo_id,
            self.pending.generation_id,
            self.tree.head_commit,
            result,
            walked.mtime_ns,
            file_id,
        )
        if self.fts is not None:
            self.fts.add_file(file_id, walked.relative_path, result.content)
        self.next_rid = writer.write_extraction(
            self.conn, self.repo_id, file_id, prepared, self.next_rid, self.fts
        )
        payloads = prepared.payloads
        before = {(eid, name) for eid, name in old}
        self.touched_names.update(name for _, name in before ^ set(prepared.names.items()))
        self.entities += len(payloads)
        self.changed_ids.add(file_id)
        self.failed += result.parse_status == "parse_error"
        self.source_bytes += result.byte_size
        writer.record_entity_facts(self.ledger, old_ids, payloads, file_deleted=False)
        self.file_facts.append(
            (
                file_key(self.repo_id, walked.relative_path),
                payload_hash(result.content_hash, result.language or ""),
            )
        )
        (self.added if row is None else self.modified).append(walked.relative_path)

    def close(self) -> None:
        """Release the FTS thread of a run that failed before :meth:`finish`."""
        if self.fts is not None:
            self.fts.close()
            self.fts = None

    def finish(self) -> dict[str, int]:
        """Facts, edges, repository row and refs; returns edge counts."""
        conn, tree, repo_id = self.conn, self.tree, self.repo_id
        live = self.ledger.live_payloads([key for key, _ in self.file_facts])
        for key, payload in self.file_facts:
            self.ledger.observe_known(key, "file", payload, live.get(key))
        self.ledger.observe(
            repository_key(repo_id),
            "repository",
            payload_hash(tree.remote_url or "", tree.freshness_hint, tree.head_ref or ""),
        )
        self.emit({"phase": "resolve", "repo_id": repo_id})
        change = None
        rebuilt = len(self.changed_ids) + len(self.deleted_ids)
        small = rebuilt <= INCREMENTAL_RESOLVE_FRACTION * len(self.existing)
        if self.existing and small and not self.hierarchy_changed:
            change = ChangeSet(
                frozenset(self.changed_ids),
                frozenset(self.deleted_ids),
                frozenset(self.touched_names),
            )
        edges = resolve_repository(conn, repo_id, change)
        if self.bulk is not None:
            self.bulk.finish()
        if self.fts is not None:
            self.fts.finish(conn)
            self.fts = None
        conn.execute(
            "UPDATE repositories SET head_commit = ?, head_ref = ?, default_branch = ?,"
            " dirty = ?, remote_url = ?, repo_slug = ?, has_remote = ? WHERE repo_id = ?",
            (
                tree.head_commit,
                tree.head_ref,
                tree.default_branch,
                int(tree.dirty),
                tree.remote_url,
                repository_slug(tree.remote_url),
                int(tree.remote_url is not None),
                repo_id,
            ),
        )
        conn.execute("DELETE FROM repository_refs WHERE repo_id = ?", (repo_id,))
        conn.executemany(
            "INSERT OR REPLACE INTO repository_refs"
            " (repo_id, ref_name, ref_kind, commit_sha, is_head) VALUES (?, ?, ?, ?, ?)",
            [(repo_id, r.name, r.kind, r.commit_sha, int(r.is_head)) for r in tree.refs],
        )
        self.ledger.flush()
        self.ledger.prune()
        return edges
