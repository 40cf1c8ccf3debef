"""
Digest the contents of index files table by table, to check that a change to the indexer
(an optimisation) leaves every answer the same.

Each table's rows are hashed in sorted order, with the columns that legitimately differ
between two builds left out (timestamps and generation ids); the word indexes are compared
by their words, documents, columns and positions (``fts5vocab``), not by their pages.

Usage: ``python scripts/index_contents.py INDEX [INDEX ...]`` prints a digest per table for
each index and, given two or more, the tables whose digests differ (exit status 1 then).
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys

VARYING_COLUMNS = frozenset(
    {
        "created_at",
        "last_indexed_at",
        "indexed_at",
        "generation_id",
        "active_generation_id",
        "observed_at",
        "ingested_at",
        "activated_at",
        "superseded_at",
    }
)
"""Columns that differ between two builds of the same sources."""
WORD_INDEXES = ("files_fts", "search_fts")


def digests(path: str) -> dict[str, tuple[int, str]]:
    """Table name -> (rows, sha256 of its sorted rows) for one index file."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE"
                " 'CREATE VIRTUAL%' AND name NOT LIKE '%_fts_%' AND name NOT LIKE 'sqlite_%'"
                " ORDER BY name"
            )
        ]
        result = {}
        for table in tables:
            columns = [
                name
                for (name,) in conn.execute(f"SELECT name FROM pragma_table_info('{table}')")
                if name not in VARYING_COLUMNS
            ]
            quoted = ", ".join(f'"{c}"' for c in columns)
            order = ", ".join(str(i) for i in range(1, len(columns) + 1))
            where = " WHERE key != 'created_at'" if table == "meta" else ""
            rows = conn.execute(f'SELECT {quoted} FROM "{table}"{where} ORDER BY {order}')
            result[table] = _hash(rows)
        for index in WORD_INDEXES:
            vocabulary = f"temp.{index}_words"
            conn.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {vocabulary}"
                f" USING fts5vocab('main', '{index}', 'instance')"
            )
            rows = conn.execute(f"SELECT * FROM {vocabulary} ORDER BY 1, 2, 3, 4")
            result[index] = _hash(rows)
        return result
    finally:
        conn.close()


def _hash(rows) -> tuple[int, str]:
    digest = hashlib.sha256()
    count = 0
    for row in rows:
        digest.update(repr(row).encode("utf-8", "surrogatepass"))
        count += 1
    return count, digest.hexdigest()[:16]


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    every = [digests(path) for path in argv]
    for path, tables in zip(argv, every, strict=True):
        print(path)
        for table, (count, digest) in tables.items():
            print(f"  {table:24} {count:>9} {digest}")
    differing = sorted(
        table for table in set().union(*every) if len({tables.get(table) for tables in every}) > 1
    )
    if len(argv) > 1:
        print("differ: " + (", ".join(differing) if differing else "none"))
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
