"""
``GET /package-registry/{packages,versions,dependencies}`` from the repositories' own
manifests and lockfiles.

Packages are the ones the indexed repositories define, declare or pin, under Eshu's
canonical ``package_id``; versions are the pinned ones (and a manifest's own or exactly
pinned version); dependency edges are a project's declarations and a pinned version's own
requirements as its lockfile records them. Registry-only fields (publication dates, yanked
or deprecated flags) are not in a repository: they stay false or absent.
"""

from __future__ import annotations

import re
from typing import Any

from eshu_mcp.query.local.api.code.scope import scope_repository
from eshu_mcp.query.local.api.collected.packages.model import (
    DECLARED,
    PROJECT,
    PackageEvidence,
    evidence_row,
    identity_from_id,
    identity_of,
    load_package_evidence,
    matches_name,
    normalize_ecosystem,
    package_truth,
    readiness,
    required_limit,
)
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError

EVIDENCE_CAP = 20
_OMIT_EMPTY = ("ecosystem", "registry", "namespace", "normalized_name", "purl", "bom_ref")
_EXACT = {
    "pypi": re.compile(r"^===?\s*([\w.+!-]+)$"),
    "npm": re.compile(r"^=?v?(\d+\.\d+\.\d+(?:[-+][\w.-]+)?)$"),
    "maven": re.compile(r"^([\w.+-]+)$"),
    "cargo": re.compile(r"^=\s*(\d+\.\d+\.\d+(?:[-+][\w.-]+)?)$"),
    "composer": re.compile(r"^v?(\d+\.\d+\.\d+(?:[-+][\w.-]+)?)$"),
}


def omit_empty(row: dict[str, Any], keys=_OMIT_EMPTY) -> dict[str, Any]:
    """Drop empty optional strings, as Go's ``omitempty`` does."""
    return {k: v for k, v in row.items() if not (k in keys and v in ("", None))}


def exact_version(ecosystem: str, dependency_range: str) -> str:
    """The version a declaration pins exactly, or ''."""
    pattern = _EXACT.get(ecosystem)
    match = pattern.match(dependency_range.strip()) if pattern else None
    return match.group(1) if match else ""


def version_sort_key(version: str) -> tuple:
    """Numeric parts compared as numbers: 1.10 after 1.9."""
    return tuple(
        (0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.\-+]", version)
    )


def package_row(evidence: PackageEvidence, facts: list) -> dict[str, Any]:
    """One ``PackageRegistryPackageResult`` with the local evidence behind it."""
    identity = identity_of(facts)
    private = any(f.kind == PROJECT and f.payload.get("private") for f in facts)
    versions = package_versions(evidence, facts)
    rows = [evidence_row(evidence, fact) for fact in facts]
    row = {
        **identity,
        "bom_ref": identity["purl"],
        "source_path": facts[0].relative_path,
        "visibility": "private" if private else "unknown",
        "source_confidence": "derived",
        "version_count": len(versions),
        "direct": any(
            f.kind == DECLARED or evidence.is_direct(f) for f in facts if f.kind != PROJECT
        ),
        "defined_locally": any(f.kind == PROJECT for f in facts),
        "repositories": sorted({f.repo_id for f in facts}),
        "evidence": rows[:EVIDENCE_CAP],
        "evidence_truncated": len(rows) > EVIDENCE_CAP,
    }
    return omit_empty(row)


def package_versions(evidence: PackageEvidence, facts: list) -> dict[str, list]:
    """Version -> the facts that pin it (lockfiles, a manifest's own version, exact pins)."""
    versions: dict[str, list] = {}
    for fact in facts:
        payload = fact.payload
        if fact.kind == DECLARED:
            version = exact_version(
                payload.get("ecosystem", ""), payload.get("dependency_range", "")
            )
        else:
            version = str(payload.get("version") or "")
        if version:
            versions.setdefault(version, []).append(fact)
    return versions


@ROUTES.route("GET", "/package-registry/packages")
def list_packages(ctx: ApiContext) -> Answer:
    """Packages the repositories define, declare or pin, by id or ecosystem (and name)."""
    limit = required_limit(ctx)
    package_id = ctx.query.get("package_id", "").strip()
    ecosystem = normalize_ecosystem(ctx.query.get("ecosystem", ""))
    name = ctx.query.get("name", "").strip()
    if not package_id and name and not ecosystem:
        raise ApiError(400, "ecosystem is required when name is provided")
    if not package_id and not ecosystem:
        raise ApiError(400, "package_id or ecosystem is required")
    scope = scope_repository(ctx, "")
    evidence = load_package_evidence(ctx, scope, names=(package_id,) if package_id else ())
    rows = []
    truncated = False
    for facts in evidence.by_package().values():
        identity = identity_of(facts)
        if ecosystem and identity["ecosystem"] != ecosystem:
            continue
        if not matches_name(identity, name):
            continue
        if len(rows) == limit:
            truncated = True
            break
        rows.append(package_row(evidence, facts))
    data = {
        "packages": rows,
        "identity_issues": [],
        "count": len(rows),
        "limit": limit,
        "truncated": truncated,
        "collector_readiness": readiness(len(rows), truncated),
    }
    truth = package_truth(ctx, "package_registry.packages.list", evidence)
    return Answer(data, truth)


