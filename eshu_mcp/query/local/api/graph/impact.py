"""
Code-level change impact (``/impact/change-surface`` and ``/impact/pre-change``).

Changed paths or a target become entities; a bounded walk over incoming code edges
(calls, imports, inheritance, references) finds what depends on them. Services,
workloads and cloud resources need Eshu's platform graph, so those sections stay empty
and ``partial_reasons`` says so.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.qualified import (
    qualified_matches,
    qualified_parts,
    without_call_parens,
)
from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    body_object,
    int_param,
    limit_offset,
    page,
    relative_path,
    str_list_param,
    str_param,
)
from eshu_mcp.query.local.api.platform.grants import readable

INCOMING_TYPES = ("CALLS", "IMPORTS", "INHERITS", "IMPLEMENTS", "REFERENCES", "OVERRIDES")
PLATFORM_GAPS = ["platform_graph_unavailable", "service_and_workload_evidence_unavailable"]
WALK_ROW_CAP = 5000
SURFACE_DEPTH = 1
"""The change surface is what depends on the target directly: one edge."""

# ``sure`` is 1 while every edge of the path was resolved to its target, 0 once the path
# crossed an ambiguous call (one of several same-named candidates): that node may depend.
WALK_SQL = f"""
WITH RECURSIVE walk(node, depth, via, sure) AS (
    SELECT value, 0, '', 1 FROM json_each(:seeds)
    UNION
    SELECT e.source_id, w.depth + 1, e.type,
           w.sure AND COALESCE(e.resolution_method, '') <> 'ambiguous'
      FROM walk w
      JOIN edges e ON e.target_id = w.node
     WHERE w.depth < :depth AND e.type IN ({",".join(f"'{t}'" for t in INCOMING_TYPES)})
)
SELECT node, MIN(depth) AS depth, via, MAX(sure) AS sure FROM walk WHERE depth > 0
 GROUP BY node ORDER BY MAX(sure) DESC, MIN(depth), node LIMIT :cap
"""


def _file_seeds(conn: sqlite3.Connection, repo_id: str, path: str) -> list[str]:
    """Entity ids defined in a file plus the file's own node and any module it defines."""
    row = conn.execute(
        "SELECT file_id FROM files WHERE repo_id = ? AND relative_path = ?", (repo_id, path)
    ).fetchone()
    if row is None:
        return []
    seeds = [f"file:{row['file_id']}"]
    seeds += [
        r[0] for r in conn.execute("SELECT entity_id FROM entities WHERE file_id = ?", (row[0],))
    ]
    seeds += [
        r[0] for r in conn.execute("SELECT module_key FROM modules WHERE file_id = ?", (row[0],))
    ]
    return seeds


def _describe(conn: sqlite3.Connection, node: str) -> dict[str, Any] | None:
    if node.startswith("file:"):
        row = conn.execute(
            "SELECT repo_id, relative_path FROM files WHERE file_id = ?", (node[5:],)
        ).fetchone()
        if row is None:
            return None
        return {
            "id": node,
            "kind": "file",
            "name": row["relative_path"],
            "repo_id": row["repo_id"],
            "relative_path": row["relative_path"],
        }
    row = conn.execute(
        "SELECT entity_id, repo_id, entity_type, entity_name, relative_path, start_line,"
        " is_test, class_context FROM entities WHERE entity_id = ?",
        (node,),
    ).fetchone()
    if row is None:
        return None
    item = {
        "id": node,
        "kind": row["entity_type"],
        "name": row["entity_name"],
        "repo_id": row["repo_id"],
        "relative_path": row["relative_path"],
        "start_line": row["start_line"],
        "in_tests": bool(row["is_test"]),
    }
    if row["class_context"]:  # a method: Rule.__init__, not a bare __init__
        item["class_context"] = row["class_context"]
    return item


def affected(
    ctx: ApiContext, seeds: list[str], max_depth: int
) -> tuple[list[dict[str, Any]], list[str], bool]:
    """
    Definitions reaching the seeds through incoming code edges: those every edge of a path
    links for certain first, then those only an ambiguous call links (``possible``); within
    each, shipped code before tests, then nearest first. Files that reach them by an import
    are no definitions: their paths come apart, in the same order.
    """
    if not seeds:
        return [], [], False
    rows = ctx.conn.execute(
        WALK_SQL, {"seeds": json.dumps(seeds), "depth": max_depth, "cap": WALK_ROW_CAP + 1}
    ).fetchall()
    rows, capped = page(rows, WALK_ROW_CAP)
    seed_set = set(seeds)
    items = []
    files = []
    for row in rows:
        if row["node"] in seed_set:
            continue
        item = _describe(ctx.conn, row["node"])
        if item is None or not readable(ctx.principal, item["repo_id"]):
            continue
        if item["kind"] == "file":
            files.append(item["relative_path"])
            continue
        item["depth"] = row["depth"]
        item["relationship"] = row["via"]
        if not row["sure"]:
            item["possible"] = True  # reached only through an ambiguous call
        items.append(item)
    items.sort(key=lambda item: (item.get("possible", False), item["in_tests"]))  # stable
    return items, files, capped


