"""
Whether the index's writer is alive, so a generation left 'pending' by a run that died is
reported as interrupted rather than as a build in progress.

Readers cannot write the database (the indexer's next run marks such rows failed for good);
until then every answer treats them as failed with failure class ``interrupted`` and keeps
serving the previous active generation as fresh.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from eshu_mcp.query.local.index.build.lock import writer_running

INTERRUPTED = "interrupted"
INTERRUPTED_MESSAGE = "indexing run ended before its generation was committed"


def writer_alive(conn: sqlite3.Connection) -> bool:
    """True while an indexer holds the writer lock of the database ``conn`` reads."""
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    if not path:  # an in-memory database has no lock file and no other writer
        return True
    return writer_running(path)


def as_lived(row: sqlite3.Row, alive: bool) -> dict[str, Any] | sqlite3.Row:
    """A generation row as readers should see it: an orphaned 'pending' one as failed."""
    if alive or row["status"] != "pending":
        return row
    lived = dict(zip(row.keys(), tuple(row), strict=True))
    lived.update(status="failed", failure_class=INTERRUPTED, failure_message=INTERRUPTED_MESSAGE)
    return lived
