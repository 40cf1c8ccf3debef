"""
``POST /code/imports/investigate``: import dependencies, importers, packages, Python
import cycles and cross-module calls from the ``imports`` table and CALLS edges.

Every query reads at most 25,000 candidate rows (a 25,001st row turns the answer into
Eshu's 422 "scope too broad"), then orders and pages in Python.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.common import (
    CONTENT_BACKEND,
    RequestFields,
    check_offset,
    file_handle,
    in_clause,
    language_values,
    next_offset,
)
from eshu_mcp.query.local.api.code.scope import (
    repo_clause,
    scope_repository,
)
from eshu_mcp.query.local.api.imports.timing import AT_LOAD, import_timing
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError
from eshu_mcp.query.local.api.platform.generation_answers import GENERATION_ANSWERS

QUERY_TYPES = (
    "imports_by_file",
    "importers",
    "module_dependencies",
    "package_imports",
    "file_import_cycles",
    "cross_module_calls",
)
CANDIDATE_CEILING = 25000
MODULE_FILE_CAP = 1000
"""Most files taken as defining one module name (``tests/a/cells.py``, ``b/cells.py``...)."""


def module_of(path: str) -> str:
    """The dotted module a source file defines (``pkg/sub/__init__.py`` -> ``pkg.sub``)."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _module_matches(path: str, wanted: str) -> bool:
    module = module_of(path)
    return module == wanted or module.endswith("." + wanted)


def _like(text: str) -> str:
    """``text`` as a literal LIKE pattern (with ``ESCAPE '\\'``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _module_files(conn: sqlite3.Connection, scope: dict[str, Any]) -> list[int]:
    """
    The files in scope defining the Python module ``target_module`` (``rich.cells``:
    rich/cells.py or rich/cells/__init__.py; under a source root such as src/ when no file
    has that exact path), so that the relative imports resolved to them (``from .cells
    import x``, ``from . import cells``) count as its importers.
    """
    wanted = scope["target_module"]
    if not all(part.isidentifier() for part in wanted.split(".")):
        return []
    stem = wanted.replace(".", "/")
    clause, params = repo_clause("repo_id", scope["repo_id"])
    rows = conn.execute(
        f"SELECT file_id, relative_path FROM files WHERE {clause} AND language = 'python'"
        " AND (relative_path IN (?, ?) OR relative_path LIKE ? ESCAPE '\\'"
        " OR relative_path LIKE ? ESCAPE '\\') LIMIT ?",
        [
            *params,
            f"{stem}.py",
            f"{stem}/__init__.py",
            f"%/{_like(stem)}.py",
            f"%/{_like(stem)}/\\_\\_init\\_\\_.py",
            MODULE_FILE_CAP,
        ],
    ).fetchall()
    exact = [row[0] for row in rows if module_of(row[1]) == wanted]
    return exact or [row[0] for row in rows]


PACKAGE_IMPORT_LANGUAGES = ("go",)
"""Languages whose import names a directory's package: it resolves to one of its files."""


def _target_files(conn: sqlite3.Connection, scope: dict[str, Any]) -> list[int]:
    """The files an import of ``target_file`` resolves to: that file, or for a Go file any
    file of its package (its directory), since a Go import names the package."""
    clause, params = repo_clause("repo_id", scope["repo_id"])
    rows = conn.execute(
        f"SELECT file_id, language, relative_path FROM files WHERE {clause}"
        " AND relative_path = ? LIMIT ?",
        [*params, scope["target_file"], MODULE_FILE_CAP],
    ).fetchall()
    found = [row[0] for row in rows]
    for _, language, path in rows:
        if language in PACKAGE_IMPORT_LANGUAGES:
            directory = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
            found += [
                file_id
                for file_id, sibling in conn.execute(
                    f"SELECT file_id, relative_path FROM files WHERE {clause}"
                    " AND language = ? AND relative_path LIKE ? ESCAPE '\\' LIMIT ?",
                    [*params, language, _like(directory) + "%", MODULE_FILE_CAP],
                )
                if "/" not in sibling[len(directory) :]
            ]
    return sorted(set(found))


def _ceiling(rows: list[Any]) -> None:
    if len(rows) > CANDIDATE_CEILING:
        raise ApiError(
            422,
            f"import investigation scope is too broad: reached the {CANDIDATE_CEILING + 1}-row"
            f" sentinel; maximum exact scope is {CANDIDATE_CEILING}",
        )


