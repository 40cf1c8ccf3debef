"""
``GET /dependencies`` (who depends on what, forward or reverse) and
``GET /package-registry/dependency-chains`` (a repository's packages, how each arrives and
which indexed repository publishes it), from the manifest and lockfile facts.

A chain's consumption leg is the repository's own declaration (or, for a transitive
package, the path of pinned versions from a declared one); its publisher legs are indexed
repositories whose manifest defines the package: inferred from names, so provenance-only.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from eshu_mcp.query.local.api.code.scope import may_read, scope_repository
from eshu_mcp.query.local.api.collected.packages.model import (
    DECLARED,
    PackageEvidence,
    identity_from_id,
    load_package_evidence,
    matches_name,
    normalize_ecosystem,
    optional_limit,
    package_truth,
    required_limit,
)
from eshu_mcp.query.local.api.collected.packages.routes import dependency_edges
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError


@ROUTES.route("GET", "/dependencies")
def list_dependencies(ctx: ApiContext) -> Answer:
    """A package's dependencies (forward) or dependents (reverse); every edge when unanchored."""
    direction = ctx.query.get("direction", "").strip().lower() or "forward"
    if direction not in ("forward", "reverse"):
        raise ApiError(400, 'direction must be "forward" or "reverse"')
    limit = optional_limit(ctx, 50, 200)
    package = ctx.query.get("package", "").strip()
    ecosystem = normalize_ecosystem(ctx.query.get("ecosystem", ""))
    if direction == "reverse" and not package:
        raise ApiError(400, "package is required for direction=reverse")
    after_name = ctx.query.get("after_name", "")
    after_edge = ctx.query.get("after_edge", "")
    if bool(after_name) != bool(after_edge):
        raise ApiError(400, "after_name and after_edge must be provided together")
    evidence = load_package_evidence(ctx, scope_repository(ctx, ""))
    rows = []
    for edge in dependency_edges(evidence):
        anchor_id, related_id = edge["source_package_id"], edge["dependency_package_id"]
        if direction == "reverse":
            anchor_id, related_id = related_id, anchor_id
        anchor, related = identity_from_id(anchor_id), identity_from_id(related_id)
        if ecosystem and anchor["ecosystem"] != ecosystem:
            continue
        if not matches_name(anchor, package):
            continue
        rows.append(
            {
                "direction": direction,
                "anchor_package_id": anchor_id,
                "anchor_package": anchor["normalized_name"],
                "anchor_ecosystem": anchor["ecosystem"],
                "declaring_version": edge.get("version", ""),
                "related_package_id": related_id,
                "related_package": related["normalized_name"],
                "related_ecosystem": related["ecosystem"],
                "dependency_range": edge.get("dependency_range", ""),
                "dependency_type": edge.get("dependency_type", ""),
                "optional": edge["optional"],
                "edge_id": edge["dependency_id"],
                "repo_id": edge["repo_id"],
                "relative_path": edge["relative_path"],
                "line": edge["line"],
            }
        )
    rows.sort(key=lambda r: (r["related_package"], r["edge_id"]))
    if after_edge:
        rows = [r for r in rows if (r["related_package"], r["edge_id"]) > (after_name, after_edge)]
    page, truncated = rows[:limit], len(rows) > limit
    data: dict[str, Any] = {
        "dependencies": page,
        "direction": direction,
        "count": len(page),
        "limit": limit,
        "truncated": truncated,
    }
    if truncated:
        data["next_cursor"] = {
            "after_name": page[-1]["related_package"],
            "after_edge": page[-1]["edge_id"],
        }
    truth = package_truth(ctx, "dependencies.list", evidence)
    return Answer(data, truth)


def _arrival_paths(evidence: PackageEvidence, repo_id: str) -> dict[str, list[str]]:
    """For every package pinned in a repository, a shortest path from a direct one to it."""
    graph: dict[str, set[str]] = {}
    starts: list[str] = []
    for fact in evidence.locked:
        if fact.repo_id != repo_id:
            continue
        graph.setdefault(fact.name, set()).update(
            t for t, _ in fact.payload.get("dependencies") or ()
        )
        if evidence.is_direct(fact):
            starts.append(fact.name)
    starts += [f.name for f in evidence.declared if f.repo_id == repo_id]
    paths: dict[str, list[str]] = {}
    queue = deque()
    for start in sorted(set(starts)):
        paths[start] = [start]
        queue.append(start)
    while queue:
        current = queue.popleft()
        for target in sorted(graph.get(current, ())):
            if target not in paths:
                paths[target] = [*paths[current], target]
                queue.append(target)
    return paths


