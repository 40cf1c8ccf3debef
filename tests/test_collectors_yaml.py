"""Kubernetes, Helm and Compose collectors on tricky YAML, and which collector reads a path."""

from __future__ import annotations

from eshu_mcp.query.local.index.parse.collectors import collect_file, collector_for
from eshu_mcp.query.local.index.parse.collectors.compose import collect_compose
from eshu_mcp.query.local.index.parse.collectors.kubernetes import (
    collect_chart,
    collect_helm,
    collect_kubernetes,
)
from eshu_mcp.query.local.index.parse.rows import parse_file

MULTI = """\
apiVersion: v1
kind: Service
metadata: {name: api, namespace: prod}
spec:
  selector: {app: api}
---
this: is: not: valid: yaml
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: cleanup
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
            - name: c
              image: alpine:3.20
              envFrom:
                - secretRef: {name: cleanup-creds}
          volumes:
            - name: cfg
              projected:
                sources:
                  - configMap: {name: cleanup-config}
---
apiVersion: v1
kind: List
items:
  - apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: agent}
    spec:
      template:
        spec:
          containers: [{name: a, image: "registry.local:5000/agent@sha256:abc"}]
"""


def test_every_valid_document_of_a_stream_is_read_and_the_bad_one_reported():
    facts = collect_kubernetes("k8s/all.yaml", MULTI)
    objects = {(f.payload["kind"], f.name) for f in facts if f.kind == "k8s_resource"}
    assert objects == {("Service", "api"), ("CronJob", "cleanup"), ("DaemonSet", "agent")}
    errors = [f for f in facts if f.kind == "yaml_error"]
    assert len(errors) == 1 and errors[0].line == 7
    service = next(f for f in facts if f.name == "api")
    assert service.payload["selector"] == {"app": "api"}
    assert service.line == 3


def test_workload_images_and_config_references_are_names_only():
    facts = collect_kubernetes("k8s/all.yaml", MULTI)
    images = {(f.name, f.payload["workload"]) for f in facts if f.kind == "image"}
    assert images == {
        ("alpine:3.20", "cleanup"),
        ("registry.local:5000/agent@sha256:abc", "agent"),
    }
    refs = {(f.payload["kind"], f.name) for f in facts if f.kind == "k8s_config_ref"}
    assert refs == {("Secret", "cleanup-creds"), ("ConfigMap", "cleanup-config")}


def test_yaml_that_is_not_a_manifest_yields_nothing():
    assert collect_kubernetes("config/settings.yaml", "debug: true\nkinds: [a]\n") == []


def test_a_secret_manifest_records_how_many_keys_not_their_values():
    text = "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ndata: {password: aHVudGVyMg==}\n"
    (fact,) = collect_kubernetes("k8s/secret.yaml", text)
    assert fact.payload["keys"] == 1
    assert "aHVudGVyMg" not in repr(fact)


def test_helm_templates_are_not_rendered_but_their_literal_lines_are_read():
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n"
        "spec:\n  template:\n    spec:\n      containers:\n"
        '        - image: "{{ .Values.image }}"\n        - image: nginx:1.27\n'
    )
    facts = collect_helm("charts/web/templates/deploy.yaml", text)
    (template,) = [f for f in facts if f.kind == "helm_template"]
    assert template.payload == {
        "chart_dir": "charts/web",
        "kinds": ["Deployment"],
        "images": ["nginx:1.27"],
        "rendered": False,
    }
    assert [f.name for f in facts if f.kind == "image"] == ["nginx:1.27"]


def test_untemplated_helm_files_are_read_as_manifests():
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: static}\n"
    facts = collect_helm("charts/web/templates/static.yaml", text)
    assert [(f.kind, f.name, f.payload["source"]) for f in facts] == [
        ("k8s_resource", "static", "helm")
    ]


def test_chart_and_values_images():
    chart = collect_chart(
        "charts/web/Chart.yaml",
        "apiVersion: v2\nname: web\nversion: 1.2.3\ndependencies:\n"
        "  - {name: redis, version: 18.0.0, repository: oci://charts}\n",
    )
    assert chart[0].name == "web"
    assert chart[0].payload["dependencies"][0]["name"] == "redis"
    values = collect_helm(
        "charts/web/values.yaml",
        "image:\n  registry: ghcr.io\n  repository: acme/web\n  tag: '2'\n"
        "workers:\n  - image: {repository: acme/worker, digest: 'sha256:ff'}\n",
    )
    assert [(f.name, f.payload["key"]) for f in values] == [
        ("ghcr.io/acme/web:2", "image"),
        ("acme/worker@sha256:ff", "workers[0].image"),
    ]


def test_compose_services_builds_and_dependencies():
    text = """\
services:
  app:
    build: {context: ./app, dockerfile: docker/Dockerfile.prod}
    depends_on: {db: {condition: service_healthy}}
    env_file: [.env, {path: .env.local, required: false}]
  db:
    image: postgres:16
"""
    facts = collect_compose("deploy/docker-compose.yml", text)
    app = next(f for f in facts if f.kind == "compose_service" and f.name == "app")
    assert app.payload["dockerfile"] == "deploy/app/docker/Dockerfile.prod"
    assert app.payload["depends_on"] == ["db"]
    assert app.payload["env_files"] == [".env", ".env.local"]
    db = next(f for f in facts if f.kind == "compose_service" and f.name == "db")
    assert db.line == 6
    assert [(f.name, f.payload["role"]) for f in facts if f.kind == "image"] == [
        ("postgres:16", "runs")
    ]


def test_paths_choose_their_collector():
    cases = {
        "deploy/k8s/app.yaml": "kubernetes",
        "charts/web/Chart.yaml": "helm",
        "charts/web/values-prod.yaml": "helm",
        "charts/web/templates/_helpers.tpl": "helm",
        "docker-compose.override.yml": "compose",
        "compose.yaml": "compose",
        ".github/workflows/ci.yaml": "github_actions",
        ".gitlab-ci.yml": "gitlab_ci",
        "services/api/Dockerfile": "dockerfile",
        "services/api/Dockerfile.prod": "dockerfile",
        "build/api.Dockerfile": "dockerfile",
        "Containerfile": "dockerfile",
        "infra/main.tf": "terraform",
        "infra/terraform.tfstate": "terraform_state",
    }
    for path, expected in cases.items():
        collector = collector_for(path)
        assert collector is not None and collector.artifact_type == expected, path
    for path in ("pnpm-lock.yaml", ".github/dependabot.yml", "docs/Dockerfile.md", "main.py"):
        collector = collector_for(path)
        assert collector is None or collector.artifact_type not in (
            "kubernetes",
            "dockerfile",
        ), path


def test_malformed_yaml_never_fails_the_build():
    rows = collect_file(collector_for("docker-compose.yml"), "docker-compose.yml", "a: [b\n")
    assert rows[0][0] in ("yaml_error", "collect_error")


def test_yaml_that_is_no_manifest_is_not_counted_as_a_kubernetes_file():
    lint = parse_file(".golangci.yml", b"linters:\n  enable: [gofmt]\n")
    assert lint.artifact_type is None
    assert not lint.facts
    manifest = parse_file("deploy/api.yaml", MULTI.encode())
    assert manifest.artifact_type == "kubernetes"
    assert manifest.facts
