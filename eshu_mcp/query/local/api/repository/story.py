"""
Repository context and story (§2.3), answered from code evidence only.

Eshu's lightweight profile refuses these (501); the embedded backend fills what the code
index can show (counts, languages, entry points, relationship totals, top modules) and
says in ``partial_reasons``/``limitations`` which platform sections stay empty.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext
from eshu_mcp.query.local.api.repository.catalog import CONTEXT, require_repository
from eshu_mcp.query.local.api.repository.exports import package_exports
from eshu_mcp.query.local.api.repository.rows import catalog_row

TOP_LIMIT = 10
PLATFORM_GAPS = [
    "deployment_evidence_unavailable",
    "consumer_evidence_unavailable",
    "platform_evidence_unavailable",
    "workload_evidence_unavailable",
]
REASON = "code-derived sections from the embedded index; platform sections need collectors"


def _count(conn: sqlite3.Connection, sql: str, *args: Any) -> int:
    return conn.execute(sql, args).fetchone()[0]


def language_breakdown(conn: sqlite3.Connection, repo_id: str) -> list[dict[str, Any]]:
    """Files per language, most files first."""
    rows = conn.execute(
        "SELECT language, COUNT(*) AS n FROM files WHERE repo_id = ? AND language IS NOT NULL"
        " GROUP BY language ORDER BY n DESC, language",
        (repo_id,),
    ).fetchall()
    return [{"language": row["language"], "file_count": row["n"]} for row in rows]


# Root kinds that keep an entity out of dead code without making it a way into the program.
INCIDENTAL_ROOT_KINDS = frozenset(
    {
        "dunder_method",
        "property",
        "property_function",
        "classmethod",
        "staticmethod",
        "overload",
        "dataclass",
        "constructor",
        "override",
        "method_override",
        "trait_impl_method",
        "test",
        "test_method",
    }
)
_ENTRY_SCAN = 5000
"""Entities with root kinds an entry-point listing reads at most."""


_SAMPLE_FOLDERS = frozenset(
    {
        "_examples",
        "examples",
        "example",
        "demo",
        "demos",
        "samples",
        "sample",
        "tutorials",
        "tutorial",
        "benchmarks",
        "benchmark",
        "bench",
        "metrics",
    }
)
"""Folders whose programs show or measure the repository rather than being it."""


PACKAGE_EXPORT_RANK = 0.5
"""After programs' mains (0), before the other API surface (1)."""


def _entry_rank(kinds: list[str]) -> int | None:
    """0 for a program's entry (main), 1 for other API surface, None when incidental."""
    kept = [kind for kind in kinds if kind.rsplit(".", 1)[-1] not in INCIDENTAL_ROOT_KINDS]
    if not kept:
        return None
    return 0 if any(k.endswith(("entrypoint", "main_method", "main_function")) for k in kept) else 1


