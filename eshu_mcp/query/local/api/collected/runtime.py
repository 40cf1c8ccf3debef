"""
``/kubernetes/correlations``, ``/images`` and ``/ci-cd/run-correlations/inventory``
answered from what the repository's manifests, Dockerfiles, Compose files and CI
definitions declare.

These are declarations, not observations: no cluster, registry or CI run is read, so a
correlation is ``provenance_only`` with no digest, an image row carries no digest unless
the reference pins one, and a CI "run correlation" is a job definition whose outcome is
``derived`` when it builds an image the repository deploys and ``unresolved`` otherwise.
"""

from __future__ import annotations

from typing import Any

from eshu_mcp.query.local.api.collected.facts import collected_facts, collected_truth, grouped_page
from eshu_mcp.query.local.api.collected.infra_graph import image_repository
from eshu_mcp.query.local.api.collected.infra_model import choice, infra_files, infra_scope
from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    int_param,
    limit_offset,
)

K8S_TYPES = ("kubernetes", "helm")
IMAGE_TYPES = ("kubernetes", "helm", "compose", "dockerfile", "github_actions", "gitlab_ci")
CI_TYPES = ("github_actions", "gitlab_ci")
K8S_OUTCOMES = ("exact", "derived", "ambiguous", "unresolved", "stale", "rejected")
CI_OUTCOMES = ("exact", "derived", "ambiguous", "unresolved", "rejected")
CI_GROUPS = ("outcome", "environment", "repository_id", "provider")


def _built_repositories(ctx: ApiContext, scope: str) -> dict[str, set[str]]:
    """Image repositories the repository builds (Dockerfile via Compose, CI) per repo."""
    facts, _ = collected_facts(
        ctx, ["image"], scope=scope, where="json_extract(payload, '$.role') = 'builds'"
    )
    built: dict[str, set[str]] = {}
    for fact in facts:
        built.setdefault(fact.repo_id, set()).add(image_repository(fact.name))
    return built


# ---------------------------------------------------------------- /kubernetes/correlations


@ROUTES.route("GET", "/kubernetes/correlations")
def kubernetes_correlations(ctx: ApiContext) -> Answer:
    """One row per (workload, container image) the manifests declare."""
    query = ctx.query
    limit = int_param(query, "limit", 50)
    if limit < 1 or limit > 200:
        raise ApiError(400, "limit must be between 1 and 200")
    outcome = choice(query, "outcome", K8S_OUTCOMES)
    scope = infra_scope(ctx, query.get("repository", ""))
    facts, _ = collected_facts(
        ctx, ["image"], scope=scope, where="json_extract(payload, '$.workload') IS NOT NULL"
    )
    built = _built_repositories(ctx, scope)
    rows = []
    for fact in facts:
        payload = fact.payload
        namespace = payload.get("namespace") or "default"
        workload_id = (
            f"manifest:{fact.repo_id}:{fact.relative_path}:"
            f"{namespace}/{payload.get('workload_kind', '')}/{payload['workload']}"
        )
        is_built = image_repository(fact.name) in built.get(fact.repo_id, set())
        row = {
            "correlation_id": f"{workload_id}#{payload.get('container', '')}",
            "cluster_id": "",
            "workload_object_id": workload_id,
            "namespace": namespace,
            "workload_name": payload["workload"],
            "workload_kind": payload.get("workload_kind", ""),
            "workload_uid": "",
            "container_name": payload.get("container", ""),
            "image_ref": fact.name,
            "source_digest": fact.name.split("@", 1)[1] if "@" in fact.name else "",
            "join_mode": "manifest_declared",
            "identity_edge_key": f"{workload_id}->image:{fact.name}",
            "relationship_type": "RUNS_IMAGE",
            "outcome": "derived" if is_built else "unresolved",
            "drift_kind": "",
            "reason": (
                "the manifest runs an image this repository builds"
                if is_built
                else "the manifest runs an image no build in this repository produces"
            ),
            "non_promotion": "no live cluster observation: declared in a manifest only",
            "provenance_only": True,
            "candidate_source_digests": [],
            "warnings": [],
            "evidence_fact_ids": [f"{fact.relative_path}:{fact.line}"],
            "repo_id": fact.repo_id,
            "relative_path": fact.relative_path,
            "line_number": fact.line,
        }
        rows.append(row)
    filters = {
        "namespace": query.get("namespace", "").strip(),
        "image_ref": query.get("image_ref", "").strip(),
        "workload_object_id": query.get("workload_object_id", "").strip(),
        "outcome": outcome,
        "source_digest": query.get("source_digest", "").strip(),
        "cluster_id": query.get("cluster_id", "").strip(),
        "drift_kind": query.get("drift_kind", "").strip(),
    }
    rows = [r for r in rows if all(not v or r[k] == v for k, v in filters.items())]
    rows.sort(key=lambda r: r["correlation_id"])
    after = query.get("after_correlation_id", "")
    if after:
        rows = [r for r in rows if r["correlation_id"] > after]
    window = rows[:limit]
    truncated = len(rows) > limit
    data = {
        "correlations": window,
        "count": len(window),
        "limit": limit,
        "truncated": truncated,
        "next_cursor": {"after_correlation_id": window[-1]["correlation_id"]}
        if truncated
        else None,
    }
    truth = collected_truth(
        ctx,
        "kubernetes.correlations.list",
        "Kubernetes collector",
        infra_files(ctx, scope, K8S_TYPES),
    )
    return Answer(data, truth)


# ---------------------------------------------------------------- /images


