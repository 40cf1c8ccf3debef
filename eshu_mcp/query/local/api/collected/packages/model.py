"""
The package evidence of the indexed repositories, assembled from the manifest and lockfile
collectors' facts: packages by canonical ``package_id``, their declared ranges and pinned
versions, which pins are direct, and the dependency edges between pinned versions.

Direct vs transitive: a lockfile that says so is believed (``package-lock.json`` roots,
``uv.lock`` and ``Cargo.lock`` workspace members, ``Gemfile.lock`` ``DEPENDENCIES``,
``go.mod`` ``// indirect``); otherwise a pin is direct when a manifest in the lockfile's
directory or below it (workspaces) declares the same package.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from attrs import define, field

from eshu_mcp.query.local.api.collected.facts import (
    CollectedFact,
    collected_facts,
    collected_files,
    collected_truth,
)
from eshu_mcp.query.local.api.platform.framework import ApiContext, ApiError, strict_query_int
from eshu_mcp.query.local.index.parse.collectors.package_identity import (
    normalize_name,
    package_identity,
)
from eshu_mcp.query.local.index.parse.registry import LANGUAGES

PROJECT = "package_project"
DECLARED = "package_dependency"
LOCKED = "package_locked"
PACKAGE_ARTIFACTS = ("package_manifest", "package_lockfile")
COLLECTOR_NAME = "package manifest and lockfile collector"

ECOSYSTEM_ALIASES = {
    "node": "npm",
    "nodejs": "npm",
    "pip": "pypi",
    "golang": "gomod",
    "go-module": "gomod",
    "go_module": "gomod",
    "gradle": "maven",
    "packagist": "composer",
    "gem": "rubygems",
    "crate": "cargo",
    "crates": "cargo",
    "crates.io": "cargo",
    **{language.key: language.packages for language in LANGUAGES if language.packages},
}
"""Eshu's ecosystem aliases: tool names, and each language's (the registry's ``packages``)."""
IDENTITY_KEYS = (
    "package_id",
    "ecosystem",
    "registry",
    "namespace",
    "normalized_name",
    "purl",
    "package_manager",
)


def normalize_ecosystem(value: str) -> str:
    """Eshu's ecosystem aliases (``go`` -> ``gomod``, ``python`` -> ``pypi``...)."""
    value = value.strip().lower()
    return ECOSYSTEM_ALIASES.get(value, value)


def _directory(path: str) -> str:
    return path.rsplit("/", 1)[0] + "/" if "/" in path else ""


@define
class PackageEvidence:
    """Every package fact in a scope, indexed for the package routes."""

    projects: list[CollectedFact] = field(factory=list)
    declared: list[CollectedFact] = field(factory=list)
    locked: list[CollectedFact] = field(factory=list)
    files_read: int = 0
    unreadable: list[str] = field(factory=list)  # files the collector failed to parse
    _declared_dirs: dict[tuple[str, str], list[str]] = field(factory=dict)

    def is_direct(self, fact: CollectedFact) -> bool:
        """Whether a pinned version is a direct dependency of a project in the repository."""
        if fact.kind == DECLARED:
            return True
        stated = fact.payload.get("direct")
        if stated is not None:
            return bool(stated)
        lock_dir = _directory(fact.relative_path)
        return any(
            directory.startswith(lock_dir)
            for directory in self._declared_dirs.get((fact.repo_id, fact.name), ())
        )

    def by_package(self) -> dict[str, list[CollectedFact]]:
        """Facts grouped by package id, in the facts' stable order."""
        grouped: dict[str, list[CollectedFact]] = defaultdict(list)
        for fact in (*self.projects, *self.declared, *self.locked):
            grouped[fact.name].append(fact)
        return dict(sorted(grouped.items()))


def load_package_evidence(
    ctx: ApiContext, scope: str, *, names: tuple[str, ...] = ()
) -> PackageEvidence:
    """The package facts of ``scope`` (all readable repositories when unscoped)."""
    facts, _ = collected_facts(ctx, (PROJECT, DECLARED, LOCKED), scope=scope, names=names)
    evidence = PackageEvidence(files_read=collected_files(ctx, PACKAGE_ARTIFACTS, scope=scope))
    for fact in facts:
        if fact.kind == PROJECT:
            evidence.projects.append(fact)
        elif fact.kind == DECLARED:
            evidence.declared.append(fact)
            key = (fact.repo_id, fact.name)
            evidence._declared_dirs.setdefault(key, []).append(_directory(fact.relative_path))
        else:
            evidence.locked.append(fact)
    errors, _ = collected_facts(
        ctx,
        ("collect_error",),
        scope=scope,
        where="artifact_type IN ('package_manifest', 'package_lockfile')",
    )
    evidence.unreadable = [f"{e.relative_path} ({e.payload.get('error', '')})" for e in errors]
    return evidence


def package_truth(ctx: ApiContext, capability: str, evidence: PackageEvidence) -> dict:
    """The truth block of a package answer, naming the files that could not be parsed."""
    truth = collected_truth(ctx, capability, COLLECTOR_NAME, evidence.files_read)
    if evidence.unreadable:
        shown = "; ".join(evidence.unreadable[:5])
        more = len(evidence.unreadable) - 5
        truth["reason"] += f"; could not parse {shown}" + (f" and {more} more" if more > 0 else "")
    return truth


def identity_from_id(package_id: str) -> dict[str, Any]:
    """The identity fields of a package known only by its canonical id."""
    ecosystem, _, rest = package_id.partition("://")
    name = rest.split("/", 1)[1] if "/" in rest else rest
    if ecosystem == "maven":
        registry_and_group, _, artifact = package_id.rpartition(":")
        group = registry_and_group.rsplit("/", 1)[-1]
        identity = package_identity("maven", artifact, namespace=group)
    elif ecosystem == "pypi":  # the registry path has a slash of its own
        identity = package_identity("pypi", rest.rsplit("/", 1)[-1])
    else:
        identity = package_identity(ecosystem, name)
    identity["package_id"] = package_id
    return {key: identity.get(key, "") for key in IDENTITY_KEYS}


def matches_name(identity: dict[str, Any], name: str) -> bool:
    """Whether a package name as a person writes it names this package."""
    if not name:
        return True
    if name == identity["package_id"]:
        return True
    wanted, _ = normalize_name(identity["ecosystem"], name, identity.get("namespace", ""))
    if identity["ecosystem"] == "maven":
        return wanted == identity["normalized_name"] or name == (
            f"{identity['namespace']}:{identity['normalized_name']}"
        )
    return wanted == identity["normalized_name"]


def identity_of(facts: list[CollectedFact]) -> dict[str, Any]:
    """The identity fields of a package, from any of its facts."""
    payload = facts[0].payload
    return {key: payload.get(key, "") for key in IDENTITY_KEYS}


def evidence_row(evidence: PackageEvidence, fact: CollectedFact) -> dict[str, Any]:
    """Where one declaration, pin or definition of a package was read."""
    row: dict[str, Any] = {
        "repo_id": fact.repo_id,
        "relative_path": fact.relative_path,
        "line": fact.line,
        "kind": {PROJECT: "defines", DECLARED: "declares", LOCKED: "locks"}[fact.kind],
    }
    payload = fact.payload
    if fact.kind == DECLARED:
        row["dependency_range"] = payload.get("dependency_range", "")
        row["dependency_type"] = payload.get("dependency_type", "")
    else:
        row["version"] = payload.get("version", "")
    if fact.kind == LOCKED:
        row["direct"] = evidence.is_direct(fact)
    return row


def required_limit(ctx: ApiContext, maximum: int = 200) -> int:
    """Eshu's package-registry ``limit``: required, 1..maximum, else 400."""
    limit = strict_query_int(ctx.query, "limit")
    if limit is None:
        raise ApiError(400, "limit is required")
    return _bounded(limit, maximum)


def optional_limit(ctx: ApiContext, default: int, maximum: int) -> int:
    """A ``limit`` defaulting when absent, 1..maximum, else 400."""
    limit = strict_query_int(ctx.query, "limit")
    return default if limit is None else _bounded(limit, maximum)


def _bounded(limit: int, maximum: int) -> int:
    if limit <= 0 or limit > maximum:
        raise ApiError(400, f"limit must be between 1 and {maximum}")
    return limit


def readiness(count: int, truncated: bool) -> dict[str, Any]:
    """Eshu's ``collector_readiness`` block: the local collector always runs."""
    return {
        "readiness_state": "ready_with_results" if count else "ready_zero_results",
        "collector_kind": "package_registry",
        "counts": {"results_returned": count, "results_truncated": truncated},
    }