def _import_rows(
    conn: sqlite3.Connection, scope: dict[str, Any], capped: bool = True
) -> list[dict[str, Any]]:
    """The import rows in ``scope``; past the candidate ceiling a 422 (``capped`` False:
    every row, for answers computed once per generation and paged)."""
    ceiling = CANDIDATE_CEILING if capped else None
    clause, params = repo_clause("i.repo_id", scope["repo_id"])
    where = [clause, "i.module <> ''"]  # '': a file renaming its own export, no import
    languages = language_values(scope["language"])
    if languages:
        clause, values = in_clause("f.language", languages)
        where.append(clause)
        params += values
    if scope["source_file"]:
        where.append("f.relative_path = ?")
        params.append(scope["source_file"])
    if scope["target_file"]:
        files = _target_files(conn, scope) or [-1]
        where.append(f"i.resolved_file_id IN ({','.join('?' * len(files))})")
        params += files
    if scope["target_module"]:
        defining = _module_files(conn, scope)
        by_file = f" OR i.resolved_file_id IN ({','.join('?' * len(defining))})" if defining else ""
        where.append(f"(i.module = ? OR i.module LIKE ? ESCAPE '\\'{by_file})")
        params += [scope["target_module"], _like(scope["target_module"]) + ".%", *defining]
    rows = [
        dict(r)
        for r in conn.execute(
            "SELECT i.repo_id, COALESCE(r.name, '') AS repo_name, f.relative_path AS source_file,"
            " f.language, i.module AS target_module, COALESCE(i.imported_name, '') AS"
            " imported_name, COALESCE(i.alias, '') AS alias, i.line_number, i.resolved_file_id,"
            " i.file_id, rf.relative_path AS target_file FROM imports i"
            " JOIN files f ON f.file_id = i.file_id"
            " LEFT JOIN files rf ON rf.file_id = i.resolved_file_id"
            " LEFT JOIN repositories r ON r.repo_id = i.repo_id"
            f" WHERE {' AND '.join(where)} LIMIT ?",
            [*params, -1 if ceiling is None else ceiling + 1],
        )
    ]
    if ceiling is not None:
        _ceiling(rows)
    if scope["source_module"]:
        rows = [r for r in rows if _module_matches(r["source_file"], scope["source_module"])]
    rows.sort(
        key=lambda r: (
            r["repo_id"],
            r["source_file"],
            r["target_module"],
            r["line_number"],
            r["imported_name"],
            r["alias"],
        )
    )
    return rows


def _dependency(row: dict[str, Any], rank: int) -> dict[str, Any]:
    return {
        "repo_id": row["repo_id"],
        "repo_name": row["repo_name"],
        "source_file": row["source_file"],
        "source_name": module_of(row["source_file"]),
        "language": row["language"] or "",
        "target_module": row["target_module"],
        "target_file": row["target_file"] or "",
        "imported_name": row["imported_name"],
        "alias": row["alias"],
        "line_number": row["line_number"],
        "rank": rank,
        "source_backend": CONTENT_BACKEND,
        "source_handle": file_handle(row["repo_id"], row["source_file"]),
        "relationship_type": "IMPORTS",
        "dependency_handle": {
            "repo_id": row["repo_id"],
            "target_module": row["target_module"],
            "tool": "investigate_import_dependencies",
        },
    }


def import_cycles(
    conn: sqlite3.Connection, scope: dict[str, Any], capped: bool = True
) -> list[dict[str, Any]]:
    """
    Two-file import cycles (a imports b, b imports a) among resolved Python imports; each
    edge says when its import runs (:mod:`.timing`), each cycle whether it
    closes while the modules load (``runs_at_load``), and those come first.
    """
    rows = [
        r
        for r in _import_rows(
            conn, {**scope, "source_file": "", "target_module": "", "target_file": ""}, capped
        )
        if r["resolved_file_id"] is not None and r["language"] == "python"
    ]
    pairs = {(row["file_id"], row["resolved_file_id"]) for row in rows}
    timing = import_timing(
        conn,
        {
            (row["file_id"], row["line_number"])
            for row in rows
            if (row["resolved_file_id"], row["file_id"]) in pairs
        },
    )
    first: dict[tuple[int, int], dict[str, Any]] = {}
    for row in rows:  # a pair's first import that runs at load, else its first import
        when = timing.get((row["file_id"], row["line_number"]), (AT_LOAD, ""))
        row["runs"], row["runs_in_function"] = when
        key = (row["file_id"], row["resolved_file_id"])
        if key not in first or (first[key]["runs"] != AT_LOAD and when[0] == AT_LOAD):
            first[key] = row
    cycles = []
    for (source, target), row in sorted(
        first.items(),
        key=lambda kv: (kv[1]["repo_id"], kv[1]["source_file"], kv[1]["target_file"] or ""),
    ):
        back = first.get((target, source))
        if back is None or source == target or row["source_file"] > back["source_file"]:
            continue
        if scope["source_file"] and scope["source_file"] not in (
            row["source_file"],
            back["source_file"],
        ):
            continue
        if scope["target_file"] and scope["target_file"] not in (
            row["source_file"],
            back["source_file"],
        ):
            continue
        a, b = row["source_file"], back["source_file"]
        edges = [_cycle_edge(row, a, b), _cycle_edge(back, b, a)]
        cycles.append(
            {
                "repo_id": row["repo_id"],
                "repo_name": row["repo_name"],
                "source_file": a,
                "target_file": b,
                "source_module": module_of(a),
                "target_module": module_of(b),
                "source_line_number": row["line_number"],
                "back_edge_line_number": back["line_number"],
                "cycle_length": 2,
                "cycle_path": [a, b, a],
                "cycle_edges": edges,
                "runs_at_load": row["runs"] == AT_LOAD and back["runs"] == AT_LOAD,
                "relationship_type": "IMPORTS",
                "source_handle": file_handle(row["repo_id"], a),
            }
        )
    cycles.sort(key=lambda cycle: not cycle["runs_at_load"])  # stable: paths stay in order
    return cycles


