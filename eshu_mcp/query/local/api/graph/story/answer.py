"""
``POST /code/relationships/story``: the bounded relationship story of one target.

MCP ``get_code_relationship_story`` and most ``analyze_code_relationships`` query types
(callers, callees, transitive callers/callees, importers, class hierarchy, overrides)
land here. Pipeline: resolve the target (an entity id or ``entity:`` handle, or a name;
a name several definitions share is answered grouped by definition, see
:mod:`.groups`), read one exact page of the story's ordered rows
(:mod:`.page`: ranked by centrality over all of the target's edges, the
confidence floor and the repository scope applied in SQL), attach provenance and handles,
then keep the rows that fit ``token_budget`` and the MCP response budget;
``summary.next_offset`` says where the next page starts. Eshu's own pipeline (local-backend
§2.4) ranks inside ``limit+1`` fetched rows and then cuts, which lost one row and served
another twice at every page boundary.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable
from typing import Any

from eshu_mcp.query.local.api.code.common import (
    GRAPH_BACKEND,
    RequestFields,
    entity_handle,
    next_offset,
)
from eshu_mcp.query.local.api.code.qualified import qualified_parts, without_call_parens
from eshu_mcp.query.local.api.code.scope import (
    RepositoryGrant,
    may_read,
    scope_repository,
)
from eshu_mcp.query.local.api.graph.edges import (
    INHERITABLE_LABELS,
    edge_rows,
    provenance,
    walk,
)
from eshu_mcp.query.local.api.graph.story.enrichment import (
    class_hierarchy,
    override_story,
    repository_overrides,
)
from eshu_mcp.query.local.api.graph.story.groups import (
    HOW_TO_NARROW,
    Grouping,
    GroupRows,
    count_returned,
    group_by_definition,
    grouped_resolution,
    one_hop_page,
    share_rows,
)
from eshu_mcp.query.local.api.graph.story.page import (
    ENVELOPE_RESERVE_BYTES,
    RESPONSE_BUDGET_BYTES,
    EdgeFilter,
    Segment,
    cross_repo_segment,
    edge_segment,
    fit_rows,
    read_page,
    render_page,
    wire_bytes,
)
from eshu_mcp.query.local.api.graph.story.request import story_request
from eshu_mcp.query.local.api.graph.story.target import (
    resolution_block,
    resolve_target,
    target_anchors,
)
from eshu_mcp.query.local.api.graph.story.unlinked import (
    from_tests,
    unlinked_call_sites,
    value_uses,
)
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError

AVAILABLE_CEILING = 10001
"""Edges are counted up to this many per direction (Eshu's bound): a count this high means
"more than 10,000"; every count beside it (from tests) is bounded the same way."""


def _rank(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Order transitive rows sure before ambiguous, then by bounded centrality: how often a
    neighbour recurs in the set."""

    def neighbour(row: dict[str, Any]) -> str:
        return row["source_id"] if row["direction"] == "incoming" else row["target_id"]

    def neighbour_name(row: dict[str, Any]) -> str:
        return row["source_name"] if row["direction"] == "incoming" else row["target_name"]

    degree = Counter(neighbour(row) for row in rows)
    for row in rows:
        row["centrality"] = degree[neighbour(row)]
    return sorted(
        rows,
        key=lambda r: (
            r.get("resolution_method") == "ambiguous",
            -r["centrality"],
            neighbour_name(r),
            neighbour(r),
        ),
    )


def _edge_filter(req: dict[str, Any], anchors: list[str], repo_id: str) -> EdgeFilter:
    """The anchors, types, floor and repository scope every page of the story reads."""
    types = ["INHERITS", "IMPLEMENTS"] if req["query_type"] == "class_hierarchy" else None
    scoped = (repo_id or isinstance(repo_id, RepositoryGrant)) and not req["cross_repo"]
    allowed = repo_id.repo_ids if isinstance(repo_id, RepositoryGrant) else (repo_id,)
    return EdgeFilter(
        anchors=anchors,
        types=types or req["relationship_types"],
        floor=req["min_confidence"],
        repo_ids=allowed if scoped else None,
    )


def story_segments(
    conn: sqlite3.Connection,
    req: dict[str, Any],
    edge_filter: EdgeFilter,
    readable: Callable[[str], bool],
) -> list[Segment]:
    """The runs of the story's row sequence: incoming, cross-repository incoming, outgoing."""
    directions = ["incoming", "outgoing"] if req["direction"] == "both" else [req["direction"]]
    segments = []
    for direction in directions:
        segments.append(edge_segment(conn, edge_filter, direction))
        if req["cross_repo"] and direction == "incoming" and req["anchor"] is not None:
            segments.append(cross_repo_segment(conn, req["anchor"], edge_filter, readable))
    return segments


def _one_hop(
    conn: sqlite3.Connection,
    req: dict[str, Any],
    edge_filter: EdgeFilter,
    readable: Callable[[str], bool],
) -> tuple[list[dict[str, Any]], dict[str, int], dict[str, bool], int]:
    """One exact page of direct rows; returns rows, counts, cut flags and floored total."""
    page = read_page(story_segments(conn, req, edge_filter, readable), req["offset"], req["limit"])
    rows = render_page(conn, page)
    available = {d: min(n, AVAILABLE_CEILING) for d, n in page.counts.items()}
    if edge_filter.floor:
        available = {"incoming": 0, "outgoing": 0}
        unfloored = EdgeFilter(edge_filter.anchors, edge_filter.types, None, edge_filter.repo_ids)
        for segment in story_segments(conn, req, unfloored, readable):
            available[segment.direction] += segment.count(AVAILABLE_CEILING)
    return rows, available, dict(page.following), sum(page.counts.values())


def _transitive(
    conn: sqlite3.Connection, req: dict[str, Any], anchors: list[str]
) -> tuple[list[dict[str, Any]], dict[str, int], dict[str, bool], int]:
    """Transitive CALLS rows (offset 0), nearest first, cut to the limit then ranked."""
    direction = req["direction"]
    found, bounded = walk(conn, anchors, direction, ("CALLS",), req["max_depth"])
    floor = req["min_confidence"]
    if floor:
        found = [
            (e, d) for e, d in found if e["confidence"] is not None and e["confidence"] >= floor
        ]
    kept = found[: req["limit"]]
    rows = edge_rows(conn, [edge for edge, _ in kept], direction)
    for row, (_, depth) in zip(rows, kept, strict=True):
        row["depth"] = depth
        row["edge_origin"] = "transitive_call_graph"
    available = {"incoming": 0, "outgoing": 0}
    available[direction] = len(found)
    cut = {"incoming": False, "outgoing": False}
    cut[direction] = bounded or len(found) > req["limit"]
    return _rank(rows), available, cut, len(found)


def relationship_story(
    conn: sqlite3.Connection,
    req: dict[str, Any],
    repo_id: str,
    readable: Callable[[str], bool] = lambda repo_id: True,
) -> dict[str, Any]:
    """Build the story data for a validated request."""
    resolution = resolve_target(conn, req, repo_id) if (req["target"] or req["entity_id"]) else None
    rows: list[dict[str, Any]] = []
    available = {"incoming": 0, "outgoing": 0}
    cut = {"incoming": False, "outgoing": False}
    floored = 0
    grouping: Grouping | None = None
    floor = req["min_confidence"]
    anchor_row = resolution.get("row") if resolution else None
    callers_filter: EdgeFilter | None = None  # a one-hop callers story's: value uses, tests
    if resolution and resolution["status"] == "resolved":
        if req["query_type"] == "class_hierarchy" and anchor_row["entity_type"] not in (
            INHERITABLE_LABELS
        ):
            raise ApiError(
                400, "class_hierarchy target must resolve to a class or inheritable entity"
            )
        anchors = target_anchors(conn, anchor_row, req["relationship_types"])
        req["anchor"] = anchor_row if anchor_row.get("rid") is not None else None
        if req["include_transitive"]:
            rows, available, cut, floored = _transitive(conn, req, anchors)
        else:
            edge_filter = _edge_filter(req, anchors, repo_id)
            rows, available, cut, floored = _one_hop(conn, req, edge_filter, readable)
            if req["relationship_types"] == ["CALLS"] and req["direction"] != "outgoing":
                callers_filter = edge_filter
    elif resolution is None:
        rows, available, cut = repository_overrides(conn, req, repo_id)
        floored = len(rows)
        cut["outgoing"] = len(rows) > req["limit"]
        rows = rows[: req["limit"]]
        degree = Counter(row["target_id"] for row in rows)
        for row in rows:
            row["centrality"] = degree[row["target_id"]]
    elif resolution.get("groupable"):
        req["anchor"] = None

        def filter_for(anchors: list[str]) -> EdgeFilter:
            return _edge_filter(req, anchors, repo_id)

        def transitive_rows(entity_id: str, quota: int) -> GroupRows:
            found, counts, following, _ = _transitive(conn, {**req, "limit": quota}, [entity_id])
            return GroupRows(found, sum(counts.values()), following)

        if req["include_transitive"]:
            grouping = group_by_definition(conn, req, repo_id, filter_for, rows_for=transitive_rows)
        else:
            page_rows = one_hop_page(
                conn, filter_for, lambda f: story_segments(conn, req, f, readable)
            )
            grouping = group_by_definition(conn, req, repo_id, filter_for, page_rows=page_rows)
        rows, available, cut = grouping.rows, grouping.available, grouping.following
        floored = grouping.floored
    count_cut = any(cut.values())
    for row in rows:
        row["provenance"] = provenance(row)
        row["source_handle"] = entity_handle(row["source_id"])
        row["target_handle"] = entity_handle(row["target_id"])
    data: dict[str, Any] = {
        "target_resolution": resolution_block(resolution, req, repo_id),
        "scope": _scope(req, repo_id),
        "relationships": [],
        "summary": {},
    }
    if req["query_type"] == "class_hierarchy" and anchor_row is not None:
        data["class_hierarchy"] = class_hierarchy(
            conn, anchor_row, req["max_depth"], req["offset"], req["limit"]
        )
    if grouping is not None:
        data["target_resolution"] = grouped_resolution(req, grouping)
        data["definition_groups"] = grouping.groups
    allowance = RESPONSE_BUDGET_BYTES - ENVELOPE_RESERVE_BYTES - wire_bytes(data)
    kept, budget_cut, clamped = fit_rows(rows, req["token_budget"], allowance)
    if req["query_type"] == "overrides" and clamped:
        allowance -= wire_bytes(override_story(conn, kept, anchor_row))
        kept, budget_cut, clamped = fit_rows(rows, req["token_budget"], allowance)
    if grouping is not None and not grouping.paged and (clamped or budget_cut):
        # A transitive sample keeps rows of every group it shows.
        shared = share_rows(rows, len(kept))
        kept, budget_again, clamped_again = fit_rows(shared, req["token_budget"], allowance)
        budget_cut, clamped = budget_cut or budget_again, clamped or clamped_again
    if grouping is not None:
        count_returned(grouping.groups, kept)
    count_cut = count_cut or clamped
    returned = Counter(row["direction"] for row in kept)
    returned_by = {"incoming": returned["incoming"], "outgoing": returned["outgoing"]}
    following = None
    if (count_cut or budget_cut) and not req["include_transitive"]:
        following = next_offset(req["offset"], len(kept), True)
    data["relationships"] = kept
    data["summary"] = {
        "relationship_count": len(kept),
        "returned_by_direction": returned_by,
        "truncated": count_cut or budget_cut,
        "next_offset": following,
    }
    if grouping is not None:
        data["summary"]["definition_count"] = grouping.definition_count
        data["summary"]["definitions_with_relationships"] = sum(
            1 for group in grouping.groups if group["edge_count"]
        )
        data["summary"]["groups_with_rows"] = sum(1 for g in grouping.groups if g["returned"])
    if req["token_budget"]:
        data["summary"]["token_budget"] = req["token_budget"]
    if resolution is not None and resolution["status"] != "resolved" and grouping is None:
        reason = "target_unresolved"  # grouped: every definition's rows were read
    elif sum(available.values()) == 0 and floored == 0:
        reason = "no_relationships_found"
    elif floored == 0:
        reason = "all_below_confidence_floor"
    elif budget_cut:
        reason = "truncated_by_token_budget"
    elif count_cut:
        reason = "truncated_by_limit"
    else:
        reason = "complete"
    state = {
        (False, False): "none",
        (True, False): "count",
        (False, True): "token_budget",
        (True, True): "count_and_token_budget",
    }[(count_cut, budget_cut)]
    coverage: dict[str, Any] = {
        "query_shape": "entity_anchor_bounded_bfs"
        if req["include_transitive"]
        else "entity_anchor_one_hop",
        "scope_mode": "cross_repo" if req["cross_repo"] else "repo_scoped",
        "directions": ["incoming", "outgoing"]
        if req["direction"] == "both"
        else [req["direction"]],
        "relationship_types": req["relationship_types"],
        "max_depth": req["max_depth"],
        "available_by_direction": available,
        "returned_by_direction": returned_by,
        "truncated_by_direction": cut,
        "truncated": count_cut or budget_cut,
        "ranked_by": "bounded_centrality",
        "missing_edge_reason": reason,
        "truncation_state": state,
        "evidence_explanation": _EXPLANATIONS[reason],
    }
    if floor is not None:
        coverage["min_confidence"] = floor
    if req["token_budget"]:
        coverage["token_budget"] = req["token_budget"]
    data["coverage"] = coverage
    data["source_backend"] = GRAPH_BACKEND
    if clamped:
        coverage["response_budget_bytes"] = RESPONSE_BUDGET_BYTES
        coverage["evidence_explanation"] = (
            f"{len(kept)} of the {req['limit']} requested rows fit the MCP response budget"
            f" ({RESPONSE_BUDGET_BYTES} bytes); read the rest from next_offset"
        )
    if grouping is not None:
        coverage["grouped_by_definition"] = True
        coverage["evidence_explanation"] = HOW_TO_NARROW
    uses = (
        value_uses(conn, callers_filter) if callers_filter and not available["incoming"] else None
    )
    if uses:
        coverage["value_uses"] = uses
        coverage["evidence_explanation"] = uses["explanation"]
    tests = from_tests(conn, callers_filter) if callers_filter and available["incoming"] else 0
    tests = min(tests, available["incoming"])  # both counted to the same ceiling
    if tests:
        coverage["incoming_from_tests"] = tests
    named = _called_name(req, resolution, grouping)
    unlinked = unlinked_call_sites(conn, named, repo_id) if named else None
    if unlinked:
        coverage["unlinked_call_sites"] = unlinked
    coverage["next_offset"] = following
    if req["query_type"] == "overrides":
        data["override_story"] = override_story(conn, kept, anchor_row)
    return data


def _called_name(
    req: dict[str, Any], resolution: dict[str, Any] | None, grouping: Grouping | None
) -> str:
    """The name whose unlinked call sites a one-hop callers story counts, or ``""``."""
    if req["include_transitive"] or req["direction"] == "outgoing":
        return ""
    if "CALLS" not in req["relationship_types"] or resolution is None:
        return ""
    if resolution["status"] == "resolved":
        return resolution["row"]["entity_name"]
    if grouping is not None:
        target = without_call_parens(req["target"]) or req["target"].strip()
        return (qualified_parts(target) or [target])[-1]
    return ""


_EXPLANATIONS = {
    "complete": "every matching relationship in scope was returned",
    "target_unresolved": "the target did not resolve to exactly one entity; pick a candidate"
    " entity_id and retry",
    "no_relationships_found": "the embedded call graph has no matching edge for this target;"
    " name-based resolution misses dynamic dispatch, so absence is not proof",
    "all_below_confidence_floor": "matching edges exist but all are below min_confidence",
    "truncated_by_limit": "more relationships exist than the limit; page with offset",
    "truncated_by_token_budget": "rows were cut to fit token_budget; raise it or narrow the"
    " request",
}


def _scope(req: dict[str, Any], repo_id: str) -> dict[str, Any]:
    scope = {
        "repo_id": repo_id,
        "language": req["language"],
        "direction": req["direction"],
        "relationship_type": req["relationship_type"],
        "relationship_types": req["relationship_types"],
        "cross_repo": req["cross_repo"],
        "limit": req["limit"],
        "offset": req["offset"],
        "max_depth": req["max_depth"],
        "include_transitive": req["include_transitive"],
    }
    if req["min_confidence"] is not None:
        scope["min_confidence"] = req["min_confidence"]
    return scope


@ROUTES.route("POST", "/code/relationships/story")
def code_relationship_story(ctx: ApiContext) -> Answer:
    """Callers, callees, importers, hierarchy or overrides of one target, bounded."""
    req = story_request(RequestFields.of(ctx))
    repo_id = scope_repository(ctx, req["repo_selector"])
    data = relationship_story(ctx.conn, req, repo_id, lambda repo: may_read(ctx, repo))
    truth = ctx.truth(
        "call_graph.relationship_story", reason="resolved from bounded relationship story lookup"
    )
    return Answer(data, truth)
