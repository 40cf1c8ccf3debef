"""
Reads over the embedded code graph (the ``edges`` table) shared by the relationship,
call-chain and metrics routes: node descriptions, edge rows with Eshu's provenance,
target resolution and bounded breadth-first walks.

Node ids in ``edges`` are entity ids, ``file:<file_id>`` or module keys
(``<repo_id>|<module>``); every reader here accepts all three.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from eshu_mcp.query.local.api.code.common import (
    decode_metadata,
    entity_handle,
    entity_location,
    fetch_entities,
    in_clause,
    in_clauses,
)
from eshu_mcp.query.local.api.code.qualified import (
    qualified_matches,
    qualified_parts,
    without_call_parens,
)
from eshu_mcp.query.local.api.code.scope import (
    scope_predicate,
)

# Labels a class hierarchy may be anchored on.
INHERITABLE_LABELS = frozenset(
    {"Class", "Struct", "Interface", "Trait", "Protocol", "Record", "Enum", "ImplBlock"}
)
# Bound on nodes a breadth-first walk may visit (the spec's "expansions ~50k").
MAX_EXPANSIONS = 50000
CANDIDATE_LIMIT = 25
# An ``@overload`` stub (the index marks it in ``dead_code_root_kinds``) stands for the
# function it declares: by name, the implementation answers, which is the definition
# without the decorator in the same scope (file, class, kind), or the last of the stubs
# when there is none (a ``.pyi`` file, a protocol). Calls resolve to it the same way.
_STUB = "e.metadata LIKE '%\"python.overload\"%'"
OVERLOAD_STUB_HIDDEN = (
    f"NOT ({_STUB} AND EXISTS (SELECT 1 FROM entities o WHERE o.entity_name = e.entity_name"
    " AND o.file_id = e.file_id AND o.entity_type = e.entity_type"
    " AND COALESCE(o.class_context, '') = COALESCE(e.class_context, '')"
    " AND o.entity_id <> e.entity_id AND (o.metadata IS NULL"
    " OR o.metadata NOT LIKE '%\"python.overload\"%' OR o.start_line > e.start_line)))"
)


def describe_nodes(conn: sqlite3.Connection, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Name, type, location and repository of each node id (entity, file or module)."""
    wanted = sorted(set(ids))
    entity_ids = [i for i in wanted if i.startswith("content-entity:")]
    file_ids = [int(i[5:]) for i in wanted if i.startswith("file:") and i[5:].isdigit()]
    module_keys = [i for i in wanted if "|" in i]
    nodes: dict[str, dict[str, Any]] = {}
    for clause, params in in_clauses("e.entity_id", entity_ids):
        for row in fetch_entities(conn, clause, params, "e.rid", 500):
            nodes[row["entity_id"]] = {
                "id": row["entity_id"],
                "name": row["entity_name"],
                "type": row["entity_type"],
                "repo_id": row["repo_id"],
                "repo_name": row["repo_name"],
                "file_path": row["relative_path"],
                "language": row["language"] or "",
                "start_line": row["start_line"],
                "end_line": row["end_line"],
                "metadata": decode_metadata(row["metadata"]),
                "is_test": row["is_test"],
                "class_context": row["class_context"] or "",
            }
    for clause, params in in_clauses("f.file_id", file_ids):
        for row in conn.execute(
            "SELECT f.file_id, f.repo_id, f.relative_path, f.language, f.line_count,"
            f" COALESCE(r.name, '') AS repo_name FROM files f LEFT JOIN repositories r"
            f" ON r.repo_id = f.repo_id WHERE {clause}",
            params,
        ):
            node_id = f"file:{row['file_id']}"
            nodes[node_id] = {
                "id": node_id,
                "name": row["relative_path"],
                "type": "File",
                "repo_id": row["repo_id"],
                "repo_name": row["repo_name"],
                "file_path": row["relative_path"],
                "language": row["language"] or "",
                "start_line": 1,
                "end_line": row["line_count"],
            }
    for clause, params in in_clauses("m.module_key", module_keys):
        for row in conn.execute(
            "SELECT m.module_key, m.repo_id, m.name, m.language, f.relative_path,"
            " COALESCE(r.name, '') AS repo_name FROM modules m"
            " LEFT JOIN files f ON f.file_id = m.file_id"
            f" LEFT JOIN repositories r ON r.repo_id = m.repo_id WHERE {clause}",
            params,
        ):
            nodes[row["module_key"]] = {
                "id": row["module_key"],
                "name": row["name"],
                "type": "Module",
                "repo_id": row["repo_id"],
                "repo_name": row["repo_name"],
                "file_path": row["relative_path"] or "",
                "language": row["language"] or "",
                "start_line": 0,
                "end_line": 0,
            }
    return nodes


