"""
Comparing a work tree with what the index holds for it: the paths added, deleted or
changed (by size and mtime, then by content hash) since the active generation. This is
what "current" means in a freshness answer when no watcher keeps the tree current: the
indexed generation matches the work tree, tracked changes and untracked files included.

Blocking (it lists and stats the tree): run it on a reader thread, never on the reactor.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from attrs import frozen

from eshu_mcp.query.local.index.parse.rows import fingerprint, read_limit
from eshu_mcp.query.local.index.walk.reading import read_bounded
from eshu_mcp.query.local.index.walk.worktree import WalkError, WorkTree, walk_files

SAMPLE_PATHS = 5


@frozen
class TreeDifference:
    """How a work tree differs from its indexed generation."""

    changed: int
    """Paths added, deleted or modified since the index was built."""
    sample: tuple[str, ...] = ()
    """A few of those paths, sorted."""


def compare_work_tree(
    conn: sqlite3.Connection, repo_id: str, root: str, is_git: bool
) -> TreeDifference | None:
    """The difference between ``root`` and the files indexed for ``repo_id`` (None if the
    tree cannot be listed)."""
    if is_git and not _has_git_store(Path(root)):
        return None  # not a git tree git itself would read as this root: cannot tell
    try:
        walked = walk_files(WorkTree(root=Path(root), is_git=bool(is_git)), _own_files(conn))
    except (WalkError, OSError):
        return None
    indexed = {
        path: (size, mtime, digest)
        for path, size, mtime, digest in conn.execute(
            "SELECT relative_path, byte_size, mtime_ns, content_hash FROM files WHERE repo_id = ?",
            (repo_id,),
        )
    }
    changed = []
    for item in walked:
        known = indexed.pop(item.relative_path, None)
        if known is None or (
            (known[0], known[1]) != (item.byte_size, item.mtime_ns)
            and not _same_content(item.absolute_path, item.relative_path, known[2])
        ):
            changed.append(item.relative_path)
    changed.extend(indexed)  # indexed, no longer in the tree
    changed.sort()
    return TreeDifference(len(changed), tuple(changed[:SAMPLE_PATHS]))


def _has_git_store(root: Path) -> bool:
    """Whether ``root`` has a git directory of its own (so git lists this tree, not a parent's)."""
    dot_git = root / ".git"
    if dot_git.is_file():
        return True  # a linked work tree or submodule: ``gitdir:`` names its store
    return (dot_git / "objects").is_dir()


def _same_content(path: str, relative_path: str, digest: str | None) -> bool:
    """Whether the file still has its indexed fingerprint, read as the index reads it."""
    read = read_bounded(path, read_limit(relative_path))
    return read is not None and fingerprint(*read) == digest


def _own_files(conn: sqlite3.Connection) -> frozenset[str]:
    """The index's own files (never indexed, even when the database lives in the tree)."""
    main = conn.execute("PRAGMA database_list").fetchone()[2]
    base = os.path.realpath(main) if main else ""
    return frozenset(base + suffix for suffix in ("", "-wal", "-shm", "-journal", ".lock"))