@ROUTES.route("GET", "/package-registry/versions")
def list_versions(ctx: ApiContext) -> Answer:
    """The versions of one package pinned or defined in the repositories."""
    limit = required_limit(ctx)
    package_id = ctx.query.get("package_id", "").strip()
    if not package_id:
        raise ApiError(400, "package_id is required")
    evidence = load_package_evidence(ctx, scope_repository(ctx, ""), names=(package_id,))
    facts = evidence.by_package().get(package_id, [])
    rows = []
    if facts:
        identity = identity_of(facts)
        versions = package_versions(evidence, facts)
        for version in sorted(versions, key=version_sort_key):
            pins = versions[version]
            rows.append(
                {
                    "version_id": f"{package_id}@{version}",
                    "package_id": package_id,
                    "version": version,
                    "purl": f"{identity['purl']}@{version}",
                    "bom_ref": f"{identity['purl']}@{version}",
                    "package_manager": identity["package_manager"],
                    "is_yanked": False,
                    "is_unlisted": False,
                    "is_deprecated": False,
                    "is_retracted": False,
                    "direct": any(f.kind == DECLARED or evidence.is_direct(f) for f in pins),
                    "evidence": [evidence_row(evidence, f) for f in pins][:EVIDENCE_CAP],
                }
            )
    page, truncated = rows[:limit], len(rows) > limit
    data = {
        "versions": page,
        "count": len(page),
        "limit": limit,
        "truncated": truncated,
        "collector_readiness": readiness(len(page), truncated),
    }
    truth = package_truth(ctx, "package_registry.versions.list", evidence)
    return Answer(data, truth)


def dependency_edges(evidence: PackageEvidence) -> list[dict[str, Any]]:
    """
    Every dependency edge, deduplicated: a project's declarations (source version: the
    project's own) and each pinned version's requirements, ordered by source version and id.
    """
    versions = {f.name: str(f.payload.get("version") or "") for f in evidence.projects}
    edges: dict[tuple[str, str], dict[str, Any]] = {}
    for fact in evidence.declared:
        source = fact.payload.get("declared_by") or ""
        if not source:
            continue
        _add_edge(edges, fact, source, versions.get(source, ""), fact.name, fact.payload)
    for fact in evidence.locked:
        for target, dependency_range in fact.payload.get("dependencies") or ():
            payload = {"dependency_range": dependency_range, "dependency_type": "runtime"}
            _add_edge(
                edges, fact, fact.name, str(fact.payload.get("version") or ""), target, payload
            )
    return sorted(edges.values(), key=lambda e: (e["source_version_id"], e["dependency_id"]))


def _add_edge(edges, fact, source: str, version: str, target: str, payload: dict) -> None:
    source_version_id = f"{source}@{version}" if version else ""
    key = (source_version_id or source, target)
    if key in edges:
        return
    target_identity = identity_from_id(target)
    edges[key] = omit_empty(
        {
            "dependency_id": f"{source_version_id or source}->{target}",
            "source_package_id": source,
            "source_version_id": source_version_id,
            "version": version,
            "dependency_package_id": target,
            "dependency_ecosystem": target_identity["ecosystem"],
            "dependency_registry": target_identity["registry"],
            "dependency_namespace": target_identity["namespace"],
            "dependency_normalized": target_identity["normalized_name"],
            "dependency_purl": target_identity["purl"],
            "dependency_bom_ref": target_identity["purl"],
            "dependency_manager": target_identity["package_manager"],
            "dependency_range": payload.get("dependency_range", ""),
            "dependency_type": payload.get("dependency_type", ""),
            "marker": payload.get("marker", ""),
            "optional": bool(payload.get("optional")),
            "excluded": False,
            "source_confidence": "derived",
            "collector_kind": fact.artifact_type,
            "repo_id": fact.repo_id,
            "relative_path": fact.relative_path,
            "line": fact.line,
        },
        keys=(
            "version",
            "dependency_ecosystem",
            "dependency_registry",
            "dependency_namespace",
            "dependency_normalized",
            "dependency_purl",
            "dependency_bom_ref",
            "dependency_manager",
            "dependency_range",
            "dependency_type",
            "marker",
        ),
    )


@ROUTES.route("GET", "/package-registry/dependencies")
def list_registry_dependencies(ctx: ApiContext) -> Answer:
    """The dependency edges of one package (or one of its versions)."""
    limit = required_limit(ctx)
    package_id = ctx.query.get("package_id", "").strip()
    version_id = ctx.query.get("version_id", "").strip()
    if not package_id and not version_id:
        raise ApiError(400, "package_id or version_id is required")
    after_version = ctx.query.get("after_version_id", "")
    after_dependency = ctx.query.get("after_dependency_id", "")
    if bool(after_version) != bool(after_dependency):
        raise ApiError(400, "after_version_id and after_dependency_id must be provided together")
    anchor = package_id or version_id.rsplit("@", 1)[0]
    evidence = load_package_evidence(ctx, scope_repository(ctx, ""))
    rows = [
        edge
        for edge in dependency_edges(evidence)
        if edge["source_package_id"] == anchor
        and (not version_id or edge["source_version_id"] == version_id)
        and (
            not after_version
            or (edge["source_version_id"], edge["dependency_id"])
            > (after_version, after_dependency)
        )
    ]
    page, truncated = rows[:limit], len(rows) > limit
    data: dict[str, Any] = {
        "dependencies": page,
        "count": len(page),
        "limit": limit,
        "truncated": truncated,
        "collector_readiness": readiness(len(page), truncated),
    }
    if truncated and page:
        data["next_cursor"] = {
            "after_version_id": page[-1]["source_version_id"],
            "after_dependency_id": page[-1]["dependency_id"],
        }
    truth = package_truth(ctx, "package_registry.dependencies.list", evidence)
    return Answer(data, truth)
