"""
Target resolution of a relationship story: which entity (or imported module) a story
is about, from an entity id or handle, or from a name that may match several.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.common import entity_by_id
from eshu_mcp.query.local.api.code.scope import RepositoryGrant, repo_clause
from eshu_mcp.query.local.api.graph.edges import (
    INHERITABLE_LABELS,
    candidate_summary,
    name_candidates,
    pick_candidate,
)
from eshu_mcp.query.local.api.platform.framework import ApiError


def resolve_target(conn: sqlite3.Connection, req: dict[str, Any], repo_id: str) -> dict[str, Any]:
    """Target resolution: ``resolved`` with the anchor row, or unresolved/ambiguous."""
    if req["entity_id"]:
        row = entity_by_id(conn, req["entity_id"])
        outside = repo_id and row is not None and row["repo_id"] != repo_id
        hidden = (
            isinstance(repo_id, RepositoryGrant)
            and row is not None
            and (row["repo_id"] not in repo_id.repo_ids)
        )
        if row is None or hidden or (outside and not req["cross_repo"]):
            return {"status": "unresolved", "entity_id": req["entity_id"]}
        return {"status": "resolved", "row": row}
    candidates = name_candidates(conn, req["target"], repo_id=repo_id, language=req["language"])
    if req["query_type"] == "class_hierarchy" and candidates:
        candidates = name_candidates(
            conn,
            req["target"],
            repo_id=repo_id,
            language=req["language"],
            labels=sorted(INHERITABLE_LABELS),
        )
        if not candidates:
            raise ApiError(
                400, "class_hierarchy target must resolve to a class or inheritable entity"
            )
    modules = False
    if not candidates and "IMPORTS" in req["relationship_types"]:
        candidates, modules = module_candidates(conn, req["target"], repo_id), True
    if not candidates:
        return {"status": "unresolved", "target": req["target"]}
    row = pick_candidate(candidates)
    if row is None:
        return {
            "status": "ambiguous",
            "target": req["target"],
            "candidates": [candidate_summary(c) for c in candidates[:25]],
            "truncated": len(candidates) > 25,
            "groupable": not modules,
        }
    return {"status": "resolved", "row": row}


_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def module_candidates(conn: sqlite3.Connection, name: str, repo_id: str) -> list[dict]:
    """
    Imported modules named ``name``, shaped like entity rows, for importer stories; or,
    when ``name`` is a repository path (``src/compose.ts``), the file's modules, one row
    per file (the story reads every name it was imported by: ``./compose``,
    ``../compose``...).
    """
    select = (
        "SELECT m.module_key, m.repo_id, m.name, m.language, m.file_id,"
        " COALESCE(f.relative_path, '') AS relative_path, COALESCE(r.name, '') AS repo_name"
        " FROM modules m LEFT JOIN files f ON f.file_id = m.file_id"
        " LEFT JOIN repositories r ON r.repo_id = m.repo_id WHERE "
    )
    clause, scope_params = repo_clause("m.repo_id", repo_id)
    by_name = select + "m.name = ? AND " + clause + " ORDER BY m.module_key LIMIT 26"
    rows = conn.execute(by_name, [name.strip(), *scope_params]).fetchall()
    path = name.strip().strip("/")
    by_file = not rows and ("/" in path or "." in path)
    package_of = ""  # a Go file: its package's importers answer for it
    if by_file and path.endswith(".go"):
        rows, by_file = _go_package(conn, select, path, clause, scope_params), False
        package_of = path if rows else ""
    if by_file:
        paths = [path]
        if _DOTTED.fullmatch(path):  # click.core: imported relatively (.core) by its package
            stem = path.replace(".", "/")
            paths += [f"{stem}.py", f"{stem}/__init__.py"]
        marks = ",".join("?" * len(paths))
        by_path = (
            select + f"(f.relative_path IN ({marks})) AND " + clause + " ORDER BY m.module_key"
        )
        first: dict[int, Any] = {}
        for row in conn.execute(by_path, [*paths, *scope_params]):
            first.setdefault(row["file_id"], row)
        rows = list(first.values())[:26]
    return [
        {
            **({"package_of": package_of} if package_of else {}),
            "entity_id": row["module_key"],
            "entity_name": row["relative_path"] if by_file else row["name"],
            "entity_type": "Module",
            "repo_id": row["repo_id"],
            "repo_name": row["repo_name"],
            "relative_path": row["relative_path"],
            "language": row["language"] or "",
            "start_line": 0,
            "end_line": 0,
            "file_id": row["file_id"],
            "is_test": 0,
            "metadata": "{}",
        }
        for row in rows
    ]


def _go_package(
    conn: sqlite3.Connection, select: str, path: str, clause: str, scope_params: list
) -> list[Any]:
    """
    The imported Go packages a Go file belongs to (Go imports name a package, which the
    index links to one of its files): the modules of the Go files in the file's directory,
    when that file is indexed.
    """
    folder = path.rpartition("/")[0]
    files_clause = clause.replace("m.repo_id", "repo_id")
    known = conn.execute(
        f"SELECT 1 FROM files WHERE relative_path = ? AND language = 'go' AND {files_clause}",
        [path, *scope_params],
    ).fetchone()
    if known is None:
        return []
    inside = "f.relative_path LIKE ? ESCAPE '\\'" if folder else "f.relative_path NOT LIKE '%/%'"
    pattern = [folder.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"]
    rows = conn.execute(
        select + f"f.language = 'go' AND {inside} AND " + clause + " ORDER BY m.module_key",
        [*(pattern if folder else []), *scope_params],
    ).fetchall()
    return [row for row in rows if row["relative_path"].rpartition("/")[0] == folder][:26]


def target_anchors(conn: sqlite3.Connection, row: dict[str, Any], types: list[str]) -> list[str]:
    """Node ids standing for the target: the entity, plus its module for imports."""
    anchors = [row["entity_id"]]
    if "IMPORTS" in types and row["entity_type"] == "Module" and row["file_id"] is not None:
        anchors += [
            key
            for (key,) in conn.execute(
                "SELECT module_key FROM modules WHERE file_id = ? AND module_key <> ?"
                " ORDER BY module_key",
                (row["file_id"], row["entity_id"]),
            )
        ]
    return anchors


def resolution_block(
    resolution: dict[str, Any] | None, req: dict[str, Any], repo_id: str
) -> dict[str, Any]:
    """The ``target_resolution`` block of a story answer."""
    if resolution is None:
        return {"status": "repository_scope", "repo_id": repo_id}
    if resolution["status"] != "resolved":
        return {k: v for k, v in resolution.items() if k not in ("row", "groupable")}
    row = resolution["row"]
    block = {
        "status": "resolved",
        "target": req["target"] or row["entity_name"],
        "entity_id": row["entity_id"],
        "name": row["entity_name"],
        "repo_id": row["repo_id"],
        "language": row["language"] or "",
    }
    if row.get("package_of"):  # the Go file the target named, in this package
        block["package_of"] = row["package_of"]
    return block
