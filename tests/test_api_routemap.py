"""
Every operation of the packaged route map is answered as it is classified, and every
success shape carries the keys of the packaged OpenAPI skeleton.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.framework import ROUTES
from eshu_mcp.query.local.api.platform.routemap import (
    ANSWERED_MODES,
    load_openapi,
    load_route_map,
    route_modes,
)
from tests.collected_support import MANIFEST, add_collected_file
from tests.test_api_resource import ApiClient, rich_index

SPECS = [spec for spec in load_route_map() if spec.relative_path is not None]

# Keys the OpenAPI documents but Eshu itself omits when empty (omitempty) or that are
# optional enrichment (local-backend.md §1.5).
OPTIONAL_KEYS = {
    "semantic_summary",
    "semantic_profile",
    "relationships_truncation_reason",
    "since_observed_at",
    "unavailable_reason",
    "recommended_next_calls",
}


def sample_requests(ids: dict[str, Any]) -> dict[tuple[str, str], tuple[str, Any, Any]]:
    """A request that should succeed for each operation this module's owner serves."""
    repo, charge = ids["repo"], ids["charge"]
    body_repo = {"repo_id": "payments"}
    return {
        ("GET", "/repositories"): ("/repositories", None, None),
        ("GET", "/repositories/by-language"): ("", {"language": "python"}, None),
        ("GET", "/repositories/language-inventory"): ("", None, None),
        ("GET", "/repositories/{repo_id}/stats"): ("", None, None),
        ("GET", "/repositories/{repo_id}/coverage"): ("", None, None),
        ("GET", "/repositories/{repo_id}/tree"): ("", {"path": "app"}, None),
        ("GET", "/repositories/{repo_id}/content"): ("", {"path": "app/api.py"}, None),
        ("GET", "/repositories/{repo_id}/branches"): ("", None, None),
        ("GET", "/repositories/{repo_id}/freshness"): ("", None, None),
        ("GET", "/repositories/{repo_id}/context"): ("", None, None),
        ("GET", "/repositories/{repo_id}/story"): ("", None, None),
        ("POST", "/content/files/read"): ("", None, {**body_repo, "relative_path": "app/api.py"}),
        ("POST", "/content/files/lines"): (
            "",
            None,
            {**body_repo, "relative_path": "app/api.py", "start_line": 1, "end_line": 2},
        ),
        ("POST", "/content/entities/read"): ("", None, {"entity_id": charge}),
        ("POST", "/content/files/search"): ("", None, {"query": "charge"}),
        ("POST", "/content/entities/search"): ("", None, {"query": "charge"}),
        ("POST", "/entities/resolve"): ("", None, {"name": "charge", "type": "function"}),
        ("GET", "/entities/{entity_id}/context"): (f"/entities/{charge}/context", None, None),
        ("POST", "/evidence/citations"): ("", None, {"handles": ["entity:" + charge]}),
        ("GET", "/graph/entities"): ("", None, None),
        ("GET", "/freshness/generations"): ("", {"repository": "payments"}, None),
        ("GET", "/freshness/changed-since"): (
            "",
            {"repository": "payments", "since_generation_id": ids["since"]},
            None,
        ),
        ("POST", "/search/semantic"): (
            "",
            None,
            {**body_repo, "query": "charge", "mode": "keyword", "limit": 5, "timeout_ms": 100},
        ),
        ("POST", "/impact/change-surface"): ("", None, {"target": "charge"}),
        ("POST", "/impact/pre-change"): (
            "",
            None,
            {**body_repo, "changed_paths": ["app/service.py"]},
        ),
        ("GET", "/status/ingesters/{ingester}"): ("/status/ingesters/repository", None, None),
        ("GET", "/ingesters/{ingester}"): ("/ingesters/repository", None, None),
        ("POST", "/query-playbooks/resolve"): (
            "",
            None,
            {"playbook_id": "code.locate_symbol", "inputs": {"symbol": "charge"}},
        ),
        ("POST", "/investigation-workflows/resolve"): (
            "",
            None,
            {"workflow_id": "guided_repository_onboarding", "inputs": {"repo_id": repo}},
        ),
        # collect-deps: ownership, package and documentation collectors
        ("GET", "/codeowners/ownership"): ("", {"repository_id": "payments"}, None),
        ("GET", "/documentation/facts"): ("", {"repo": "payments"}, None),
        ("GET", "/package-registry/dependencies"): (
            "",
            {"package_id": "npm://x/y", "limit": "5"},
            None,
        ),
        ("GET", "/package-registry/dependency-chains"): (
            "",
            {"repository_id": "payments", "limit": "5"},
            None,
        ),
        ("GET", "/package-registry/packages"): ("", {"ecosystem": "npm", "limit": "5"}, None),
        ("GET", "/package-registry/versions"): (
            "",
            {"package_id": "npm://x/y", "limit": "5"},
            None,
        ),
        # collector-fed routes (local infrastructure collectors; see tests/collected_support)
        ("POST", "/iac/management-status"): ("", None, {"resource_id": "aws_s3_bucket.logs"}),
        ("POST", "/infra/resources/search"): ("", None, {"query": "payments"}),
        ("POST", "/infra/relationships"): ("", None, {"entity_id": "payments-api"}),
        **{
            ("GET", template): (_workload_path(template), None, None)
            for template in (
                "/services/{service_name}/context",
                "/services/{service_name}/story",
                "/workloads/{workload_id}/context",
                "/workloads/{workload_id}/story",
            )
        },
    }


