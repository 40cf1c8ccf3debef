"""
``/infra/resources/{search,count,inventory}`` and ``/infra/relationships`` answered from
the infrastructure the indexed repositories declare (Terraform, Kubernetes, Helm,
Compose). Cloud-runtime fields (ARNs, accounts, regions, running images) stay empty:
the repository states intent, not what runs.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from eshu_mcp.query.local.api.collected.facts import collected_truth, grouped_page
from eshu_mcp.query.local.api.collected.infra_graph import build_graph
from eshu_mcp.query.local.api.collected.infra_model import (
    INFRA_COLLECTOR,
    choice,
    infra_files,
    infra_resources,
    infra_scope,
    matches_filters,
    query_filters,
)
from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    body_object,
    int_param,
    limit_offset,
    str_param,
)

GROUP_BY = ("provider", "environment", "resource_category", "resource_service", "label")
MAX_INVENTORY_OFFSET = 10_000
RELATIONSHIP_ALIASES = {
    "what_deploys": {"DEPLOYS_FROM", "DEPLOYMENT_SOURCE", "HAS_DEPLOYMENT_EVIDENCE"},
    "what_provisions": {"PROVISIONS_DEPENDENCY_FOR", "PROVISIONS_PLATFORM"},
    "module_consumers": {"USES_MODULE"},
    "who_consumes_xrd": {"USES_MODULE"},
    "what_runs_image": {"RUNS_IMAGE"},
    "what_runs_lambda_image": {"AWS_lambda_function_uses_image"},
}
EDGE_TYPES = {
    "DEPLOYS_FROM",
    "DEPLOYMENT_SOURCE",
    "HAS_DEPLOYMENT_EVIDENCE",
    "PROVISIONS_DEPENDENCY_FOR",
    "PROVISIONS_PLATFORM",
    "USES_MODULE",
    "DEPENDS_ON",
    "INSTANCE_OF",
    "RUNS_ON",
    "RUNS_IMAGE",
    "DISCOVERS_CONFIG_IN",
    "READS_CONFIG_FROM",
    "DEFINES",
    "SELECTS",
}


def _matches_query(row: dict[str, Any], query: str) -> bool:
    query = query.lower()
    return any(
        query in str(row[key]).lower()
        for key in ("name", "id", "resource_type", "resource_id", "config_path", "kind")
    )


@ROUTES.route("POST", "/infra/resources/search")
def search_infra_resources(ctx: ApiContext) -> Answer:
    """Declared infrastructure matching a text query and/or structured filters."""
    body = body_object(ctx)
    query = str_param(body, "query").strip()
    filters = query_filters(body)
    if not query and not any(filters.values()):
        raise ApiError(
            400, "query or at least one filter (kind, provider, category...) is required"
        )
    limit = int_param(body, "limit", 50)
    limit = 50 if limit <= 0 else min(limit, 200)
    scope = infra_scope(ctx, str_param(body, "repo_id"))
    rows = [
        row
        for row in infra_resources(ctx, scope)
        if matches_filters(row, filters) and (not query or _matches_query(row, query))
    ]
    window = rows[:limit]
    data = {"results": window, "count": len(window), "limit": limit, "truncated": len(rows) > limit}
    truth = collected_truth(
        ctx, "platform_impact.deployment_chain", INFRA_COLLECTOR, infra_files(ctx, scope)
    )
    return Answer(data, truth)


def _filtered(ctx: ApiContext) -> tuple[list[dict[str, Any]], dict[str, str], str]:
    filters = query_filters(ctx.query)
    scope = infra_scope(ctx, ctx.query.get("repo_id", "") or ctx.query.get("repository", ""))
    rows = [row for row in infra_resources(ctx, scope) if matches_filters(row, filters)]
    return rows, {key: value for key, value in filters.items() if value}, scope


@ROUTES.route("GET", "/infra/resources/count")
def count_infra_resources(ctx: ApiContext) -> Answer:
    """Totals of declared infrastructure by provider, environment and label."""
    rows, scope_filters, scope = _filtered(ctx)
    data = {
        "total_resources": len(rows),
        "by_provider": dict(sorted(Counter(row["provider"] for row in rows).items())),
        "by_environment": dict(
            sorted(Counter(row["environment"] or "unspecified" for row in rows).items())
        ),
        "by_label": dict(sorted(Counter(row["labels"][0] for row in rows).items())),
        "scope": scope_filters,
    }
    truth = collected_truth(
        ctx, "infra_inventory.resources.count", INFRA_COLLECTOR, infra_files(ctx, scope)
    )
    return Answer(data, truth)


@ROUTES.route("GET", "/infra/resources/inventory")
def infra_resource_inventory(ctx: ApiContext) -> Answer:
    """Declared infrastructure grouped along one dimension, largest groups first."""
    group_by = choice(ctx.query, "group_by", GROUP_BY, "provider")
    limit, offset = limit_offset(
        ctx.query, default=100, maximum=500, max_offset=MAX_INVENTORY_OFFSET
    )
    rows, scope_filters, scope = _filtered(ctx)
    data = grouped_page(
        [
            (row["labels"][0] if group_by == "label" else row[group_by]) or "unspecified"
            for row in rows
        ],
        group_by,
        limit,
        offset,
        scope=scope_filters,
    )
    truth = collected_truth(
        ctx, "infra_inventory.resources.inventory", INFRA_COLLECTOR, infra_files(ctx, scope)
    )
    return Answer(data, truth)


@ROUTES.route("POST", "/infra/relationships")
def infra_relationships(ctx: ApiContext) -> Answer:
    """What an infrastructure entity the repository declares relates to, both ways."""
    body = body_object(ctx)
    entity = str_param(body, "entity_id").strip()
    if not entity:
        raise ApiError(400, "entity_id is required")
    requested = str_param(body, "relationship_type").strip()
    types: set[str] | None = None
    if requested:
        types = RELATIONSHIP_ALIASES.get(requested) or (
            {requested.upper()} if requested.upper() in EDGE_TYPES else None
        )
        if types is None:
            raise ApiError(400, f"unknown relationship_type: {requested}")
    scope = infra_scope(ctx, str_param(body, "repo_id"))
    graph = build_graph(ctx, scope)
    nodes = graph.find(entity)
    if not nodes:
        raise ApiError(404, "entity not found")
    node = nodes[0]
    outgoing, incoming = graph.around(node, types)
    data = {
        **node.public(),
        "outgoing": [edge.row() for edge in outgoing],
        "incoming": [edge.row() for edge in incoming],
    }
    truth = collected_truth(
        ctx,
        "platform_impact.deployment_chain",
        "infrastructure, image and CI collectors",
        infra_files(ctx, scope, _ALL),
    )
    return Answer(data, truth)


_ALL = ("terraform", "kubernetes", "helm", "compose", "dockerfile", "github_actions", "gitlab_ci")
