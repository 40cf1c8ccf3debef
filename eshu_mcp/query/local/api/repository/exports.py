"""
What a repository hands its users: the definitions its packages' entry modules define or
import (a Python package's top-level ``__init__.py``, star imports included; a
JavaScript/TypeScript package's ``index`` module) and the exported identifiers of a Go
module's root package, the API surface of a repository story.
"""

from __future__ import annotations

import posixpath
import sqlite3
from collections.abc import Callable
from typing import Any

from eshu_mcp.query.local.api.code.common import in_clauses
from eshu_mcp.query.local.api.deadcode.public import declared_all

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
    ``click/__init__.py``, ``export { Hono } from './hono'``), then those its star imports
    hand on (``from .itertoolz import *`` in ``toolz/__init__.py``), in that order, at most
    ``EXPORT_SCAN`` of each; then the exported identifiers of each Go module's root package,
    the most used first.
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
        starred = star_exports(conn, file_id) if language == "python" else []
        for row in [*own, *imported, *starred]:
            found.setdefault(row["entity_id"], _export_row(row, language, path))
    for row, package in go_root_exports(conn, repo_id):
        found.setdefault(row["entity_id"], _export_row(row, "go", package))
    return list(found.values())


def _export_row(row: sqlite3.Row, language: str, exported_by: str) -> dict[str, Any]:
    return {
        "entity_id": row["entity_id"],
        "entity_type": row["entity_type"],
        "name": row["entity_name"],
        "relative_path": row["relative_path"],
        "start_line": row["start_line"],
        "root_kinds": [f"{language}.package_export"],
        "exported_by": exported_by,
    }


STAR_DEPTH = 5
"""Star imports followed at most in a chain (``a`` star-imports ``b``, which star-imports ``c``)."""


def star_exports(conn: sqlite3.Connection, file_id: int) -> list[sqlite3.Row]:
    """
    The top-level functions and classes the star imports of a Python module hand on, in
    import order, as Python binds them: the imported module's ``__all__`` names in their
    order when it declares one, else its names without a leading underscore; what the
    module imports, by name or by its own star imports, is in its namespace and passes on
    under the same rule.
    """
    seen = {file_id}

    def hand_on(importer: int, depth: int) -> list[sqlite3.Row]:
        rows: list[sqlite3.Row] = []
        for (source,) in conn.execute(
            "SELECT resolved_file_id FROM imports WHERE file_id = ? AND imported_name = '*'"
            " AND resolved_file_id IS NOT NULL ORDER BY line_number, import_id",
            (importer,),
        ).fetchall():
            if source in seen or depth > STAR_DEPTH:
                continue
            seen.add(source)
            rows += _module_names(conn, source, lambda inner: hand_on(inner, depth + 1))
        return rows

    return hand_on(file_id, 1)[:EXPORT_SCAN]


def _module_names(
    conn: sqlite3.Connection, file_id: int, nested: Callable[[int], list[sqlite3.Row]]
) -> list[sqlite3.Row]:
    """What ``from module import *`` binds of one module's top-level definitions."""
    content = conn.execute("SELECT content FROM files WHERE file_id = ?", (file_id,)).fetchone()
    listed = declared_all(content[0] or "") if content else None
    rows = conn.execute(
        "SELECT e.entity_id, e.entity_type, e.entity_name, e.relative_path, e.start_line"
        " FROM entities e WHERE e.file_id = ? AND e.parent_entity_id IS NULL"
        " AND e.class_context IS NULL AND e.entity_type NOT IN ('Module', 'Variable')"
        " ORDER BY e.start_line LIMIT ?",
        (file_id, EXPORT_SCAN),
    ).fetchall()
    rows += conn.execute(  # names it imports are in its namespace too
        "SELECT e.entity_id, e.entity_type, e.entity_name, e.relative_path, e.start_line"
        " FROM edges x JOIN entities e ON e.entity_id = x.target_id"
        " WHERE x.source_id = ? AND x.type = 'IMPORTS' AND e.class_context IS NULL"
        " ORDER BY x.line_number, e.entity_name LIMIT ?",
        (f"file:{file_id}", EXPORT_SCAN),
    ).fetchall()
    rows += nested(file_id)
    if listed is None:
        return [row for row in rows if not row["entity_name"].startswith("_")]
    position = {name: index for index, name in enumerate(listed)}
    kept = [row for row in rows if row["entity_name"] in position]
    return sorted(kept, key=lambda row: position[row["entity_name"]])


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


