"""
``/iac/resources`` and ``/iac/dead`` answered from the Terraform the indexed repositories
declare (the management-status routes are in :mod:`.iac_management`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from eshu_mcp.query.local.api.collected.facts import LOCAL_COLLECTOR_BASIS, collected_truth
from eshu_mcp.query.local.api.collected.infra_model import (
    choice,
    infra_files,
    infra_scope,
    resource_category,
    terraform_service,
)
from eshu_mcp.query.local.api.collected.terraform import (
    dead_terraform,
    terraform_repos,
)
from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    body_object,
    bool_param,
    int_param,
    limit_offset,
    next_offset,
    str_list_param,
    str_param,
)

TERRAFORM_COLLECTOR = "Terraform collector"
TERRAFORM_TYPES = ("terraform", "terraform_state")


def terraform_truth(ctx: ApiContext, capability: str, scope: str) -> dict[str, Any]:
    """The truth block of a Terraform-fed answer."""
    return collected_truth(
        ctx, capability, TERRAFORM_COLLECTOR, infra_files(ctx, scope, TERRAFORM_TYPES)
    )


IAC_FAMILIES = ("terraform", "helm", "kustomize", "ansible", "compose")


# ---------------------------------------------------------------- /iac/resources

_IAC_KIND_FACT = {"resource": "tf_resource", "module": "tf_module", "data-source": "tf_data"}


@ROUTES.route("GET", "/iac/resources")
def list_iac_resources(ctx: ApiContext) -> Answer:
    """Declared Terraform resources, modules or data sources, keyset-paged by (name, id)."""
    query = ctx.query
    kind = choice(query, "kind", tuple(_IAC_KIND_FACT), "resource")
    limit = int_param(query, "limit", 50)
    if limit < 1 or limit > 200:
        raise ApiError(400, "limit must be between 1 and 200")
    scope = infra_scope(ctx, query.get("repository", ""))
    rows = []
    for repo in terraform_repos(ctx, scope):
        callers = {target: pairs for target, pairs in repo.calls().items()}
        for directory, facts in repo.declared.items():
            module = ",".join(
                sorted({f.payload.get("module_name", "") for _d, f in callers.get(directory, ())})
            )
            rows += [_iac_row(fact, module) for fact in facts if fact.kind == _IAC_KIND_FACT[kind]]
    text = query.get("q", "").strip().lower()
    wanted = {name: query.get(name, "").strip() for name in ("type", "provider", "module")}
    rows = [
        row
        for row in rows
        if (not text or any(text in str(row[key]).lower() for key in _SEARCHED))
        and all(not value or row[key] == value for key, value in wanted.items())
    ]
    rows.sort(key=lambda row: (row["name"], row["id"]))
    after = (query.get("after_name", ""), query.get("after_id", ""))
    if after[0] or after[1]:
        rows_after = [row for row in rows if (row["name"], row["id"]) > after]
    else:
        rows_after = rows
    window = rows_after[:limit]
    truncated = len(rows_after) > limit
    data = {
        "kind": kind,
        "count": len(window),
        "limit": limit,
        "truncated": truncated,
        "summary": _facets(rows) if bool_param(query, "include_facets") else {},
        "next_cursor": {"after_name": window[-1]["name"], "after_id": window[-1]["id"]}
        if truncated
        else None,
        "resources": window,
    }
    return Answer(data, terraform_truth(ctx, "iac_inventory.resources.list", scope))


_SEARCHED = ("name", "relative_path", "type", "provider", "module", "repo_id", "kind")


def _iac_row(fact, module: str) -> dict[str, Any]:
    payload = fact.payload
    resource_type = payload.get("type", "") if fact.kind != "tf_module" else ""
    service = terraform_service(resource_type) if resource_type else ""
    return {
        "id": f"{fact.kind}:{fact.repo_id}:{fact.relative_path}:{fact.line}:{fact.name}",
        "kind": {"tf_resource": "resource", "tf_module": "module"}.get(fact.kind, "data-source"),
        "name": fact.name,
        "resource_name": payload.get("resource_name") or payload.get("module_name", ""),
        "type": resource_type,
        "provider": payload.get("provider", ""),
        "resource_service": service,
        "resource_category": resource_category(service) if resource_type else "",
        "module": payload.get("module_name", "") if fact.kind == "tf_module" else module,
        "source": payload.get("source", ""),
        "version": payload.get("version", ""),
        "repo_id": fact.repo_id,
        "relative_path": fact.relative_path,
        "line_number": fact.line,
    }


def _facets(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def facet(key: str, with_kind: bool = True) -> list[dict[str, Any]]:
        counts = Counter(row[key] for row in rows if row[key])
        ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:25]
        return [
            {**({"kind": key} if with_kind else {}), "value": value, "count": count}
            for value, count in ordered
        ]

    return {
        "total": len(rows),
        "by_kind": dict(Counter(row["kind"] for row in rows)),
        "types": facet("type"),
        "providers": facet("provider"),
        "modules": facet("module"),
        "repositories": facet("repo_id", with_kind=False),
        "facet_limit": 25,
        "truncated": {},
    }


# ---------------------------------------------------------------- /iac/dead


def _repo_scope(ctx: ApiContext, body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(scopes to read, repo_ids to echo): explicit repositories, or every readable one."""
    selectors = [str_param(body, "repo_id").strip()] if str_param(body, "repo_id").strip() else []
    selectors += [s.strip() for s in str_list_param(body, "repo_ids") if s.strip()]
    scopes = [infra_scope(ctx, selector) for selector in dict.fromkeys(selectors)]
    return (scopes or [infra_scope(ctx, "")]), [s for s in scopes if s]


