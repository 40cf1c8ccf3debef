"""
Removing repositories from the index: ``eshu-mcp index --forget REPO`` and ``--prune``.

Both take the writer lock and remove each repository (its files, entities, call sites,
edges, graph nodes, generations and fact history) in one transaction, so a reader sees the
repository either whole or gone.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from attrs import frozen

from eshu_mcp.query.local.index.build.indexer import forget_repository
from eshu_mcp.query.local.index.build.lock import WriterLock
from eshu_mcp.query.local.index.store.database import open_writer
from eshu_mcp.query.local.index.store.upgrade import recorded_repositories


class UnknownRepository(Exception):
    """No indexed repository matches the selector (or more than one does)."""


@frozen
class ForgottenRepository:
    """What removing one repository took out of the index."""

    repo_id: str
    name: str
    local_path: str
    files: int
    entities: int
    edges: int
    generations: int

    def as_dict(self) -> dict[str, object]:
        """The JSON form printed by ``--forget --json``."""
        return {
            "repo_id": self.repo_id,
            "name": self.name,
            "local_path": self.local_path,
            "files": self.files,
            "entities": self.entities,
            "edges": self.edges,
            "generations": self.generations,
        }


def directory_missing(local_path: str) -> bool:
    """True when a recorded repository's work tree is no longer a directory."""
    return not os.path.isdir(local_path)


def match_repositories(conn: sqlite3.Connection, selector: str) -> list[sqlite3.Row]:
    """Repositories a selector names: exact repo id, else path, else name."""
    rows = conn.execute("SELECT * FROM repositories WHERE repo_id = ?", (selector,)).fetchall()
    if rows:
        return rows
    candidates = {selector, os.path.abspath(os.path.expanduser(selector))}
    candidates.add(os.path.realpath(os.path.expanduser(selector)))
    marks = ",".join("?" * len(candidates))
    rows = conn.execute(
        f"SELECT * FROM repositories WHERE local_path IN ({marks})", tuple(candidates)
    ).fetchall()
    if rows:
        return rows
    return conn.execute(
        "SELECT * FROM repositories WHERE name = ? ORDER BY local_path", (selector,)
    ).fetchall()


def forget(
    db_path: str | os.PathLike[str], selector: str, *, lock_timeout: float = 30.0
) -> ForgottenRepository:
    """Remove the one repository a selector names; raises :class:`UnknownRepository`."""
    with WriterLock(Path(db_path).expanduser(), timeout=lock_timeout):
        conn = open_writer(db_path)
        try:
            rows = match_repositories(conn, selector)
            if not rows:
                raise UnknownRepository(f"no indexed repository matches {selector!r}")
            if len(rows) > 1:
                ids = ", ".join(f"{r['repo_id']} ({r['local_path']})" for r in rows)
                raise UnknownRepository(
                    f"{selector!r} names {len(rows)} repositories: {ids}; give a repo id or path"
                )
            (forgotten,) = _remove(conn, rows)
            return forgotten
        finally:
            conn.close()


def prune(
    db_path: str | os.PathLike[str], *, lock_timeout: float = 30.0
) -> list[ForgottenRepository]:
    """Remove every repository whose recorded directory no longer exists."""
    with WriterLock(Path(db_path).expanduser(), timeout=lock_timeout):
        conn = open_writer(db_path)
        try:
            rows = conn.execute("SELECT * FROM repositories ORDER BY local_path").fetchall()
            return _remove(conn, [row for row in rows if directory_missing(row["local_path"])])
        finally:
            conn.close()


def _remove(conn: sqlite3.Connection, rows: list[sqlite3.Row]) -> list[ForgottenRepository]:
    """Count, then delete, the given repositories in one transaction."""
    if not rows:
        return []
    removed = []
    conn.execute("BEGIN IMMEDIATE")
    try:
        for row in rows:
            repo_id = row["repo_id"]
            removed.append(
                ForgottenRepository(
                    repo_id=repo_id,
                    name=row["name"],
                    local_path=row["local_path"],
                    files=_count(conn, "files WHERE repo_id = ?", repo_id),
                    entities=_count(
                        conn,
                        "entity_rows WHERE file_id IN (SELECT file_id FROM files"
                        " WHERE repo_id = ?)",
                        repo_id,
                    ),
                    edges=_count(conn, "edge_rows WHERE repo = ?", row["repo_key"]),
                    generations=_count(conn, "generations WHERE repo_id = ?", repo_id),
                )
            )
            forget_repository(conn, repo_id)
            for table in ("imports", "bases", "secret_candidates", "artifact_facts"):
                conn.execute(f"DELETE FROM {table} WHERE repo_id = ?", (repo_id,))
            for table in ("generations", "repository_refs"):  # in case foreign keys are off
                conn.execute(f"DELETE FROM {table} WHERE repo_id = ?", (repo_id,))
            conn.execute("DELETE FROM meta WHERE key = ?", ("fact_retention_min_seq:" + repo_id,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return removed


def _count(conn: sqlite3.Connection, where: str, value: object) -> int:
    return conn.execute(f"SELECT COUNT(*) FROM {where}", (value,)).fetchone()[0]


def recorded_paths(db_path: str | os.PathLike[str]) -> list[str]:
    """The work trees an index records (of any schema version, as far as a damaged file
    still tells)."""
    return [str(row["local_path"]) for row in recorded_repositories(db_path)]


def discard_index(db_path: str | os.PathLike[str], *, lock_timeout: float = 30.0) -> list[str]:
    """
    Delete the index file (with its WAL and shared-memory files) under the writer lock, for
    ``--rebuild``; returns the repository paths it recorded, when it could still tell.
    """
    db = Path(db_path).expanduser()
    with WriterLock(db, timeout=lock_timeout):
        paths = recorded_paths(db) if db.is_file() else []
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    return paths
