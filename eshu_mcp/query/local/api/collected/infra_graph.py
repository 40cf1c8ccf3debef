"""
The relationships a repository's own infrastructure files state, as a small graph built
per request from the local collectors' facts: Terraform references and module calls,
the images workloads, Compose services, charts and CI jobs run, the manifests that
deploy them, the configuration they read, the CI jobs that build their images, and the
workloads a Kubernetes Service selects.
"""

from __future__ import annotations

import posixpath
from typing import Any

from attrs import define, field

from eshu_mcp.query.local.api.collected.facts import CollectedFact, collected_facts
from eshu_mcp.query.local.api.collected.infra_model import infra_row
from eshu_mcp.query.local.api.platform.framework import ApiContext

GRAPH_FACT_KINDS = (
    "tf_resource",
    "tf_data",
    "tf_module",
    "tf_reference",
    "k8s_resource",
    "k8s_config_ref",
    "helm_chart",
    "compose_service",
    "ci_job",
    "image",
)

# Which node a name shared by several entities resolves to first.
_PRIORITY = (
    "K8sWorkload",
    "ComposeService",
    "K8sResource",
    "HelmChart",
    "TerraformResource",
    "TerraformModule",
    "TerraformDataSource",
    "ContainerImage",
    "CiJob",
    "TerraformModuleSource",
    "ConfigReference",
    "File",
)


def image_repository(reference: str) -> str:
    """``ghcr.io/acme/api:1.4.0`` -> ``ghcr.io/acme/api`` (tag and digest dropped)."""
    reference = reference.split("@", 1)[0]
    head, _, tail = reference.rpartition("/")
    if ":" in tail:
        tail = tail.split(":", 1)[0]
    return f"{head}/{tail}" if head else tail


def module_source_dir(module_dir: str, source: str) -> str:
    """A local module source resolved against its caller's directory ('' when remote)."""
    if not source.startswith(("./", "../")):
        return ""
    return (
        posixpath.normpath(posixpath.join(module_dir, source))
        if module_dir
        else (posixpath.normpath(source))
    )


@define
class InfraNode:
    """An entity of the graph."""

    id: str
    name: str
    label: str
    repo_id: str = ""
    path: str = ""
    line: int = 0
    facts: list[CollectedFact] = field(factory=list)

    @property
    def kind(self) -> str:
        """The Kubernetes kind of a manifest object (``Deployment``), else ""."""
        if self.facts and self.facts[0].kind == "k8s_resource":
            return str(self.facts[0].payload.get("kind", ""))
        return ""

    def public(self) -> dict[str, Any]:
        node = {"id": self.id, "name": self.name, "labels": [self.label]}
        if self.kind:
            node["kind"] = self.kind
        return node


@define
class InfraEdge:
    """A stated relationship between two nodes, with the file line that states it."""

    type: str
    source: InfraNode
    target: InfraNode
    path: str
    line: int
    reason: str

    def row(self) -> dict[str, Any]:
        """Eshu's Relationship shape."""
        return {
            "type": self.type,
            "source_id": self.source.id,
            "source_name": self.source.name,
            "source_type": self.source.label,
            "source_repo_id": self.source.repo_id,
            "source_file_path": self.source.path,
            "source_start_line": self.source.line,
            "source_end_line": self.source.line,
            "target_id": self.target.id,
            "target_name": self.target.name,
            "target_type": self.target.label,
            "target_repo_id": self.target.repo_id,
            "target_file_path": self.target.path,
            "target_start_line": self.target.line,
            "target_end_line": self.target.line,
            "confidence": 1.0,
            "confidence_basis": "evidence_constant",
            "evidence_type": "repository_file",
            "resolution_source": f"{self.path}:{self.line}",
            "reason": self.reason,
            **({"source_kind": self.source.kind} if self.source.kind else {}),
            **({"target_kind": self.target.kind} if self.target.kind else {}),
        }


@define
class InfraGraph:
    """Nodes by id, the names they answer to, and edges both ways."""

    nodes: dict[str, InfraNode] = field(factory=dict)
    aliases: dict[str, list[str]] = field(factory=dict)
    edges: list[InfraEdge] = field(factory=list)

    def node(self, node_id: str, name: str, label: str, **where: Any) -> InfraNode:
        existing = self.nodes.get(node_id)
        if existing is None:
            existing = self.nodes[node_id] = InfraNode(node_id, name, label, **where)
            self.alias(existing, node_id, name)
        return existing

    def alias(self, node: InfraNode, *names: str) -> None:
        for name in names:
            if name:
                ids = self.aliases.setdefault(name, [])
                if node.id not in ids:
                    ids.append(node.id)

    def link(self, kind: str, source: InfraNode, target: InfraNode, fact: CollectedFact, why: str):
        self.edges.append(InfraEdge(kind, source, target, fact.relative_path, fact.line, why))

    def find(self, entity: str) -> list[InfraNode]:
        """Nodes ``entity`` names (an id, a name, an address or image), most specific first."""
        ids = self.aliases.get(entity) or self.aliases.get(entity.strip()) or []
        nodes = [self.nodes[node_id] for node_id in ids]
        return sorted(nodes, key=lambda n: (_PRIORITY.index(n.label), n.repo_id, n.path, n.line))

    def around(self, node: InfraNode, types: set[str] | None):
        """(outgoing, incoming) edges of ``node`` limited to ``types``."""
        keep = [edge for edge in self.edges if types is None or edge.type in types]
        outgoing = [edge for edge in keep if edge.source is node]
        incoming = [edge for edge in keep if edge.target is node]
        return outgoing, incoming