def provenance(edge: dict[str, Any]) -> dict[str, Any]:
    """Eshu's provenance block for one code edge (confidence tiers, truth state)."""
    method = edge.get("resolution_method") or ""
    confidence = edge.get("confidence")
    reported = isinstance(confidence, int | float)
    if not reported:
        tier, state = "unsupported", "unsupported"
    else:
        tier = "high" if confidence >= 0.90 else "medium" if confidence >= 0.70 else "low"
        # An "ambiguous" edge is one of several candidates the call may reach: a guess.
        guessed = any(word in method for word in ("semantic", "heuristic", "ambiguous"))
        state = "heuristic" if guessed else "derived"
    block: dict[str, Any] = {
        "confidence_state": "reported" if reported else "unsupported",
        "confidence_tier": tier,
        "method": method,
        "source_family": "code_edge" if method else "unsupported",
        "reason": edge.get("reason") or "not_reported",
        "truth_state": state,
        "derived": state == "derived",
        "heuristic": state == "heuristic",
        "unsupported": state == "unsupported",
    }
    if reported:
        block["confidence"] = confidence
    return block


def _side(prefix: str, node: dict[str, Any] | None, node_id: str) -> dict[str, Any]:
    node = node or {"name": node_id, "type": ""}
    return {
        f"{prefix}_name": node.get("name", ""),
        f"{prefix}_id": node_id,
        f"{prefix}_repo_id": node.get("repo_id", ""),
        f"{prefix}_repo_name": node.get("repo_name", ""),
        f"{prefix}_file_path": node.get("file_path", ""),
        f"{prefix}_language": node.get("language", ""),
        f"{prefix}_type": node.get("type", ""),
        f"{prefix}_start_line": node.get("start_line", 0),
        f"{prefix}_end_line": node.get("end_line", 0),
    }


def edge_rows(
    conn: sqlite3.Connection, edges: Sequence[sqlite3.Row | dict[str, Any]], direction: str
) -> list[dict[str, Any]]:
    """Render raw ``edges`` rows in Eshu's relationship row shape."""
    nodes = describe_nodes(conn, [e["source_id"] for e in edges] + [e["target_id"] for e in edges])
    rows = []
    for edge in edges:
        method = edge["resolution_method"] or ""
        row: dict[str, Any] = {
            "direction": direction,
            "type": edge["type"],
            "call_kind": edge["call_kind"] or "",
            "reason": method,
            "confidence": edge["confidence"],
            "resolution_method": method,
        }
        extra = _reason_fields(edge["reason"])
        if isinstance(extra, str):
            row["reason"] = extra
        else:
            row.update(extra)
        row.update(_side("source", nodes.get(edge["source_id"]), edge["source_id"]))
        row.update(_side("target", nodes.get(edge["target_id"]), edge["target_id"]))
        if edge["line_number"] is not None:
            row["line_number"] = edge["line_number"]
        if row["confidence"] is None:
            del row["confidence"]
        if not row["resolution_method"]:
            del row["resolution_method"]
        rows.append(row)
    return rows


def _reason_fields(reason: str | None) -> str | dict[str, Any]:
    """An edge's ``reason`` column: plain text, or a JSON object of extra fields."""
    if not reason:
        return {}
    if reason.startswith("{"):
        try:
            value = json.loads(reason)
        except ValueError:
            return reason
        if isinstance(value, dict):
            return {k: v for k, v in value.items() if k in ("imported_name", "alias")}
    return reason


def fetch_edges(
    conn: sqlite3.Connection,
    anchors: Sequence[str],
    direction: str,
    types: Sequence[str],
    limit: int,
    offset: int = 0,
) -> list[sqlite3.Row]:
    """Edges touching ``anchors`` in one direction, deterministic order, bounded."""
    column = "target_id" if direction == "incoming" else "source_id"
    other = "source_id" if direction == "incoming" else "target_id"
    anchor_clause, params = in_clause(column, anchors)
    type_clause, type_params = in_clause("type", types)
    return conn.execute(
        f"SELECT * FROM edges WHERE {anchor_clause} AND {type_clause}"
        f" ORDER BY type, {other}, line_number, edge_id LIMIT ? OFFSET ?",
        [*params, *type_params, limit, offset],
    ).fetchall()