def entry_points(
    conn: sqlite3.Connection, repo_id: str
) -> tuple[list[dict[str, Any]], int, dict[str, int]]:
    """
    Ways into the repository's code: ``main`` functions and other entry points first, then
    the API surface (what Python, JavaScript and Go packages hand on, exports, handlers),
    then those of examples and benchmarks; never the dunder
    methods, properties and overrides that are dead-code roots only because something
    calls them implicitly. The first :data:`TOP_LIMIT`, how many there are, and how many
    names each package entry hands on.
    """
    found: list[tuple[float, int, str, int, dict[str, Any]]] = []
    rows = conn.execute(
        "SELECT entity_id, entity_type, entity_name, relative_path, start_line, is_test,"
        " language, CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.exported')"
        " END = 1 AS exported,"
        " CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.dead_code_root_kinds')"
        " END AS kinds FROM entities WHERE repo_id = ?1 AND ((CASE WHEN json_valid(metadata)"
        " THEN json_array_length(metadata, '$.dead_code_root_kinds') END > 0)"
        " OR (language = 'python' AND entity_type = 'Function' AND class_context IS NULL"
        " AND (entity_name = 'main' OR relative_path LIKE '%__main__.py'))"
        " OR (CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.exported') END = 1))"
        " ORDER BY entity_name <> 'main', relative_path, start_line LIMIT ?2",
        (repo_id, _ENTRY_SCAN),
    )
    exported = package_exports(conn, repo_id)
    seen = {item["entity_id"] for item in exported}
    for order, item in enumerate(exported):  # what packages hand their users, in their order
        found.append((PACKAGE_EXPORT_RANK, 0, "", order, item))
    for row in rows:
        if row["entity_id"] in seen:
            continue
        kinds = json.loads(row["kinds"]) if row["kinds"] else []
        if row["exported"]:  # exports.f = ..., export function f: the module's API
            kinds.append(f"{row['language']}.module_export")
        elif not kinds:  # a Python module-level main, or a function of a __main__ module
            kinds = ["python.main_function"]
        rank = _entry_rank(kinds)
        if rank is None:
            continue
        item = {
            "entity_id": row["entity_id"],
            "entity_type": row["entity_type"],
            "name": row["entity_name"],
            "relative_path": row["relative_path"],
            "start_line": row["start_line"],
            "root_kinds": kinds,
        }
        if rank == 0 and row["entity_name"] == "init" and row["language"] == "go":
            rank = 1  # a Go package's initialiser: it runs on import, like any API's code
        if _SAMPLE_FOLDERS.intersection(row["relative_path"].split("/")[:-1]):
            rank += 2  # an example's or a benchmark's: after the repository's own
        found.append((rank, row["is_test"], row["relative_path"], row["start_line"], item))
    found.sort(key=lambda entry: entry[:4])
    handed_on: dict[str, int] = {}
    for item in exported:
        handed_on[item["exported_by"]] = handed_on.get(item["exported_by"], 0) + 1
    return [entry[-1] for entry in found[:TOP_LIMIT]], len(found), handed_on


def _entry_summary(entries: list[dict[str, Any]], total: int, handed_on: dict[str, int]) -> str:
    """What the entry-point section lists, and in which order."""
    if not entries:
        return "no main function, export or handler was found"
    shown = f", the first {len(entries)} listed" if total > len(entries) else ""
    if not handed_on:
        order = "main functions first, then the API surface (exports, handlers)"
    else:
        packages = sorted(handed_on.items(), key=lambda item: (-item[1], item[0]))
        named = ", ".join(
            f"{'the root package' if by == '.' else by}: {count}" for by, count in packages[:3]
        )
        more = f" and {len(packages) - 3} more" if len(packages) > 3 else ""
        order = (
            f"main functions first, then what the packages hand on ({named}{more}), then the"
            " other exports and handlers"
        )
    return f"{total} entry points{shown}: {order}; examples and tests last"


def relationship_totals(conn: sqlite3.Connection, repo_id: str) -> dict[str, int]:
    """Resolved code edges of the repository by type."""
    return {
        row[0]: row[1]
        for row in conn.execute(
            "SELECT type, COUNT(*) FROM edges WHERE repo_id = ? GROUP BY type ORDER BY type",
            (repo_id,),
        )
    }


def top_modules(conn: sqlite3.Connection, repo_id: str) -> list[dict[str, Any]]:
    """Directories holding the most entities."""
    rows = conn.execute(
        "SELECT CASE WHEN instr(relative_path, '/') > 0"
        " THEN substr(relative_path, 1, instr(relative_path, '/') - 1) ELSE '.' END AS top,"
        " COUNT(*) AS n FROM entities WHERE repo_id = ? GROUP BY top"
        " ORDER BY n DESC, top LIMIT ?",
        (repo_id, TOP_LIMIT),
    ).fetchall()
    return [{"path": row["top"], "entity_count": row["n"]} for row in rows]


def _external_dependency_count(conn: sqlite3.Connection, repo_id: str) -> int:
    return _count(
        conn,
        "SELECT COUNT(DISTINCT module) FROM imports WHERE repo_id = ? AND is_external = 1",
        repo_id,
    )


