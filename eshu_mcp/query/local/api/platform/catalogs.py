"""
Static catalog routes (§2.10): capabilities, surface inventory, query playbooks,
investigation workflows and this backend's OpenAPI subset.

The catalogs are data files in ``eshu_mcp/query/local/catalogs/`` written for this
backend; the surface inventory is generated from the route map and the tool contract.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib.resources import files
from typing import Any

from attrs import frozen

from eshu_mcp.catalog.contract import load_contract
from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    body_object,
    str_list_param,
    str_param,
)
from eshu_mcp.query.local.api.platform.routemap import load_openapi, load_route_map
from eshu_mcp.query.local.api.platform.truth import build_truth

MATURITIES = (
    "general_availability",
    "experimental",
    "preview",
    "gated",
    "degraded",
    "not_implemented",
)
SURFACE_CATEGORIES = (
    "command",
    "collector",
    "reducer_domain",
    "api_route",
    "mcp_tool",
    "console_page",
)
READINESS = (
    "implemented",
    "partial",
    "gated",
    "foundation_only",
    "fixture_only",
    "research_only",
    "not_implemented",
    "unsupported",
)
_MODE_READINESS = {
    "serve-real": "implemented",
    "serve-real-partial": "partial",
    "serve-static-catalog": "implemented",
    "serve-empty-unavailable": "not_implemented",
    "501-unsupported": "unsupported",
}


@cache
def load_catalog(name: str) -> dict[str, Any]:
    """One packaged catalog document (``capabilities``, ``query_playbooks``...)."""
    path = files("eshu_mcp.query.local").joinpath(f"catalogs/{name}.json")
    return json.loads(path.read_text(encoding="utf-8"))


def _static_truth(capability: str, reason: str) -> dict[str, Any]:
    return build_truth(
        capability, basis="runtime_state", freshness={"state": "fresh"}, reason=reason
    )


def _strict_page(ctx: ApiContext, *, default: int, maximum: int) -> tuple[int, int]:
    """Eshu's ``parseBoundedLimit``: bad values are 400s, not silent defaults."""
    limit, offset = default, 0
    if "limit" in ctx.query:
        try:
            limit = int(ctx.query["limit"].strip())
        except ValueError:
            limit = 0
        if not 1 <= limit <= maximum:
            raise ApiError(400, f"limit must be an integer in [1, {maximum}]")
    if "offset" in ctx.query:
        try:
            offset = int(ctx.query["offset"].strip())
        except ValueError:
            offset = -1
        if offset < 0:
            raise ApiError(400, "offset must be a non-negative integer")
    return limit, offset


@ROUTES.route("GET", "/capabilities")
def capabilities(ctx: ApiContext) -> Answer:
    """The capability catalog, with maturity as this backend serves each capability."""
    limit, offset = _strict_page(ctx, default=200, maximum=500)
    maturity = ctx.query.get("maturity", "").strip()
    if maturity and maturity not in MATURITIES:
        raise ApiError(400, "maturity must be one of " + ", ".join(MATURITIES))
    owner = ctx.query.get("owner", "").strip()
    catalog = load_catalog("capabilities")
    entries = [
        entry
        for entry in catalog["capabilities"]
        if (not maturity or entry["maturity"] == maturity)
        and (not owner or entry["authorization"]["family"] == owner)
    ]
    window = entries[offset : offset + limit]
    data = {
        "version": catalog["version"],
        "authorization": {"mode": "embedded", "enforced": False, "scope": "loopback"},
        "capabilities": window,
        "total": len(entries),
        "limit": limit,
        "offset": offset,
        "truncated": offset + limit < len(entries),
    }
    return Answer(
        data, _static_truth("capability_catalog.list", "embedded backend capability catalog")
    )


