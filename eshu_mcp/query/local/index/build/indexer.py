"""
Indexing repositories into the SQLite file: one generation per repository per run, made
visible atomically by one write transaction (local-backend §5.3).

Synchronous and reactor-free: the CLI calls it directly, the daemon runs it in a child
process (see :mod:`.service`).
"""

from __future__ import annotations

import gc
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from attrs import Factory, frozen

from eshu_mcp.query.local.index.build.changed_walk import KnownChanges, walk_changed
from eshu_mcp.query.local.index.build.generation_write import GenerationWrite
from eshu_mcp.query.local.index.build.lock import WriterLock
from eshu_mcp.query.local.index.build.stopping import (
    HOLD_ENV as HOLD_ENV,  # the test hook, for callers
)
from eshu_mcp.query.local.index.build.stopping import RunStopped, hold_point
from eshu_mcp.query.local.index.parse.credentials import serving_credential_files
from eshu_mcp.query.local.index.parse.extractors import EXTRACTOR_VERSION
from eshu_mcp.query.local.index.parse.rows import fingerprint, read_limit
from eshu_mcp.query.local.index.resolve import input_cache
from eshu_mcp.query.local.index.store import writer
from eshu_mcp.query.local.index.store.database import open_writer, utc_now
from eshu_mcp.query.local.index.store.generations import (
    abandon,
    activate,
    begin_generation,
    fail_orphans,
    record_failure,
)
from eshu_mcp.query.local.index.store.identity import repository_id, repository_slug
from eshu_mcp.query.local.index.store.upgrade import extractor_key, owed_rebuilds, settle_rebuilds
from eshu_mcp.query.local.index.walk.reading import read_bounded
from eshu_mcp.query.local.index.walk.worktree import (
    Walk,
    WalkedFile,
    WorkTree,
    discover,
    recheck_dirty,
    walk,
)

Progress = Callable[[dict[str, Any]], None]
_KNOWN_TREES: dict[str, WorkTree] = {}
"""What git said about each work tree at this process's last build of it (HEAD, refs, dirty):
a build of known changed paths, none of them in ``.git``, reuses it instead of asking again."""
STOPPED_MESSAGE = "stopped by {signal} before its generation was committed"


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


def index_repositories(
    db_path: str | os.PathLike[str],
    paths: list[str | os.PathLike[str]],
    *,
    progress: Progress | None = None,
    workers: int | None = None,
    lock_timeout: float = 30.0,
    changed: dict[str, list[str] | None] | None = None,
) -> IndexReport:
    """
    Index each path (a git work tree or a plain directory) into the database, and every
    other recorded repository an older eshu-mcp indexed (see :mod:`..store.upgrade`).

    A stop request (:class:`RunStopped`, KeyboardInterrupt) propagates after the repository
    being written is rolled back and its pending generation marked interrupted.

    ``changed`` maps a path to the relative paths a watcher saw change there (None: unknown);
    a repository whose changed paths are known is walked from the index and those paths only
    (see :mod:`.changed_walk`), unless they need a whole walk.
    """
    started = time.monotonic()
    emit = progress or (lambda event: None)
    db = Path(db_path).expanduser()
    reports = []

    def lock_notice(text: str) -> None:
        emit({"phase": "recovered", "lock": text})

    with WriterLock(db, timeout=lock_timeout, notice=lock_notice), collector_paused():
        conn = open_writer(db)
        try:
            conn.execute("BEGIN IMMEDIATE")
            orphans = fail_orphans(conn)
            conn.execute("COMMIT")
            if orphans:
                emit({"phase": "recovered", "interrupted_generations": orphans})
            owed, reason = owed_rebuilds(conn, [str(path) for path in paths])
            if owed:
                emit({"phase": "upgrade", "reason": reason, "paths": owed})
            known = changed or {}
            for path in [*paths, *owed]:
                reports.append(_index_one(conn, str(path), emit, workers, known.get(str(path))))
            settle_rebuilds(conn, [r.path for r in reports if r.status != "failed"])
        finally:
            conn.close()
    report = IndexReport(str(db), tuple(reports), time.monotonic() - started)
    emit({"phase": "done", "ok": report.ok, "seconds": round(report.seconds, 3)})
    return report


