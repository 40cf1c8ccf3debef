"""
Kubernetes manifests and Helm charts: workloads, services and their selectors, images,
ConfigMap/Secret references (names only, never data), namespaces; a chart's identity and
dependencies, and the images its values files name.

Helm templates (``{{ }}``) are not YAML until rendered, and rendering needs values and
Helm itself: a templated file yields a ``helm_template`` fact with the kinds and literal
images its lines state, marked ``rendered: false``; an untemplated one is read as a manifest.
"""

from __future__ import annotations

import re

from eshu_mcp.query.local.index.parse.collectors import Collector, Fact
from eshu_mcp.query.local.index.parse.collectors.yaml_documents import (
    documents,
    mapping,
    sequence,
    text_of,
)

WORKLOAD_KINDS = frozenset(
    {"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod", "ReplicaSet"}
)


def pod_spec(kind: str, spec: dict) -> dict:
    """The pod spec inside a workload's spec."""
    if kind == "Pod":
        return spec
    if kind == "CronJob":
        spec = mapping(mapping(spec.get("jobTemplate")).get("spec"))
    return mapping(mapping(spec.get("template")).get("spec"))


def _pod_labels(kind: str, spec: dict) -> dict:
    if kind == "CronJob":
        spec = mapping(mapping(spec.get("jobTemplate")).get("spec"))
    return mapping(mapping(mapping(spec.get("template")).get("metadata")).get("labels"))


def config_references(pod: dict) -> list[dict]:
    """The ConfigMaps and Secrets a pod spec names (env, envFrom, volumes, pull secrets)."""
    found: list[dict] = []

    def add(kind: str, name: object, via: str) -> None:
        name = text_of(name)
        if name and {"kind": kind, "name": name, "via": via} not in found:
            found.append({"kind": kind, "name": name, "via": via})

    containers = [
        *sequence(pod.get("initContainers")),
        *sequence(pod.get("containers")),
    ]
    for container in map(mapping, containers):
        for source in map(mapping, sequence(container.get("envFrom"))):
            add("ConfigMap", mapping(source.get("configMapRef")).get("name"), "envFrom")
            add("Secret", mapping(source.get("secretRef")).get("name"), "envFrom")
        for variable in map(mapping, sequence(container.get("env"))):
            value_from = mapping(variable.get("valueFrom"))
            add("ConfigMap", mapping(value_from.get("configMapKeyRef")).get("name"), "env")
            add("Secret", mapping(value_from.get("secretKeyRef")).get("name"), "env")
    for volume in map(mapping, sequence(pod.get("volumes"))):
        add("ConfigMap", mapping(volume.get("configMap")).get("name"), "volume")
        add("Secret", mapping(volume.get("secret")).get("secretName"), "volume")
        for source in map(mapping, sequence(mapping(volume.get("projected")).get("sources"))):
            add("ConfigMap", mapping(source.get("configMap")).get("name"), "volume")
            add("Secret", mapping(source.get("secret")).get("name"), "volume")
    for secret in map(mapping, sequence(pod.get("imagePullSecrets"))):
        add("Secret", secret.get("name"), "imagePullSecrets")
    return found


def _containers(pod: dict) -> list[dict]:
    rows = []
    for role in ("initContainers", "containers"):
        for container in map(mapping, sequence(pod.get(role))):
            ports = [
                text_of(mapping(port).get("containerPort"))
                for port in sequence(container.get("ports"))
            ]
            rows.append(
                {
                    "name": text_of(container.get("name")),
                    "image": text_of(container.get("image")),
                    "init": role == "initContainers",
                    "ports": [port for port in ports if port],
                }
            )
    return rows


def manifest_facts(relative_path: str, text: str, source: str = "kubernetes") -> list[Fact]:
    """Facts of a Kubernetes manifest stream (every document with apiVersion and kind)."""
    facts: list[Fact] = []
    for position, document in enumerate(documents(text)):
        if document.error:
            facts.append(
                Fact("yaml_error", relative_path, document.line, {"error": document.error})
            )
            continue
        value = document.value
        if isinstance(value, dict) and value.get("kind") == "List":
            items = [item for item in sequence(value.get("items")) if isinstance(item, dict)]
        else:
            items = [value] if isinstance(value, dict) else []
        for item in items:
            _object_facts(facts, item, document, position, source)
    return facts