@cache
def surfaces() -> tuple[dict[str, str], ...]:
    """Every API route (from the route map) and MCP tool (from the contract) with readiness."""
    modes = {(spec.method, spec.path): spec.mode for spec in load_route_map()}
    items = [
        {"category": "api_route", "name": f"{method} {path}", "readiness": _MODE_READINESS[mode]}
        for (method, path), mode in sorted(modes.items(), key=lambda item: item[0][::-1])
    ]
    for tool in load_contract():
        route = tool.get("route") or {}
        mode = modes.get((route.get("method"), route.get("path_template")), "")
        items.append(
            {
                "category": "mcp_tool",
                "name": tool["name"],
                "readiness": _MODE_READINESS.get(mode, "not_implemented"),
            }
        )
    items.append({"category": "collector", "name": "git", "readiness": "implemented"})
    items.append({"category": "command", "name": "eshu-mcp index", "readiness": "implemented"})
    return tuple(items)


@ROUTES.route("GET", "/surface-inventory")
def surface_inventory(ctx: ApiContext) -> Answer:
    """The backend's surfaces and how ready each one is."""
    limit, offset = _strict_page(ctx, default=200, maximum=1000)
    category = ctx.query.get("category", "").strip()
    readiness = ctx.query.get("readiness", "").strip()
    if category and category not in SURFACE_CATEGORIES:
        raise ApiError(400, "category must be one of " + ", ".join(SURFACE_CATEGORIES))
    if readiness and readiness not in READINESS:
        raise ApiError(400, "readiness must be one of " + ", ".join(READINESS))
    chosen = [
        s
        for s in surfaces()
        if (not category or s["category"] == category)
        and (not readiness or s["readiness"] == readiness)
    ]
    data = {
        "version": "embedded-surfaces.v1",
        "surfaces": chosen[offset : offset + limit],
        "total": len(chosen),
        "limit": limit,
        "offset": offset,
        "truncated": offset + limit < len(chosen),
    }
    return Answer(data, _static_truth("surface_inventory.list", "generated from the route map"))


def _catalog_error(status: int, code: str, message: str, capability: str) -> ApiError:
    return ApiError(status, message, code=code, capability=capability)


