"""
Relationship stories of a name that several definitions share, grouped by definition.

``find_callers write`` has no single answer in a codebase where forty classes define
``write``. Instead of an empty "ambiguous" page, the story counts each definition's edges,
lists the definitions with the most edges first, and shows the first rows of the largest
groups, all within the request's ``limit``. Each group carries the entity id to ask for
that one definition (``entity_id``, or ``target`` set to the id or its handle), whose
story then pages exactly.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from attrs import frozen

from eshu_mcp.query.local.api.code_common import in_clauses
from eshu_mcp.query.local.api.code_graph import (
    INHERITABLE_LABELS,
    candidate_summary,
    name_candidates,
)
from eshu_mcp.query.local.api.code_story_page import (
    EdgeFilter,
    Segment,
    read_page,
    render_page,
)

# Definitions of one name considered (largest Twisted names have a few dozen).
MAX_DEFINITIONS = 500
# Groups whose rows are shown, and groups listed with their counts.
ROW_GROUPS = 10
LISTED_GROUPS = 25

HOW_TO_NARROW = (
    "the name matches several definitions; rows are grouped by definition, the definitions"
    " with the most edges first. Pass entity_id (or target set to a group's entity_id or"
    " entity_handle) to read and page one definition's relationships"
)


@frozen
class GroupRows:
    """The first rows of one definition, how many it has in all, and what follows them."""

    rows: list[dict[str, Any]]
    available: int
    following: dict[str, bool]


def one_hop_rows(
    conn: sqlite3.Connection,
    filter_for: Callable[[list[str]], EdgeFilter],
    segments_for: Callable[[EdgeFilter], list[Segment]],
) -> Callable[[str, int], GroupRows]:
    """Direct rows of one definition: the first page of its own story."""

    def rows_for(entity_id: str, quota: int) -> GroupRows:
        page = read_page(segments_for(filter_for([entity_id])), 0, quota)
        return GroupRows(render_page(conn, page), sum(page.counts.values()), page.following)

    return rows_for


@frozen
class Grouping:
    """The grouped rows of an ambiguous story and what the groups hold in all."""

    rows: list[dict[str, Any]]
    groups: list[dict[str, Any]]
    available: dict[str, int]
    following: dict[str, bool]
    floored: int
    definition_count: int
    definitions_truncated: bool


def _counts(
    conn: sqlite3.Connection, edge_filter: EdgeFilter, ids: Sequence[str], direction: str
) -> dict[str, int]:
    """Edges per definition in one direction, under the story's filter."""
    column = "e.target_id" if direction == "incoming" else "e.source_id"
    counts: dict[str, int] = {}
    for _, batch in in_clauses(column, ids):
        where, params = EdgeFilter(
            batch, edge_filter.types, edge_filter.floor, edge_filter.repo_ids
        ).where(direction)
        for anchor, count in conn.execute(
            f"SELECT {column}, COUNT(*) FROM edges e WHERE {where} GROUP BY {column}", params
        ):
            counts[anchor] = count
    return counts