def _object_facts(facts: list[Fact], item: dict, document, position: int, source: str) -> None:
    kind, api_version = text_of(item.get("kind")), text_of(item.get("apiVersion"))
    metadata = mapping(item.get("metadata"))
    name = text_of(metadata.get("name"))
    if not kind or not api_version or not name:
        return
    line = document.line_of(f"name: {name}") if name else document.line
    spec = mapping(item.get("spec"))
    payload: dict = {
        "kind": kind,
        "api_version": api_version,
        "namespace": text_of(metadata.get("namespace")),
        "labels": {str(k): text_of(v) for k, v in mapping(metadata.get("labels")).items()},
        "document": position,
        "source": source,
    }
    if kind in WORKLOAD_KINDS:
        pod = pod_spec(kind, spec)
        containers = _containers(pod)
        payload.update(
            workload=True,
            containers=containers,
            config_refs=config_references(pod),
            service_account=text_of(pod.get("serviceAccountName")),
            pod_labels={str(k): text_of(v) for k, v in _pod_labels(kind, spec).items()},
            replicas=spec.get("replicas") if isinstance(spec.get("replicas"), int) else None,
        )
        for container in containers:
            if container["image"]:
                facts.append(
                    Fact(
                        "image",
                        container["image"],
                        document.line_of(container["image"]),
                        {
                            "source": source,
                            "role": "runs",
                            "workload": name,
                            "workload_kind": kind,
                            "namespace": payload["namespace"],
                            "container": container["name"],
                        },
                    )
                )
        for ref in payload["config_refs"]:
            facts.append(
                Fact(
                    "k8s_config_ref",
                    ref["name"],
                    line,
                    {
                        **ref,
                        "workload": name,
                        "workload_kind": kind,
                        "namespace": payload["namespace"],
                    },
                )
            )
    elif kind == "Service":
        payload.update(
            selector={str(k): text_of(v) for k, v in mapping(spec.get("selector")).items()},
            service_type=text_of(spec.get("type")) or "ClusterIP",
            ports=[text_of(mapping(port).get("port")) for port in sequence(spec.get("ports"))],
        )
    elif kind == "Ingress":
        hosts, backends = [], []
        for rule in map(mapping, sequence(spec.get("rules"))):
            if text_of(rule.get("host")):
                hosts.append(text_of(rule.get("host")))
            for path in map(mapping, sequence(mapping(rule.get("http")).get("paths"))):
                service = mapping(mapping(path.get("backend")).get("service"))
                if text_of(service.get("name")):
                    backends.append(text_of(service.get("name")))
        payload.update(hosts=hosts, backends=backends)
    elif kind in ("ConfigMap", "Secret"):
        payload["keys"] = len(mapping(item.get("data"))) + len(mapping(item.get("stringData")))
    facts.append(Fact("k8s_resource", name, line, payload))


def looks_like_manifest(text: str) -> bool:
    """The cheap test before parsing a generic YAML file: both manifest keys appear."""
    return "apiVersion" in text and "kind" in text


def collect_kubernetes(relative_path: str, text: str) -> list[Fact]:
    """A generic YAML file: a Kubernetes manifest when it looks like one, else nothing."""
    if not looks_like_manifest(text):
        return []
    return manifest_facts(relative_path, text)


def is_generic_yaml(relative_path: str) -> bool:
    """YAML that no more specific collector claims (lockfiles, CI, dotfile configs)."""
    lowered = relative_path.lower()
    name = lowered.rsplit("/", 1)[-1]
    return not (
        name in ("pnpm-lock.yaml", ".gitlab-ci.yml", ".pre-commit-config.yaml")
        or lowered.startswith(".github/")
        or "/.github/" in lowered
    )


# ---------------------------------------------------------------- Helm

_KIND_LINE = re.compile(r"^kind:\s*([A-Za-z][A-Za-z0-9]*)\s*$", re.MULTILINE)
_IMAGE_LINE = re.compile(r"^\s*-?\s*image:\s*[\"']?([^\s\"'{}]+)[\"']?\s*$", re.MULTILINE)


