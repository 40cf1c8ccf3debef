"""
The index's SQLite file: opening it for reading or writing, and creating its schema.

Readers (the local ``/api/v0`` Resource) call :func:`open_reader`; only the indexer calls
:func:`open_writer`. The schema itself lives in ``schema.sql`` beside this module, which
documents every table for the query side.
"""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

SCHEMA_VERSION = 4
"""Bumped when the storage changes; readers refuse another version, the writer rebuilds an
older one (the index is derived from the repositories, so nothing is lost but history)."""

SQLITE_BUSY_TIMEOUT_MS = 5000
PAGE_SIZE = 8192
"""Bytes per database page of a new index: a first build of Twisted spends about 6% less
CPU in SQLite than with the default 4096 (fewer pages to split, journal and checkpoint)."""


class IndexUnavailable(Exception):
    """The index file is missing, unreadable, or written by an incompatible version."""


class IndexDamaged(IndexUnavailable):
    """The index file is corrupt (not a database, or a malformed page)."""


class IndexOutdated(IndexUnavailable):
    """The index file was written by an older eshu-mcp (an older schema version)."""


def is_damage(error: sqlite3.DatabaseError) -> bool:
    """Whether an SQLite error says the file itself is corrupt."""
    name = getattr(error, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return True
    text = str(error)
    return "malformed" in text or "not a database" in text


def damaged_message(db_path: str | os.PathLike[str], error: BaseException) -> str:
    """One line naming the corrupt index file and how to rebuild it."""
    path = str(db_path)
    return (
        f"index database {path} is damaged ({error}): rebuild it with"
        f" `eshu-mcp index --rebuild --db {path} PATH...` (PATH: its repositories)"
    )


def schema_sql() -> str:
    """Return the text of the packaged ``schema.sql``."""
    return (
        resources.files("eshu_mcp.query.local.index.store")
        .joinpath("schema.sql")
        .read_text(encoding="utf-8")
    )


def default_db_path() -> Path:
    """
    Where the index lives unless told otherwise: ``$ESHU_MCP_DB``, else
    ``eshu-mcp.sqlite`` in ``$ESHU_HOME`` (default ``~/.eshu``).
    """
    configured = os.environ.get("ESHU_MCP_DB")
    if configured:
        return Path(configured).expanduser()
    home = os.environ.get("ESHU_HOME") or "~/.eshu"
    return Path(home).expanduser() / "eshu-mcp.sqlite"


def open_reader(db_path: str | os.PathLike[str]) -> sqlite3.Connection:
    """
    Open the index read-only, for queries.

    The connection is opened with a read-only URI (it can never write, even by mistake),
    rows are ``sqlite3.Row``, and ``check_same_thread`` is off so a thread pool may own it
    (the caller serializes use; ``interrupt()`` may come from any thread). The file is in
    WAL mode, so a reader keeps a consistent snapshot per statement/transaction while the
    indexer writes. Raises :class:`IndexUnavailable` when the file does not exist or is not
    an index.
    """
    path = Path(db_path).expanduser().resolve()
    if not path.is_file():
        raise IndexUnavailable(f"index database {str(path)!r} does not exist")
    conn = None
    try:
        conn = sqlite3.connect(
            f"{path.as_uri()}?mode=ro",
            uri=True,
            check_same_thread=False,
            timeout=SQLITE_BUSY_TIMEOUT_MS / 1000,
        )
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA query_only = ON")
        conn.execute("PRAGMA temp_store = MEMORY")
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as e:
        if conn is not None:
            conn.close()
        if is_damage(e):
            raise IndexDamaged(damaged_message(path, e)) from e
        raise IndexUnavailable(f"index database {str(path)!r} is unreadable: {e}") from e
    if row is None:
        conn.close()
        raise IndexUnavailable(f"index database {str(path)!r} has no schema version")
    if int(row[0]) != SCHEMA_VERSION:
        conn.close()
        error = IndexOutdated if int(row[0]) < SCHEMA_VERSION else IndexUnavailable
        raise error(
            f"index database {str(path)!r} has schema version {row[0]}, this eshu-mcp reads"
            f" version {SCHEMA_VERSION}: run `eshu-mcp index` on any of its repositories"
            " (or `eshu-mcp index --rebuild`) to rebuild all of them"
        )
    return conn


def open_writer(db_path: str | os.PathLike[str]) -> sqlite3.Connection:
    """
    Open (creating if needed) the index for the single writer and ensure its schema.

    Transactions are explicit (``isolation_level=None``): the indexer issues BEGIN IMMEDIATE
    and COMMIT itself so one generation is one transaction.
    """
    path = Path(db_path).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        str(path),
        isolation_level=None,
        timeout=SQLITE_BUSY_TIMEOUT_MS / 1000,
        check_same_thread=False,  # the indexer hands it to one helper thread at a time
    )
    conn.row_factory = sqlite3.Row
    adapt_none_and_bytes_cheaply()
    conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # a new file's; an existing one keeps its
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute("PRAGMA cache_size = -262144")
    ensure_schema(conn)
    return conn


