"""
Indexing repositories into the SQLite file: one generation per repository per run, made
visible atomically by one write transaction (local-backend §5.3).

Synchronous and reactor-free: the CLI calls it directly, the daemon runs it in a child
process (see :mod:`.service`).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from attrs import Factory, frozen

from . import writer
from .extractors import EXTRACTOR_VERSION
from .generations import (
    FactLedger,
    PendingGeneration,
    activate,
    begin_generation,
    fail_orphans,
    file_key,
    payload_hash,
    record_failure,
    repository_key,
)
from .identity import repository_id
from .lock import WriterLock
from .parse import content_hash, parse_file
from .resolve import ChangeSet, resolve_repository
from .store import open_writer, utc_now
from .walk import WalkedFile, WorkTree, discover, walk_files
from .writer import PreparedFile

Progress = Callable[[dict[str, Any]], None]
IN_PROCESS_BELOW = 48
"""Batches smaller than this are parsed in-process: a pool costs more than it saves."""
INCREMENTAL_RESOLVE_FRACTION = 0.25
"""Above this share of changed files the whole graph is rebuilt (cheaper than scoping)."""
HOLD_ENV = "ESHU_MCP_INDEX_HOLD_BEFORE_COMMIT"
"""Test hook: when set to a path, the writer pauses before COMMIT until that path exists."""


@frozen
class RepositoryReport:
    """What one repository's run did."""

    path: str
    repo_id: str | None
    status: str  # indexed | fresh | failed
    generation_id: str | None = None
    seq: int | None = None
    files_seen: int = 0
    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    unchanged: int = 0
    entities: int = 0
    edges: dict[str, int] = Factory(dict)
    source_bytes: int = 0
    seconds: float = 0.0
    error: str | None = None

    @property
    def reparsed(self) -> tuple[str, ...]:
        """Paths whose contents were (re)extracted by this run."""
        return self.added + self.modified


@frozen
class IndexReport:
    """What one run over several repositories did."""

    db_path: str
    repositories: tuple[RepositoryReport, ...]
    seconds: float

    @property
    def ok(self) -> bool:
        """True when no repository failed."""
        return all(r.status != "failed" for r in self.repositories)


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


def index_repositories(
    db_path: str | os.PathLike[str],
    paths: list[str | os.PathLike[str]],
    *,
    progress: Progress | None = None,
    workers: int | None = None,
    lock_timeout: float = 30.0,
) -> IndexReport:
    """Index each path (a git work tree or a plain directory) into the database."""
    started = time.monotonic()
    emit = progress or (lambda event: None)
    db = Path(db_path).expanduser()
    reports = []
    with WriterLock(db, timeout=lock_timeout):
        conn = open_writer(db)
        try:
            conn.execute("BEGIN IMMEDIATE")
            orphans = fail_orphans(conn)
            conn.execute("COMMIT")
            if orphans:
                emit({"phase": "recovered", "interrupted_generations": orphans})
            for path in paths:
                reports.append(_index_one(conn, str(path), emit, workers))
        finally:
            conn.close()
    report = IndexReport(str(db), tuple(reports), time.monotonic() - started)
    emit({"phase": "done", "ok": report.ok, "seconds": round(report.seconds, 3)})
    return report


def _changes(conn, repo_id: str, walked: list[WalkedFile]):
    """Split the walk into files to parse, stat-only touches and deletions."""
    existing = {
        row[0]: row
        for row in conn.execute(
            "SELECT relative_path, file_id, byte_size, mtime_ns, content_hash FROM files"
            " WHERE repo_id = ?",
            (repo_id,),
        )
    }
    extractor_changed = _meta(conn, "extractor_version") not in (None, EXTRACTOR_VERSION)
    to_parse: list[WalkedFile] = []
    touched: list[tuple[int, int]] = []
    unchanged = 0
    for item in walked:
        row = existing.get(item.relative_path)
        if row is None or extractor_changed:
            to_parse.append(item)
        elif row[2] == item.byte_size and row[3] == item.mtime_ns:
            unchanged += 1
        else:
            try:
                with open(item.absolute_path, "rb") as handle:
                    digest = content_hash(handle.read())
            except OSError:
                continue  # vanished: counted as deleted below
            if digest == row[4]:
                touched.append((item.mtime_ns, row[1]))
                unchanged += 1
            else:
                to_parse.append(item)
    readable = {w.relative_path for w in walked}
    deleted = sorted(p for p in existing if p not in readable)
    return existing, to_parse, touched, deleted, unchanged


