"""
Exact pages of a relationship story's one-hop rows, within the response budget.

A story's rows form one ordered sequence: incoming edges, then cross-repository incoming
rows, then outgoing edges. Edges of one direction are ranked sure before ambiguous (one of
several candidates a call on a receiver of unknown type may reach), then with the edges
whose evidence is in test code last (an assistant asking who calls a function wants the
code that ships first), then by centrality (how many edges the neighbour has with the
target, highest first), then the neighbour's name and id, then the edge's own type, line
and id, so the order is total and the same on every read. A page is a slice of that
sequence: the confidence floor and the repository scope are part of the SQL rather than
filters applied after the cut, so consecutive offsets never lose or repeat a row, and
``next_offset`` is exactly where the following page starts.

A page is also kept within the MCP response budget (256 KiB, counted as both wire copies
of the payload, as ``eshu_mcp.dispatch.budget`` counts it): rows that would overflow it
are left to the next page, and the answer says so.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import groupby
from typing import Any

from attrs import frozen

from eshu_mcp.query.local.api.code.common import MAX_OFFSET, in_clause
from eshu_mcp.query.local.api.graph.edges import edge_rows
from eshu_mcp.query.local.api.graph.story.cross_repo import cross_repo_incoming

# The story's largest advertised limit; counts are exact up to the farthest page end.
MAX_LIMIT = 200
COUNT_CEILING = MAX_OFFSET + MAX_LIMIT + 1
# The MCP response budget of eshu_mcp.dispatch.budget (this layer may not import it).
RESPONSE_BUDGET_BYTES = 256 * 1024
# Room kept for the envelope, truth block and summary fields set after the cut.
ENVELOPE_RESERVE_BYTES = 8 * 1024


def wire_bytes(value: Any) -> int:
    """
    Bytes ``value`` costs in an MCP tool result: its compact JSON twice (structured
    content and the quoted text copy), with the quoting and Go's HTML escapes counted.
    """
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    escaped = len(text.encode("utf-8")) + 5 * sum(text.count(c) for c in "<>&")
    return 2 * escaped + text.count('"') + text.count("\\") + 2


@frozen
class EdgeFilter:
    """What every page of one story reads: anchors, types, floor and repository scope."""

    anchors: Sequence[str]
    types: Sequence[str]
    floor: float | None = None
    repo_ids: Sequence[str] | None = None

    def where(self, direction: str) -> tuple[str, list[Any]]:
        """The SQL predicate (over ``edges e``) and its parameters."""
        column = "e.target_id" if direction == "incoming" else "e.source_id"
        anchor_clause, params = in_clause(column, self.anchors)
        type_clause, type_params = in_clause("e.type", self.types)
        where, params = f"{anchor_clause} AND {type_clause}", [*params, *type_params]
        if self.floor:
            where += " AND e.confidence >= ?"
            params.append(self.floor)
        if self.repo_ids is not None:
            repo_clause, repo_params = in_clause("e.repo_id", self.repo_ids)
            where += " AND " + repo_clause
            params += repo_params
        return where, params


def count_story_edges(
    conn: sqlite3.Connection, edge_filter: EdgeFilter, direction: str, ceiling: int
) -> int:
    """How many edges one direction of the story has (counted up to ``ceiling``)."""
    where, params = edge_filter.where(direction)
    row = conn.execute(
        f"SELECT COUNT(*) FROM (SELECT 1 FROM edges e WHERE {where} LIMIT ?)",
        [*params, ceiling],
    ).fetchone()
    return int(row[0])


def ranked_story_edges(
    conn: sqlite3.Connection, edge_filter: EdgeFilter, direction: str, limit: int, offset: int
) -> list[sqlite3.Row]:
    """One slice of a direction's edges in the story's total order, with ``centrality``:
    sure edges before ambiguous ones, then shipped code before tests, on every page."""
    other = "e.source_id" if direction == "incoming" else "e.target_id"
    where, params = edge_filter.where(direction)
    return conn.execute(
        f"SELECT e.*, COUNT(*) OVER (PARTITION BY {other}) AS centrality,"
        " COALESCE((SELECT r.entity_name FROM nodes n JOIN entity_rows r ON r.rid = n.nid"
        f" WHERE n.node_id = {other}), {other}) AS neighbour_name,"
        " COALESCE((SELECT f.is_test FROM files f WHERE f.file_id = e.evidence_file_id), 0)"
        " AS in_tests"
        f" FROM edges e WHERE {where}"
        " ORDER BY COALESCE(e.resolution_method = 'ambiguous', 0), in_tests, centrality DESC,"
        f" neighbour_name, {other}, e.type, e.line_number,"
        " e.edge_id LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()


@frozen
class Segment:
    """One run of the story's sequence: ``count(ceiling)`` and ``rows(limit, offset)``."""

    direction: str
    origin: str
    count: Callable[[int], int]
    rows: Callable[[int, int], list[Any]]