def collect_chart(relative_path: str, text: str) -> list[Fact]:
    """Chart.yaml: the chart's name, versions and dependencies."""
    chart = mapping(documents(text)[0].value if documents(text) else None)
    name = text_of(chart.get("name"))
    if not name:
        return [Fact("yaml_error", relative_path, 0, {"error": "Chart.yaml without a name"})]
    directory = relative_path.rsplit("/", 1)[0] if "/" in relative_path else ""
    dependencies = [
        {
            "name": text_of(mapping(dep).get("name")),
            "version": text_of(mapping(dep).get("version")),
            "repository": text_of(mapping(dep).get("repository")),
        }
        for dep in sequence(chart.get("dependencies"))
    ]
    payload = {
        "chart_dir": directory,
        "version": text_of(chart.get("version")),
        "app_version": text_of(chart.get("appVersion")),
        "api_version": text_of(chart.get("apiVersion")),
        "chart_type": text_of(chart.get("type")) or "application",
        "dependencies": dependencies,
    }
    return [Fact("helm_chart", name, 1, payload)]


def _chart_dir(relative_path: str) -> str:
    """The chart directory a values file or template belongs to (by Helm's layout)."""
    parts = relative_path.split("/")
    if "templates" in parts:
        return "/".join(parts[: parts.index("templates")])
    return "/".join(parts[:-1])


def values_images(value: object, path: str = ""):
    """(dotted key path, image reference) for every image a values tree names."""
    if isinstance(value, dict):
        image = value.get("image")
        if isinstance(image, str) and image and "{{" not in image:
            yield f"{path}.image".lstrip("."), image
        elif isinstance(image, dict) and text_of(image.get("repository")):
            registry = text_of(image.get("registry"))
            reference = text_of(image.get("repository"))
            if registry:
                reference = f"{registry}/{reference}"
            tag, digest = text_of(image.get("tag")), text_of(image.get("digest"))
            reference += f"@{digest}" if digest else (f":{tag}" if tag else "")
            yield f"{path}.image".lstrip("."), reference
        for key, child in value.items():
            if key != "image":
                yield from values_images(child, f"{path}.{key}")
    elif isinstance(value, list):
        for position, child in enumerate(value):
            yield from values_images(child, f"{path}[{position}]")


def collect_helm(relative_path: str, text: str) -> list[Fact]:
    """A chart's values file or template."""
    chart_dir = _chart_dir(relative_path)
    name = relative_path.rsplit("/", 1)[-1].lower()
    if "/templates/" in f"/{relative_path}" and not name.startswith("values"):
        if "{{" not in text:
            return manifest_facts(relative_path, text, source="helm")
        kinds = _KIND_LINE.findall(text)
        images = [image for image in _IMAGE_LINE.findall(text) if "{{" not in image]
        payload = {"chart_dir": chart_dir, "kinds": kinds, "images": images, "rendered": False}
        facts = [Fact("helm_template", relative_path, 1, payload)]
        for image in images:
            payload = {"source": "helm", "role": "runs", "chart_dir": chart_dir}
            facts.append(Fact("image", image, _line_of(text, image), payload))
        return facts
    facts = []
    for document in documents(text):
        if document.error:
            facts.append(
                Fact("yaml_error", relative_path, document.line, {"error": document.error})
            )
            continue
        for key, image in values_images(document.value):
            payload = {"source": "helm_values", "role": "runs", "chart_dir": chart_dir, "key": key}
            facts.append(Fact("image", image, document.line_of(image.split(":")[0]), payload))
    return facts


def _line_of(text: str, needle: str) -> int:
    position = text.find(needle)
    return text.count("\n", 0, position) + 1 if position >= 0 else 0


def is_helm_file(relative_path: str) -> bool:
    """values*.yaml, and YAML/tpl files under a chart's templates/ directory."""
    lowered = "/" + relative_path.lower()
    name = lowered.rsplit("/", 1)[-1]
    if "/templates/" in lowered:
        return name.endswith((".yaml", ".yml", ".tpl")) and "/.github/" not in lowered
    return name.startswith("values") and name.endswith((".yaml", ".yml"))


KUBERNETES = Collector(
    "kubernetes",
    collect_kubernetes,
    suffixes=(".yaml", ".yml"),
    accepts=is_generic_yaml,
    claims_by_facts=True,
)
HELM_CHART = Collector("helm", collect_chart, basenames=frozenset({"chart.yaml"}))
HELM = Collector("helm", collect_helm, suffixes=(".yaml", ".yml", ".tpl"), accepts=is_helm_file)