def _index_one(conn: sqlite3.Connection, path: str, emit: Progress, workers) -> RepositoryReport:
    started = time.monotonic()
    try:
        tree = discover(path)
    except Exception as e:  # a bad path is a per-repository failure, not a crash
        emit({"phase": "failed", "path": path, "error": str(e)})
        return RepositoryReport(path=path, repo_id=None, status="failed", error=str(e))
    repo_id = repository_id(tree.identity)
    emit({"phase": "discover", "path": str(tree.root), "repo_id": repo_id, "git": tree.is_git})
    _upsert_repository(conn, tree, repo_id)
    walked = walk_files(tree)
    existing, to_parse, touched, deleted, unchanged = _changes(conn, repo_id, walked)
    emit(
        {
            "phase": "walk",
            "repo_id": repo_id,
            "files": len(walked),
            "to_parse": len(to_parse),
            "deleted": len(deleted),
        }
    )
    row = conn.execute(
        "SELECT head_commit, dirty, active_generation_id FROM repositories WHERE repo_id = ?",
        (repo_id,),
    ).fetchone()
    if touched:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("UPDATE files SET mtime_ns = ? WHERE file_id = ?", touched)
        conn.execute("COMMIT")
    if (
        not to_parse
        and not deleted
        and row[2] is not None
        and row[0] == tree.head_commit
        and bool(row[1]) == tree.dirty
    ):
        emit({"phase": "fresh", "repo_id": repo_id})
        return RepositoryReport(
            path=str(tree.root),
            repo_id=repo_id,
            status="fresh",
            generation_id=row[2],
            files_seen=len(walked),
            unchanged=unchanged,
            seconds=time.monotonic() - started,
        )
    pending = begin_generation(conn, repo_id, str(tree.root), tree.freshness_hint, tree.head_commit)
    emit(
        {
            "phase": "write",
            "repo_id": repo_id,
            "generation_id": pending.generation_id,
            "seq": pending.seq,
            "files": len(to_parse),
            "deleted": len(deleted),
        }
    )
    try:
        conn.execute("BEGIN IMMEDIATE")
        run = _GenerationWrite(conn, tree, pending, existing, emit)
        run.delete(deleted)
        run.write_parsed(to_parse, workers)
        edges = run.finish()
        activate(
            conn,
            pending,
            files_seen=len(walked),
            files_changed=len(run.added) + len(run.modified),
            files_deleted=len(run.deleted),
            files_failed=run.failed,
            is_delta=bool(existing),
        )
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('extractor_version', ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (EXTRACTOR_VERSION,),
        )
        _hold_if_requested(emit, repo_id)
        conn.execute("COMMIT")
    except Exception as e:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.execute("BEGIN IMMEDIATE")
        record_failure(conn, pending, "index_error", f"{type(e).__name__}: {e}")
        conn.execute("COMMIT")
        emit({"phase": "failed", "repo_id": repo_id, "error": str(e)})
        return RepositoryReport(
            path=str(tree.root),
            repo_id=repo_id,
            status="failed",
            generation_id=pending.generation_id,
            seq=pending.seq,
            error=str(e),
            seconds=time.monotonic() - started,
        )
    emit(
        {
            "phase": "committed",
            "repo_id": repo_id,
            "generation_id": pending.generation_id,
            "seq": pending.seq,
            "entities": run.entities,
            "edges": edges,
        }
    )
    return RepositoryReport(
        path=str(tree.root),
        repo_id=repo_id,
        status="indexed",
        generation_id=pending.generation_id,
        seq=pending.seq,
        files_seen=len(walked),
        added=tuple(run.added),
        modified=tuple(run.modified),
        deleted=tuple(run.deleted),
        unchanged=unchanged,
        entities=run.entities,
        edges=edges,
        source_bytes=run.source_bytes,
        seconds=time.monotonic() - started,
    )


class _GenerationWrite:
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

    def delete(self, paths: list[str]) -> None:
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
        writer.write_extraction(self.conn, self.repo_id, file_id, prepared)
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
        if self.existing and rebuilt <= INCREMENTAL_RESOLVE_FRACTION * len(self.existing):
            change = ChangeSet(
                frozenset(self.changed_ids),
                frozenset(self.deleted_ids),
                frozenset(self.touched_names),
            )
        edges = resolve_repository(conn, repo_id, change)
        conn.execute(
            "UPDATE repositories SET head_commit = ?, head_ref = ?, default_branch = ?,"
            " dirty = ?, remote_url = ?, repo_slug = ?, has_remote = ? WHERE repo_id = ?",
            (
                tree.head_commit,
                tree.head_ref,
                tree.default_branch,
                int(tree.dirty),
                tree.remote_url,
                _slug(tree.remote_url),
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


def _upsert_repository(conn: sqlite3.Connection, tree: WorkTree, repo_id: str) -> None:
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(
        "INSERT INTO repositories (repo_id, name, local_path, remote_url, repo_slug, has_remote,"
        " is_git, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(repo_id) DO UPDATE SET local_path = excluded.local_path,"
        " is_git = excluded.is_git",
        (
            repo_id,
            tree.root.name,
            str(tree.root),
            tree.remote_url,
            _slug(tree.remote_url),
            int(tree.remote_url is not None),
            int(tree.is_git),
            utc_now(),
        ),
    )
    conn.execute("COMMIT")


def _slug(remote_url: str | None) -> str | None:
    if not remote_url:
        return None
    return remote_url.split("://", 1)[-1].split("/", 1)[-1]


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else row[0]


def _hold_if_requested(emit: Progress, repo_id: str) -> None:
    release = os.environ.get(HOLD_ENV)
    if not release:
        return
    emit({"phase": "holding", "repo_id": repo_id})
    deadline = time.monotonic() + 60
    while not os.path.exists(release) and time.monotonic() < deadline:
        time.sleep(0.05)
