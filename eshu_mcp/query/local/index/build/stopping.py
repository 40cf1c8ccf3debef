"""
Stopping an indexing run: SIGINT and SIGTERM become one :class:`RunStopped` exception in the
main thread, and every process the indexer forks dies with it.

The run unwinds from wherever the signal lands (walk, parse, resolve, before COMMIT): the
write transaction rolls back, the pending generation is marked interrupted, the parser pool
is killed, the writer lock is released, and ``eshu-mcp index`` exits 130 (SIGINT) or 143
(SIGTERM) with one line. Forked children (parser workers, the call-resolution child) ask
the kernel for SIGKILL when their parent dies, so not even a SIGKILL of the indexer leaves
them behind.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
PR_SET_PDEATHSIG = 1
PARENT_POLL_SECONDS = 0.5
HOLD_ENV = "ESHU_MCP_INDEX_HOLD_BEFORE_COMMIT"
"""Test hook: when set to a path, the run pauses at a hold point until that path exists."""
HOLD_AT_ENV = "ESHU_MCP_INDEX_HOLD_AT"
"""Test hook: which hold point pauses (walk, parse, worker, resolve, commit; default commit)."""
HOLD_LIMIT_SECONDS = 60.0


class RunStopped(BaseException):
    """
    A signal asked the indexer to stop. A BaseException, like KeyboardInterrupt, so no
    ``except Exception`` (a per-repository failure) swallows it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        # (repository path, abandoned generation seq, whether an earlier one serves)
        self.abandoned: list[tuple[str, int, bool]] = []

    @property
    def name(self) -> str:
        """SIGINT or SIGTERM."""
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """The shell's convention: 128 + the signal number (130, 143)."""
        return 128 + self.signum


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """
    For the block: the first SIGINT or SIGTERM raises :class:`RunStopped` in the main thread;
    a second one is ignored while the run unwinds, a third exits at once. Outside the main
    thread (signals cannot be caught there) the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        received.append(signum)
        if len(received) == 1:
            raise RunStopped(signum)
        if len(received) >= 3:
            os._exit(128 + received[0])  # the user insists: the kernel releases the lock

    previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, action in previous.items():
            signal.signal(signum, action)


def die_with_parent(parent_pid: int, signum: int = signal.SIGKILL) -> None:
    """
    In a child: get ``signum`` when ``parent_pid`` dies (Linux ``PR_SET_PDEATHSIG``; a
    watching thread elsewhere), and leave now if it already has.
    """
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) != 0:
                _watch_parent(parent_pid)
        except (OSError, AttributeError):
            _watch_parent(parent_pid)
    else:
        _watch_parent(parent_pid)
    if os.getppid() != parent_pid:
        os._exit(1)


def _watch_parent(parent_pid: int) -> None:
    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def start_worker(parent_pid: int) -> None:
    """
    Initializer of a parser worker: Ctrl-C (sent to the whole process group) is left to the
    parent, which kills its workers; SIGTERM kills at once; the parent's death kills too.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(parent_pid)


def hold_point(point: str, emit: Callable[[dict[str, Any]], None] | None = None) -> None:
    """
    Test hook: pause at ``point`` until the :data:`HOLD_ENV` path exists (bounded). The run
    reports it with a 'holding' event, or, in a worker (no ``emit``), with a file named
    ``<path>.<point>.<pid>``.
    """
    release = os.environ.get(HOLD_ENV)
    if not release or os.environ.get(HOLD_AT_ENV, "commit") != point:
        return
    if emit is not None:
        emit({"phase": "holding", "at": point})
    else:
        with open(f"{release}.{point}.{os.getpid()}", "w"):
            pass
    deadline = time.monotonic() + HOLD_LIMIT_SECONDS
    while not os.path.exists(release) and time.monotonic() < deadline:
        time.sleep(0.05)