@frozen
class IndexedFiles:
    """The indexed files rows a build looks at (relative path -> (path, file id, size, mtime,
    hash)), and how many files the repository holds: every row after a whole walk, only the
    changed paths' rows when the watcher named them (reading 30,000 rows for a one-file
    change cost as much as the rest of the walk)."""

    rows: dict[str, tuple]
    count: int

    def get(self, path: str) -> tuple | None:
        """The row of ``path``, or None when it is not indexed (or was not looked at)."""
        return self.rows.get(path)

    def __getitem__(self, path: str) -> tuple:
        return self.rows[path]

    def __contains__(self, path: object) -> bool:
        return path in self.rows

    def __len__(self) -> int:
        return self.count


FILE_ROW = "SELECT relative_path, file_id, byte_size, mtime_ns, content_hash FROM files"


def _indexed_files(conn, repo_id: str, walked: list[WalkedFile] | KnownChanges) -> IndexedFiles:
    if not isinstance(walked, KnownChanges):
        rows = {row[0]: row for row in conn.execute(FILE_ROW + " WHERE repo_id = ?", (repo_id,))}
        return IndexedFiles(rows, len(rows))
    rows = {}
    for path in [*(item.relative_path for item in walked.present), *sorted(walked.gone)]:
        row = conn.execute(
            FILE_ROW + " WHERE repo_id = ? AND relative_path = ?", (repo_id, path)
        ).fetchone()
        if row is not None:
            rows[path] = row
    (count,) = conn.execute("SELECT COUNT(*) FROM files WHERE repo_id = ?", (repo_id,)).fetchone()
    return IndexedFiles(rows, count)


def _changes(conn, repo_id: str, walked: list[WalkedFile] | KnownChanges):
    """Split the walk (or the known changes) into files to parse, stat-only touches and
    deletions; also returns how many files the tree holds."""
    existing = _indexed_files(conn, repo_id, walked)
    recorded = _meta(conn, extractor_key(repo_id)) or _meta(conn, "extractor_version")
    extractor_changed = recorded not in (None, EXTRACTOR_VERSION)
    if existing and _meta(conn, CREDENTIALS_KEY.format(repo_id=repo_id)) != _credentials_mode():
        extractor_changed = True  # credential files kept as text or not: read them all again
    to_parse: list[WalkedFile] = []
    touched: list[tuple[int, int]] = []
    unchanged = 0
    if isinstance(walked, KnownChanges):
        if extractor_changed:
            return None  # every file is parsed again: the whole walk
        deleted = sorted(path for path in walked.gone if path in existing)
        unchanged = len(existing) - len(deleted) - len(walked.present)
        listed = walked.present
    else:
        listed = walked
    for item in listed:
        row = existing.get(item.relative_path)
        if row is None or extractor_changed:
            to_parse.append(item)
        elif row[2] == item.byte_size and row[3] == item.mtime_ns:
            unchanged += 1
        else:
            read = read_bounded(item.absolute_path, read_limit(item.relative_path))
            if read is None:
                continue  # vanished: counted as deleted below
            if fingerprint(*read) == row[4]:
                touched.append((item.mtime_ns, row[1]))
                unchanged += 1
            else:
                to_parse.append(item)
    if isinstance(walked, KnownChanges):
        return existing, to_parse, touched, deleted, unchanged, len(existing) - len(deleted)
    readable = {w.relative_path for w in walked}
    deleted = sorted(p for p in existing.rows if p not in readable)
    return existing, to_parse, touched, deleted, unchanged, len(walked)


