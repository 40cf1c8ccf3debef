"""
The infrastructure a repository declares, read back from the local collectors' facts:
one row shape for Terraform resources, data sources and module calls, Kubernetes
objects, Helm charts and Compose services (what the ``/infra/resources/*`` and
``/iac/resources`` routes list), with Eshu's provider, service and category vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eshu_mcp.query.local.api.code.scope import scope_repository
from eshu_mcp.query.local.api.collected.facts import CollectedFact, collected_facts, collected_files
from eshu_mcp.query.local.api.platform.framework import ApiContext, ApiError

INFRA_CATEGORIES = ("k8s", "terraform", "argocd", "crossplane", "helm", "cloud")
RESOURCE_CATEGORIES = (
    "compute",
    "storage",
    "data",
    "networking",
    "messaging",
    "security",
    "monitoring",
    "cicd",
    "governance",
    "infrastructure",
)
INFRA_ARTIFACT_TYPES = ("terraform", "terraform_state", "kubernetes", "helm", "compose")
INFRA_FACT_KINDS = (
    "tf_resource",
    "tf_data",
    "tf_module",
    "k8s_resource",
    "helm_chart",
    "compose_service",
)
INFRA_COLLECTOR = "infrastructure collectors (Terraform, Kubernetes, Helm, Compose)"

_ENVIRONMENT_WORDS = {
    "prod": "prod",
    "production": "prod",
    "staging": "staging",
    "stage": "staging",
    "dev": "dev",
    "development": "dev",
    "qa": "qa",
    "test": "test",
    "uat": "uat",
    "sandbox": "sandbox",
    "preprod": "preprod",
}

# Terraform resource type (provider prefix removed) -> the cloud service it belongs to,
# where the type's first word is not already the service's name.
_SERVICE_OF_TYPE = {
    "instance": "ec2",
    "launch_template": "ec2",
    "autoscaling_group": "autoscaling",
    "security_group": "vpc",
    "subnet": "vpc",
    "route_table": "vpc",
    "internet_gateway": "vpc",
    "nat_gateway": "vpc",
    "eip": "vpc",
    "db_instance": "rds",
    "db_subnet_group": "rds",
    "lb": "elbv2",
    "alb": "elbv2",
    "lb_target_group": "elbv2",
    "lb_listener": "elbv2",
}
_CATEGORY_OF_SERVICE = {
    "ec2": "compute",
    "lambda": "compute",
    "ecs": "compute",
    "eks": "compute",
    "autoscaling": "compute",
    "compute": "compute",
    "container": "compute",
    "cloud_run": "compute",
    "s3": "storage",
    "storage": "storage",
    "efs": "storage",
    "ebs": "storage",
    "rds": "data",
    "dynamodb": "data",
    "elasticache": "data",
    "sql": "data",
    "redshift": "data",
    "vpc": "networking",
    "route53": "networking",
    "elbv2": "networking",
    "cloudfront": "networking",
    "apigateway": "networking",
    "dns": "networking",
    "network": "networking",
    "sqs": "messaging",
    "sns": "messaging",
    "kinesis": "messaging",
    "pubsub": "messaging",
    "msk": "messaging",
    "iam": "security",
    "kms": "security",
    "secretsmanager": "security",
    "acm": "security",
    "wafv2": "security",
    "cloudwatch": "monitoring",
    "monitoring": "monitoring",
    "logging": "monitoring",
    "codebuild": "cicd",
    "codepipeline": "cicd",
    "ecr": "cicd",
    "organizations": "governance",
    "config": "governance",
}
_CATEGORY_OF_KIND = {
    "Deployment": "compute",
    "StatefulSet": "compute",
    "DaemonSet": "compute",
    "Job": "compute",
    "CronJob": "compute",
    "Pod": "compute",
    "ReplicaSet": "compute",
    "Service": "networking",
    "Ingress": "networking",
    "NetworkPolicy": "networking",
    "Secret": "security",
    "ServiceAccount": "security",
    "Role": "security",
    "RoleBinding": "security",
    "ClusterRole": "security",
    "ClusterRoleBinding": "security",
    "PersistentVolumeClaim": "storage",
    "PersistentVolume": "storage",
    "HorizontalPodAutoscaler": "compute",
}


def infra_scope(ctx: ApiContext, selector: str) -> str:
    """A repository scope from a selector (unknown selectors are 400 with a sentence)."""
    return scope_repository(ctx, selector, not_found_status=400)


def terraform_service(resource_type: str) -> str:
    """A resource type's cloud service: ``aws_s3_bucket`` -> ``s3``, ``aws_instance`` -> ``ec2``."""
    _provider, _, rest = resource_type.partition("_")
    if not rest:
        return ""
    for prefix, service in _SERVICE_OF_TYPE.items():
        if rest == prefix or rest.startswith(prefix + "_"):
            return service
    return rest.split("_", 1)[0]


def resource_category(service: str, kind: str = "") -> str:
    """Eshu's resource category for a cloud service or Kubernetes kind."""
    if kind in _CATEGORY_OF_KIND:
        return _CATEGORY_OF_KIND[kind]
    return _CATEGORY_OF_SERVICE.get(service, "infrastructure")