def count_edges(
    conn: sqlite3.Connection,
    anchors: Sequence[str],
    direction: str,
    types: Sequence[str],
    ceiling: int = 10001,
) -> int:
    """How many edges touch ``anchors`` (counted up to ``ceiling``)."""
    column = "target_id" if direction == "incoming" else "source_id"
    anchor_clause, params = in_clause(column, anchors)
    type_clause, type_params = in_clause("type", types)
    row = conn.execute(
        f"SELECT COUNT(*) FROM (SELECT 1 FROM edges WHERE {anchor_clause} AND {type_clause}"
        " LIMIT ?)",
        [*params, *type_params, ceiling],
    ).fetchone()
    return int(row[0])


def name_candidates(
    conn: sqlite3.Connection,
    name: str,
    *,
    repo_id: str,
    language: str,
    labels: Sequence[str] = (),
    limit: int = CANDIDATE_LIMIT,
) -> list[dict[str, Any]]:
    """
    Entities named exactly ``name`` in scope (``limit+1`` probe, deterministic order),
    the ``@overload`` stubs of a function folded into its implementation; when none is,
    and the name is qualified (``Deferred.addCallbacks``), the definitions it names.
    """
    where, params = scope_predicate(repo_id, language)
    where += " AND " + OVERLOAD_STUB_HIDDEN
    if labels:
        clause, values = in_clause("e.entity_type", labels)
        where += " AND " + clause
        params += values
    order = "e.is_test, e.repo_id, e.relative_path, e.start_line"
    named = fetch_entities(
        conn, where + " AND e.entity_name = ?", [*params, name.strip()], order, limit + 1
    )
    if not named and without_call_parens(name):  # "callLater()" names callLater
        return name_candidates(
            conn,
            without_call_parens(name),
            repo_id=repo_id,
            language=language,
            labels=labels,
            limit=limit,
        )
    parts = qualified_parts(name)
    if named or not parts:
        return named
    # ``Deferred.addCallbacks``, ``app.listen``: no entity has that name, so read it as a path.
    clause, values = in_clause("e.entity_id", qualified_matches(conn, parts, where, params))
    return fetch_entities(conn, f"{where} AND {clause}", [*params, *values], order, limit + 1)


def pick_candidate(candidates: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The single candidate, preferring a lone non-test one (Eshu's selection rule)."""
    if len(candidates) == 1:
        return candidates[0]
    non_test = [c for c in candidates if not c["is_test"] and not _test_path(c["relative_path"])]
    return non_test[0] if len(non_test) == 1 else None


def _test_path(path: str) -> bool:
    lowered = "/" + path.lower()
    base = lowered.rsplit("/", 1)[-1]
    return (
        any(part in lowered for part in ("/tests/", "/test/", "/__tests__/"))
        or base.startswith("test_")
        or base.endswith(("_test.py", "_test.go"))
        or ".test." in base
        or ".spec." in base
    )


def candidate_summary(row: dict[str, Any]) -> dict[str, Any]:
    """A target-resolution candidate row."""
    return {**entity_location(row), "entity_handle": entity_handle(row["entity_id"])}


def walk(
    conn: sqlite3.Connection,
    starts: Sequence[str],
    direction: str,
    types: Sequence[str],
    max_depth: int,
    *,
    max_nodes: int = MAX_EXPANSIONS,
) -> tuple[list[tuple[sqlite3.Row, int]], bool]:
    """
    Breadth-first walk from ``starts`` along ``types`` edges, at most ``max_depth`` hops.

    Returns each first-reaching edge with its depth, and whether the walk stopped at the
    node bound. Every node is expanded once, so cycles terminate.
    """
    column = "target_id" if direction == "incoming" else "source_id"
    other = "source_id" if direction == "incoming" else "target_id"
    seen = set(starts)
    frontier = list(starts)
    found: list[tuple[sqlite3.Row, int]] = []
    for depth in range(1, max_depth + 1):
        following: list[str] = []
        for anchor_clause, params in in_clauses(column, frontier):
            type_clause, type_params = in_clause("type", types)
            for edge in conn.execute(
                f"SELECT * FROM edges WHERE {anchor_clause} AND {type_clause}"
                f" ORDER BY {column}, {other}, line_number, edge_id LIMIT ?",
                [*params, *type_params, max_nodes + 1],
            ):
                node = edge[other]
                if node in seen:
                    continue
                if len(seen) >= max_nodes:
                    return found, True
                seen.add(node)
                following.append(node)
                found.append((edge, depth))
        if not following:
            break
        frontier = following
    return found, False
