"""The advisory lock file that keeps a second indexer from writing the same database."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path


class IndexLocked(Exception):
    """Another indexer holds the writer lock."""


class WriterLock:
    """``<db>.lock`` held with ``flock`` for the duration of a run (released if we die)."""

    def __init__(self, db_path: Path, timeout: float = 30.0, poll: float = 0.1) -> None:
        self.path = Path(str(db_path) + ".lock")
        self.timeout = timeout
        self.poll = poll
        self._fd: int | None = None

    def __enter__(self) -> WriterLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise IndexLocked(
                        f"another indexer is writing {self.path.with_suffix('')} (lock {self.path})"
                    ) from None
                time.sleep(self.poll)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


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