GO_TYPES = frozenset({"Struct", "Interface", "TypeAlias", "Type", "Class"})
"""Go entity types that declare a type: a library's nouns, before its helpers."""
USE_EDGES = ("CALLS", "REFERENCES", "INHERITS", "IMPLEMENTS", "INSTANTIATES")


def go_root_exports(conn: sqlite3.Connection, repo_id: str) -> list[tuple[sqlite3.Row, str]]:
    """
    The exported top-level identifiers of each Go module's root package (the folder of an
    outermost ``go.mod``; a module nested in another's folder is an example or a tool),
    with that folder: those the most other files use first (a type's users include its
    methods'), then types, then constructors (``New...``), then the rest, each by place.
    """
    folders = sorted(
        posixpath.dirname(path)
        for (path,) in conn.execute(
            "SELECT relative_path FROM files WHERE repo_id = ?"
            " AND (relative_path = 'go.mod' OR relative_path LIKE '%/go.mod')",
            (repo_id,),
        )
    )
    roots = [
        folder
        for folder in folders
        if not any(_inside(folder, other) for other in folders if other != folder)
    ]
    found: list[tuple[sqlite3.Row, str]] = []
    for root in roots:
        rows = conn.execute(
            "SELECT e.entity_id, e.entity_type, e.entity_name, e.relative_path, e.start_line,"
            " e.file_id, e.class_context FROM entities e JOIN files f ON f.file_id = e.file_id"
            " WHERE f.repo_id = ? AND f.language = 'go' AND NOT f.is_test"
            " AND f.relative_path LIKE ? ESCAPE '\\' AND instr(substr(f.relative_path, ?), '/') = 0"
            " AND e.parent_entity_id IS NULL AND e.entity_type <> 'Module'"
            " AND CASE WHEN json_valid(e.metadata) THEN json_extract(e.metadata, '$.exported')"
            " END = 1 ORDER BY e.class_context IS NOT NULL LIMIT ?",
            (repo_id, _like_prefix(root), len(root) + 2 if root else 1, EXPORT_SCAN),
        ).fetchall()
        top = [row for row in rows if row["class_context"] is None]
        types = {row["entity_name"]: row["entity_id"] for row in top}
        owner = {row["entity_id"]: row["entity_id"] for row in top}
        for row in rows:  # a method's users use its type
            if row["class_context"] is not None and row["class_context"] in types:
                owner[row["entity_id"]] = types[row["class_context"]]
        uses = _using_files(conn, rows, owner)
        top.sort(key=lambda row: _importance(row, uses.get(row["entity_id"], 0)))
        found += [(row, root or ".") for row in top]
    return found


def _importance(row: sqlite3.Row, uses: int) -> tuple[int, int, str, int]:
    """Most used first, then types, constructors (``New...``) and the rest, by place."""
    constructor = row["entity_name"].startswith("New")
    kind = 0 if row["entity_type"] in GO_TYPES else 1 if constructor else 2
    return (-uses, kind, row["relative_path"], row["start_line"])


def _inside(folder: str, other: str) -> bool:
    """Whether ``folder`` lies within ``other`` (the repository root holds every folder)."""
    return other == "" or folder.startswith(other + "/")


def _like_prefix(folder: str) -> str:
    """A LIKE pattern for the paths under ``folder`` (every path for the root)."""
    if not folder:
        return "%"
    escaped = folder.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "/%"


def _using_files(
    conn: sqlite3.Connection, rows: list[sqlite3.Row], owner: dict[str, str]
) -> dict[str, int]:
    """
    Owner entity id -> how many files use it or, for a type, its methods (call, reference,
    embed or implement them), leaving out the file each used definition is in.
    """
    users: dict[str, set[int]] = {}
    home = {row["entity_id"]: row["file_id"] for row in rows if row["entity_id"] in owner}
    for clause, params in in_clauses("x.target_id", list(home)):
        for target, user in conn.execute(
            "SELECT DISTINCT x.target_id, COALESCE(s.file_id, x.evidence_file_id)"
            " FROM edges x LEFT JOIN entities s ON s.entity_id = x.source_id"
            f" WHERE {clause} AND x.type IN ({','.join('?' * len(USE_EDGES))})",
            (*params, *USE_EDGES),
        ):
            if user is not None and user != home[target]:
                users.setdefault(owner[target], set()).add(user)
    return {entity_id: len(files) for entity_id, files in users.items()}