def _workload_path(template: str) -> str:
    """A service/workload route for the workload tests/collected_support.py declares."""
    return template.split("{")[0] + "payments-api/" + template.rsplit("/", 1)[-1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    case = SynchronousTestCase()
    ids = rich_index(str(tmp_path_factory.mktemp("routemap")))
    add_collected_file(ids["index"], ids["repo"], "deploy/payments.yaml", MANIFEST)
    ids["index"].writer.commit()
    return case, ids, ApiClient(case, ids["index"].path), sample_requests(ids)


def _concrete(path: str, ids: dict[str, Any]) -> str:
    path = path.replace("{repo_id}", ids["repo"].replace(":", "%3A"))
    return re.sub(r"\{[^}]+\}", "anything", path)


def _type_ok(value: Any, schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if value is None or kind is None:
        return True
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    expected = {"string": str, "boolean": bool, "array": list, "object": dict}[kind]
    return isinstance(value, expected)


def schema_problems(value: Any, schema: dict[str, Any], where: str = "") -> list[str]:
    """Type mismatches of ``value`` against ``schema`` (documented keys only)."""
    if not _type_ok(value, schema):
        return [f"{where or '<root>'}: {type(value).__name__} is not {schema.get('type')}"]
    if isinstance(value, str) and "enum" in schema and value not in schema["enum"]:
        return [f"{where}: {value!r} is not one of {schema['enum']}"]
    problems: list[str] = []
    if isinstance(value, dict):
        for key, sub in (schema.get("properties") or {}).items():
            if key in value:
                problems += schema_problems(value[key], sub, f"{where}.{key}")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for position, item in enumerate(value[:5]):
            problems += schema_problems(item, schema["items"], f"{where}[{position}]")
    return problems


def response_schema(method: str, path: str) -> dict[str, Any] | None:
    operation = load_openapi().get(f"{method} {path}")
    if operation is None:
        return None
    content = operation["responses"].get("200", {}).get("content", {})
    return content.get("application/json", {}).get("schema")


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.method} {s.path}")
def test_route_is_answered_as_classified(served, spec):
    _case, ids, client, samples = served
    if spec.mode in ANSWERED_MODES:
        route = ROUTES.find(spec.method, spec.relative_path)
        assert route is not None and not route.fallback, "no handler registered"
        if spec.relative_path.startswith("/code/"):
            return  # the code routes' own test modules drive them
        path, params, body = samples.get((spec.method, spec.relative_path), ("", None, None))
        response = client.request(
            spec.method,
            path or _concrete(spec.relative_path, ids),
            body if body is not None else ({} if spec.method == "POST" else None),
            params=params,
            envelope=True,
        )
        assert response.status == 200, response.body
        payload = response.json()
        if route.plain:
            assert "truth" not in payload or "data" not in payload
            data = payload
        else:
            assert list(payload) == ["data", "truth", "error"]
            assert payload["truth"]["profile"] == "local_lightweight"
            data = payload["data"]
        schema = response_schema(spec.method, spec.path)
        if schema and schema.get("properties"):
            missing = set(schema["properties"]) - set(data) - OPTIONAL_KEYS
            assert not missing, f"missing documented keys {sorted(missing)}"
            assert schema_problems(data, schema) == []
    elif spec.mode == "serve-empty-unavailable":
        response = client.request(
            spec.method,
            _concrete(spec.relative_path, ids),
            {"limit": 7, "offset": 3} if spec.method != "GET" else None,
            params={"limit": "7", "offset": "3"} if spec.method == "GET" else None,
            envelope=True,
        )
        assert response.status == 200, response.body
        payload = response.json()
        data = payload if spec.plain else payload["data"]
        template = spec.empty_data_template
        if isinstance(template, dict):
            assert set(data) == set(template)
            if "limit" in template:
                assert data["limit"] == 7
            if "offset" in template:
                assert data["offset"] == 3
            for key, value in template.items():
                if isinstance(value, list):
                    assert data[key] == []
        else:
            assert data == template
        if not spec.plain:
            truth = payload["truth"]
            assert truth["level"] == "fallback"
            assert "basis" not in truth
            assert truth["freshness"]["state"] == "unavailable"
            assert "not configured" in truth["reason"]
            assert "not evidence of absence" in truth["reason"]
    else:
        assert spec.mode == "501-unsupported"
        path = _concrete(spec.relative_path, ids)
        body = {} if spec.method != "GET" else None
        enveloped = client.request(spec.method, path, body, envelope=True)
        assert enveloped.status == 501
        error = enveloped.json()["error"]
        assert error["code"] == "unsupported_capability"
        assert error["profiles"]["current"] == "local_lightweight"
        plain = client.request(spec.method, path, body)
        assert plain.json() == {"error": "Not Implemented", "detail": error["message"]}


def test_route_map_has_every_operation_once():
    assert len(load_route_map()) == 255
    assert len(route_modes()) == 255


def test_health_is_outside_the_api_mount():
    health = [spec for spec in load_route_map() if spec.path == "/health"]
    assert [spec.relative_path for spec in health] == [None]
