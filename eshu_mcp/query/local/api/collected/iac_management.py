"""
``/iac/unmanaged-resources`` and ``/iac/management-status`` answered from the Terraform
the indexed repositories declare against their committed state file's resource addresses.

No cloud inventory is read: account, region and ARN filters match nothing locally and
say so, and a repository without a state file gets an answer that says management status
could not be compared (never "unmanaged").
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from eshu_mcp.query.local.api.collected.facts import LOCAL_COLLECTOR_BASIS
from eshu_mcp.query.local.api.collected.iac import terraform_truth
from eshu_mcp.query.local.api.collected.infra_model import infra_scope, path_environment
from eshu_mcp.query.local.api.collected.terraform import management, state_roots, terraform_repos
from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    body_object,
    limit_offset,
    next_offset,
    str_list_param,
    str_param,
)

FINDING_KINDS = (
    "orphaned_cloud_resource",
    "unmanaged_cloud_resource",
    "unknown_cloud_resource",
    "ambiguous_cloud_resource",
    "terraform_config_only",
)
_KIND_OF_STATUS = {
    "terraform_state_only": "unmanaged_cloud_resource",
    "terraform_config_only": "terraform_config_only",
}
NO_CLOUD = (
    "no cloud inventory is read locally: account, region and ARN evidence is absent, and"
    " management status compares Terraform configuration with a committed state file only"
)
NO_STATE = (
    "no Terraform state file is indexed in scope (remote state is never read): management"
    " status cannot be compared"
)
NEVER_VALUES = "state attribute values are never read; only resource addresses and types"


# ---------------------------------------------------------------- management status


def _cloud_filters(body: dict[str, Any]) -> dict[str, str]:
    return {
        name: str_param(body, name).strip() for name in ("scope_id", "account_id", "region", "arn")
    }


def _safety_gate(review: bool) -> dict[str, Any]:
    return {
        "outcome": "security_review_required" if review else "read_only_allowed",
        "read_only": True,
        "review_required": review,
        "refused_actions": ["terraform_import", "terraform_apply"] if review else [],
        "warnings": [],
        "redactions": [NEVER_VALUES],
        "audit_expectation": "read-only analysis of repository files; nothing was changed",
    }


def _management_finding(row: dict[str, Any]) -> dict[str, Any]:
    status = row["management_status"]
    missing = {
        "terraform_state_only": ["terraform_config"],
        "terraform_config_only": ["terraform_state"],
    }.get(status, [])
    action = {
        "terraform_state_only": "declare the resource in configuration or remove it from state",
        "terraform_config_only": "apply the configuration, or check the state kept elsewhere",
    }.get(status, "none")
    return {
        "id": f"terraform_state:{row['repo_id']}:{row['state_file']}:{row['address']}",
        "provider": row["provider"],
        "account_id": "",
        "region": "",
        "resource_type": row["resource_type"],
        "resource_id": row["address"],
        "arn": "",
        "tags": {},
        "finding_kind": _KIND_OF_STATUS.get(status, ""),
        "management_status": status,
        "confidence": 0.9 if status == "managed_by_terraform" else 0.7,
        "scope_id": "",
        "generation_id": "",
        "source_system": "terraform_state_file",
        "candidate_id": "",
        "matched_terraform_state_address": row["address"]
        if status != "terraform_config_only"
        else "",
        "matched_terraform_config_file": row["config_file"],
        "matched_terraform_module_path": row["module_path"],
        "matched_other_iac_source": "",
        "service_candidates": [],
        "environment_candidates": [env for env in [path_environment(row["state_file"])] if env],
        "dependency_paths": [],
        "recommended_action": action,
        "missing_evidence": ["cloud_inventory", *missing],
        "warning_flags": [],
        "safety_gate": _safety_gate(status == "terraform_state_only"),
        "evidence": _evidence(row),
        "repo_id": row["repo_id"],
    }


def _evidence(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The state file and the configuration line that stand behind a status."""
    evidence = []
    if row["state_file"]:
        evidence.append(
            {"source": "terraform_state", "relative_path": row["state_file"], "line_number": 0}
        )
    if row["config_file"]:
        evidence.append(
            {
                "source": "terraform_config",
                "relative_path": row["config_file"],
                "line_number": row["config_line"],
            }
        )
    return [{**item, "repo_id": row["repo_id"]} for item in evidence]


