"""
Reading a work tree's HEAD commit from its git files (no subprocess, no git library).

The files are the repository's, so none is trusted: a file is read only when its real path
lies inside the git directory it belongs to (a symbolic link out of it is not followed),
only when it is a regular file (never a FIFO or a device), at most a bounded number of
bytes, and what comes back is a commit id or nothing: no other byte of any file leaves.
:func:`read_beneath` is that guarded read, for any file of a work tree the API serves.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

COMMIT_ID = re.compile(r"(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")
"""A SHA-1 or SHA-256 object name, lower-case hex, as git writes it."""
SMALL_FILE_BYTES = 4096
PACKED_REFS_BYTES = 4 << 20


_BENEATH_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_BENEATH_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def read_beneath(base: str | os.PathLike[str], relative: str, limit: int) -> bytes | None:
    """
    At most ``limit`` bytes of ``base/relative``, or None unless its real path lies inside
    ``base``'s and it is a regular file.

    The file is opened one directory at a time from ``base`` with ``O_NOFOLLOW``, along the
    real path checked first, so a symbolic link swapped into any part of it after the check
    is refused, not followed; ``O_NONBLOCK`` keeps a FIFO from stalling the reader.
    """
    real_base = os.path.realpath(base)
    target = os.path.realpath(os.path.join(real_base, relative))
    if os.path.commonpath([real_base, target]) != real_base or target == real_base:
        return None
    *directories, name = os.path.relpath(target, real_base).split(os.sep)
    try:
        parent = os.open(real_base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    fd = -1
    try:
        for directory in directories:
            inner = os.open(directory, _BENEATH_DIRECTORY, dir_fd=parent)
            os.close(parent)
            parent = inner
        fd = os.open(name, _BENEATH_FILE, dir_fd=parent)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(limit)
    except OSError:
        return None
    finally:
        os.close(parent)
        if fd >= 0:
            os.close(fd)


def read_inside(base: Path, relative: str, limit: int = SMALL_FILE_BYTES) -> str | None:
    """The first ``limit`` bytes of a git file as text (see :func:`read_beneath`)."""
    data = read_beneath(base, relative, limit)
    return None if data is None else data.decode("utf-8", "replace")


def git_dir(work_tree: Path) -> Path | None:
    """The git directory of a work tree (`.git` or the `gitdir:` it points to)."""
    dot_git = work_tree / ".git"
    if dot_git.is_dir():
        return dot_git
    text = read_inside(work_tree, ".git")
    if text and text.startswith("gitdir:"):
        target = Path(text[len("gitdir:") :].strip())
        return target if target.is_absolute() else (work_tree / target)
    return None


def _common_dir(gdir: Path) -> Path:
    """Where a linked work tree's refs live (its ``commondir``), else the git dir itself."""
    named = read_inside(gdir, "commondir")
    if not named or not named.strip():
        return gdir
    common = Path(named.strip())
    return common if common.is_absolute() else gdir / common


def _commit_id(text: str | None) -> str | None:
    value = (text or "").strip()
    return value if COMMIT_ID.match(value) else None


def current_head(work_tree: str) -> str | None:
    """
    The commit the work tree's HEAD names now, read from the git files (no subprocess).

    Returns None when it cannot be told cheaply (not a git tree, unreadable refs) or when
    what the files hold is not a commit id.
    """
    gdir = git_dir(Path(work_tree))
    if gdir is None:
        return None
    head = read_inside(gdir, "HEAD")
    if head is None:
        return None
    head = head.strip()
    if not head.startswith("ref:"):
        return _commit_id(head)
    ref = head[len("ref:") :].strip()
    if not ref.startswith("refs/") or ".." in ref.split("/"):
        return None
    for base in dict.fromkeys([gdir, _common_dir(gdir)]):
        loose = read_inside(base, ref)
        if loose is not None:
            return _commit_id(loose)
        packed = read_inside(base, "packed-refs", PACKED_REFS_BYTES)
        for line in (packed or "").splitlines():
            sha, _, name = line.partition(" ")
            if name.strip() == ref:
                return _commit_id(sha)
    return None
