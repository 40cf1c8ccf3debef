"""
The enrichment blocks of relationship stories: ``class_hierarchy`` (ancestors and
descendants over INHERITS/IMPLEMENTS) and ``override_story``, plus the repository-wide
OVERRIDES listing used when an overrides story names no target.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.common import in_clauses
from eshu_mcp.query.local.api.graph.edges import edge_rows, walk


def repository_overrides(conn: sqlite3.Connection, req: dict[str, Any], repo_id: str):
    """Every OVERRIDES edge of a repository (repo-scoped ``overrides`` stories), paged."""
    floor = req.get("min_confidence") or 0
    edges = conn.execute(
        "SELECT * FROM edges WHERE repo_id = ? AND type = 'OVERRIDES'"
        " AND (? = 0 OR confidence >= ?)"
        " ORDER BY source_id, target_id, edge_id LIMIT ? OFFSET ?",
        (repo_id, floor, floor, req["limit"] + 1, req["offset"]),
    ).fetchall()
    rows = edge_rows(conn, edges, "outgoing")
    for row in rows:
        row["edge_origin"] = "direct_code_edge"
    cut = {"incoming": False, "outgoing": len(edges) > req["limit"]}
    return rows, {"incoming": 0, "outgoing": len(edges)}, cut


def class_hierarchy(
    conn: sqlite3.Connection,
    row: dict[str, Any],
    max_depth: int,
    offset: int = 0,
    limit: int | None = None,
):
    """
    Ancestors and descendants of a class over INHERITS/IMPLEMENTS, bounded by depth.

    Descendants come breadth first (every direct subclass before any of depth 2), one
    page of ``limit`` from ``offset`` (the story's own), so a class with hundreds of
    subclasses pages them: ``descendants_count`` says how many the walk found (and
    ``direct_descendant_count`` how many of them are direct), ``descendants_truncated``
    whether any lie outside this page or the walk's bound, ``descendants_next_offset``
    where the next page starts. Ancestors (a class's ancestry is short) come whole.
    """
    types = ("INHERITS", "IMPLEMENTS")
    block: dict[str, Any] = {
        "entity_id": row["entity_id"],
        "name": row["entity_name"],
        "max_depth": max_depth,
    }
    for key, direction, side in (
        ("ancestors", "outgoing", "target"),
        ("descendants", "incoming", "source"),
    ):
        found, bounded = walk(conn, [row["entity_id"]], direction, types, max_depth, max_nodes=2000)
        total = len(found)
        paged = key == "descendants" and limit is not None
        if paged:
            found = found[offset : offset + limit]
        rendered = edge_rows(conn, [edge for edge, _ in found], direction)
        block[key] = [
            {
                "entity_id": item[f"{side}_id"],
                "name": item[f"{side}_name"],
                "type": item[f"{side}_type"],
                "file_path": item[f"{side}_file_path"],
                "relationship_type": item["type"],
                "depth": depth,
            }
            for item, (_, depth) in zip(rendered, found, strict=True)
        ]
        block[f"{key}_truncated"] = bounded
        if paged:
            more = offset + len(found) < total
            block["descendants_count"] = total
            block["direct_descendant_count"] = _direct_count(conn, row["entity_id"], types)
            block["descendants_offset"] = offset
            block["descendants_truncated"] = bounded or more or (offset > 0 and total > 0)
            block["descendants_next_offset"] = offset + len(found) if more else None
    return block


def _direct_count(conn: sqlite3.Connection, entity_id: str, types: tuple[str, ...]) -> int:
    """Distinct direct subclasses (and implementers) of one class."""
    (count,) = conn.execute(
        "SELECT COUNT(DISTINCT source_id) FROM edges WHERE target_id = ? AND type IN (?, ?)",
        (entity_id, *types),
    ).fetchone()
    return int(count)


def override_story(
    conn: sqlite3.Connection, rows: list[dict[str, Any]], anchor: dict[str, Any] | None
) -> dict[str, Any]:
    """
    The ``override_story`` block: what a method overrides and what overrides it, each side
    with its line and class (``IRCClient.dataReceived`` at ``irc.py:2460``).
    """
    overrides = [r for r in rows if r["direction"] == "outgoing"]
    overridden_by = [r for r in rows if r["direction"] == "incoming"]
    ids = [r["target_id"] for r in overrides] + [r["source_id"] for r in overridden_by]
    classes = _classes_of(conn, ids)

    def side(row: dict[str, Any], end: str) -> dict[str, Any]:
        entity_id = row[f"{end}_id"]
        item = {
            "entity_id": entity_id,
            "name": row[f"{end}_name"],
            "file_path": row[f"{end}_file_path"],
            "start_line": row.get(f"{end}_start_line"),
        }
        if classes.get(entity_id):
            item["class_context"] = classes[entity_id]
        return item

    return {
        "method": anchor["entity_name"] if anchor else "",
        "entity_id": anchor["entity_id"] if anchor else "",
        "overrides": [side(r, "target") for r in overrides],
        "overridden_by": [side(r, "source") for r in overridden_by],
        "pair_count": len(rows),
    }


def _classes_of(conn: sqlite3.Connection, ids: list[str]) -> dict[str, str]:
    """The class each entity id is defined in (methods only)."""
    found: dict[str, str] = {}
    for clause, params in in_clauses("entity_id", sorted(set(ids))):
        for entity_id, owner in conn.execute(
            f"SELECT entity_id, class_context FROM entities WHERE {clause}", params
        ):
            if owner:
                found[entity_id] = owner
    return found