def build_graph(ctx: ApiContext, scope: str) -> InfraGraph:
    """The infrastructure graph of every repository in scope."""
    facts, _ = collected_facts(ctx, GRAPH_FACT_KINDS, scope=scope)
    graph = InfraGraph()
    declared: dict[tuple[str, str, str], InfraNode] = {}  # (repo, module dir, address)
    references, images, config_refs, services, jobs = [], [], [], [], []
    workloads: list[InfraNode] = []
    for fact in facts:
        if fact.kind in ("tf_resource", "tf_data", "tf_module", "k8s_resource", "helm_chart"):
            row = infra_row(fact)
            label = row["labels"][0]
            if fact.kind == "k8s_resource" and fact.payload.get("workload"):
                label = "K8sWorkload"
            node = graph.node(
                row["id"],
                fact.name,
                label,
                repo_id=fact.repo_id,
                path=fact.relative_path,
                line=fact.line,
            )
            node.facts.append(fact)
            graph.alias(node, row["resource_id"])
            if fact.kind.startswith("tf_"):
                module_dir = fact.payload.get("module_dir", "")
                declared[(fact.repo_id, module_dir, fact.name)] = node
                graph.alias(node, f"{module_dir}:{fact.name}" if module_dir else fact.name)
                _terraform_module_edge(graph, node, fact)
            elif fact.kind == "k8s_resource":
                kind = fact.payload.get("kind", "")
                graph.alias(node, f"{kind}/{fact.name}")
                _deploys_from(graph, node, fact, "the manifest declares this object")
                if label == "K8sWorkload":
                    workloads.append(node)
                elif kind == "Service":
                    services.append(node)
            else:
                graph.alias(node, fact.payload.get("chart_dir", ""))
        elif fact.kind == "compose_service":
            node = graph.node(
                f"compose_service:{fact.repo_id}:{fact.relative_path}:{fact.name}",
                fact.name,
                "ComposeService",
                repo_id=fact.repo_id,
                path=fact.relative_path,
                line=fact.line,
            )
            node.facts.append(fact)
            workloads.append(node)
            _deploys_from(graph, node, fact, "the Compose file declares this service")
            dockerfile = fact.payload.get("dockerfile", "")
            if dockerfile:
                target = _file_node(graph, fact.repo_id, dockerfile)
                graph.link("DEPLOYMENT_SOURCE", node, target, fact, "the service is built from it")
        elif fact.kind == "ci_job":
            node = graph.node(
                f"ci_job:{fact.repo_id}:{fact.relative_path}:{fact.name}",
                fact.name,
                "CiJob",
                repo_id=fact.repo_id,
                path=fact.relative_path,
                line=fact.line,
            )
            node.facts.append(fact)
            graph.alias(node, f"{fact.payload.get('workflow', '')}/{fact.name}")
            jobs.append(node)
        elif fact.kind == "tf_reference":
            references.append(fact)
        elif fact.kind == "image":
            images.append(fact)
        else:
            config_refs.append(fact)
    _terraform_references(graph, declared, references)
    _image_edges(graph, images)
    _config_edges(graph, config_refs)
    _selector_edges(graph, services, workloads)
    _build_evidence_edges(graph, workloads, jobs)
    return graph


def _file_node(graph: InfraGraph, repo_id: str, path: str) -> InfraNode:
    return graph.node(f"file:{repo_id}:{path}", path, "File", repo_id=repo_id, path=path, line=1)


def _deploys_from(graph: InfraGraph, node: InfraNode, fact: CollectedFact, why: str) -> None:
    graph.link("DEPLOYS_FROM", node, _file_node(graph, fact.repo_id, fact.relative_path), fact, why)


def _terraform_module_edge(graph: InfraGraph, node: InfraNode, fact: CollectedFact) -> None:
    if fact.kind != "tf_module":
        return
    source = fact.payload.get("source", "")
    if not source:
        return
    local = module_source_dir(fact.payload.get("module_dir", ""), source)
    target = graph.node(
        f"terraform_module_source:{fact.repo_id if local else ''}:{local or source}",
        source,
        "TerraformModuleSource",
        repo_id=fact.repo_id if local else "",
        path=local,
    )
    graph.alias(target, local, f"{source}@{fact.payload.get('version', '')}")
    graph.link("USES_MODULE", node, target, fact, f"module block sources {source}")