def adapt_none_and_bytes_cheaply() -> None:
    """
    Give the sqlite3 module an adapter for None and for bytes that returns the value itself
    (process-wide; the same NULLs and BLOBs are bound as before, idempotent).

    Python 3.11's module binds int, float, str and bytearray straight away, but adapts every
    other value first, and without a registered adapter its protocol's ``__adapt__`` is
    looked up on a type object, which formats an AttributeError message and drops it:
    about 2,000 instructions per None or bytes value, 4 % of a first build of Twisted.
    """
    sqlite3.register_adapter(type(None), _NOTHING.get)  # None -> None, by a call into C
    sqlite3.register_adapter(bytes, bytes)  # bytes(value) is value itself


_NOTHING: dict[object, None] = {}
"""An empty mapping, whose ``get`` answers None for None (and any other key)."""


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create missing tables and record the schema version (idempotent)."""
    found = _meta(conn, "schema_version")
    if found is not None and int(found) > SCHEMA_VERSION:
        raise IndexUnavailable(
            f"index schema version {found} is newer than this eshu-mcp ({SCHEMA_VERSION})"
        )
    recorded = None
    if found is not None and int(found) < SCHEMA_VERSION:
        recorded = _recorded_paths(conn)
        _drop_everything(conn)
    conn.executescript(schema_sql())
    if recorded:  # owed a rebuild by the next run (see upgrade.py)
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('rebuild_paths', ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (json.dumps(recorded),),
        )
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('schema_version', ?)"
        " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (str(SCHEMA_VERSION),),
    )
    conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('created_at', ?)", (utc_now(),))


def _recorded_paths(conn: sqlite3.Connection) -> list[str]:
    """The work trees an index of an older schema records (and still owed a rebuild)."""
    paths: list[str] = []
    try:
        paths.extend(row[0] for row in conn.execute("SELECT local_path FROM repositories"))
        owed = _meta(conn, "rebuild_paths")
        paths.extend(json.loads(owed) if owed else [])
    except (sqlite3.DatabaseError, ValueError):
        pass
    return sorted({path for path in paths if isinstance(path, str)})


def _drop_everything(conn: sqlite3.Connection) -> None:
    """Empty an index written by an older schema, so it is rebuilt from the repositories."""
    conn.execute("PRAGMA foreign_keys = OFF")
    try:
        conn.execute("BEGIN IMMEDIATE")
        for kind in ("view", "trigger", "table"):
            names = conn.execute(
                "SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%'"
                " AND sql IS NOT NULL",
                (kind,),
            ).fetchall()
            for (name,) in names:
                if kind != "table" or _still_exists(conn, name):
                    conn.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
        conn.execute("COMMIT")
    finally:
        conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("VACUUM")


def _still_exists(conn: sqlite3.Connection, name: str) -> bool:
    """False for an FTS5 shadow table that dropping its virtual table already removed."""
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    return found is not None


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.OperationalError:
        return None
    return None if row is None else row[0]


def utc_now() -> str:
    """The current instant as RFC3339 UTC with a Z suffix, as stored in every *_at column."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