def group_by_definition(
    conn: sqlite3.Connection,
    req: dict[str, Any],
    repo_id: str,
    filter_for: Callable[[list[str]], EdgeFilter],
    rows_for: Callable[[str, int], GroupRows],
) -> Grouping:
    """Count, order and sample the edges of every definition named ``req["target"]``."""
    labels = sorted(INHERITABLE_LABELS) if req["query_type"] == "class_hierarchy" else ()
    candidates = name_candidates(
        conn,
        req["target"],
        repo_id=repo_id,
        language=req["language"],
        labels=labels,
        limit=MAX_DEFINITIONS,
    )
    truncated = len(candidates) > MAX_DEFINITIONS
    candidates = candidates[:MAX_DEFINITIONS]
    ids = [c["entity_id"] for c in candidates]
    directions = ["incoming", "outgoing"] if req["direction"] == "both" else [req["direction"]]
    floored_filter = filter_for(ids)
    unfloored_filter = EdgeFilter(ids, floored_filter.types, None, floored_filter.repo_ids)
    per_direction = {d: _counts(conn, floored_filter, ids, d) for d in directions}
    available = {"incoming": 0, "outgoing": 0}
    for direction in directions:
        available[direction] = sum(_counts(conn, unfloored_filter, ids, direction).values())
    position = {entity_id: index for index, entity_id in enumerate(ids)}

    def size(entity_id: str) -> int:
        return sum(per_direction[d].get(entity_id, 0) for d in directions)

    ordered = sorted(candidates, key=lambda c: (-size(c["entity_id"]), position[c["entity_id"]]))
    shown = [c["entity_id"] for c in ordered[:ROW_GROUPS] if size(c["entity_id"])]
    quotas = row_quotas([size(entity_id) for entity_id in shown], req["limit"])
    quota = dict(zip(shown, quotas, strict=True))
    rows: list[dict[str, Any]] = []
    following = {"incoming": False, "outgoing": False}
    for direction in directions:
        following[direction] = any(
            per_direction[direction].get(c["entity_id"]) for c in ordered[ROW_GROUPS:]
        )
    groups = []
    for candidate in ordered[:LISTED_GROUPS]:
        entity_id = candidate["entity_id"]
        group = {
            **candidate_summary(candidate),
            "class_context": candidate.get("class_context") or "",
            "edge_count": size(entity_id),
            "edge_count_by_direction": {d: per_direction[d].get(entity_id, 0) for d in directions},
            "returned": 0,
            "rows_available": size(entity_id),
        }
        if quota.get(entity_id):
            found = rows_for(entity_id, quota[entity_id])
            for row in found.rows:
                row["definition_entity_id"] = entity_id
                rows.append(row)
            group["returned"] = len(found.rows)
            group["rows_available"] = found.available
            for direction, more in found.following.items():
                following[direction] |= more
        group["truncated"] = group["returned"] < group["rows_available"]
        groups.append(group)
    return Grouping(
        rows=rows,
        groups=groups,
        available=available,
        following=following,
        floored=sum(size(entity_id) for entity_id in ids),
        definition_count=len(candidates),
        definitions_truncated=truncated,
    )


def row_quotas(sizes: Sequence[int], limit: int) -> list[int]:
    """
    Rows to show per group (groups largest first) within ``limit`` in all: an equal
    share each, what small groups leave over going to the larger ones.
    """
    quotas = [0] * len(sizes)
    pending = list(range(len(sizes)))
    budget = limit
    while pending and budget > 0:
        share = budget // len(pending)
        small = [i for i in pending if sizes[i] <= share]
        if not small:
            extra = budget - share * len(pending)
            for rank, i in enumerate(pending):
                quotas[i] = share + (rank < extra)
            break
        for i in small:
            quotas[i] = sizes[i]
            budget -= sizes[i]
            pending.remove(i)
    return quotas


def grouped_resolution(req: dict[str, Any], grouping: Grouping) -> dict[str, Any]:
    """The ``target_resolution`` block of a grouped story."""
    listed = [{k: group[k] for k in (*_CANDIDATE_KEYS, "edge_count")} for group in grouping.groups]
    return {
        "status": "ambiguous",
        "target": req["target"],
        "candidates": listed,
        "truncated": grouping.definition_count > len(listed) or grouping.definitions_truncated,
        "candidate_count": grouping.definition_count,
        "grouped_by_definition": True,
        "how_to_narrow": HOW_TO_NARROW,
    }


_CANDIDATE_KEYS = (
    "entity_id",
    "name",
    "labels",
    "file_path",
    "repo_id",
    "repo_name",
    "language",
    "start_line",
    "end_line",
    "entity_handle",
    "class_context",
)


def share_rows(rows: list[dict[str, Any]], allowed: int) -> list[dict[str, Any]]:
    """
    At most ``allowed`` grouped rows, the same number from each group in group order,
    so that every group shown keeps rows when the response budget cuts the page.
    """
    by_group: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_group.setdefault(row["definition_entity_id"], []).append(row)
    share = max(1, allowed // max(len(by_group), 1))
    return [row for group in by_group.values() for row in group[:share]][: max(allowed, 0)]


def count_returned(groups: list[dict[str, Any]], rows: list[dict[str, Any]]) -> None:
    """Set each group's ``returned`` and ``truncated`` from the rows actually served."""
    served: dict[str, int] = {}
    for row in rows:
        served[row["definition_entity_id"]] = served.get(row["definition_entity_id"], 0) + 1
    for group in groups:
        group["returned"] = served.get(group["entity_id"], 0)
        group["truncated"] = group["returned"] < group["rows_available"]
