"""
What each indexed work tree looks like now (its directory present, its HEAD commit, its
real path): the freshness and scope inputs of every answer, kept in memory and refreshed
off the hot path.

Reading them costs three file opens per repository per answer. While the daemon runs, its
backend calls :meth:`WorkTreeStates.refresh` on the reader pool every second and answers
use what that saw; with no refresher running (the CLI, tests) or one that has fallen
behind, each answer looks at the files itself, as before.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from eshu_mcp.query.local.api.platform.truth_heads import current_head

REFRESH_SECONDS = 1.0
# A refreshed state older than this is not trusted (the refresher stalled or stopped).
MAX_AGE_SECONDS = 3.0


def look(work_tree: str) -> tuple[bool, str | None]:
    """``(directory present, HEAD commit or None)`` read from the files now (blocking)."""
    if not os.path.isdir(work_tree):
        return False, None
    return True, current_head(work_tree)


class WorkTreeStates:
    """The last look at each work tree answers have asked about."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._states: dict[str, tuple[bool, str | None]] = {}
        self._real_paths: dict[str, str] = {}
        self._lock = threading.Lock()
        self._refreshed_at: float | None = None

    def state(self, work_tree: str) -> tuple[bool, str | None]:
        """The work tree's state: from the last refresh when recent, else looked at now."""
        refreshed = self._refreshed_at
        if refreshed is not None and self._clock() - refreshed <= MAX_AGE_SECONDS:
            known = self._states.get(work_tree)
            if known is not None:
                return known
        seen = look(work_tree)
        with self._lock:
            self._states[work_tree] = seen  # and the refresher keeps it current from now on
        return seen

    def real_path(self, path: str) -> str:
        """
        ``os.path.realpath(path)`` (symbolic links resolved, a system call per part of the
        path): from the last refresh when recent, else resolved now.
        """
        refreshed = self._refreshed_at
        if refreshed is not None and self._clock() - refreshed <= MAX_AGE_SECONDS:
            known = self._real_paths.get(path)
            if known is not None:
                return known
        real = os.path.realpath(path)
        with self._lock:
            self._real_paths[path] = real
        return real

    def refresh(self) -> None:
        """Look at every known work tree and path again (blocking: run it on a thread pool)."""
        started = self._clock()
        with self._lock:
            paths = list(self._states)
            named = list(self._real_paths)
        seen = {path: look(path) for path in paths}
        real = {path: os.path.realpath(path) for path in named}
        with self._lock:
            self._states.update(seen)
            self._real_paths.update(real)
        self._refreshed_at = started

    def forget(self) -> None:
        """No refresher runs any more: answers look at the files themselves again."""
        self._refreshed_at = None
        with self._lock:
            self._states.clear()
            self._real_paths.clear()


WORK_TREES = WorkTreeStates()
