"""
Service and workload context and story routes, where the repository's own manifests
define the workload: Kubernetes workloads (plain or in untemplated Helm files) and
Compose services, with the images they run, the CI jobs that build those images, the
configuration they read, the Services and hostnames that route to them, and what they
depend on. Runtime topology, cloud resources and consumers stay empty with a reason.
"""

from __future__ import annotations

import copy
from typing import Any

from eshu_mcp.query.local.api.collected.facts import LOCAL_COLLECTOR_BASIS, collected_truth
from eshu_mcp.query.local.api.collected.infra_graph import (
    InfraGraph,
    InfraNode,
    build_graph,
    config_kind,
    workload_images,
)
from eshu_mcp.query.local.api.collected.infra_model import (
    infra_files,
    infra_scope,
    path_environment,
)
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError
from eshu_mcp.query.local.api.platform.routemap import load_route_map

WORKLOAD_TYPES = ("kubernetes", "helm", "compose", "github_actions", "gitlab_ci", "dockerfile")
COLLECTOR = "workload collectors (Kubernetes, Helm, Compose, CI)"
PARTIAL_REASONS = [
    "runtime_topology_not_observed",
    "cloud_resources_not_collected",
    "consumers_not_collected",
]
BOUNDARIES = [
    "declared in repository files only: no cluster, registry, cloud or CI run was read",
    "Helm templates are not rendered: templated objects are not counted as workloads",
]


def _template(path: str) -> dict[str, Any]:
    for spec in load_route_map():
        if spec.path == path and spec.method == "GET":
            return copy.deepcopy(spec.empty_data_template)
    raise KeyError(path)  # pragma: no cover - the route map is packaged data


def _workload_nodes(ctx: ApiContext, name: str, scope: str) -> tuple[InfraGraph, list[InfraNode]]:
    graph = build_graph(ctx, scope)
    name = name.strip()
    nodes = [
        node
        for node_id in graph.aliases.get(name, ())
        if (node := graph.nodes[node_id]).label in ("K8sWorkload", "ComposeService")
    ]
    nodes.sort(key=lambda n: (n.label != "K8sWorkload", n.repo_id, n.path, n.line))
    return graph, nodes


def _instance(node: InfraNode) -> dict[str, Any]:
    payload = node.facts[0].payload
    platform = (
        "docker-compose" if node.label == "ComposeService" else payload.get("source", "kubernetes")
    )
    return {
        "id": node.id,
        "name": node.name,
        "kind": payload.get("kind", "ComposeService"),
        "platform": platform,
        "namespace": payload.get("namespace", ""),
        "environment": path_environment(node.path),
        "images": workload_images(node),
        "replicas": payload.get("replicas"),
        "repo_id": node.repo_id,
        "relative_path": node.path,
        "line_number": node.line,
    }


def _edges(graph: InfraGraph, nodes: list[InfraNode]) -> tuple[list, list]:
    outgoing, incoming = [], []
    for node in nodes:
        out, into = graph.around(node, None)
        outgoing += out
        incoming += into
    return outgoing, incoming