@ROUTES.route("GET", "/repositories/{repo_id}/context")
def repository_context(ctx: ApiContext) -> Answer:
    """Code-derived repository context; platform sections are empty and say why."""
    repo = require_repository(ctx)
    repo_id = repo["repo_id"]
    languages = language_breakdown(ctx.conn, repo_id)
    entries, entry_total, _ = entry_points(ctx.conn, repo_id)
    totals = relationship_totals(ctx.conn, repo_id)
    data = {
        "repository": catalog_row(repo),
        "file_count": _count(ctx.conn, "SELECT COUNT(*) FROM files WHERE repo_id = ?", repo_id),
        "language_breakdown": {item["language"]: item["file_count"] for item in languages},
        "api_surface": {"entry_points": entries, "entry_point_count": entry_total},
        "consumers": [],
        "dependency_count": _external_dependency_count(ctx.conn, repo_id),
        "deployment_evidence": {"state": "unavailable", "reason": "no deployment collector"},
        "platform_count": 0,
        "workload_count": 0,
        "relationship_overview": {"code_edges": totals, "total": sum(totals.values())},
        "relationships": [],
        "source_tool_breakdown": {"embedded_git_indexer": len(languages)},
        "partial_reasons": list(PLATFORM_GAPS),
    }
    return Answer(data, ctx.truth(CONTEXT, reason=REASON))


def _unavailable(section: str) -> dict[str, Any]:
    return {
        "state": "unavailable",
        "reason": f"embedded backend: no {section} collector configured; empty is not evidence"
        " of absence",
    }


@ROUTES.route("GET", "/repositories/{repo_id}/story")
def repository_story(ctx: ApiContext) -> Answer:
    """A code-only story of the repository with explicit evidence boundaries."""
    repo = require_repository(ctx)
    repo_id = repo["repo_id"]
    files = _count(ctx.conn, "SELECT COUNT(*) FROM files WHERE repo_id = ?", repo_id)
    entities = _count(ctx.conn, "SELECT COUNT(*) FROM entities WHERE repo_id = ?", repo_id)
    languages = language_breakdown(ctx.conn, repo_id)
    entries, entry_total, handed_on = entry_points(ctx.conn, repo_id)
    totals = relationship_totals(ctx.conn, repo_id)
    modules = top_modules(ctx.conn, repo_id)
    main = languages[0]["language"] if languages else "no recognised language"
    story = (
        f"{repo['name']} holds {files} indexed files and {entities} code entities, mostly"
        f" {main}; the index resolved {totals.get('CALLS', 0)} call edges and"
        f" {totals.get('IMPORTS', 0)} import edges."
    )
    sections = [
        {"id": "code_inventory", "title": "Code inventory", "summary": story},
        {
            "id": "entry_points",
            "title": "Entry points",
            "summary": _entry_summary(entries, entry_total, handed_on),
            "items": entries,
        },
        {
            "id": "layout",
            "title": "Layout",
            "summary": "directories holding the most entities",
            "items": modules,
        },
    ]
    data = {
        "subject": {"type": "repository", "id": repo_id, "name": repo["name"]},
        "repository": catalog_row(repo),
        "story": story,
        "story_sections": sections,
        "answer_metadata": {"source": "embedded_index", "profile": "local_lightweight"},
        "coverage_summary": {
            "file_count": files,
            "entity_count": entities,
            "languages": [item["language"] for item in languages],
            "code_edges": totals,
        },
        "deployment_overview": _unavailable("deployment"),
        "documentation_overview": _unavailable("documentation"),
        "gitops_overview": _unavailable("GitOps"),
        "semantic_overview": _unavailable("semantic extraction"),
        "support_overview": _unavailable("support or incident"),
        "drilldowns": {
            "stats": {"tool": "get_repository_stats", "params": {"repo_id": repo_id}},
            "files": {"tool": "list_repository_files", "params": {"repo_id": repo_id}},
            "hotspots": {"tool": "find_most_complex_functions", "params": {"repo_id": repo_id}},
        },
        "evidence_boundaries": [],
        "limitations": [
            "code evidence only: files, entities and resolved code edges of the work tree",
            "call edges are resolved heuristically; see each edge's resolution_method",
            "no deployment, GitOps, documentation, semantic or support evidence is collected",
            *PLATFORM_GAPS,
        ],
        "truncated": False,
    }
    return Answer(data, ctx.truth(CONTEXT, reason=REASON))
