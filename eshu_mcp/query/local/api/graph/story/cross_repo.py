"""
Cross-repository incoming edges for relationship stories (``cross_repo: true``).

The indexer resolves calls inside one repository, so a caller in another indexed
repository shows up only as an unresolved external call. This module pairs such call
sites (and imports) with the target by name, where the calling file imports that very
name from outside its repository, and labels them with Eshu's
``cross_repo_export_package`` resolution (confidence 0.70).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

CROSS_REPO_METHOD = "cross_repo_export_package"
CROSS_REPO_CONFIDENCE = 0.70


def cross_repo_incoming(
    conn: sqlite3.Connection,
    target: dict[str, Any],
    types: list[str],
    limit: int,
    readable: Callable[[str], bool],
) -> list[dict[str, Any]]:
    """Edge-shaped rows from other repositories that call or import ``target`` by name."""
    name, home = target["entity_name"], target["repo_id"]
    edges: list[dict[str, Any]] = []
    if "CALLS" in types:
        for row in conn.execute(
            "SELECT c.repo_id, c.caller_entity_id, c.file_id, c.line_number, c.call_kind"
            " FROM call_sites c JOIN unresolved_calls u ON u.call_id = c.call_id"
            " WHERE c.callee_name = ?1 AND c.repo_id <> ?2 AND u.reason = 'external'"
            " AND EXISTS (SELECT 1 FROM imports i WHERE i.file_id = c.file_id"
            " AND i.is_external = 1 AND (i.imported_name = ?1 OR i.alias = ?1))"
            " ORDER BY c.repo_id, c.file_id, c.line_number LIMIT ?3",
            (name, home, limit),
        ):
            source = row["caller_entity_id"] or f"file:{row['file_id']}"
            edges.append(_edge("CALLS", row, source, target, row["call_kind"]))
    if "IMPORTS" in types:
        for row in conn.execute(
            "SELECT repo_id, file_id, line_number FROM imports"
            " WHERE imported_name = ? AND repo_id <> ? AND is_external = 1"
            " ORDER BY repo_id, file_id, line_number LIMIT ?",
            (name, home, limit),
        ):
            edges.append(_edge("IMPORTS", row, f"file:{row['file_id']}", target, None))
    return [edge for edge in edges if readable(edge["repo_id"])][:limit]


def _edge(
    kind: str, row: sqlite3.Row, source: str, target: dict[str, Any], call_kind: str | None
) -> dict[str, Any]:
    return {
        "type": kind,
        "repo_id": row["repo_id"],
        "source_id": source,
        "target_id": target["entity_id"],
        "call_kind": call_kind,
        "reason": CROSS_REPO_METHOD,
        "resolution_method": CROSS_REPO_METHOD,
        "confidence": CROSS_REPO_CONFIDENCE,
        "line_number": row["line_number"],
    }