def _index_one(
    conn: sqlite3.Connection, path: str, emit: Progress, workers, changed: list[str] | None = None
) -> RepositoryReport:
    started = time.monotonic()
    known_tree = _KNOWN_TREES.get(path) if changed is not None else None
    if known_tree is not None and any(p == ".git" or p.startswith(".git/") for p in changed):
        known_tree = None  # git's own state moved (a commit, a checkout): look again
    try:
        tree = known_tree or discover(path)
    except Exception as e:  # a bad path is a per-repository failure, not a crash
        emit({"phase": "failed", "path": path, "error": str(e)})
        return RepositoryReport(path=path, repo_id=None, status="failed", error=str(e))
    _KNOWN_TREES[path] = tree
    repo_id = repository_id(tree.identity)
    emit(
        {
            "phase": "discover",
            "path": str(tree.root),
            "requested": path,
            "repo_id": repo_id,
            "git": tree.is_git,
            "git_refused": tree.git_refused,
        }
    )
    hold_point("walk", emit)
    _upsert_repository(conn, tree, repo_id)
    found = None
    if changed is not None and str(tree.root) == os.path.realpath(path):
        known = walk_changed(conn, repo_id, tree.root, changed)
        found = None if known is None else _changes(conn, repo_id, known)
    if found is None:
        if known_tree is not None:  # the whole walk is needed after all: git's facts too
            tree = _KNOWN_TREES[path] = discover(path)
            known_tree = None
        walk_result = walk(tree, _own_files(conn))
        _record_undecodable(conn, repo_id, walk_result, emit)
        found = _changes(conn, repo_id, walk_result.files)
    existing, to_parse, touched, deleted, unchanged, files_seen = found
    if known_tree is not None and tree is known_tree and (to_parse or deleted):
        tree = _KNOWN_TREES[path] = recheck_dirty(tree, changed)
    emit(
        {
            "phase": "walk",
            "repo_id": repo_id,
            "files": files_seen,
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
            files_seen=files_seen,
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
    # A first build only adds rows, each referring to rows it added before: SQLite's check
    # of every row's file (or call) cost about 0.06 CPU-s of Twisted's build, for nothing.
    first_build = not existing
    try:
        conn.execute(f"PRAGMA foreign_keys = {'OFF' if first_build else 'ON'}")
        conn.execute("BEGIN IMMEDIATE")
        run = GenerationWrite(conn, tree, pending, existing, emit)
        run.delete(deleted)
        run.write_parsed(to_parse, workers)
        edges = run.finish()
        activate(
            conn,
            pending,
            files_seen=files_seen,
            files_changed=len(run.added) + len(run.modified),
            files_deleted=len(run.deleted),
            files_failed=run.failed,
            is_delta=bool(existing),
        )
        conn.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [
                ("extractor_version", EXTRACTOR_VERSION),
                (extractor_key(repo_id), EXTRACTOR_VERSION),
                (CREDENTIALS_KEY.format(repo_id=repo_id), _credentials_mode()),
            ],
        )
        hold_point("commit", emit)
        conn.execute("COMMIT")
        input_cache.committed(conn, repo_id, pending.generation_id)
    except BaseException as e:
        if isinstance(e, Exception):
            return _failed(conn, tree, pending, emit, e, started)
        # a stop request: undo, record, and let it propagate
        if _abandon(conn, pending, emit, e) and isinstance(e, RunStopped):
            e.abandoned.append((str(tree.root), pending.seq, row[2] is not None))
        raise
    finally:
        if first_build and not conn.in_transaction:  # no-op inside one
            conn.execute("PRAGMA foreign_keys = ON")
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
        files_seen=files_seen,
        added=tuple(run.added),
        modified=tuple(run.modified),
        deleted=tuple(run.deleted),
        unchanged=unchanged,
        entities=run.entities,
        edges=edges,
        source_bytes=run.source_bytes,
        seconds=time.monotonic() - started,
    )


CREDENTIALS_KEY = "credential_files:{repo_id}"
"""``meta`` key: whether the repository's credential files were kept as text (or withheld)."""


def _credentials_mode() -> str:
    return "served" if serving_credential_files() else "withheld"


UNDECODABLE_KEY = "undecodable_names:{repo_id}"
"""``meta`` key: how many file names the last walk skipped as not valid UTF-8."""


def _record_undecodable(conn: sqlite3.Connection, repo_id: str, walked: Walk, emit: Progress):
    """Count the names skipped as not UTF-8 (``--status`` shows it), and warn once per run."""
    skipped = len(walked.undecodable)
    key = UNDECODABLE_KEY.format(repo_id=repo_id)
    if skipped:
        emit(
            {
                "phase": "skipped",
                "repo_id": repo_id,
                "undecodable_names": skipped,
                "example": walked.undecodable_example(),
            }
        )
    if skipped != int(_meta(conn, key) or 0):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, str(skipped)),
        )
        conn.execute("COMMIT")


