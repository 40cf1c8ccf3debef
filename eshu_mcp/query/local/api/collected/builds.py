"""
``/supply-chain/container-images/identities`` and ``/ci-cd/run-correlations``: the images
a repository builds and runs, and its CI jobs, listed from its own definitions.

Dockerfiles give each stage's base image (``ARG`` defaults substituted) and what a stage
copies from another; Compose files and Kubernetes manifests the images their services
and workloads run; CI workflows the images their jobs build or run in, their triggers
and the artifacts they keep. These are declarations, not observations: no registry is
read (an identity carries a digest only when the reference pins one) and no CI run is
seen (a correlation is a job definition, with no run id, commit or outcome of a run).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from eshu_mcp.query.local.api.collected.facts import CollectedFact, collected_facts, collected_truth
from eshu_mcp.query.local.api.collected.infra_graph import image_repository
from eshu_mcp.query.local.api.collected.infra_model import choice, infra_files, infra_scope
from eshu_mcp.query.local.api.collected.runtime import (
    CI_OUTCOMES,
    CI_TYPES,
    IMAGE_TYPES,
    deployed_repositories,
    parse_image,
)
from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    int_param,
)

IDENTITY_OUTCOMES = ("exact_digest", "tag_resolved")
NO_REGISTRY = "declared in the repository's files: no registry was read, so a tag is not resolved"
NO_RUN = "a job definition: no CI run was observed, so no run, commit or outcome of a run is known"


def _limit(query: dict[str, str]) -> int:
    limit = int_param(query, "limit", 50)
    if limit < 1 or limit > 200:
        raise ApiError(400, "limit must be between 1 and 200")
    return limit


def _page(rows: list[dict[str, Any]], key: str, after: str, limit: int) -> dict[str, Any]:
    """One cursor page of rows sorted by ``key``: rows after ``after``, at most ``limit``."""
    rows.sort(key=lambda row: row[key])
    if after:
        rows = [row for row in rows if row[key] > after]
    window = rows[:limit]
    truncated = len(rows) > limit
    return {
        "count": len(window),
        "limit": limit,
        "truncated": truncated,
        "next_cursor": {f"after_{key}": window[-1][key]} if truncated else None,
        "window": window,
    }


# ---------------------------------------------------------------- image identities


def _reference(
    fact: CollectedFact, stages: dict[tuple[str, str, str], dict], built_from: dict
) -> dict[str, Any]:
    """Where and how one file names an image: the stage, service, workload or job."""
    payload = fact.payload
    reference = {
        "relative_path": fact.relative_path,
        "line_number": fact.line,
        "source": payload.get("source", ""),
        "role": payload.get("role", "runs"),
    }
    for name in ("stage", "service", "workload", "workload_kind", "container", "job", "workflow"):
        if payload.get(name):
            reference[name] = payload[name]
    stage = stages.get((fact.repo_id, fact.relative_path, str(payload.get("stage", ""))))
    if stage is not None and reference["role"] == "base":
        reference["stage_index"] = stage.get("stage_index", 0)
        reference["from"] = stage.get("base_image_raw", fact.name)
        reference["args_resolved"] = bool(stage.get("resolved", True))
        if stage.get("copies_from"):
            reference["copies_from"] = list(stage["copies_from"])
    dockerfile = built_from.get((fact.repo_id, fact.relative_path, str(payload.get("service"))))
    if dockerfile and reference["role"] == "builds":
        _dockerfile_reference(reference, fact.repo_id, dockerfile, stages)
    return reference


def _stages(ctx: ApiContext, scope: str) -> dict[tuple[str, str, str], dict]:
    """Every Dockerfile stage in scope by (repository, file, stage name or index), and each
    Dockerfile's final stage by (repository, file, "")."""
    facts, _ = collected_facts(ctx, ["docker_stage"], scope=scope)
    stages: dict[tuple[str, str, str], dict] = {}
    for fact in facts:
        stages[(fact.repo_id, fact.relative_path, fact.name)] = fact.payload
        final = stages.get((fact.repo_id, fact.relative_path, ""))
        if final is None or fact.payload.get("stage_index", 0) >= final.get("stage_index", 0):
            stages[(fact.repo_id, fact.relative_path, "")] = {**fact.payload, "name": fact.name}
    return stages


def _built_from(ctx: ApiContext, scope: str) -> dict[tuple[str, str, str], str]:
    """The Dockerfile each Compose service builds, by (repository, Compose file, service)."""
    facts, _ = collected_facts(ctx, ["compose_service"], scope=scope)
    return {
        (f.repo_id, f.relative_path, f.name): f.payload["dockerfile"]
        for f in facts
        if f.payload.get("dockerfile")
    }


