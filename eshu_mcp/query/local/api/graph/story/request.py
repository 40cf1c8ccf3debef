"""
Request validation for ``POST /code/relationships/story``.

Eshu checks story requests in a fixed order with fixed texts (local-backend.md §2.4);
this module reproduces them and normalises the request into one dictionary the story
builder reads.
"""

from __future__ import annotations

from typing import Any

from eshu_mcp.query.local.api.code.common import (
    RequestFields,
    check_offset,
    clamp_limit,
    entity_id_of,
)
from eshu_mcp.query.local.api.platform.framework import ApiError

STORY_TYPES = ("CALLS", "IMPORTS", "REFERENCES", "INHERITS", "OVERRIDES", "TAINT_FLOWS_TO")


def story_request(fields: RequestFields) -> dict[str, Any]:
    """Validate a story request with Eshu's texts, in Eshu's order."""
    req: dict[str, Any] = {
        "target": fields.string("target").strip() or fields.string("name").strip(),
        "entity_id": fields.string("entity_id").strip(),
        "repo_selector": fields.string("repo_id"),
        "language": fields.string("language").strip(),
        "cross_repo": fields.boolean("cross_repo"),
        "query_type": fields.string("query_type").strip(),
        "include_transitive": fields.boolean("include_transitive"),
        "offset": fields.integer("offset"),
        "token_budget": fields.integer("token_budget"),
        "min_confidence": fields.number("min_confidence"),
    }
    if not req["entity_id"]:
        req["entity_id"] = entity_id_of(req["target"])
    else:
        req["entity_id"] = entity_id_of(req["entity_id"]) or req["entity_id"]
    direction = fields.string("direction").strip().lower() or "both"
    if direction not in ("incoming", "outgoing", "both"):
        raise ApiError(400, "direction must be incoming, outgoing, or both")
    req["direction"] = direction
    types = [t.strip().upper() for t in fields.strings("relationship_types") if t.strip()]
    single = fields.string("relationship_type").strip().upper()
    for kind in [*types, single]:
        if kind and kind not in STORY_TYPES:
            raise ApiError(400, f'unsupported relationship_type "{kind}"')
    query_type = req["query_type"]
    if query_type not in ("", "class_hierarchy", "overrides"):
        raise ApiError(400, "query_type must be class_hierarchy or overrides")
    repo_scoped_overrides = query_type == "overrides" and req["repo_selector"].strip()
    if not req["target"] and not req["entity_id"] and not repo_scoped_overrides:
        raise ApiError(400, "entity_id or target is required")
    if req["cross_repo"]:
        if not req["repo_selector"].strip():
            raise ApiError(400, "cross_repo relationship story requires repo_id")
        if query_type:
            raise ApiError(
                400,
                f"cross_repo {query_type} enrichment is not supported; use relationship_type"
                f" {'INHERITS' if query_type == 'class_hierarchy' else 'OVERRIDES'}",
            )
    check_offset(req["offset"])
    if req["token_budget"] < 0:
        raise ApiError(400, "token_budget must be >= 0")
    floor = req["min_confidence"]
    if floor is not None and not 0 <= floor <= 1:
        raise ApiError(400, "min_confidence must be between 0 and 1")
    if types and req["include_transitive"]:
        raise ApiError(400, "relationship_types cannot be combined with include_transitive")
    if types and query_type:
        raise ApiError(
            400,
            "relationship_types cannot be combined with class_hierarchy or overrides query types",
        )
    if req["include_transitive"]:
        if req["offset"] != 0:
            raise ApiError(400, "include_transitive requires offset 0")
        if (single or "CALLS") != "CALLS":
            raise ApiError(400, "include_transitive currently supports CALLS relationships only")
        if direction == "both":
            raise ApiError(
                400, "set direction to incoming or outgoing when include_transitive is true"
            )
    if query_type == "class_hierarchy":
        single, types = "INHERITS", []
    elif query_type == "overrides":
        single, types = "OVERRIDES", []
    req["relationship_type"] = types[0] if types else (single or "CALLS")
    req["relationship_types"] = types or [req["relationship_type"]]
    limit = clamp_limit(fields.integer("limit", 25), default=25, maximum=200)
    max_depth = fields.integer("max_depth", 5)
    req["limit"] = limit
    req["max_depth"] = 5 if max_depth <= 0 else min(max_depth, 10)
    return req
