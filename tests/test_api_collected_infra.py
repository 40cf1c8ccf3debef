"""
The infrastructure routes answered from the collector fixture repository
(tests/fixtures/collectors), through the real query Resource in memory.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from tests.test_api_resource import ApiClient

FIXTURE = Path(__file__).with_name("fixtures") / "collectors"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    root = tmp_path_factory.mktemp("collected")
    repo = root / "shop"
    shutil.copytree(FIXTURE, repo)
    db = root / "index.sqlite"
    report = index_repositories(db, [repo], workers=1)
    assert report.ok, report
    return ApiClient(SynchronousTestCase(), str(db))


def data(client, method, path, body=None, params=None, status=200):
    response = client.request(method, path, body, params=params, envelope=True)
    assert response.status == status, response.body
    payload = response.json()
    if status != 200:
        return payload
    assert payload["truth"]["basis"] == "content_index"
    assert payload["truth"]["reason"].startswith("read by the local ")
    return payload["data"]


def test_iac_resources_lists_declared_resources_with_module_callers(client):
    page = data(client, "GET", "/iac/resources", params={"limit": "3"})
    assert page["count"] == 3 and page["truncated"] is True
    names = [row["name"] for row in page["resources"]]
    cursor = page["next_cursor"]
    rest = data(client, "GET", "/iac/resources", params={"limit": "50", **cursor})
    names += [row["name"] for row in rest["resources"]]
    assert names == sorted(names)
    assert set(names) == {
        "aws_iam_role.api",
        "aws_instance.api",
        "aws_s3_bucket.logs",
        "aws_sns_topic.alerts",
        "aws_sqs_queue.orphan",
        "aws_subnet.private",
        "aws_vpc.this",
    }
    vpc = data(client, "GET", "/iac/resources", params={"q": "vpc"})["resources"]
    assert [(r["name"], r["module"], r["resource_category"]) for r in vpc] == [
        ("aws_vpc.this", "network", "networking")
    ]
    modules = data(client, "GET", "/iac/resources", params={"kind": "module"})["resources"]
    assert {(m["name"], m["source"], m["version"]) for m in modules} == {
        ("module.network", "./modules/network", ""),
        ("module.dns", "terraform-aws-modules/route53/aws", "2.10.2"),
    }
    data(client, "GET", "/iac/resources", params={"kind": "bucket"}, status=400)


def test_dead_iac_finds_what_nothing_references(client):
    body = data(client, "POST", "/iac/dead", {})
    unused = {(f["artifact"], f["finding"]) for f in body["findings"]}
    assert unused == {
        ("var.forgotten", "unused_terraform_variable"),
        ("var.unused_flag", "unused_terraform_variable"),
        ("data.aws_caller_identity.unused", "unused_terraform_data_source"),
        ("output.vpc_id", "unused_terraform_output"),
        ("infra/modules/legacy", "unused_terraform_module"),
    }
    assert body["total_findings_count"] == 5
    ambiguous = data(client, "POST", "/iac/dead", {"include_ambiguous": True, "limit": 2})
    assert ambiguous["total_findings_count"] == 8 and ambiguous["next_offset"] == 2
    data(client, "POST", "/iac/dead", {"families": ["pulumi"]}, status=400)


def test_unmanaged_resources_compare_config_with_the_committed_state(client):
    body = data(client, "POST", "/iac/unmanaged-resources", {})
    assert body["analysis_status"] == "state_compared"
    assert [(f["resource_id"], f["management_status"]) for f in body["findings"]] == [
        ("aws_db_instance.legacy", "terraform_state_only")
    ]
    config_only = data(
        client, "POST", "/iac/unmanaged-resources", {"finding_kinds": ["terraform_config_only"]}
    )
    assert {f["resource_id"] for f in config_only["findings"]} == {
        "aws_instance.api",
        "aws_sqs_queue.orphan",
        "module.network.aws_subnet.private",
    }
    assert "hunter2" not in str(body) + str(config_only)
    none = data(client, "POST", "/iac/unmanaged-resources", {"account_id": "123456789012"})
    assert none["findings"] == [] and "nothing local matches" in none["limitations"][0]


def test_management_status_of_one_address(client):
    managed = data(client, "POST", "/iac/management-status", {"resource_id": "aws_vpc.this"})
    assert managed["management_status"] == "managed_by_terraform"
    assert managed["finding"]["resource_id"] == "module.network.aws_vpc.this"
    state_only = data(
        client, "POST", "/iac/management-status", {"resource_id": "aws_db_instance.legacy"}
    )
    assert state_only["management_status"] == "terraform_state_only"
    assert state_only["safety_gate"]["review_required"] is True
    missing = data(client, "POST", "/iac/management-status", {"resource_id": "aws_x.none"})
    assert (missing["management_status"], missing["finding"]) == ("unknown_management", None)
    data(client, "POST", "/iac/management-status", {}, status=400)


def test_infra_search_count_and_inventory(client):
    found = data(client, "POST", "/infra/resources/search", {"query": "api", "category": "k8s"})
    assert {(r["kind"], r["name"]) for r in found["results"]} == {
        ("Deployment", "api"),
        ("Service", "api"),
        ("ConfigMap", "api-config"),
    }
    data(client, "POST", "/infra/resources/search", {}, status=400)
    data(client, "POST", "/infra/resources/search", {"category": "moon"}, status=400)
    counts = data(client, "GET", "/infra/resources/count")
    assert counts["total_resources"] == 20
    assert counts["by_label"] == {
        "ComposeService": 3,
        "HelmChart": 1,
        "K8sResource": 5,
        "TerraformDataSource": 2,
        "TerraformModule": 2,
        "TerraformResource": 7,
    }
    inventory = data(client, "GET", "/infra/resources/inventory", params={"group_by": "provider"})
    assert inventory["buckets"][0] == {"dimension": "provider", "value": "aws", "count": 9}
    data(client, "GET", "/infra/resources/inventory", params={"group_by": "colour"}, status=400)


def test_relationships_follow_images_deployments_and_modules(client):
    runs = data(
        client,
        "POST",
        "/infra/relationships",
        {"entity_id": "ghcr.io/acme/api:1.4.0", "relationship_type": "what_runs_image"},
    )
    assert {(e["source_name"], e["source_file_path"]) for e in runs["incoming"]} == {
        ("api", "deploy/k8s/api.yaml"),
        ("nightly-report", "deploy/k8s/worker.yaml"),
    }
    deploys = data(
        client,
        "POST",
        "/infra/relationships",
        {"entity_id": "api", "relationship_type": "what_deploys"},
    )
    assert {(e["type"], e["target_name"]) for e in deploys["outgoing"]} == {
        ("DEPLOYS_FROM", "deploy/k8s/api.yaml"),
        ("HAS_DEPLOYMENT_EVIDENCE", "image"),
    }
    module = data(
        client,
        "POST",
        "/infra/relationships",
        {"entity_id": "infra/modules/network", "relationship_type": "module_consumers"},
    )
    assert [e["source_name"] for e in module["incoming"]] == ["module.network"]
    depends = data(client, "POST", "/infra/relationships", {"entity_id": "aws_instance.api"})
    assert {e["target_name"] for e in depends["outgoing"] if e["type"] == "DEPENDS_ON"} == {
        "data.aws_ami.ubuntu",
        "module.network",
    }
    data(client, "POST", "/infra/relationships", {"entity_id": "nope"}, status=404)
    data(
        client,
        "POST",
        "/infra/relationships",
        {"entity_id": "api", "relationship_type": "teleports"},
        status=400,
    )


def test_kubernetes_correlations_are_declared_workload_images(client):
    body = data(client, "GET", "/kubernetes/correlations")
    rows = {(r["workload_name"], r["image_ref"], r["outcome"]) for r in body["correlations"]}
    assert rows == {
        ("api", "ghcr.io/acme/api:1.4.0", "derived"),
        ("api", "ghcr.io/acme/api-migrate:1.4.0", "unresolved"),
        ("nightly-report", "ghcr.io/acme/api:1.4.0", "derived"),
    }
    assert all(r["provenance_only"] and r["namespace"] == "shop" for r in body["correlations"])
    first = data(client, "GET", "/kubernetes/correlations", params={"limit": "1"})
    rest = data(
        client, "GET", "/kubernetes/correlations", params={"limit": "5", **first["next_cursor"]}
    )
    assert first["count"] + rest["count"] == 3
    data(client, "GET", "/kubernetes/correlations", params={"limit": "900"}, status=400)


def test_images_collect_every_reference_with_its_sources(client):
    body = data(client, "GET", "/images", params={"limit": "200"})
    images = {row["id"]: row for row in body["images"]}
    assert images["postgres:16-alpine"]["registry"] == "docker.io"
    assert images["postgres:16-alpine"]["repository"] == "library/postgres"
    assert {r["relative_path"] for r in images["postgres:16-alpine"]["references"]} == {
        "docker-compose.yml",
        ".github/workflows/build.yml",
    }
    assert images["node:20-alpine"]["roles"] == ["base"]  # ARG NODE_VERSION substituted
    assert images["ghcr.io/acme/web:2.0.0"]["references"][0]["source"] == "helm_values"
    assert "registry.gitlab.com/acme/api:$CI_COMMIT_SHA" in images
    tagged = data(client, "GET", "/images", params={"tag": "1.36"})
    assert [row["id"] for row in tagged["images"]] == ["busybox:1.36"]


def test_ci_inventory_groups_job_definitions(client):
    body = data(client, "GET", "/ci-cd/run-correlations/inventory")
    assert {(b["value"], b["count"]) for b in body["buckets"]} == {
        ("unresolved", 4),
        ("derived", 1),
    }
    providers = data(
        client, "GET", "/ci-cd/run-correlations/inventory", params={"group_by": "provider"}
    )
    assert {(b["value"], b["count"]) for b in providers["buckets"]} == {
        ("github_actions", 2),
        ("gitlab_ci", 3),
    }
    runs = data(client, "GET", "/ci-cd/run-correlations/inventory", params={"commit_sha": "abc"})
    assert runs["buckets"] == []


def test_workload_context_and_story_from_manifests(client):
    context = data(client, "GET", "/workloads/api/context")
    assert {(i["kind"], i["relative_path"]) for i in context["instances"]} == {
        ("Deployment", "deploy/k8s/api.yaml"),
        ("ComposeService", "docker-compose.yml"),
    }
    assert context["dependencies"] == [{"name": "db", "type": "compose_depends_on"}]
    evidence = context["deployment_evidence"]
    assert evidence["dockerfiles"] == ["services/api/Dockerfile"]
    assert [b["job"] for b in evidence["ci_builds"]] == ["image"]
    assert {(c["kind"], c["name"]) for c in evidence["config_references"]} == {
        ("ConfigMap", "api-config"),
        ("Secret", "api-db"),
        ("Secret", "api-tls"),
    }
    assert context["entrypoints"] == [{"kind": "service_port", "service": "api", "port": "80"}]
    story = data(client, "GET", "/services/web/story")
    assert story["upstream_dependencies"] == [{"name": "api", "type": "compose_depends_on"}]
    assert "ghcr.io/acme/web:dev" in story["story"]
    workload_story = data(client, "GET", "/workloads/nightly-report/story")
    assert "ghcr.io/acme/api:1.4.0" in workload_story["story"]
    service = data(client, "GET", "/services/api/context")
    assert service["name"] == "api"
    missing = data(client, "GET", "/workloads/ghost/context", status=404)
    assert "workload not found" in str(missing)


def test_without_a_state_file_management_status_says_it_cannot_compare(tmp_path):
    repo = tmp_path / "stateless"
    (repo / "infra").mkdir(parents=True)
    (repo / "infra" / "main.tf").write_text('resource "aws_sqs_queue" "jobs" {}\n')
    db = tmp_path / "index.sqlite"
    assert index_repositories(db, [repo], workers=1).ok
    client = ApiClient(SynchronousTestCase(), str(db))
    unmanaged = data(client, "POST", "/iac/unmanaged-resources", {})
    assert unmanaged["analysis_status"] == "no_state_file"
    assert unmanaged["findings"] == []
    assert unmanaged["limitations"][0].startswith("no Terraform state file is indexed")
    status = data(client, "POST", "/iac/management-status", {"resource_id": "aws_sqs_queue.jobs"})
    assert status["management_status"] == "terraform_config_only"
    assert status["analysis_status"] == "no_state_file"
    assert [e["source"] for e in status["finding"]["evidence"]] == ["terraform_config"]


def test_terraform_state_is_never_served_as_text_nor_searchable(client):
    path = "infra/terraform.tfstate"
    for route, body in (
        ("/content/files/read", {"repo_id": "shop", "relative_path": path}),
        ("/content/files/lines", {"repo_id": "shop", "relative_path": path, "start_line": 1}),
    ):
        refused = data(client, "POST", route, body, status=403)
        assert "Terraform state" in str(refused) and "hunter2" not in str(refused)
    refused = data(client, "GET", "/repositories/shop/content", params={"path": path}, status=403)
    assert "not served" in str(refused)
    found = client.request(
        "POST", "/content/files/search", {"query": "hunter2-state-secret"}, envelope=True
    ).json()
    assert found["data"]["results"] == []
    # the state's facts still answer (the earlier tests compare it with the configuration)
    status = data(client, "POST", "/iac/unmanaged-resources", {})
    assert status["analysis_status"] == "state_compared"


def test_the_collector_listing_names_the_local_collectors_that_found_files(client):
    response = client.request("GET", "/collectors")
    assert response.status == 200, response.body
    (row,) = response.json()["collectors"]
    sources = row["evidence_sources"]
    assert sources[0] == "git"
    assert {"terraform", "terraform_state", "dockerfile", "codeowners"} <= set(sources)
