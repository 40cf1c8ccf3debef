"""
Upgrading an index written by an older eshu-mcp: every repository it records is rebuilt,
not only the paths a run names.

* A schema change empties the file (:func:`.store.ensure_schema`); the work trees it recorded
  are kept in ``meta.rebuild_paths`` until a run has indexed them again.
* An extractor change (``EXTRACTOR_VERSION``) re-extracts every file of a repository; each
  repository records the version it was extracted with (``meta.extractor_version:<repo_id>``),
  so one run re-extracts all of them instead of leaving the others on the old extractor.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from eshu_mcp.query.local.index.parse.extractors import EXTRACTOR_VERSION

REBUILD_KEY = "rebuild_paths"


def extractor_key(repo_id: str) -> str:
    """The meta key of the extractor version a repository was last extracted with."""
    return f"extractor_version:{repo_id}"


def owed_rebuilds(conn: sqlite3.Connection, given: list[str]) -> tuple[list[str], str | None]:
    """
    Recorded work trees (that still exist) an upgrade must rebuild besides the ``given``
    paths, and why ('schema' or 'extractor'; None when nothing is owed).
    """
    seen = {os.path.realpath(os.path.expanduser(path)) for path in given}
    owed: list[str] = []
    reason = None
    for path in _meta_list(conn, REBUILD_KEY):
        reason = "schema"
        owed.append(path)
    default = _meta(conn, "extractor_version")
    for repo_id, path in conn.execute("SELECT repo_id, local_path FROM repositories"):
        version = _meta(conn, extractor_key(repo_id)) or default
        if version not in (None, EXTRACTOR_VERSION):
            reason = reason or "extractor"
            owed.append(path)
    kept = []
    for path in owed:
        real = os.path.realpath(path)
        if real not in seen and os.path.isdir(path):
            seen.add(real)
            kept.append(path)
    return kept, reason if kept else None


def settle_rebuilds(conn: sqlite3.Connection, indexed: list[str]) -> None:
    """Drop the work trees a run has indexed (and vanished ones) from the owed list."""
    owed = _meta_list(conn, REBUILD_KEY)
    if not owed:
        return
    done = {os.path.realpath(path) for path in indexed}
    left = [p for p in owed if os.path.realpath(p) not in done and os.path.isdir(p)]
    conn.execute("BEGIN IMMEDIATE")
    if left:
        conn.execute("UPDATE meta SET value = ? WHERE key = ?", (json.dumps(left), REBUILD_KEY))
    else:
        conn.execute("DELETE FROM meta WHERE key = ?", (REBUILD_KEY,))
    conn.execute("COMMIT")


def awaiting_rebuild(conn: sqlite3.Connection) -> list[str]:
    """Work trees an upgrade emptied out of the index and no run has indexed again yet."""
    return _meta_list(conn, REBUILD_KEY)


def recorded_repositories(db_path: str | os.PathLike[str]) -> list[dict[str, object]]:
    """
    What an index file of any schema version records about its repositories (read-only;
    empty when the file tells nothing): repo_id, name, local_path as far as present.
    """
    path = Path(db_path).expanduser().resolve()
    if not path.is_file():
        return []
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    except sqlite3.DatabaseError:
        return []
    try:
        conn.row_factory = sqlite3.Row
        rows = [dict(row) for row in conn.execute("SELECT * FROM repositories")]
        known = {str(row.get("local_path")) for row in rows}
        for owed in _meta_list(conn, REBUILD_KEY):
            if owed not in known:
                rows.append({"local_path": owed, "name": os.path.basename(owed)})
    except sqlite3.DatabaseError:
        return []
    finally:
        conn.close()
    return sorted(
        (row for row in rows if row.get("local_path")), key=lambda row: str(row["local_path"])
    )


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.DatabaseError:
        return None
    return None if row is None else row[0]


def _meta_list(conn: sqlite3.Connection, key: str) -> list[str]:
    value = _meta(conn, key)
    try:
        found = json.loads(value) if value else []
    except ValueError:
        return []
    return [str(item) for item in found] if isinstance(found, list) else []
