"""
Relationship stories of a name that several definitions share, grouped by definition.

``find_callers write`` has no single answer in a codebase where forty classes define
``write``. Instead of an empty "ambiguous" page, the story counts each definition's edges
and orders the definitions by them, most first; their rows form one sequence (each group's
rows in its own story order, group after group) that ``offset`` and ``limit`` page exactly,
like a single definition's story. Every page lists the largest definitions (and those its
rows come from) with their counts, the offset where their rows start, and the entity id to
ask for that one definition (``entity_id``, or ``target`` set to the id or its handle).
Transitive stories do not page: they show the first rows of the largest groups instead.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from attrs import frozen

from eshu_mcp.query.local.api.code.common import in_clauses
from eshu_mcp.query.local.api.graph.edges import (
    INHERITABLE_LABELS,
    candidate_summary,
    name_candidates,
)
from eshu_mcp.query.local.api.graph.story.page import (
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
    " with the most edges first, and page with offset (each group's offset says where its"
    " rows start). Pass entity_id (or target set to a group's entity_id or entity_handle)"
    " to read one definition's relationships alone"
)


@frozen
class GroupRows:
    """The first rows of one definition, how many it has in all, and what follows them."""

    rows: list[dict[str, Any]]
    available: int
    following: dict[str, bool]


def one_hop_page(
    conn: sqlite3.Connection,
    filter_for: Callable[[list[str]], EdgeFilter],
    segments_for: Callable[[EdgeFilter], list[Segment]],
) -> Callable[[str, int, int], GroupRows]:
    """Direct rows ``[offset, offset + limit)`` of one definition's own story."""

    def page_rows(entity_id: str, offset: int, limit: int) -> GroupRows:
        page = read_page(segments_for(filter_for([entity_id])), offset, limit)
        return GroupRows(render_page(conn, page), sum(page.counts.values()), page.following)

    return page_rows


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
    paged: bool


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
    *,
    page_rows: Callable[[str, int, int], GroupRows] | None = None,
    rows_for: Callable[[str, int], GroupRows] | None = None,
) -> Grouping:
    """
    Count and order the edges of every definition named ``req["target"]``, then read one
    exact page of their rows (``page_rows``), or, for transitive stories, which do not
    page, a sample of the largest groups (``rows_for``).
    """
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
    if page_rows is None:
        sample = _sampled(ordered, size, directions, per_direction, req, rows_for)
        rows, found_by, following = sample
        starts: dict[str, int] = {}
    else:
        rows, found_by, following, starts = _paged(ordered, size, per_direction, req, page_rows)
    groups = []
    listed = {c["entity_id"] for c in ordered[:LISTED_GROUPS]} | found_by.keys()
    for candidate in ordered:
        entity_id = candidate["entity_id"]
        if entity_id not in listed:
            continue
        group = {
            **candidate_summary(candidate),
            "class_context": candidate.get("class_context") or "",
            "edge_count": size(entity_id),
            "edge_count_by_direction": {d: per_direction[d].get(entity_id, 0) for d in directions},
            "returned": 0,
            "rows_available": size(entity_id),
        }
        if entity_id in starts:
            group["offset"] = starts[entity_id]
        if entity_id in found_by:
            group["returned"], group["rows_available"] = found_by[entity_id]
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
        paged=page_rows is not None,
    )


def _paged(
    ordered: list[dict[str, Any]],
    size: Callable[[str], int],
    per_direction: dict[str, dict[str, int]],
    req: dict[str, Any],
    page_rows: Callable[[str, int, int], GroupRows],
) -> tuple[list[dict[str, Any]], dict[str, tuple[int, int]], dict[str, bool], dict[str, int]]:
    """
    Rows ``[offset, offset + limit)`` of every group's rows in one sequence (groups largest
    first, each in its own story order), the rows each group gave, what follows the page,
    and where each group's rows start in the sequence.
    """
    start, end = req["offset"], req["offset"] + req["limit"]
    position = 0
    rows: list[dict[str, Any]] = []
    found_by: dict[str, tuple[int, int]] = {}
    starts: dict[str, int] = {}
    following = {"incoming": False, "outgoing": False}
    for candidate in ordered:
        entity_id = candidate["entity_id"]
        count = size(entity_id)
        if not count:
            continue
        starts[entity_id] = position
        low, high = max(start - position, 0), min(end - position, count)
        if high > low:
            found = page_rows(entity_id, low, high - low)
            for row in found.rows:
                row["definition_entity_id"] = entity_id
            rows += found.rows
            found_by[entity_id] = (len(found.rows), found.available)
            for direction, more in found.following.items():
                following[direction] |= more
        elif position >= end:
            for direction, counts in per_direction.items():
                following[direction] |= bool(counts.get(entity_id))
        position += count
    return rows, found_by, following, starts


def _sampled(
    ordered: list[dict[str, Any]],
    size: Callable[[str], int],
    directions: list[str],
    per_direction: dict[str, dict[str, int]],
    req: dict[str, Any],
    rows_for: Callable[[str, int], GroupRows],
) -> tuple[list[dict[str, Any]], dict[str, tuple[int, int]], dict[str, bool]]:
    """The first rows of the largest groups, an equal share each (transitive stories)."""
    shown = [c["entity_id"] for c in ordered[:ROW_GROUPS] if size(c["entity_id"])]
    quota = dict(zip(shown, row_quotas([size(i) for i in shown], req["limit"]), strict=True))
    following = {"incoming": False, "outgoing": False}
    for direction in directions:
        following[direction] = any(
            per_direction[direction].get(c["entity_id"]) for c in ordered[ROW_GROUPS:]
        )
    rows: list[dict[str, Any]] = []
    found_by: dict[str, tuple[int, int]] = {}
    for entity_id in shown:
        if not quota.get(entity_id):
            continue
        found = rows_for(entity_id, quota[entity_id])
        for row in found.rows:
            row["definition_entity_id"] = entity_id
        rows += found.rows
        found_by[entity_id] = (len(found.rows), found.available)
        for direction, more in found.following.items():
            following[direction] |= more
    return rows, found_by, following


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
