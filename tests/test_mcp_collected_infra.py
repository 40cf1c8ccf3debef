"""
The collector fixture repository's infrastructure facts, asked through MCP tools.

The daemon indexes ``tests/fixtures/collectors`` (copied into a fresh git repository)
with the ``available`` toolset; the official SDK client asks over Streamable HTTP. The
routes without an MCP tool (``/iac/resources``, ``/images``) are asked over HTTP.
"""

import json
from pathlib import Path

import pytest

from tests.daemon import serving
from tests.mcp_session import committed_copy, session_calls

FIXTURE = Path(__file__).with_name("fixtures") / "collectors"
GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
INFRA_TOOLS = {
    "find_dead_iac",
    "find_unmanaged_resources",
    "get_iac_management_status",
    "find_infra_resources",
    "analyze_infra_relationships",
    "count_infra_resources",
    "get_infra_resource_inventory",
    "list_kubernetes_correlations",
    "get_ci_cd_run_correlation_inventory",
    "get_service_context",
    "get_service_story",
    "get_workload_context",
    "get_workload_story",
}


@pytest.fixture(scope="module")
def repository(workdir):
    return committed_copy(FIXTURE, workdir / "shop")


@pytest.fixture(scope="module")
def daemon(workdir, repository):
    args = ["--repo", str(repository), "--db", str(workdir / "index.sqlite")]
    with serving(workdir, [*args, "--toolsets", "available"]) as server:
        yield server


def payload(result) -> dict:
    assert not result.is_error, result.content[0].text
    body = result.structured_content
    return body.get("data", body) if isinstance(body, dict) else body


def test_infrastructure_facts_come_back_through_mcp(daemon):
    calls = [
        ("find_dead_iac", {}),
        ("find_unmanaged_resources", {}),
        ("get_iac_management_status", {"resource_id": "aws_s3_bucket.logs"}),
        ("find_infra_resources", {"query": "logs"}),
        ("count_infra_resources", {"category": "k8s"}),
        ("get_infra_resource_inventory", {"group_by": "resource_category", "provider": "aws"}),
        (
            "analyze_infra_relationships",
            {"query_type": "what_runs_image", "target": "postgres:16-alpine"},
        ),
        ("list_kubernetes_correlations", {"namespace": "shop"}),
        ("get_ci_cd_run_correlation_inventory", {"group_by": "environment"}),
        ("get_workload_context", {"workload_id": "api"}),
        ("get_workload_story", {"workload_id": "nightly-report"}),
        ("get_service_context", {"workload_id": "workload:web"}),
        ("get_service_story", {"service_name": "db"}),
    ]
    listed, results = session_calls(daemon.url + "/mcp", calls)
    assert INFRA_TOOLS - set(listed) == set()
    (
        dead,
        unmanaged,
        status,
        search,
        count,
        inventory,
        runs_image,
        correlations,
        ci,
        context,
        story,
        service,
        service_story,
    ) = map(payload, results)
    assert {f["artifact"] for f in dead["findings"]} == {
        "var.forgotten",
        "var.unused_flag",
        "data.aws_caller_identity.unused",
        "output.vpc_id",
        "infra/modules/legacy",
    }
    assert [f["resource_id"] for f in unmanaged["findings"]] == ["aws_db_instance.legacy"]
    assert status["management_status"] == "managed_by_terraform"
    assert [r["name"] for r in search["results"]] == ["aws_s3_bucket.logs"]
    assert count["total_resources"] == 5
    assert {(b["value"], b["count"]) for b in inventory["buckets"]} == {
        ("security", 1),
        ("compute", 1),
        ("storage", 1),
        ("messaging", 2),
        ("networking", 2),
        ("infrastructure", 2),
    }
    assert {e["source_name"] for e in runs_image["incoming"]} == {"db", "test"}
    assert len(correlations["correlations"]) == 3
    assert {(b["value"], b["count"]) for b in ci["buckets"]} == {
        ("unspecified", 3),
        ("production", 1),
        ("staging", 1),
    }
    assert context["kind"] == "Deployment" and len(context["instances"]) == 2
    assert "ghcr.io/acme/api:1.4.0" in story["story"]
    assert service["deployment_evidence"]["dockerfiles"] == ["services/web/Dockerfile"]
    assert service_story["service_identity"]["kinds"] == ["ComposeService"]


def test_routes_without_a_tool_answer_over_http(daemon):
    status, body = daemon.get("/api/v0/iac/resources?kind=data-source")
    assert status == 200
    names = {row["name"] for row in json.loads(body)["resources"]}
    assert names == {"data.aws_ami.ubuntu", "data.aws_caller_identity.unused"}
    status, body = daemon.get("/api/v0/images?tag=16-alpine")
    assert status == 200
    assert [row["id"] for row in json.loads(body)["images"]] == ["postgres:16-alpine"]
