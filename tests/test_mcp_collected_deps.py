"""
The collectors fixture's ownership, package and documentation facts, asked through MCP.

The daemon indexes ``tests/fixtures/collectors`` (copied into a fresh git repository) and
serves the ``available`` toolset; the official SDK client calls every tool these
collectors feed over Streamable HTTP. ``/dependencies`` and
``/package-registry/dependency-chains`` have no MCP tool in the contract, so they are asked
over the same daemon's ``/api/v0`` HTTP API.
"""

import json
import urllib.parse
from pathlib import Path

import pytest

from tests.daemon import serving
from tests.mcp_session import committed_copy, session_calls

FIXTURE = Path(__file__).with_name("fixtures") / "collectors"
GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
ENVELOPE = {"accept": "application/eshu.envelope+json"}
TOOLS = (
    "list_codeowners_ownership",
    "list_package_registry_packages",
    "list_package_registry_versions",
    "list_package_registry_dependencies",
    "count_package_registry_packages",
    "get_package_registry_package_inventory",
    "list_documentation_facts",
    "list_documentation_findings",
    "count_documentation_findings",
    "get_documentation_finding_inventory",
)


@pytest.fixture(scope="module")
def repository(workdir):
    return committed_copy(FIXTURE, workdir / "collectors")


@pytest.fixture(scope="module")
def daemon(workdir, repository):
    args = ["--repo", str(repository), "--db", str(workdir / "collected.sqlite")]
    with serving(workdir, [*args, "--toolsets", "available"]) as server:
        yield server


def data_of(result) -> dict:
    assert not result.is_error, result.content[0].text
    envelope = result.structured_content
    assert envelope["truth"]["basis"] == "content_index", envelope["truth"]
    assert "local" in envelope["truth"]["reason"]
    return envelope["data"]


def test_every_collector_fed_tool_answers_the_fixtures_facts(daemon):
    npm, pypi = "npm://registry.npmjs.org/", "pypi://pypi.org/simple/"
    listed, results = session_calls(
        daemon.url + "/mcp",
        [
            ("list_codeowners_ownership", {"repository_id": "collectors"}),
            (
                "list_package_registry_packages",
                {"ecosystem": "cargo", "name": "serde_json", "limit": 10},
            ),
            ("list_package_registry_versions", {"package_id": npm + "react", "limit": 10}),
            ("list_package_registry_dependencies", {"package_id": pypi + "flask"}),
            ("count_package_registry_packages", {}),
            ("get_package_registry_package_inventory", {"group_by": "ecosystem", "limit": 2}),
            (
                "list_documentation_facts",
                {"repo": "collectors", "fact_kind": "entity_mention", "target_id": "compute_fee"},
            ),
            ("list_documentation_findings", {"repo": "collectors", "status": "missing_evidence"}),
            ("count_documentation_findings", {}),
            ("get_documentation_finding_inventory", {"group_by": "finding_type"}),
        ],
    )
    assert set(TOOLS) <= set(listed)
    (owners, packages, versions, edges, count, inventory, facts, findings, tally, groups) = results

    ownership = data_of(owners)
    assert ownership["effective_owner"]["owner_ref"] == "@acme/platform"
    assert ("docs/*", "writer@example.com") in {
        (r["pattern"], r["owner_ref"]) for r in ownership["ownership"]
    }
    [serde_json] = data_of(packages)["packages"]
    assert serde_json["package_id"] == "cargo://crates.io/serde_json"
    assert [v["version"] for v in data_of(versions)["versions"]] == ["18.2.0"]
    assert {e["dependency_normalized"] for e in data_of(edges)["dependencies"]} == {
        "jinja2",
        "werkzeug",
    }
    assert data_of(count)["total_packages"] == 42
    assert data_of(inventory)["buckets"] == [
        {"dimension": "ecosystem", "value": "pypi", "count": 13},
        {"dimension": "ecosystem", "value": "cargo", "count": 7},
    ]
    assert {f["source_uri"] for f in data_of(facts)["facts"]} == {
        "docs/design.rst",
        "docs/guide.md",
    }
    assert {f["claim_text"] for f in data_of(findings)["findings"]} == {
        "payments.OldLedger",
        "removed_helper()",
        "services/api/app/legacy_fees.py",
    }
    assert data_of(tally)["by_status"] == {"missing_evidence": 3, "valid": 8}
    assert {b["value"]: b["count"] for b in data_of(groups)["buckets"]} == {
        "code_reference": 5,
        "path_reference": 6,
    }


def test_a_bad_argument_is_a_tool_error_with_the_sentence(daemon):
    _, [result] = session_calls(
        daemon.url + "/mcp",
        [("list_documentation_facts", {"fact_kind": "section", "repo": "nope"})],
    )
    assert result.is_error
    assert 'repository selector "nope" did not match any indexed repository' in (
        result.content[0].text
    )


def test_with_one_repository_served_the_facts_need_no_scope(daemon):
    _, [result] = session_calls(
        daemon.url + "/mcp", [("list_documentation_facts", {"fact_kind": "section"})]
    )
    assert not result.is_error, result.content[0].text


def api_get(daemon, path: str, **query: str) -> dict:
    status, body = daemon.get(f"/api/v0{path}?{urllib.parse.urlencode(query)}", ENVELOPE)
    assert status == 200, body
    envelope = json.loads(body)
    assert envelope["truth"]["basis"] == "content_index"
    return envelope["data"]


def test_dependencies_and_chains_answer_over_http(daemon):
    reverse = api_get(daemon, "/dependencies", package="loose-envify", direction="reverse")
    assert [r["related_package"] for r in reverse["dependencies"]] == ["react"]
    chains = api_get(
        daemon, "/package-registry/dependency-chains", repository_id="collectors", limit="200"
    )
    paths = {c["package_name"]: c["dependency_path"] for c in chains["chains"]}
    assert paths["markupsafe"][-1].endswith("/markupsafe") and len(paths["markupsafe"]) == 3