def _cycle_edge(row: dict[str, Any], source: str, target: str) -> dict[str, Any]:
    edge = {
        "relationship_type": "IMPORTS",
        "source_file": source,
        "target_file": target,
        "source_module": module_of(source),
        "target_module": row["target_module"],
        "line_number": row["line_number"],
        "runs": row["runs"],
    }
    if row["runs_in_function"]:
        edge["runs_in_function"] = row["runs_in_function"]
    return edge


def cross_module_calls(conn: sqlite3.Connection, scope: dict[str, Any]) -> list[dict[str, Any]]:
    """CALLS edges whose caller and callee live in different files."""
    clause, params = repo_clause("e.repo_id", scope["repo_id"])
    where = ["e.type = 'CALLS'", "s.file_id <> t.file_id", clause]
    languages = language_values(scope["language"])
    if languages:
        clause, values = in_clause("s.language", languages)
        where.append(clause)
        params += values
    for key, column in (("source_file", "s.relative_path"), ("target_file", "t.relative_path")):
        if scope[key]:
            where.append(f"{column} = ?")
            params.append(scope[key])
    rows = [
        dict(r)
        for r in conn.execute(
            "SELECT e.repo_id, COALESCE(r.name, '') AS repo_name, s.relative_path AS source_file,"
            " t.relative_path AS target_file, s.entity_id AS caller_id, s.entity_name AS"
            " caller_name, t.entity_id AS callee_id, t.entity_name AS callee_name, s.language,"
            " e.line_number, e.resolution_method, e.confidence FROM edges e"
            " JOIN entities s ON s.entity_id = e.source_id"
            " JOIN entities t ON t.entity_id = e.target_id"
            " LEFT JOIN repositories r ON r.repo_id = e.repo_id"
            f" WHERE {' AND '.join(where)} LIMIT ?",
            [*params, CANDIDATE_CEILING + 1],
        )
    ]
    _ceiling(rows)
    for key, column in (("source_module", "source_file"), ("target_module", "target_file")):
        if scope[key]:
            rows = [r for r in rows if _module_matches(r[column], scope[key])]
    rows.sort(
        key=lambda r: (
            r["repo_id"],
            r["source_file"],
            r["target_file"],
            r["line_number"] or 0,
            r["caller_name"],
            r["callee_name"],
        )
    )
    for row in rows:
        row.update(
            source_module=module_of(row["source_file"]),
            target_module=module_of(row["target_file"]),
            relationship_type="CALLS",
            source_handle=file_handle(row["repo_id"], row["source_file"]),
        )
    return rows


TARGET_FILE_QUERIES = ("importers", "file_import_cycles", "cross_module_calls")
"""Questions ``target_file`` narrows (importers: the imports resolved to that file)."""