def _terraform_references(graph, declared, references) -> None:
    for fact in references:
        module_dir = fact.payload.get("module_dir", "")
        source = declared.get((fact.repo_id, module_dir, fact.payload.get("from", "")))
        target = declared.get((fact.repo_id, module_dir, fact.name))
        if source is not None and target is not None:
            expression = fact.payload.get("expression", fact.name)
            graph.link("DEPENDS_ON", source, target, fact, f"references {expression}")


def _image_edges(graph: InfraGraph, images: list[CollectedFact]) -> None:
    for fact in images:
        payload = fact.payload
        image = graph.node(f"image:{fact.name}", fact.name, "ContainerImage")
        graph.alias(image, image_repository(fact.name))
        owner = _image_owner(graph, fact)
        if owner is None:
            continue
        role = payload.get("role", "runs")
        if role == "runs":
            graph.link("RUNS_IMAGE", owner, image, fact, "the definition runs this image")
        elif role == "builds" and owner.label == "ComposeService":
            graph.link("RUNS_IMAGE", owner, image, fact, "the service builds and runs this image")


def _image_owner(graph: InfraGraph, fact: CollectedFact) -> InfraNode | None:
    payload = fact.payload
    source = payload.get("source")
    candidates: list[str] = []
    if source in ("kubernetes", "helm") and payload.get("workload"):
        candidates = [f"{payload.get('workload_kind', '')}/{payload['workload']}"]
    elif source == "compose":
        candidates = [f"compose_service:{fact.repo_id}:{fact.relative_path}:{payload['service']}"]
    elif source == "ci":
        candidates = [f"ci_job:{fact.repo_id}:{fact.relative_path}:{payload.get('job', '')}"]
    elif source in ("helm", "helm_values"):
        candidates = [payload.get("chart_dir", "")]
    for candidate in candidates:
        for node_id in graph.aliases.get(candidate, ()):
            node = graph.nodes[node_id]
            if node.repo_id == fact.repo_id:
                return node
    return None


def _config_edges(graph: InfraGraph, config_refs: list[CollectedFact]) -> None:
    for fact in config_refs:
        payload = fact.payload
        owners = [
            graph.nodes[node_id]
            for node_id in graph.aliases.get(
                f"{payload.get('workload_kind', '')}/{payload.get('workload')}", ()
            )
            if graph.nodes[node_id].repo_id == fact.repo_id
        ]
        if not owners:
            continue
        kind = payload.get("kind", "")
        declared = [
            graph.nodes[node_id]
            for node_id in graph.aliases.get(f"{kind}/{fact.name}", ())
            if graph.nodes[node_id].repo_id == fact.repo_id
        ]
        namespace = payload.get("namespace") or "default"
        if declared:
            target = declared[0]
        else:
            target = graph.node(
                f"k8s_config:{fact.repo_id}:{namespace}/{kind}/{fact.name}",
                fact.name,
                "ConfigReference",
                repo_id=fact.repo_id,
            )
            if not target.facts:
                target.facts.append(fact)
        owner = owners[0]
        graph.link(
            "READS_CONFIG_FROM",
            owner,
            target,
            fact,
            f"reads {kind} {fact.name} via {payload.get('via', '')}",
        )


def _selector_edges(graph, services: list[InfraNode], workloads: list[InfraNode]) -> None:
    for service in services:
        fact = service.facts[0]
        selector = fact.payload.get("selector") or {}
        if not selector:
            continue
        for workload in workloads:
            if workload.label != "K8sWorkload" or workload.repo_id != service.repo_id:
                continue
            payload = workload.facts[0].payload
            if (payload.get("namespace") or "") != (fact.payload.get("namespace") or ""):
                continue
            labels = payload.get("pod_labels") or {}
            if all(labels.get(key) == value for key, value in selector.items()):
                graph.link("SELECTS", service, workload, fact, f"selector {selector} matches")


def _build_evidence_edges(graph, workloads: list[InfraNode], jobs: list[InfraNode]) -> None:
    """A workload whose image a CI job builds has deployment evidence in that job."""
    for workload in workloads:
        runs = {image_repository(img) for img in workload_images(workload)}
        for job in jobs:
            built = job.facts[0].payload.get("images_built") or []
            if job.repo_id == workload.repo_id and runs & {image_repository(i) for i in built}:
                graph.link(
                    "HAS_DEPLOYMENT_EVIDENCE",
                    workload,
                    job,
                    job.facts[0],
                    "the CI job builds the image this workload runs",
                )


def config_kind(node: InfraNode) -> str:
    """ConfigMap or Secret, for a declared object or a name a workload references."""
    return node.facts[0].payload.get("kind", "") if node.facts else ""


def workload_images(node: InfraNode) -> list[str]:
    """The images a workload or Compose service runs, as its definition states them."""
    payload = node.facts[0].payload if node.facts else {}
    if node.label == "ComposeService":
        return [payload["image"]] if payload.get("image") else []
    return [c["image"] for c in payload.get("containers") or () if c.get("image")]