@ROUTES.route("GET", "/package-registry/dependency-chains")
def list_dependency_chains(ctx: ApiContext) -> Answer:
    """Consumer repository -> package -> publishing repositories, for one repository."""
    limit = required_limit(ctx)
    selector = ctx.query.get("repository_id", "").strip()
    if not selector:
        raise ApiError(400, "repository_id is required")
    repository = ctx.repository(selector, not_found_status=404)
    repo_id = str(repository["repo_id"])
    after = ctx.query.get("after_correlation_id", "")
    evidence = load_package_evidence(ctx, scope_repository(ctx, ""))
    publishers: dict[str, list[tuple[str, Any]]] = {}
    for fact in evidence.projects:
        publishers.setdefault(fact.name, []).append((fact.repo_id, fact))
    names = dict(ctx.conn.execute("SELECT repo_id, name FROM repositories").fetchall())
    remotes = dict(ctx.conn.execute("SELECT repo_id, remote_url FROM repositories").fetchall())
    paths = _arrival_paths(evidence, repo_id)
    consumed: dict[str, dict[str, Any]] = {}
    for fact in (*evidence.declared, *evidence.locked):
        if fact.repo_id != repo_id:
            continue
        entry = consumed.setdefault(fact.name, {"declared": None, "locked": None, "paths": []})
        slot = "declared" if fact.kind == DECLARED else "locked"
        entry[slot] = entry[slot] or fact
        entry["paths"].append(fact.relative_path)
    chains = []
    for package_id in sorted(consumed):
        correlation_id = f"{repo_id}|consumption|{package_id}"
        if after and correlation_id <= after:
            continue
        entry = consumed[package_id]
        declared, locked = entry["declared"], entry["locked"]
        direct = declared is not None or (locked is not None and evidence.is_direct(locked))
        legs = [
            {
                "correlation_id": f"{owner}|publication|{package_id}",
                "relationship_kind": "publication",
                "repository_id": owner,
                "repository_name": names.get(owner, ""),
                "source_url": remotes.get(owner) or "",
                "outcome": "derived",
                "reason": f"{definition.relative_path} defines the package",
                "provenance_only": True,
                "canonical_writes": 0,
                "self_reference": owner == repo_id,
            }
            for owner, definition in publishers.get(package_id, ())
            if may_read(ctx, owner)
        ]
        identity = identity_from_id(package_id)
        chains.append(
            {
                "consumer_repository_id": repo_id,
                "consumer_repository_name": names.get(repo_id, ""),
                "package_id": package_id,
                "package_name": identity["normalized_name"],
                "ecosystem": identity["ecosystem"],
                "dependency_range": (declared or locked).payload.get("dependency_range")
                or (locked.payload.get("version", "") if locked else ""),
                "consumption_correlation_id": correlation_id,
                "consumption_provenance_only": not direct,
                "consumption_canonical_writes": 0,
                "publishers": legs,
                "ambiguous": len(
                    {leg["repository_id"] for leg in legs if not leg["self_reference"]}
                )
                > 1,
                "direct": direct,
                "dependency_path": paths.get(package_id, [package_id]),
                "relative_paths": sorted(set(entry["paths"])),
            }
        )
        if len(chains) > limit:
            break
    page, truncated = chains[:limit], len(chains) > limit
    data: dict[str, Any] = {
        "chains": page,
        "repository_id": repo_id,
        "count": len(page),
        "limit": limit,
        "truncated": truncated,
        "publishers_truncated": False,
    }
    if truncated:
        data["next_cursor"] = {"after_correlation_id": page[-1]["consumption_correlation_id"]}
    truth = package_truth(ctx, "package_registry.dependency_chains.list", evidence)
    return Answer(data, truth)