def path_environment(relative_path: str) -> str:
    """An environment a path names by convention (``envs/prod/``, ``overlays/staging/``)."""
    for part in relative_path.lower().split("/")[:-1]:
        for word in part.replace("_", "-").split("-"):
            if word in _ENVIRONMENT_WORDS:
                return _ENVIRONMENT_WORDS[word]
    return ""


def infra_row(fact: CollectedFact) -> dict[str, Any]:
    """One declared infrastructure object in Eshu's search-result shape (plus its source)."""
    payload = fact.payload
    row: dict[str, Any] = {
        "id": f"{fact.kind}:{fact.repo_id}:{fact.relative_path}:{fact.line}:{fact.name}",
        "name": fact.name,
        "labels": [],
        "kind": "",
        "provider": "",
        "environment": path_environment(fact.relative_path),
        "source": fact.artifact_type,
        "config_path": fact.relative_path,
        "resource_type": "",
        "resource_service": "",
        "resource_category": "infrastructure",
        "resource_id": "",
        "arn": "",
        "account_id": "",
        "region": "",
        "service_kind": "",
        "category": "",
        "repo_id": fact.repo_id,
        "line_number": fact.line,
    }
    if fact.kind in ("tf_resource", "tf_data"):
        service = terraform_service(payload.get("type", ""))
        row.update(
            labels=["TerraformResource" if fact.kind == "tf_resource" else "TerraformDataSource"],
            kind="resource" if fact.kind == "tf_resource" else "data-source",
            provider=payload.get("provider", ""),
            resource_type=payload.get("type", ""),
            resource_service=service,
            resource_category=resource_category(service),
            resource_id=fact.name,
            category="terraform",
        )
    elif fact.kind == "tf_module":
        row.update(
            labels=["TerraformModule"],
            kind="module",
            provider="terraform",
            resource_type=payload.get("source", ""),
            resource_service="module",
            resource_id=fact.name,
            category="terraform",
        )
    elif fact.kind == "k8s_resource":
        kind = payload.get("kind", "")
        row.update(
            labels=["K8sResource"],
            kind=kind,
            provider="kubernetes",
            resource_type=kind,
            resource_service=payload.get("api_version", "").split("/")[0]
            if "/" in payload.get("api_version", "")
            else "core",
            resource_category=resource_category("", kind),
            resource_id=_k8s_id(payload.get("namespace", ""), kind, fact.name),
            service_kind="workload" if payload.get("workload") else "",
            category="helm" if payload.get("source") == "helm" else "k8s",
        )
    elif fact.kind == "helm_chart":
        row.update(
            labels=["HelmChart"],
            kind="HelmChart",
            provider="helm",
            resource_type="chart",
            resource_service="helm",
            resource_id=payload.get("chart_dir", ""),
            category="helm",
        )
    elif fact.kind == "compose_service":
        row.update(
            labels=["ComposeService"],
            kind="ComposeService",
            provider="docker-compose",
            resource_type=payload.get("image", "") or "build",
            resource_service="compose",
            resource_category="compute",
            resource_id=fact.name,
            service_kind="workload",
        )
    return row


def _k8s_id(namespace: str, kind: str, name: str) -> str:
    return f"{namespace or 'default'}/{kind}/{name}"


def infra_resources(ctx: ApiContext, scope: str) -> list[dict[str, Any]]:
    """Every declared infrastructure object in scope, in repository/path/line order."""
    facts, _ = collected_facts(ctx, INFRA_FACT_KINDS, scope=scope)
    return [infra_row(fact) for fact in facts]


def infra_files(ctx: ApiContext, scope: str, types: Sequence[str] = INFRA_ARTIFACT_TYPES) -> int:
    """How many files in scope the infrastructure collectors read."""
    return collected_files(ctx, types, scope=scope)


def matches_filters(row: dict[str, Any], filters: dict[str, str]) -> bool:
    """Whether a row passes the structured filters of the infra routes (case-insensitive)."""
    for key, wanted in filters.items():
        if not wanted:
            continue
        wanted = wanted.lower()
        if key == "kind":
            if wanted not in (row["kind"].lower(), row["resource_type"].lower()):
                return False
        elif key == "category":
            if row["category"] != wanted:
                return False
        elif str(row.get(key, "")).lower() != wanted:
            return False
    return True


def choice(source: dict[str, Any], name: str, choices: Sequence[str], default: str = "") -> str:
    """A string parameter restricted to ``choices`` (else 400 naming them)."""
    value = source.get(name)
    if value is None or value == "":
        return default
    if not isinstance(value, str) or value not in choices:
        raise ApiError(400, f"{name} must be one of: {', '.join(choices)}")
    return value


def query_filters(source: dict[str, Any]) -> dict[str, str]:
    """The structured filters shared by search, count and inventory."""
    choice(source, "category", INFRA_CATEGORIES)
    choice(source, "resource_category", RESOURCE_CATEGORIES)
    filters = {}
    for name in (
        "category",
        "kind",
        "provider",
        "environment",
        "resource_service",
        "resource_category",
        "resource_type",
    ):
        value = source.get(name)
        if value is not None and not isinstance(value, str):
            raise ApiError(400, f"{name} must be a string")
        filters[name] = (value or "").strip()
    return filters
