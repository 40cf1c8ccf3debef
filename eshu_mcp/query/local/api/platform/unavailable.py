"""
Routes the embedded backend has no evidence for.

Collector-fed routes (cloud, Kubernetes, supply chain, IAM, CI/CD, documentation...)
answer 200 with their documented empty page and a truth block that says the collector is
not configured: empty is not evidence of absence. Auth, admin and Cypher routes answer
Eshu's 501 ``unsupported_capability``. Both are registered as fallbacks from the route
map, so a real handler registered later for the same operation wins.
"""

from __future__ import annotations

import copy
from typing import Any

from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    int_param,
    unsupported,
)
from eshu_mcp.query.local.api.platform.routemap import RouteSpec, load_route_map
from eshu_mcp.query.local.api.platform.truth import build_truth, unavailable_freshness

# First path segments (below /api/v0) -> the evidence source that would feed them.
_SOURCES = (
    ("/code/flow/", "value-flow extractor"),
    ("/code/routes/", "HTTP route extractor"),
    ("/code/bundles", "package registry collector"),
    ("/aws/", "AWS cloud collector"),
    ("/cloud/", "cloud inventory collector"),
    ("/terraform/", "Terraform state collector"),
    ("/iac/", "IaC state collector"),
    ("/replatforming/", "cloud inventory collector"),
    ("/kubernetes/", "Kubernetes collector"),
    ("/images", "container image collector"),
    ("/supply-chain/", "supply-chain collector"),
    ("/package-registry/", "package registry collector"),
    ("/dependencies", "dependency collector"),
    ("/codeowners/", "CODEOWNERS collector"),
    ("/ci-cd/", "CI/CD collector"),
    ("/service-catalog/", "service catalog collector"),
    ("/secrets-iam/", "secrets and IAM collector"),
    ("/observability/", "observability collector"),
    ("/metrics/", "metrics collector"),
    ("/incidents/", "incident collector"),
    ("/work-items/", "work item collector"),
    ("/documentation/", "documentation collector"),
    ("/semantic/", "semantic extraction provider"),
    ("/status/semantic-extraction", "semantic extraction provider"),
    ("/ask", "natural-language answer provider"),
    ("/freshness/services/", "service and workload model"),
    ("/services/", "service and workload model"),
    ("/workloads/", "service and workload model"),
    ("/investigations/", "platform investigation read model"),
    ("/component-extensions", "component extension registry"),
    ("/fact-schema-versions", "fact schema registry"),
    ("/collector-", "collector readiness reporter"),
    ("/status/", "platform operations reporter"),
    ("/evidence/", "evidence admission pipeline"),
    ("/relationships/", "platform relationship graph"),
    ("/infra/", "infrastructure collector"),
    ("/impact/", "platform deployment graph"),
    ("/compare/", "environment inventory collector"),
    ("/ecosystem/", "platform relationship graph"),
    ("/catalog", "service catalog collector"),
    ("/visualizations/", "platform relationship graph"),
)


def evidence_source(relative_path: str) -> str:
    """The collector (or provider) whose absence leaves ``relative_path`` empty."""
    for prefix, source in _SOURCES:
        if relative_path.startswith(prefix):
            return source
    return "platform collector"


def empty_page(spec: RouteSpec, source: dict[str, Any]) -> Any:
    """The route's documented empty data, with ``limit``/``offset`` echoed."""
    data = copy.deepcopy(spec.empty_data_template)
    if isinstance(data, dict):
        if "limit" in data:
            data["limit"] = max(int_param(source, "limit", 0), 0)
        if "offset" in data:
            data["offset"] = max(int_param(source, "offset", 0), 0)
    return data


def _request_params(ctx: ApiContext) -> dict[str, Any]:
    params: dict[str, Any] = dict(ctx.query)
    if isinstance(ctx.body, dict):
        params.update(ctx.body)
    return params


def empty_handler(spec: RouteSpec):
    """A handler answering ``spec`` with its empty page and an unavailable truth block."""
    source_name = evidence_source(spec.relative_path or "")
    capability = spec.capability_id
    detail = f"no {source_name} runs in the embedded backend"
    reason = f"embedded backend: {source_name} not configured; empty is not evidence of absence"

    def answer_empty(ctx: ApiContext) -> Answer:
        data = empty_page(spec, _request_params(ctx))
        freshness = unavailable_freshness(detail)
        if spec.plain:
            if isinstance(data, dict):
                if "state" in data:
                    data["state"] = "unavailable"
                if "detail" in data:
                    data["detail"] = detail
                if "reason" in data:
                    data["reason"] = reason
            return Answer(data)
        truth = build_truth(
            capability, basis="", level="fallback", freshness=freshness, reason=reason
        )
        return Answer(data, truth)

    answer_empty.__name__ = f"empty_{spec.method.lower()}{spec.relative_path}"
    return answer_empty


def unsupported_handler(spec: RouteSpec):
    """A handler answering ``spec`` with Eshu's 501 ``unsupported_capability``."""
    capability = spec.capability_id
    if spec.relative_path and spec.relative_path.startswith(("/auth/", "/admin/")):
        message = (
            f"{spec.method} {spec.path} is not supported by the embedded backend:"
            " it has no multi-user identity or administration surface"
        )
        required = "production"
    else:
        message = f"{spec.method} {spec.path} is not supported by the embedded backend: {spec.note}"
        required = "local_authoritative"

    def answer_unsupported(ctx: ApiContext) -> Answer:
        raise unsupported(message, capability, required=required)

    answer_unsupported.__name__ = f"unsupported_{spec.method.lower()}{spec.relative_path}"
    return answer_unsupported


def register_fallbacks() -> None:
    """Register the empty and 501 answers of every such route in the route map."""
    for spec in load_route_map():
        path = spec.relative_path
        if path is None:
            continue
        if spec.mode == "serve-empty-unavailable":
            ROUTES.add(spec.method, path, empty_handler(spec), plain=spec.plain, fallback=True)
        elif spec.mode == "501-unsupported":
            ROUTES.add(spec.method, path, unsupported_handler(spec), fallback=True)


register_fallbacks()