@ROUTES.route("POST", "/iac/unmanaged-resources")
def find_unmanaged_resources(ctx: ApiContext) -> Answer:
    """Resources a committed state file tracks that no configuration declares (and back)."""
    body = body_object(ctx)
    cloud = _cloud_filters(body)
    kinds = str_list_param(body, "finding_kinds")
    unknown = [kind for kind in kinds if kind not in FINDING_KINDS]
    if unknown:
        raise ApiError(
            400, f"unknown finding kind {unknown[0]!r}; choose from {', '.join(FINDING_KINDS)}"
        )
    limit, offset = limit_offset(body, default=100, maximum=500)
    scope = infra_scope(ctx, str_param(body, "repo_id"))
    repos = terraform_repos(ctx, scope)
    has_state = any(state_roots(repo) for repo in repos)
    findings = [
        _management_finding(row)
        for repo in repos
        for row in management(repo)
        if row["management_status"] != "managed_by_terraform"
    ]
    wanted = set(kinds or ["unmanaged_cloud_resource"])
    findings = [f for f in findings if f["finding_kind"] in wanted]
    limitations = [NO_CLOUD, NEVER_VALUES]
    if any(cloud.values()):
        findings = []
        limitations.insert(
            0, "cloud scope, account, region or ARN given: nothing local matches them"
        )
    if not has_state:
        limitations.insert(0, NO_STATE)
    window = findings[offset : offset + limit]
    truncated = offset + limit < len(findings)
    groups = Counter((f["finding_kind"], f["management_status"]) for f in findings)
    story = (
        f"{len(findings)} resource(s) recorded in committed Terraform state without a declaring"
        " configuration"
        if has_state
        else NO_STATE
    )
    data = {
        **cloud,
        "story": story,
        "finding_groups": [
            {"finding_kind": kind, "management_status": status, "count": count}
            for (kind, status), count in sorted(groups.items())
        ],
        "safety_summary": {
            "read_only": True,
            "review_required_count": sum(f["safety_gate"]["review_required"] for f in findings),
        },
        "finding_kinds": sorted(wanted),
        "findings_count": len(window),
        "total_findings_count": len(findings),
        "limit": limit,
        "offset": offset,
        "truncated": truncated,
        "next_offset": next_offset(offset, len(window), truncated),
        "truth_basis": LOCAL_COLLECTOR_BASIS,
        "analysis_status": "state_compared" if has_state else "no_state_file",
        "graph_projection_note": "",
        "limitations": limitations,
        "findings": window,
    }
    return Answer(data, terraform_truth(ctx, "iac_management.find_unmanaged_resources", scope))


@ROUTES.route("POST", "/iac/management-status")
def iac_management_status(ctx: ApiContext) -> Answer:
    """Whether one Terraform address is declared, recorded in state, or both."""
    body = body_object(ctx)
    cloud = _cloud_filters(body)
    resource_id = str_param(body, "resource_id").strip()
    if not resource_id and not cloud["arn"]:
        raise ApiError(400, "arn or resource_id is required")
    scope = infra_scope(ctx, str_param(body, "repo_id"))
    repos = terraform_repos(ctx, scope)
    limitations = [NO_CLOUD, NEVER_VALUES]
    rows = []
    has_state = any(state_roots(repo) for repo in repos)
    if resource_id:
        for repo in repos:
            managed = management(repo)
            if not state_roots(repo):
                managed = _config_only(repo)
            rows += [row for row in managed if row["address"] == resource_id]
            if not rows:
                rows += [row for row in managed if row["address"].endswith("." + resource_id)]
    else:
        limitations.insert(
            0, "an ARN cannot be matched locally: give the Terraform address as resource_id"
        )
    if not has_state:
        limitations.insert(0, NO_STATE)
    row = rows[0] if rows else None
    finding = _management_finding(row) if row else None
    status = row["management_status"] if row else "unknown_management"
    if row:
        where = f" in {row['config_file']}" if row["config_file"] else ""
        story = f"{row['address']} is {status.replace('_', ' ')}{where}"
    else:
        story = (
            f"{resource_id or cloud['arn']} is declared in no indexed Terraform configuration"
            " or state"
        )
    if len(rows) > 1:
        limitations.append(f"{len(rows)} addresses match; the first is shown")
    data = {
        "story": story,
        **cloud,
        "management_status": status,
        "analysis_status": ("state_compared" if has_state else "no_state_file")
        if row
        else "not_found",
        "finding": finding,
        "safety_gate": finding["safety_gate"] if finding else _safety_gate(True),
        "total_findings_count": len(rows),
        "limitations": limitations,
    }
    return Answer(data, terraform_truth(ctx, "iac_management.get_status", scope))


def _config_only(repo) -> list[dict[str, Any]]:
    """Without a state file, every declared resource is configuration-only evidence."""
    rows = []
    for directory, facts in repo.declared.items():
        for fact in facts:
            if fact.kind == "tf_resource":
                rows.append(
                    {
                        "address": fact.name,
                        "resource_type": fact.payload.get("type", ""),
                        "provider": fact.payload.get("provider", ""),
                        "management_status": "terraform_config_only",
                        "state_file": "",
                        "config_file": fact.relative_path,
                        "config_line": fact.line,
                        "module_path": "",
                        "repo_id": repo.repo_id,
                        "module_dir": directory,
                    }
                )
    return rows