def workload_view(ctx: ApiContext, name: str, environment: str, missing: str) -> dict[str, Any]:
    """Everything the definitions say about one workload (404 ``missing`` when none)."""
    scope = infra_scope(ctx, ctx.query.get("repo", ""))
    graph, nodes = _workload_nodes(ctx, name, scope)
    if environment:
        nodes = [n for n in nodes if path_environment(n.path) in ("", environment)]
    if not nodes:
        raise ApiError(404, missing)
    outgoing, incoming = _edges(graph, nodes)
    instances = [_instance(node) for node in nodes]
    images = sorted({image for i in instances for image in i["images"]})
    builders = list(
        {e.target.id: e.target for e in outgoing if e.type == "HAS_DEPLOYMENT_EVIDENCE"}.values()
    )
    configs = [e.target for e in outgoing if e.type == "READS_CONFIG_FROM"]
    selectors = [e.source for e in incoming if e.type == "SELECTS"]
    hostnames = sorted(
        {
            host
            for node in graph.nodes.values()
            if node.label == "K8sResource"
            and node.facts
            and node.facts[0].payload.get("kind") == "Ingress"
            and set(node.facts[0].payload.get("backends") or ()) & {s.name for s in selectors}
            for host in node.facts[0].payload.get("hosts") or ()
        }
    )
    depends = sorted(
        {
            dep
            for n in nodes
            if n.label == "ComposeService"
            for dep in n.facts[0].payload.get("depends_on") or ()
        }
    )
    return {
        "scope": scope,
        "nodes": nodes,
        "instances": instances,
        "images": images,
        "manifests": sorted({n.path for n in nodes}),
        "builders": [
            {
                "job": job.name,
                "workflow": job.facts[0].payload.get("workflow", ""),
                "provider": job.facts[0].payload.get("provider", ""),
                "relative_path": job.path,
                "line_number": job.line,
            }
            for job in builders
        ],
        "dockerfiles": sorted({e.target.path for e in outgoing if e.type == "DEPLOYMENT_SOURCE"}),
        "configs": [{"kind": config_kind(c), "name": c.name} for c in configs],
        "selectors": [
            {
                "name": s.name,
                "kind": "Service",
                "relative_path": s.path,
                "ports": s.facts[0].payload.get("ports", []),
            }
            for s in selectors
        ],
        "hostnames": hostnames,
        "depends_on": depends,
        "edges": [e.row() for e in outgoing + incoming],
        "platforms": sorted({i["platform"] for i in instances}),
        "environments": sorted({i["environment"] for i in instances if i["environment"]}),
    }


def _story_text(name: str, view: dict[str, Any]) -> str:
    parts = [
        f"{name} is defined in {len(view['instances'])} place(s) ({', '.join(view['platforms'])})"
        f" in {', '.join(view['manifests'])}"
    ]
    if view["images"]:
        parts.append(f"it runs {', '.join(view['images'])}")
    if view["builders"]:
        parts.append(
            "CI builds its image in "
            + ", ".join(f"{b['workflow']}/{b['job']}" for b in view["builders"])
        )
    if view["selectors"]:
        parts.append("Services routing to it: " + ", ".join(s["name"] for s in view["selectors"]))
    if view["depends_on"]:
        parts.append("it depends on " + ", ".join(view["depends_on"]))
    if view["configs"]:
        parts.append("it reads " + ", ".join(f"{c['kind']} {c['name']}" for c in view["configs"]))
    return "; ".join(parts) + "."


def _deployment_evidence(view: dict[str, Any]) -> dict[str, Any]:
    return {
        "manifests": view["manifests"],
        "images": view["images"],
        "ci_builds": view["builders"],
        "dockerfiles": view["dockerfiles"],
        "config_references": view["configs"],
    }


def _context(ctx: ApiContext, name: str, template_path: str, missing: str) -> Answer:
    environment = ctx.query.get("environment", "").strip()
    view = workload_view(ctx, name, environment, missing)
    first = view["nodes"][0]
    data = _template(template_path)
    repo_name = ctx.conn.execute(
        "SELECT name FROM repositories WHERE repo_id = ?", (first.repo_id,)
    ).fetchone()
    data.update(
        id=f"workload:{name}",
        name=name,
        kind=view["instances"][0]["kind"],
        repo_id=first.repo_id,
        repo_name=repo_name[0] if repo_name else "",
        instances=view["instances"],
        dependencies=[{"name": dep, "type": "compose_depends_on"} for dep in view["depends_on"]],
        deployment_evidence=_deployment_evidence(view),
        deployment_overview={
            "platforms": view["platforms"],
            "instance_count": len(view["instances"]),
            "image_count": len(view["images"]),
            "environments": view["environments"],
        },
        infrastructure=[*view["configs"], *view["selectors"]],
        hostnames=view["hostnames"],
        entrypoints=[
            {"kind": "service_port", "service": s["name"], "port": port}
            for s in view["selectors"]
            for port in s["ports"]
        ],
        topology_edges=view["edges"],
        materialization_status="repository_definitions",
        query_basis=LOCAL_COLLECTOR_BASIS,
        observed_config_environments=view["environments"],
        limitations=list(BOUNDARIES),
        partial_reasons=list(PARTIAL_REASONS),
        source_tool_breakdown={
            p: sum(i["platform"] == p for i in view["instances"]) for p in view["platforms"]
        },
        story_sections=[{"title": "deployment", "summary": _story_text(name, view)}],
    )
    return Answer(data, _truth(ctx, view["scope"]))