@frozen
class _Curated:
    """A curated catalog of versioned entries (playbooks, workflows) and how it is asked for."""

    catalog: str
    key: str
    id_field: str
    capability: str
    noun: str

    def listing(self, reason: str) -> Answer:
        """Every entry, with its id and version listed again and a count."""
        catalog = load_catalog(self.catalog)
        entries = catalog[self.key]
        data = {
            "schema_version": catalog["schema_version"],
            self.key: entries,
            "versions": [{"id": e["id"], "version": e["version"]} for e in entries],
            "count": len(entries),
        }
        return Answer(data, _static_truth(self.capability, reason))

    def requested(self, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The catalog and the entry the body names (400 without an id, 404 for an unknown one)."""
        entry_id = str_param(body, self.id_field).strip()
        if not entry_id:
            message = f"{self.id_field} is required"
            raise _catalog_error(400, "invalid_argument", message, self.capability)
        catalog = load_catalog(self.catalog)
        entry = next((e for e in catalog[self.key] if e["id"] == entry_id), None)
        if entry is None:
            raise _catalog_error(404, "not_found", f"{self.noun} not found", self.capability)
        return catalog, entry


_PLAYBOOKS = _Curated(
    "query_playbooks", "playbooks", "playbook_id", "query.playbooks", "query playbook"
)
_WORKFLOWS = _Curated(
    "investigation_workflows",
    "workflows",
    "workflow_id",
    "query.investigation_workflows",
    "investigation workflow",
)


@ROUTES.route("GET", "/query-playbooks")
def query_playbooks(ctx: ApiContext) -> Answer:
    """The curated code-investigation playbooks."""
    return _PLAYBOOKS.listing("curated playbooks for this backend")


def _inputs(body: dict[str, Any], capability: str) -> dict[str, Any]:
    inputs = body.get("inputs") or {}
    if not isinstance(inputs, dict):
        raise _catalog_error(400, "invalid_argument", "inputs must be an object", capability)
    return inputs


def _missing_required(required: list[dict], inputs: dict[str, Any]) -> list[str]:
    return [
        spec["name"]
        for spec in required
        if spec.get("required") and str(inputs.get(spec["name"], "")).strip() == ""
    ]


@ROUTES.route("POST", "/query-playbooks/resolve")
def resolve_playbook(ctx: ApiContext) -> Answer:
    """Bind a playbook's step parameters to the caller's inputs."""
    capability = _PLAYBOOKS.capability
    body = body_object(ctx)
    catalog, playbook = _PLAYBOOKS.requested(body)
    inputs = _inputs(body, capability)
    missing = _missing_required(playbook["required_inputs"], inputs)
    if missing:
        message = "missing required inputs: " + ", ".join(missing)
        raise _catalog_error(400, "invalid_argument", message, capability)
    steps = []
    for step in playbook["steps"]:
        params: dict[str, Any] = {}
        for param in step["params"]:
            if "from_input" in param:
                value = inputs.get(param["from_input"])
                if value is None or value == "":
                    continue
            else:
                value = next(param[k] for k in param if k.startswith("const_"))
            params[param["name"]] = value
        steps.append(
            {
                "id": step["id"],
                "tool": step["tool"],
                "params": params,
                "expected_truth": step["expected_truth"],
                "evidence_expected": step["evidence_expected"],
                "drilldowns": step["drilldowns"],
            }
        )
    resolved = {
        "id": playbook["id"],
        "name": playbook["name"],
        "version": playbook["version"],
        "inputs": inputs,
        "steps": steps,
        "failure_modes": playbook["failure_modes"],
    }
    data = {"schema_version": catalog["schema_version"], "resolved": resolved}
    return Answer(data, _static_truth(capability, "deterministic parameter binding"))


@ROUTES.route("GET", "/investigation-workflows")
def investigation_workflows(ctx: ApiContext) -> Answer:
    """The curated guided investigation workflows."""
    return _WORKFLOWS.listing("curated workflows for this backend")


_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def _bind(value: Any, inputs: dict[str, Any]) -> Any:
    """Substitute ``{input}`` placeholders; None when an input is missing; constants as given."""
    if not isinstance(value, str):
        return value
    missing = [name for name in _PLACEHOLDER.findall(value) if not str(inputs.get(name, ""))]
    if missing:
        return None
    return _PLACEHOLDER.sub(lambda m: str(inputs[m.group(1)]), value)


@ROUTES.route("POST", "/investigation-workflows/resolve")
def resolve_workflow(ctx: ApiContext) -> Answer:
    """The calls that would gather the workflow's missing evidence, bound to the inputs."""
    capability = _WORKFLOWS.capability
    body = body_object(ctx)
    catalog, workflow = _WORKFLOWS.requested(body)
    inputs = _inputs(body, capability)
    wanted = set(str_list_param(body, "missing_evidence"))
    calls, unbound = [], []
    for route in workflow["missing_evidence_routes"]:
        if wanted and route["evidence_key"] not in wanted:
            continue
        for call in route["calls"]:
            params = {k: _bind(v, inputs) for k, v in (call.get("params") or {}).items()}
            if any(v is None for v in params.values()):
                unbound.append(call["id"])
                continue
            calls.append({**call, "evidence_key": route["evidence_key"], "params": params})
    resolved = {
        "id": workflow["id"],
        "name": workflow["name"],
        "version": workflow["version"],
        "inputs": inputs,
        "missing_evidence": sorted(wanted),
        "calls": calls,
        "unbound_calls": unbound,
        "output_packet": workflow["output_packet"],
    }
    data = {"schema_version": catalog["schema_version"], "resolved": resolved}
    return Answer(data, _static_truth(capability, "deterministic workflow binding"))


@ROUTES.route("GET", "/openapi.json", plain=True)
def openapi_document(ctx: ApiContext) -> Answer:
    """The OpenAPI operations this backend answers for real or from a catalog."""
    answered = {
        (spec.method, spec.path)
        for spec in load_route_map()
        if spec.mode in ("serve-real", "serve-real-partial", "serve-static-catalog")
    }
    paths: dict[str, dict[str, Any]] = {}
    for key, operation in sorted(load_openapi().items()):
        method, path = key.split(" ", 1)
        if (method, path) in answered:
            paths.setdefault(path, {})[method.lower()] = operation
    data = {
        "openapi": "3.0.3",
        "info": {"title": "eshu-mcp embedded query API", "version": "v0"},
        "paths": paths,
    }
    return Answer(data)