def _validate(fields: RequestFields) -> tuple[str, dict[str, Any]]:
    query_type = fields.string("query_type").strip() or "imports_by_file"
    if query_type not in QUERY_TYPES:
        raise ApiError(400, "query_type must be one of: " + ", ".join(QUERY_TYPES))
    limit = fields.integer("limit", 25)
    if limit > 200:
        raise ApiError(400, "limit must be <= 200")
    if limit < 0:
        raise ApiError(400, "limit must be >= 0")
    scope: dict[str, Any] = {
        key: fields.string(key).strip()
        for key in (
            "repo_id",
            "language",
            "source_file",
            "target_file",
            "source_module",
            "target_module",
        )
    }
    scope["limit"] = limit or 25
    scope["offset"] = check_offset(fields.integer("offset"))
    if not any(
        scope[k]
        for k in ("repo_id", "source_file", "target_file", "source_module", "target_module")
    ):
        raise ApiError(
            400,
            "one of repo_id, source_file, target_file, source_module, or target_module is required",
        )
    if scope["target_file"] and query_type not in TARGET_FILE_QUERIES:
        raise ApiError(400, "target_file is supported only for " + ", ".join(TARGET_FILE_QUERIES))
    if query_type == "file_import_cycles" and scope["language"].lower() not in ("", "python"):
        raise ApiError(
            400, "file_import_cycles currently supports python module-name cycle detection"
        )
    return query_type, scope


WHOLE_REPOSITORY_ANSWERS = ("file_import_cycles", "module_dependencies")
"""Questions about a whole repository: answered from one computation per generation."""


def _whole_answer(conn: sqlite3.Connection, query_type: str, scope: dict[str, Any]):
    """Every item of a whole-repository answer (no row cap), and the key it is listed under."""
    if query_type == "file_import_cycles":
        return import_cycles(conn, scope, capped=False), "cycles"
    unique: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in _import_rows(conn, scope, capped=False):
        unique.setdefault((row["repo_id"], row["source_file"], row["target_module"]), row)
    return list(unique.values()), "dependencies"


@ROUTES.route("POST", "/code/imports/investigate")
def investigate_imports(ctx: ApiContext) -> Answer:
    """MCP ``investigate_import_dependencies``."""
    query_type, scope = _validate(RequestFields.of(ctx))
    scope["repo_id"] = scope_repository(ctx, scope["repo_id"])
    limit, offset = scope["limit"], scope["offset"]
    narrowed = any(
        scope[k] for k in ("source_file", "target_file", "source_module", "target_module")
    )
    if query_type in WHOLE_REPOSITORY_ANSWERS and scope["repo_id"] and not narrowed:
        # one repository's whole answer: computed once per generation, paged, never capped
        question = {k: v for k, v in scope.items() if k not in ("limit", "offset")}
        items, key = GENERATION_ANSWERS.answer(
            ctx.conn,
            "imports:" + query_type,
            question,
            scope["repo_id"],
            lambda: _whole_answer(ctx.conn, query_type, scope),
        )
    elif query_type == "file_import_cycles":
        items, key = import_cycles(ctx.conn, scope), "cycles"
    elif query_type == "cross_module_calls":
        items, key = cross_module_calls(ctx.conn, scope), "cross_module_calls"
    elif query_type == "package_imports":
        seen: dict[tuple[str, str], dict[str, Any]] = {}
        for row in _import_rows(ctx.conn, scope):
            seen.setdefault(
                (row["repo_id"], row["target_module"]),
                {
                    "repo_id": row["repo_id"],
                    "module": row["target_module"],
                    "language": row["language"] or "",
                    "source_backend": CONTENT_BACKEND,
                },
            )
        items, key = sorted(seen.values(), key=lambda m: (m["repo_id"], m["module"])), "modules"
    else:
        rows = _import_rows(ctx.conn, scope)
        if query_type == "module_dependencies":
            unique: dict[tuple[str, str, str], dict[str, Any]] = {}
            for row in rows:
                unique.setdefault((row["repo_id"], row["source_file"], row["target_module"]), row)
            rows = list(unique.values())
        items, key = rows, "dependencies"
    window = items[offset : offset + limit + 1]
    page, truncated = window[:limit], len(window) > limit
    if key == "dependencies":
        page = [_dependency(row, offset + i) for i, row in enumerate(page, start=1)]
    data = {
        "query_type": query_type,
        "scope": scope,
        "limit": limit,
        "offset": offset,
        "truncated": truncated,
        "next_offset": next_offset(offset, len(page), truncated),
        "source_backend": CONTENT_BACKEND,
        "coverage": {
            "query_shape": query_type,
            "relationship_types": ["CALLS"] if key == "cross_module_calls" else ["IMPORTS"],
            "truncated": truncated,
            "bounded": True,
            "candidate_scan_limit": CANDIDATE_CEILING,
        },
        "count": len(page),
        "total": len(items),
        key: page,
    }
    if key == "cycles":
        data["cycles_at_load"] = sum(1 for cycle in items if cycle["runs_at_load"])
    elif key == "dependencies":  # one row per imported name: how many files they are in
        data["files_total"] = len({row["source_file"] for row in items})
    truth = ctx.truth(
        "symbol_graph.import_dependencies", reason="resolved from the embedded import index"
    )
    return Answer(data, truth)
