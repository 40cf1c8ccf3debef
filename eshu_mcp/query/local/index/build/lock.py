"""
The advisory lock file that keeps a second indexer from writing the same database.

``<db>.lock`` is held with ``flock`` and names its owner ("pid pgid") while held; a clean
release empties it. A forked child closes its inherited copy at once (``flock`` belongs to
the open file, so a parser worker that outlived its indexer would otherwise keep the lock).
A lock whose owner is gone is taken over with a notice: when processes of the dead owner's
process group still hold it open for writing (orphaned workers of an older eshu-mcp), they
are killed first.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

_HELD: set[int] = set()
"""Descriptors of locks this process holds, closed in every forked child."""


def _close_inherited() -> None:
    for fd in list(_HELD):
        with contextlib.suppress(OSError):  # closing a copy never unlocks the parent's lock
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_inherited)


class IndexLocked(Exception):
    """Another indexer holds the writer lock."""


class WriterLock:
    """``<db>.lock`` held with ``flock`` for the duration of a run (released if we die)."""

    def __init__(
        self,
        db_path: Path,
        timeout: float = 30.0,
        poll: float = 0.1,
        notice: Callable[[str], None] | None = None,
    ) -> None:
        self.path = Path(str(db_path) + ".lock")
        self.timeout = timeout
        self.poll = poll
        self.notice = notice or (lambda text: None)
        self._fd: int | None = None

    def __enter__(self) -> WriterLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.timeout
        cleared = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not cleared:
                    cleared = self._clear_orphans(fd)
                    if cleared:
                        continue
                if time.monotonic() >= deadline:
                    owner = _read_owner(fd)
                    os.close(fd)
                    who = f" (pid {owner[0]})" if owner else ""
                    raise IndexLocked(
                        f"another indexer{who} is writing {self.path.with_suffix('')}"
                        f" (lock {self.path})"
                    ) from None
                time.sleep(self.poll)
        owner = _read_owner(fd)
        if owner is not None and not cleared and not _alive(owner[0]):
            self.notice(
                f"took over the writer lock of indexer pid {owner[0]}, which ended without"
                " releasing it"
            )
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {os.getpgid(0)}\n".encode(), 0)
        self._fd = fd
        _HELD.add(fd)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._fd is not None:
            _HELD.discard(self._fd)
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def _clear_orphans(self, fd: int) -> bool:
        """
        When the recorded owner is dead but the lock is still held, kill the holders that
        are its orphaned children (same process group, lock file open for writing).
        """
        owner = _read_owner(fd)
        if owner is None or _alive(owner[0]):
            return False
        holders = [pid for pid in _writers_of(self.path) if _group_of(pid) == owner[1]]
        if not holders:
            return False
        for pid in holders:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.notice(
            f"indexer pid {owner[0]} is gone but its orphaned processes"
            f" {', '.join(map(str, holders))} still held the writer lock: stopped them and"
            " took the lock over"
        )
        return True


def _read_owner(fd: int) -> tuple[int, int] | None:
    """The (pid, pgid) recorded in the lock file, or None when it is empty."""
    try:
        fields = os.pread(fd, 64, 0).split()
        return int(fields[0]), int(fields[1])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def _writers_of(path: Path) -> list[int]:
    """Other processes holding ``path`` open for writing (Linux ``/proc``; none elsewhere)."""
    target = os.path.realpath(path)
    found = []
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") != target:
                    continue
                with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                    flags = next(line for line in info if line.startswith("flags:"))
            except (OSError, StopIteration):
                continue
            if int(flags.split()[1], 8) & os.O_ACCMODE != os.O_RDONLY:
                found.append(pid)
                break
    return found


def writer_running(db_path: str | os.PathLike[str]) -> bool:
    """
    Whether a live indexer holds the writer lock of ``db_path`` (a read-only probe).

    A 'pending' generation is only ever written under this lock, so a pending row while
    nobody holds it was left by a run that died. The probe takes a shared lock for an
    instant; a writer starting at that moment retries (it polls), it never fails.
    """
    path = Path(str(db_path) + ".lock")
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing also drops the shared lock if it was taken
    return False