def _failed(conn, tree: WorkTree, pending, emit: Progress, error: Exception, started: float):
    """Roll the generation back, record why it failed; the previous one keeps serving."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")
    conn.execute("BEGIN IMMEDIATE")
    record_failure(conn, pending, "index_error", f"{type(error).__name__}: {error}")
    conn.execute("COMMIT")
    emit({"phase": "failed", "repo_id": pending.repo_id, "error": str(error)})
    return RepositoryReport(
        path=str(tree.root),
        repo_id=pending.repo_id,
        status="failed",
        generation_id=pending.generation_id,
        seq=pending.seq,
        error=str(error),
        seconds=time.monotonic() - started,
    )


def _abandon(conn, pending, emit: Progress, stop: BaseException) -> bool:
    """
    A stop request: roll back, and mark the pending generation interrupted. False when the
    stop came just after COMMIT (the generation is active: nothing to abandon).
    """
    if conn.in_transaction:
        conn.execute("ROLLBACK")
    name = stop.name if isinstance(stop, RunStopped) else "SIGINT"
    conn.execute("BEGIN IMMEDIATE")
    abandoned = abandon(conn, pending, STOPPED_MESSAGE.format(signal=name))
    conn.execute("COMMIT")
    if not abandoned:
        return False
    emit(
        {
            "phase": "stopped",
            "repo_id": pending.repo_id,
            "seq": pending.seq,
            "signal": name,
        }
    )
    return True


@contextmanager
def collector_paused() -> Iterator[None]:
    """
    Pause Python's cyclic garbage collector for a run: the writer holds a few hundred
    thousand long-lived rows and catalog entries that each full collection would walk
    again (about a sixth of a first build's writer time), and creates no cycles to free.
    Warming kept inputs pauses it too (a third of its time at 0.9M entities).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _upsert_repository(conn: sqlite3.Connection, tree: WorkTree, repo_id: str) -> None:
    conn.execute("BEGIN IMMEDIATE")
    stale = conn.execute(
        "SELECT repo_id FROM repositories WHERE local_path = ? AND repo_id <> ?",
        (str(tree.root), repo_id),
    ).fetchone()
    if stale is not None:  # the tree's identity changed (e.g. an origin remote was added)
        forget_repository(conn, stale[0])
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
            repository_slug(tree.remote_url),
            int(tree.remote_url is not None),
            int(tree.is_git),
            utc_now(),
        ),
    )
    conn.execute("COMMIT")


def forget_repository(conn: sqlite3.Connection, repo_id: str) -> None:
    """Inside a transaction: remove a repository and everything recorded for it."""
    for (file_id,) in conn.execute(
        "SELECT file_id FROM files WHERE repo_id = ?", (repo_id,)
    ).fetchall():
        writer.delete_file(conn, file_id)
    conn.execute(
        "DELETE FROM edge_rows WHERE repo = (SELECT repo_key FROM repositories WHERE repo_id = ?)",
        (repo_id,),
    )
    conn.execute(
        "DELETE FROM nodes WHERE node_id IN (SELECT module_key FROM modules WHERE repo_id = ?)",
        (repo_id,),
    )
    for table in ("modules", "fact_versions"):
        conn.execute(f"DELETE FROM {table} WHERE repo_id = ?", (repo_id,))
    conn.execute("DELETE FROM repositories WHERE repo_id = ?", (repo_id,))
    conn.execute("DELETE FROM meta WHERE key = ?", (extractor_key(repo_id),))


def _own_files(conn: sqlite3.Connection) -> frozenset[str]:
    """The index's own files, never indexed even when the database lives in the tree."""
    main = conn.execute("PRAGMA database_list").fetchone()[2]
    base = os.path.realpath(main)
    return frozenset(base + suffix for suffix in ("", "-wal", "-shm", "-journal", ".lock"))


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else row[0]