def _truth(ctx: ApiContext, scope: str) -> dict[str, Any]:
    return collected_truth(
        ctx, "platform_impact.context_overview", COLLECTOR, infra_files(ctx, scope, WORKLOAD_TYPES)
    )


@ROUTES.route("GET", "/workloads/{workload_id}/context")
def workload_context(ctx: ApiContext) -> Answer:
    """A workload's context as its definitions state it."""
    return _context(
        ctx,
        ctx.path_args["workload_id"],
        "/api/v0/workloads/{workload_id}/context",
        "workload not found",
    )


@ROUTES.route("GET", "/services/{service_name}/context")
def service_context(ctx: ApiContext) -> Answer:
    """A service's context as its definitions state it."""
    return _context(
        ctx,
        ctx.path_args["service_name"],
        "/api/v0/services/{service_name}/context",
        "service not found",
    )


@ROUTES.route("GET", "/workloads/{workload_id}/story")
def workload_story(ctx: ApiContext) -> Answer:
    """A workload's narrative from its definitions."""
    name = ctx.path_args["workload_id"]
    view = workload_view(ctx, name, ctx.query.get("environment", "").strip(), "workload not found")
    data = _template("/api/v0/workloads/{workload_id}/story")
    data.update(
        workload_id=name,
        name=name,
        story=_story_text(name, view),
        evidence_boundaries=list(BOUNDARIES),
        partial_reasons=list(PARTIAL_REASONS),
        result_limits={"instances": len(view["instances"]), "truncated": False},
    )
    return Answer(data, _truth(ctx, view["scope"]))


@ROUTES.route("GET", "/services/{service_name}/story")
def service_story(ctx: ApiContext) -> Answer:
    """The service dossier, from the repository's definitions."""
    name = ctx.path_args["service_name"]
    view = workload_view(ctx, name, ctx.query.get("environment", "").strip(), "service not found")
    data = _template("/api/v0/services/{service_name}/story")
    story = _story_text(name, view)
    data.update(
        service_name=name,
        service_identity={
            "id": f"workload:{name}",
            "name": name,
            "kinds": sorted({i["kind"] for i in view["instances"]}),
        },
        story=story,
        story_sections=[{"title": "deployment", "summary": story}],
        deployment_evidence=_deployment_evidence(view),
        deployment_overview={
            "platforms": view["platforms"],
            "instance_count": len(view["instances"]),
            "environments": view["environments"],
        },
        deployment_lanes=[
            {"platform": p, "instances": [i["id"] for i in view["instances"] if i["platform"] == p]}
            for p in view["platforms"]
        ],
        upstream_dependencies=[
            {"name": dep, "type": "compose_depends_on"} for dep in view["depends_on"]
        ],
        hostnames=view["hostnames"],
        entrypoints=[
            {"kind": "service_port", "service": s["name"], "port": port}
            for s in view["selectors"]
            for port in s["ports"]
        ],
        observed_config_environments=view["environments"],
        evidence_boundaries=list(BOUNDARIES),
        evidence_graph={"edges": view["edges"]},
        result_limits={"instances": len(view["instances"]), "truncated": False},
        answer_metadata={"basis": LOCAL_COLLECTOR_BASIS, "partial_reasons": list(PARTIAL_REASONS)},
    )
    return Answer(data, _truth(ctx, view["scope"]))
