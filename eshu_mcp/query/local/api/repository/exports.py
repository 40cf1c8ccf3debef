"""
What a repository hands its users: the definitions its packages' entry modules define or
import (a Python package's top-level ``__init__.py``; a JavaScript/TypeScript package's
``index`` module), the API surface of a repository story.
"""

from __future__ import annotations

import sqlite3
from typing import Any

EXPORT_SCAN = 5000
"""Definitions read at most per entry module, of its own and of its imports each."""
SCRIPT_ENTRIES = (
    "index.ts",
    "index.js",
    "index.mjs",
    "mod.ts",
    "src/index.ts",
    "src/index.tsx",
    "src/index.js",
    "src/mod.ts",
    "lib/index.js",
    "lib/index.ts",
)
"""Where a JavaScript or TypeScript package's entry module usually is."""


def package_exports(conn: sqlite3.Connection, repo_id: str) -> list[dict[str, Any]]:
    """
    What the repository's packages hand their users: for each entry module (the outermost
    ``__init__.py`` of a Python package; ``index.ts``/``src/index.ts``-style modules of a
    JavaScript or TypeScript package) the public functions and classes it defines, then
    those it imports or re-exports (``from .core import Command as Command`` in
    ``click/__init__.py``, ``export { Hono } from './hono'``), in that order, at most
    ``EXPORT_SCAN`` of each.
    """
    found: dict[str, dict[str, Any]] = {}
    for file_id, path, language in entry_modules(conn, repo_id):
        own = conn.execute(
            "SELECT e.entity_id, e.entity_type, e.entity_name, e.relative_path, e.start_line"
            " FROM entities e WHERE e.file_id = ? AND e.parent_entity_id IS NULL"
            " AND e.entity_type NOT IN ('Module', 'Variable')"
            " AND substr(e.entity_name, 1, 1) <> '_' ORDER BY e.start_line LIMIT ?",
            (file_id, EXPORT_SCAN),
        ).fetchall()
        imported = conn.execute(
            "SELECT e.entity_id, e.entity_type, e.entity_name, e.relative_path, e.start_line"
            " FROM edges x JOIN entities e ON e.entity_id = x.target_id"
            " WHERE x.source_id = ? AND x.type = 'IMPORTS' AND e.class_context IS NULL"
            " AND substr(e.entity_name, 1, 1) <> '_'"
            " ORDER BY x.line_number, e.entity_name LIMIT ?",
            (f"file:{file_id}", EXPORT_SCAN),
        ).fetchall()
        for row in [*own, *imported]:
            found.setdefault(
                row["entity_id"],
                {
                    "entity_id": row["entity_id"],
                    "entity_type": row["entity_type"],
                    "name": row["entity_name"],
                    "relative_path": row["relative_path"],
                    "start_line": row["start_line"],
                    "root_kinds": [f"{language}.package_export"],
                    "exported_by": path,
                },
            )
    return list(found.values())


def entry_modules(conn: sqlite3.Connection, repo_id: str) -> list[tuple[int, str, str]]:
    """(file_id, path, language) of the repository's packages' entry modules, by path."""
    rows = conn.execute(
        "SELECT file_id, relative_path, language FROM files WHERE repo_id = ? AND NOT is_test"
        " AND (relative_path = '__init__.py' OR relative_path LIKE '%/\\_\\_init\\_\\_.py'"
        f" ESCAPE '\\' OR relative_path IN ({','.join('?' * len(SCRIPT_ENTRIES))}))",
        (repo_id, *SCRIPT_ENTRIES),
    ).fetchall()
    inits = {path.rsplit("/", 1)[0] if "/" in path else "" for _, path, _ in rows}
    entries = []
    for file_id, path, language in sorted(rows, key=lambda row: row[1]):
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        if path.endswith("__init__.py") and "/" in folder and folder.rsplit("/", 1)[0] in inits:
            continue  # a subpackage
        entries.append((file_id, path, language or ""))
    return entries
