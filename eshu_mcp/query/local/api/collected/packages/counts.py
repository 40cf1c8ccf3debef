"""``GET /package-registry/packages/{count,inventory}``: the repositories' packages, counted."""

from __future__ import annotations

from collections import Counter
from typing import Any

from eshu_mcp.query.local.api.code.scope import scope_repository
from eshu_mcp.query.local.api.collected.facts import aggregate_paging, grouped_page
from eshu_mcp.query.local.api.collected.packages.model import (
    load_package_evidence,
    normalize_ecosystem,
    package_truth,
)
from eshu_mcp.query.local.api.collected.packages.routes import package_row
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError

CAPABILITY = "package_registry.packages.aggregate"
FILTERS = ("ecosystem", "registry", "namespace", "package_manager", "visibility")
DIMENSIONS = FILTERS


def _filtered_packages(ctx: ApiContext) -> tuple[list[dict[str, Any]], dict[str, str], Any]:
    """Package rows matching the filters, the echoed scope and the evidence read."""
    scope = {name: ctx.query.get(name, "").strip() for name in FILTERS}
    scope = {name: value for name, value in scope.items() if value}
    visibility = scope.get("visibility", "")
    if visibility and visibility not in ("public", "private", "unknown"):
        raise ApiError(400, "visibility must be one of public, private, unknown")
    evidence = load_package_evidence(ctx, scope_repository(ctx, ""))
    wanted = dict(scope)
    if "ecosystem" in wanted:
        wanted["ecosystem"] = normalize_ecosystem(wanted["ecosystem"])
    rows = []
    for facts in evidence.by_package().values():
        row = package_row(evidence, facts)
        if all(str(row.get(name, "")) == value for name, value in wanted.items()):
            rows.append(row)
    return rows, scope, evidence


@ROUTES.route("GET", "/package-registry/packages/count")
def count_packages(ctx: ApiContext) -> Answer:
    """How many packages the repositories hold, per ecosystem."""
    rows, scope, evidence = _filtered_packages(ctx)
    by_ecosystem = Counter(row.get("ecosystem", "") for row in rows)
    data = {
        "total_packages": len(rows),
        "by_ecosystem": dict(sorted(by_ecosystem.items())),
        "scope": scope,
    }
    return Answer(data, package_truth(ctx, CAPABILITY, evidence))


@ROUTES.route("GET", "/package-registry/packages/inventory")
def package_inventory(ctx: ApiContext) -> Answer:
    """Packages grouped along one dimension, largest group first."""
    group_by = ctx.query.get("group_by", "").strip() or "ecosystem"
    if group_by not in DIMENSIONS:
        raise ApiError(
            400,
            "group_by must be one of ecosystem, registry, namespace, package_manager, visibility",
        )
    limit, offset = aggregate_paging(ctx)
    rows, scope, evidence = _filtered_packages(ctx)
    values = (str(row.get(group_by, "")) for row in rows)
    data = grouped_page(values, group_by, limit, offset, scope=scope)
    return Answer(data, package_truth(ctx, CAPABILITY, evidence))