@ROUTES.route("POST", "/iac/dead")
def find_dead_iac(ctx: ApiContext) -> Answer:
    """Terraform declarations referenced nowhere, paged."""
    body = body_object(ctx)
    families = str_list_param(body, "families") or ["terraform"]
    unknown = [family for family in families if family not in IAC_FAMILIES]
    if unknown:
        raise ApiError(
            400, f"unknown IaC family {unknown[0]!r}; choose from {', '.join(IAC_FAMILIES)}"
        )
    include_ambiguous = bool_param(body, "include_ambiguous")
    limit, offset = limit_offset(body, default=100, maximum=500)
    scopes, echoed = _repo_scope(ctx, body)
    findings: list[dict[str, Any]] = []
    files = 0
    if "terraform" in families:
        for scope in scopes:
            files += infra_files(ctx, scope, TERRAFORM_TYPES)
            for repo in terraform_repos(ctx, scope):
                findings += dead_terraform(repo)
    if not include_ambiguous:
        findings = [f for f in findings if f["reachability"] == "unused"]
    window = findings[offset : offset + limit]
    truncated = offset + limit < len(findings)
    limitations = [
        f"{family}: not analysed by the local collectors"
        for family in families
        if family != "terraform"
    ]
    limitations.append(
        "references are read from this repository's Terraform only: a module or output used"
        " from another repository looks unused here"
    )
    if not include_ambiguous:
        limitations.append(
            "unreferenced resources are ambiguous; set include_ambiguous to list them"
        )
    data = {
        "repo_ids": echoed,
        "findings_count": len(window),
        "total_findings_count": len(findings),
        "limit": limit,
        "offset": offset,
        "truncated": truncated,
        "next_offset": next_offset(offset, len(window), truncated),
        "truth_basis": LOCAL_COLLECTOR_BASIS,
        "analysis_status": "complete" if families == ["terraform"] else "partial",
        "limitations": limitations,
        "findings": window,
    }
    truth = collected_truth(ctx, "iac_quality.dead_iac", TERRAFORM_COLLECTOR, files)
    return Answer(data, truth)