def edge_segment(conn: sqlite3.Connection, edge_filter: EdgeFilter, direction: str) -> Segment:
    """The stored edges of one direction."""
    return Segment(
        direction=direction,
        origin="direct_code_edge",
        count=lambda ceiling: count_story_edges(conn, edge_filter, direction, ceiling),
        rows=lambda limit, offset: ranked_story_edges(conn, edge_filter, direction, limit, offset),
    )


def cross_repo_segment(
    conn: sqlite3.Connection,
    anchor: dict[str, Any],
    edge_filter: EdgeFilter,
    readable: Callable[[str], bool],
) -> Segment:
    """Incoming calls and imports from other repositories, paired with the target by name."""
    fetched: dict[int, list[dict[str, Any]]] = {}

    def read(ceiling: int) -> list[dict[str, Any]]:
        if ceiling not in fetched:
            rows = cross_repo_incoming(conn, anchor, list(edge_filter.types), ceiling, readable)
            if edge_filter.floor:
                rows = [r for r in rows if r["confidence"] >= edge_filter.floor]
            degree = Counter(r["source_id"] for r in rows)
            for row in rows:
                row["centrality"] = degree[row["source_id"]]
            fetched[ceiling] = rows
        return fetched[ceiling]

    return Segment(
        direction="incoming",
        origin="cross_repo_name_match",
        count=lambda ceiling: len(read(ceiling)),
        rows=lambda limit, offset: read(COUNT_CEILING)[offset : offset + limit],
    )


@frozen
class Page:
    """The raw rows of one page (with their segment), per-direction totals and what follows."""

    rows: list[tuple[Segment, Any]]
    counts: dict[str, int]
    following: dict[str, bool]

    @property
    def more(self) -> bool:
        """Whether any row follows this page."""
        return any(self.following.values())


def read_page(segments: Sequence[Segment], offset: int, limit: int) -> Page:
    """Rows ``[offset, offset + limit)`` of the concatenated segments, in order."""
    start, end = offset, offset + limit
    position = 0
    rows: list[tuple[Segment, Any]] = []
    counts = {"incoming": 0, "outgoing": 0}
    following = {"incoming": False, "outgoing": False}
    for segment in segments:
        size = segment.count(COUNT_CEILING)
        counts[segment.direction] += size
        low, high = max(start - position, 0), min(end - position, size)
        if high > low:
            rows += [(segment, row) for row in segment.rows(high - low, low)]
        position += size
        following[segment.direction] |= position > end
    return Page(rows=rows, counts=counts, following=following)


def render_page(conn: sqlite3.Connection, page: Page) -> list[dict[str, Any]]:
    """The page's rows in the relationship row shape, with their origin and centrality."""
    rows: list[dict[str, Any]] = []
    for segment, run in groupby(page.rows, key=lambda item: item[0]):
        edges = [edge for _, edge in run]
        for row, edge in zip(edge_rows(conn, edges, segment.direction), edges, strict=True):
            row["edge_origin"] = segment.origin
            row["centrality"] = edge["centrality"]
            rows.append(row)
    return rows


def fit_rows(
    rows: list[dict[str, Any]], token_budget: int, byte_allowance: int
) -> tuple[list[dict[str, Any]], bool, bool]:
    """
    The leading rows that fit ``token_budget`` (4 bytes a token, 0 = none) and the
    response budget's ``byte_allowance``; returns them and which budget cut the page.
    """
    spent_tokens = spent_bytes = 0
    for kept, row in enumerate(rows):
        text = json.dumps(row, separators=(",", ":"))
        tokens = len(text) // 4 + 1
        cost = wire_bytes(row) + 1
        if token_budget > 0 and spent_tokens + tokens > token_budget:
            return rows[:kept], True, False
        if spent_bytes + cost > byte_allowance:
            return rows[:kept], False, True
        spent_tokens += tokens
        spent_bytes += cost
    return rows, False, False