def parse_image(reference: str) -> dict[str, str]:
    """Registry, repository, tag and digest of an image reference (Docker's defaults)."""
    name, _, digest = reference.partition("@")
    head, _, tail = name.rpartition("/")
    tag = ""
    if ":" in tail:
        tail, tag = tail.split(":", 1)
    path = f"{head}/{tail}" if head else tail
    first = path.split("/", 1)[0]
    if "$" in first:  # an unresolved build argument: the registry is not known
        registry, repository = "", path
    elif "/" in path and ("." in first or ":" in first or first == "localhost"):
        registry, repository = path.split("/", 1)
    else:
        registry = "docker.io"
        repository = path if "/" in path else f"library/{path}"
    if not tag and not digest:
        tag = "latest"
    return {"registry": registry, "repository": repository, "tag": tag, "digest": digest}


@ROUTES.route("GET", "/images")
def list_images(ctx: ApiContext) -> Answer:
    """Every image reference the repository's definitions name, with where they name it."""
    query = ctx.query
    limit, offset = limit_offset(query, default=50, maximum=200)
    scope = infra_scope(ctx, query.get("repository", ""))
    facts, _ = collected_facts(ctx, ["image"], scope=scope)
    images: dict[str, dict[str, Any]] = {}
    for fact in facts:
        row = images.get(fact.name)
        if row is None:
            parts = parse_image(fact.name)
            row = images[fact.name] = {
                "id": fact.name,
                "digest": parts["digest"],
                "repository_id": f"oci-registry://{parts['registry']}/{parts['repository']}",
                "registry": parts["registry"],
                "repository": parts["repository"],
                "name": fact.name,
                "tag": parts["tag"],
                "media_type": "",
                "artifact_type": "",
                "config_digest": "",
                "size_bytes": 0,
                "source_system": "repository_definitions",
                "roles": [],
                "references": [],
            }
        role = fact.payload.get("role", "runs")
        if role not in row["roles"]:
            row["roles"].append(role)
        row["references"].append(
            {
                "repo_id": fact.repo_id,
                "relative_path": fact.relative_path,
                "line_number": fact.line,
                "source": fact.payload.get("source", ""),
                "role": role,
            }
        )
    rows = sorted(images.values(), key=lambda r: (r["digest"], r["id"]))
    for name in ("digest", "repository_id", "tag"):
        wanted = query.get(name, "").strip()
        if wanted:
            rows = [r for r in rows if r[name] == wanted]
    window = rows[offset : offset + limit]
    truncated = offset + limit < len(rows)
    data = {
        "images": window,
        "count": len(window),
        "limit": limit,
        "offset": offset,
        "truncated": truncated,
        "next_cursor": {"offset": offset + len(window)} if truncated else None,
    }
    truth = collected_truth(
        ctx,
        "platform_impact.container_image_list",
        "image collectors (Kubernetes, Helm, Compose, Dockerfile, CI)",
        infra_files(ctx, scope, IMAGE_TYPES),
    )
    return Answer(data, truth)


# ---------------------------------------------------------------- /ci-cd/run-correlations/inventory


@ROUTES.route("GET", "/ci-cd/run-correlations/inventory")
def ci_cd_run_correlation_inventory(ctx: ApiContext) -> Answer:
    """CI job definitions grouped by outcome, environment, repository or provider."""
    query = ctx.query
    group_by = choice(query, "group_by", CI_GROUPS, "outcome")
    outcome = choice(query, "outcome", CI_OUTCOMES)
    limit, offset = limit_offset(query, default=100, maximum=500, max_offset=10_000)
    scope = infra_scope(ctx, query.get("repository_id", ""))
    facts, _ = collected_facts(ctx, ["ci_job"], scope=scope)
    deployed = deployed_repositories(ctx, scope)
    rows = []
    for fact in facts:
        built = [image_repository(i) for i in fact.payload.get("images_built") or ()]
        rows.append(
            {
                "outcome": "derived"
                if set(built) & deployed.get(fact.repo_id, set())
                else "unresolved",
                "environment": fact.payload.get("environment", ""),
                "repository_id": fact.repo_id,
                "provider": fact.payload.get("provider", ""),
                "images": built,
            }
        )
    image_ref = query.get("image_ref", "").strip()
    if image_ref:
        rows = [r for r in rows if image_repository(image_ref) in r["images"]]
    for name in ("provider", "environment"):
        wanted = query.get(name, "").strip()
        if wanted:
            rows = [r for r in rows if r[name] == wanted]
    if outcome:
        rows = [r for r in rows if r["outcome"] == outcome]
    if any(query.get(name, "").strip() for name in ("commit_sha", "artifact_digest", "scope_id")):
        rows = []  # run identities: no CI run is observed locally
    scope_echo = {
        key: query[key]
        for key in (
            "scope_id",
            "repository_id",
            "commit_sha",
            "provider",
            "artifact_digest",
            "image_ref",
            "environment",
            "outcome",
        )
        if query.get(key)
    }
    data = grouped_page(
        [r[group_by] or "unspecified" for r in rows], group_by, limit, offset, scope=scope_echo
    )
    truth = collected_truth(
        ctx,
        "cicd.run_correlations.inventory",
        "CI collector (job definitions, no runs observed)",
        infra_files(ctx, scope, CI_TYPES),
    )
    return Answer(data, truth)


def deployed_repositories(ctx: ApiContext, scope: str) -> dict[str, set[str]]:
    """Image repositories the repository's manifests or Compose files run, per repo."""
    facts, _ = collected_facts(
        ctx,
        ["image"],
        scope=scope,
        where="json_extract(payload, '$.source')"
        " IN ('kubernetes', 'helm', 'helm_values', 'compose')",
    )
    deployed: dict[str, set[str]] = {}
    for fact in facts:
        deployed.setdefault(fact.repo_id, set()).add(image_repository(fact.name))
    return deployed