def _dockerfile_reference(
    reference: dict[str, Any], repo_id: str, dockerfile: str, stages: dict
) -> None:
    """A built image's Dockerfile and the final stage (and its base) it comes from."""
    reference["dockerfile"] = dockerfile
    final = stages.get((repo_id, dockerfile, ""))
    if final is not None:
        reference["final_stage"] = final.get("name", "")
        reference["final_stage_base"] = final.get("base_image", "")


def _identity_rows(ctx: ApiContext) -> tuple[str, list[dict[str, Any]]]:
    """The scope and every identity in it that the query's filters keep."""
    query = ctx.query
    outcome = choice(query, "outcome", IDENTITY_OUTCOMES)
    scope = infra_scope(ctx, query.get("source_repository_id", ""))
    facts, _ = collected_facts(ctx, ["image"], scope=scope)
    stages, built_from = _stages(ctx, scope), _built_from(ctx, scope)
    identities: dict[tuple[str, str], dict[str, Any]] = {}
    for fact in facts:
        row = identities.get((fact.repo_id, fact.name))
        if row is None:
            parts = parse_image(fact.name)
            row = identities[(fact.repo_id, fact.name)] = {
                "identity_id": f"{fact.repo_id}#{fact.name}",
                "image_ref": fact.name,
                "digest": parts["digest"],
                "registry": parts["registry"],
                "repository": parts["repository"],
                "tag": parts["tag"],
                "repository_id": f"oci-registry://{parts['registry']}/{parts['repository']}",
                "source_repository_id": fact.repo_id,
                "outcome": "exact_digest" if parts["digest"] else "declared_tag",
                "identity_strength": "digest" if parts["digest"] else "tag",
                "roles": [],
                "relative_path": fact.relative_path,
                "line_number": fact.line,
                "references": [],
                "non_promotion": NO_REGISTRY,
            }
        reference = _reference(fact, stages, built_from)
        if reference["role"] not in row["roles"]:
            row["roles"].append(reference["role"])
        row["references"].append(reference)
    rows = list(identities.values())
    filters = {
        "digest": query.get("digest", "").strip(),
        "image_ref": query.get("image_ref", "").strip(),
        "repository_id": query.get("repository_id", "").strip(),
        "outcome": outcome,
    }
    return scope, [r for r in rows if all(not v or r[k] == v for k, v in filters.items())]


def _identity_truth(ctx: ApiContext, capability: str, scope: str) -> dict[str, Any]:
    return collected_truth(
        ctx,
        capability,
        "image collectors (Dockerfile, Compose, Kubernetes, Helm, CI)",
        infra_files(ctx, scope, IMAGE_TYPES),
    )


@ROUTES.route("GET", "/supply-chain/container-images/identities")
def container_image_identities(ctx: ApiContext) -> Answer:
    """One identity per (repository, image reference) its definitions build, base or run."""
    limit = _limit(ctx.query)
    scope, rows = _identity_rows(ctx)
    paged = _page(rows, "identity_id", ctx.query.get("after_identity_id", ""), limit)
    data = {
        "identities": paged.pop("window"),
        **paged,
        "collector_readiness": {"repository_definitions": "ready", "registry": "not_configured"},
        "source_bridge": {"source": "repository_definitions", "scope": scope},
    }
    return Answer(data, _identity_truth(ctx, "supply_chain.container_image_identities.list", scope))


@ROUTES.route("GET", "/supply-chain/container-images/identities/count")
def container_image_identity_count(ctx: ApiContext) -> Answer:
    """How many identities the definitions name, by outcome and identity strength."""
    scope, rows = _identity_rows(ctx)
    data = {
        "total_identities": len(rows),
        "by_outcome": dict(sorted(Counter(r["outcome"] for r in rows).items())),
        "by_identity_strength": dict(sorted(Counter(r["identity_strength"] for r in rows).items())),
        "scope": _echo(ctx, ("source_repository_id", "repository_id", "digest", "image_ref")),
        "source_bridge": {"source": "repository_definitions", "scope": scope},
    }
    return Answer(
        data, _identity_truth(ctx, "supply_chain.container_image_identities.count", scope)
    )


def _echo(ctx: ApiContext, names: tuple[str, ...]) -> dict[str, str]:
    """The filters a count was asked with, as its ``scope`` block."""
    return {name: ctx.query[name] for name in names if ctx.query.get(name, "").strip()}


# ---------------------------------------------------------------- CI job correlations


