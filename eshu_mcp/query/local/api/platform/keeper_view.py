"""
What the daemon's index keeper knows about a request's repositories when it is answered:
which work trees it watches, which changes it has noticed and not indexed yet, and how
long the request waited for them. Answers' freshness reads it; it is a snapshot taken on
the reactor thread, so a reader thread never touches the keeper itself.
"""

from __future__ import annotations

import os

from attrs import Factory, frozen

KEEPER_ATTRIBUTE = "_eshu_mcp_keeper_view"
"""Where the gate in front of the ``/api/v0`` Resource leaves the request's view."""


@frozen
class KeeperView:
    """The index keeper's state for one request."""

    watched: tuple[str, ...] = ()
    """Work tree roots a watcher keeps current (their changes are known, not looked for)."""
    pending: dict[str, tuple[int | None, bool]] = Factory(dict)
    """Root -> (changed paths not indexed yet, None when unknown; whether a build runs)."""
    waited: float | None = None
    """Seconds the request waited for noticed changes to be indexed (None: it did not)."""
    landing: dict[str, tuple[str, int | None]] = Factory(dict)
    """Root -> (the generation the running build writes for it, how many of its pending
    changes that build does not cover: 0 none, None unknown). A reader that already sees
    that generation active sees the build's changes: the keeper hears of the commit a
    moment after readers can see it."""

    def watches(self, local_path: str) -> bool:
        """Whether a watcher keeps the repository at ``local_path`` current."""
        return any(_covers(root, local_path) for root in self.watched)

    def outstanding(
        self, local_path: str, active_generation: str | None = None
    ) -> tuple[int | None, bool] | None:
        """The changes not indexed yet under ``local_path``: (count, rebuilding), or None.
        ``active_generation``: the repository's active generation as the reader sees it."""
        found: tuple[int | None, bool] | None = None
        for root, (count, rebuilding) in self.pending.items():
            if not _covers(root, local_path):
                continue
            writing, queued = self.landing.get(root, (None, None))
            if rebuilding and writing is not None and writing == active_generation:
                if queued == 0:
                    continue  # the build committed: nothing of this root is outstanding
                count, rebuilding = queued, False
            if found is None:
                found = (count, rebuilding)
            else:
                total = None if found[0] is None or count is None else found[0] + count
                found = (total, found[1] or rebuilding)
        return found


def _covers(root: str, local_path: str) -> bool:
    """Whether a keeper root (a ``--repo`` path) is the repository or a folder inside it."""
    return root == local_path or root.startswith(local_path.rstrip(os.sep) + os.sep)