def _target_seeds(ctx: ApiContext, target: str, repo_id: str | None) -> list[str]:
    if target.startswith(("content-entity:", "entity:")):
        return [target.removeprefix("entity:")]
    sql, args = "SELECT entity_id FROM entities WHERE entity_name = ?", [target]
    if repo_id:
        sql += " AND repo_id = ?"
        args.append(repo_id)
    seeds = [row[0] for row in ctx.conn.execute(sql + " LIMIT 100", args)]
    parts = qualified_parts(without_call_parens(target) or target)
    if not seeds and parts and "/" not in target:  # Clock.callLater
        where, params = ("e.repo_id = ?", [repo_id]) if repo_id else ("1 = 1", [])
        seeds = qualified_matches(ctx.conn, parts, where, params)[:100]
    if not seeds and repo_id and "/" in target:
        seeds = _file_seeds(ctx.conn, repo_id, relative_path(target, field="target"))
    return seeds


@ROUTES.route("POST", "/impact/change-surface")
def change_surface(ctx: ApiContext) -> Answer:
    """Code that depends on one target (entity id, symbol name or file)."""
    body = body_object(ctx)
    target = str_param(body, "target").strip()
    if not target:
        raise ApiError(400, "target is required")
    limit, _ = limit_offset(body, default=50, maximum=200)
    repo = ctx.repository(str_param(body, "repo_id"), not_found_status=404)
    seeds = _target_seeds(ctx, target, repo["repo_id"] if repo else None)
    items, files, capped = affected(ctx, seeds, SURFACE_DEPTH)
    chosen, truncated = page(items, limit)
    data = {
        "target": target,
        "target_type": "code",
        "environment": str_param(body, "environment"),
        "code_surface": {"seed_count": len(seeds), "seeds": seeds[:limit]},
        "max_depth": SURFACE_DEPTH,
        "affected": chosen,
        "affected_count": len(items),
        "possibly_affected_count": sum(1 for item in items if item.get("possible")),
        "importing_files": files[:limit],
        "importing_files_count": len(files),
        "services": [],
        "resources": [],
        "limit": limit,
        "truncated": truncated or capped,
        "partial_reasons": PLATFORM_GAPS,
    }
    return Answer(
        data,
        ctx.truth(
            "platform_impact.change_surface", reason="code-level impact from incoming code edges"
        ),
    )


def _changed_paths(body: dict[str, Any]) -> list[str]:
    paths = str_list_param(body, "changed_paths")
    changes = body.get("changes") or []
    if not isinstance(changes, list):
        raise ApiError(400, "invalid JSON: changes must be an array")
    for change in changes:
        if isinstance(change, dict):
            for key in ("path", "old_path"):
                value = change.get(key)
                if isinstance(value, str) and value.strip():
                    paths.append(value)
    return [relative_path(path, field="changed_paths") for path in paths]


@ROUTES.route("POST", "/impact/pre-change")
def pre_change(ctx: ApiContext) -> Answer:
    """What changed paths (or a target) would affect, walked up to ``max_depth`` edges."""
    body = body_object(ctx)
    paths = _changed_paths(body)
    target = str_param(body, "target").strip()
    if not paths and not target:
        raise ApiError(400, "changed_paths, changes or target is required")
    limit, offset = limit_offset(body, default=25, maximum=100, max_offset=10_000)
    max_depth = min(max(int_param(body, "max_depth", 4), 1), 8)
    repo = ctx.repository(str_param(body, "repo_id"), not_found_status=404)
    if paths and repo is None:
        raise ApiError(400, "repo_id is required with changed_paths")
    seeds: list[str] = []
    unknown: list[str] = []
    for path in dict.fromkeys(paths):
        found = _file_seeds(ctx.conn, repo["repo_id"], path)
        seeds += found
        if not found:
            unknown.append(path)
    if target:
        seeds += _target_seeds(ctx, target, repo["repo_id"] if repo else None)
    items, files, capped = affected(ctx, list(dict.fromkeys(seeds)), max_depth)
    window, truncated = page(items[offset : offset + limit + 1], limit)
    reasons = list(PLATFORM_GAPS)
    if str_param(body, "base_ref") or str_param(body, "head_ref"):
        reasons.append("git_ref_diff_not_supported_use_changed_paths")
    if unknown:
        reasons.append("changed_paths_not_indexed")
    data = {
        "repo_id": repo["repo_id"] if repo else "",
        "changed_paths": list(dict.fromkeys(paths)),
        "unindexed_paths": unknown,
        "target": target,
        "max_depth": max_depth,
        "seed_count": len(seeds),
        "affected": window,
        "affected_count": len(items),
        "possibly_affected_count": sum(1 for item in items if item.get("possible")),
        "importing_files": files[:limit],
        "importing_files_count": len(files),
        "services": [],
        "workloads": [],
        "resources": [],
        "limit": limit,
        "offset": offset,
        "truncated": truncated or capped,
        "partial_reasons": reasons,
    }
    return Answer(
        data,
        ctx.truth(
            "platform_impact.pre_change", reason="code-level impact from incoming code edges"
        ),
    )