def _triggers(ctx: ApiContext, scope: str) -> dict[tuple[str, str], list[str]]:
    """Each workflow file's triggers (a job's own, GitLab ``only:``, come first)."""
    facts, _ = collected_facts(ctx, ["ci_workflow"], scope=scope)
    return {(f.repo_id, f.relative_path): list(f.payload.get("triggers") or ()) for f in facts}


def _job_rows(ctx: ApiContext) -> tuple[str, list[dict[str, Any]]]:
    """The scope and every CI job definition in it that the query's filters keep."""
    query = ctx.query
    outcome = choice(query, "outcome", CI_OUTCOMES)
    scope = infra_scope(ctx, query.get("repository_id", ""))
    facts, _ = collected_facts(ctx, ["ci_job"], scope=scope)
    deployed = deployed_repositories(ctx, scope)
    triggers = _triggers(ctx, scope)
    rows = []
    for fact in facts:
        payload = fact.payload
        built = list(payload.get("images_built") or ())
        runs = {image_repository(i) for i in built} & deployed.get(fact.repo_id, set())
        workflow = payload.get("workflow", "")
        rows.append(
            {
                "correlation_id": f"{fact.repo_id}:{fact.relative_path}#{fact.name}",
                "provider": payload.get("provider", ""),
                "workflow": workflow,
                "job": fact.name,
                "stage": payload.get("stage", ""),
                "triggers": list(payload.get("triggers") or ())
                or triggers.get((fact.repo_id, fact.relative_path), []),
                "runs_on": payload.get("runs_on", ""),
                "environment": payload.get("environment", ""),
                "needs": list(payload.get("needs") or ()),
                "actions": list(payload.get("actions") or ()),
                "images_built": built,
                "images_used": list(payload.get("images_used") or ()),
                "artifacts": list(payload.get("artifacts") or ()),
                "outcome": "derived" if runs else "unresolved",
                "reason": (
                    "the job builds an image this repository deploys"
                    if runs
                    else "no deployment in this repository runs an image this job builds"
                ),
                "provider_run_id": "",
                "commit_sha": "",
                "artifact_digest": "",
                "repository_id": fact.repo_id,
                "relative_path": fact.relative_path,
                "line_number": fact.line,
                "non_promotion": NO_RUN,
            }
        )
    image_ref = query.get("image_ref", "").strip()
    if image_ref:
        wanted = image_repository(image_ref)
        rows = [
            r
            for r in rows
            if wanted in {image_repository(i) for i in r["images_built"] + r["images_used"]}
        ]
    for name in ("provider", "environment"):
        value = query.get(name, "").strip()
        if value:
            rows = [r for r in rows if r[name] == value]
    if outcome:
        rows = [r for r in rows if r["outcome"] == outcome]
    if any(query.get(n, "").strip() for n in ("commit_sha", "artifact_digest", "provider_run_id")):
        rows = []  # run identities: no CI run is observed locally
    return scope, rows


def _job_truth(ctx: ApiContext, capability: str, scope: str) -> dict[str, Any]:
    return collected_truth(
        ctx,
        capability,
        "CI collector (job definitions, no runs observed)",
        infra_files(ctx, scope, CI_TYPES),
    )


@ROUTES.route("GET", "/ci-cd/run-correlations")
def ci_cd_run_correlations(ctx: ApiContext) -> Answer:
    """One row per CI job definition: triggers, images built and run in, artifacts kept."""
    limit = _limit(ctx.query)
    scope, rows = _job_rows(ctx)
    paged = _page(rows, "correlation_id", ctx.query.get("after_correlation_id", ""), limit)
    data = {
        "correlations": paged.pop("window"),
        **paged,
        "evidence_summary": {
            "job_definitions": len(rows),
            "runs_observed": 0,
        },
        "collector_readiness": {"ci_definitions": "ready", "ci_runs": "not_configured"},
    }
    return Answer(data, _job_truth(ctx, "ci_cd.run_correlations.list", scope))


@ROUTES.route("GET", "/ci-cd/run-correlations/count")
def ci_cd_run_correlation_count(ctx: ApiContext) -> Answer:
    """How many CI job definitions there are, by outcome, environment and provider."""
    scope, rows = _job_rows(ctx)
    data = {
        "total_correlations": len(rows),
        "by_outcome": dict(sorted(Counter(r["outcome"] for r in rows).items())),
        "by_environment": dict(
            sorted(Counter(r["environment"] or "unspecified" for r in rows).items())
        ),
        "by_provider": dict(sorted(Counter(r["provider"] for r in rows).items())),
        "scope": _echo(
            ctx, ("repository_id", "scope_id", "provider", "environment", "image_ref", "outcome")
        ),
    }
    return Answer(data, _job_truth(ctx, "ci_cd.run_correlations.count", scope))
