"""
Reading a work tree's HEAD commit from its git files (no subprocess, no git library).
"""

from __future__ import annotations

import os
from pathlib import Path


def _read_small(path: Path) -> str | None:
    try:
        with path.open("rb") as handle:
            return handle.read(4096).decode("utf-8", "replace")
    except OSError:
        return None


def git_dir(work_tree: Path) -> Path | None:
    """The git directory of a work tree (`.git` or the `gitdir:` it points to)."""
    dot_git = work_tree / ".git"
    if dot_git.is_dir():
        return dot_git
    text = _read_small(dot_git)
    if text and text.startswith("gitdir:"):
        target = Path(text[len("gitdir:") :].strip())
        return target if target.is_absolute() else (work_tree / target)
    return None


def current_head(work_tree: str) -> str | None:
    """
    The commit the work tree's HEAD names now, read from the git files (no subprocess).

    Returns None when it cannot be told cheaply (not a git tree, unreadable refs).
    """
    gdir = git_dir(Path(work_tree))
    if gdir is None:
        return None
    head = _read_small(gdir / "HEAD")
    if head is None:
        return None
    head = head.strip()
    if not head.startswith("ref:"):
        return head or None
    ref = head[len("ref:") :].strip()
    if ".." in ref.split("/") or os.path.isabs(ref):
        return None
    loose = _read_small(gdir / ref)
    if loose:
        return loose.strip()
    packed = _read_small_all(gdir / "packed-refs")
    for line in (packed or "").splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref:
            return sha.strip()
    return None


def _read_small_all(path: Path, limit: int = 4 << 20) -> str | None:
    try:
        with path.open("rb") as handle:
            return handle.read(limit).decode("utf-8", "replace")
    except OSError:
        return None
