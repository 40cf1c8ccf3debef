"""
The ownership, package and documentation routes over the indexed collectors fixture
(``tests/fixtures/collectors``), whose facts are known: each route's answer, its truth
block, its paging and its 400s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import eshu_mcp.query.local.api  # noqa: F401  (registers every route family)
from eshu_mcp.query.local.api.platform import framework
from eshu_mcp.query.local.api.platform.framework import ApiContext, ApiError
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader

FIXTURE = Path(__file__).with_name("fixtures") / "collectors"
NPM = "npm://registry.npmjs.org/"
PYPI = "pypi://pypi.org/simple/"


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    root = tmp_path_factory.mktemp("collected") / "collectors"
    shutil.copytree(FIXTURE, root)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    for argv in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "init"],
    ):
        subprocess.run(argv, cwd=root, env=env, check=True, timeout=60)
    db = str(root.parent / "index.sqlite")
    assert index_repositories(db, [str(root)], workers=1).ok
    connection = open_reader(db)
    yield connection
    connection.close()


def get(conn, pattern: str, **query: str):
    route = framework.ROUTES.find("GET", pattern)
    assert route is not None and not route.fallback, pattern
    return route.handler(ApiContext(conn, "GET", {}, query, None, True, None))


def refused(conn, pattern: str, **query: str) -> str:
    with pytest.raises(ApiError) as raised:
        get(conn, pattern, **query)
    assert raised.value.status == 400
    return str(raised.value)


# ------------------------------------------------------------------ CODEOWNERS


def owned_by_star() -> int:
    """Fixture files no later rule claims (other collectors' fixture files land here too)."""
    files = [str(p.relative_to(FIXTURE)) for p in FIXTURE.rglob("*") if p.is_file()]
    claimed = [
        f
        for f in files
        if f.startswith(("docs/", "services/web/", "services/legacy/"))
        or (f.startswith("services/api/") and f.endswith(".py"))
    ]
    return len(files) - len(claimed)


def files_under(prefix: str) -> int:
    """Fixture files below a directory (the infrastructure fixtures share some)."""
    return sum(1 for p in (FIXTURE / prefix).rglob("*") if p.is_file())


def test_ownership_lists_the_github_file_rules_with_their_reach(conn):
    answer = get(conn, "/codeowners/ownership", repository_id="collectors")
    data = answer.data
    assert data["codeowners_file"] == ".github/CODEOWNERS"
    rows = [
        (r["order_index"], r["pattern"], r["owner_ref"], r["owned_files"])
        for r in data["ownership"]
    ]
    assert rows == [
        (0, "*", "@acme/platform", owned_by_star()),
        (1, "*.md", "@acme/docs-team", 0),
        (2, "/services/web/", "@acme/frontend", files_under("services/web/")),
        (2, "/services/web/", "@alice", files_under("services/web/")),
        (3, "services/api/**/*.py", "@acme/payments", 2),
        (4, "docs/*", "@acme/docs-team", 3),
        (4, "docs/*", "writer@example.com", 3),
    ]
    assert data["effective_owner"]["owner_ref"] == "@acme/platform"
    assert "@acme/shadowed" not in str(data)
    truth = answer.truth
    assert (truth["level"], truth["basis"]) == ("derived", "content_index")
    assert "CODEOWNERS collector from 2 indexed file(s)" in truth["reason"]
    assert "GitHub uses .github/CODEOWNERS" in truth["reason"]
    assert "1 line(s) GitHub would reject (line 8: negated patterns" in truth["reason"]


def test_ownership_of_one_path_follows_last_match_wins(conn):
    def owner(path):
        return get(conn, "/codeowners/ownership", repository_id="collectors", path=path).data[
            "effective_owner"
        ]

    assert owner("services/web/src/app.js")["owners"] == ["@acme/frontend", "@alice"]
    assert owner("docs/guide.md")["pattern"] == "docs/*"
    assert owner("services/api/app/fees.py")["owner_ref"] == "@acme/payments"
    assert owner("services/legacy/composer.json") == {}  # a rule with no owners


def test_ownership_pages_with_eshus_keyset_cursor(conn):
    first = get(conn, "/codeowners/ownership", repository_id="collectors", limit="3").data
    assert first["truncated"] and first["count"] == 3
    cursor = first["next_cursor"]
    assert cursor == {
        "after_order_index": 2,
        "after_pattern": "/services/web/",
        "after_ref": "@acme/frontend",
    }
    rest = get(
        conn,
        "/codeowners/ownership",
        repository_id="collectors",
        **{k: str(v) for k, v in cursor.items()},
    ).data
    assert [r["owner_ref"] for r in rest["ownership"]] == [
        "@alice",
        "@acme/payments",
        "@acme/docs-team",
        "writer@example.com",
    ]


def test_ownership_refuses_bad_arguments(conn):
    assert refused(conn, "/codeowners/ownership") == "repository_id is required"
    assert "between 1 and 200" in refused(
        conn, "/codeowners/ownership", repository_id="collectors", limit="0"
    )
    assert "provided together" in refused(
        conn, "/codeowners/ownership", repository_id="collectors", after_pattern="*"
    )


# ------------------------------------------------------------------ packages


def test_package_count_and_inventory_match_the_fixture(conn):
    count = get(conn, "/package-registry/packages/count").data
    assert count["total_packages"] == 42
    assert count["by_ecosystem"] == {
        "cargo": 7,
        "composer": 3,
        "gomod": 5,
        "maven": 4,
        "npm": 7,
        "pypi": 13,
        "rubygems": 3,
    }
    assert get(conn, "/package-registry/packages/count", ecosystem="go").data["total_packages"] == 5
    # a JVM language's name stands for its ecosystem, as Java's does (the registry's packages)
    for language in ("java", "kotlin"):
        counted = get(conn, "/package-registry/packages/count", ecosystem=language).data
        assert counted["total_packages"] == 4
    inventory = get(conn, "/package-registry/packages/inventory", group_by="visibility").data
    assert inventory["buckets"] == [
        {"dimension": "visibility", "value": "unknown", "count": 41},
        {"dimension": "visibility", "value": "private", "count": 1},
    ]
    paged = get(conn, "/package-registry/packages/inventory", limit="2", offset="2").data
    assert (paged["count"], paged["truncated"], paged["next_offset"]) == (2, True, 4)


def test_packages_by_name_show_declared_range_and_locked_version(conn):
    data = get(conn, "/package-registry/packages", ecosystem="pypi", name="Flask", limit="5").data
    [flask] = data["packages"]
    assert flask["package_id"] == PYPI + "flask"
    assert flask["direct"] is True
    assert [
        (e["kind"], e.get("dependency_range") or e.get("version")) for e in flask["evidence"]
    ] == [
        ("declares", ">=3.0,<4"),
        ("locks", "3.0.3"),
    ]
    assert data["collector_readiness"]["readiness_state"] == "ready_with_results"


def test_a_manifest_that_does_not_parse_is_named_in_the_truth_reason(conn):
    truth = get(conn, "/package-registry/packages/count").truth
    assert "from 15 indexed file(s)" in truth["reason"]
    assert "could not parse services/broken/package.json (JSONDecodeError" in truth["reason"]


def test_versions_of_a_package_and_its_dependency_edges(conn):
    [react] = get(conn, "/package-registry/versions", package_id=NPM + "react", limit="5").data[
        "versions"
    ]
    assert (react["version_id"], react["purl"], react["direct"]) == (
        NPM + "react@18.2.0",
        "pkg:npm/react@18.2.0",
        True,
    )
    edges = get(conn, "/package-registry/dependencies", package_id=PYPI + "flask", limit="1").data
    assert edges["truncated"] is True
    assert edges["dependencies"][0]["dependency_package_id"] == PYPI + "jinja2"
    rest = get(
        conn,
        "/package-registry/dependencies",
        package_id=PYPI + "flask",
        limit="5",
        **edges["next_cursor"],
    ).data
    assert [e["dependency_package_id"] for e in rest["dependencies"]] == [PYPI + "werkzeug"]


def test_a_project_declares_its_dependencies_as_edges(conn):
    edges = get(
        conn, "/package-registry/dependencies", package_id=NPM + "@acme/web", limit="10"
    ).data["dependencies"]
    assert {(e["dependency_normalized"], e["dependency_type"]) for e in edges} == {
        ("react", "runtime"),
        ("@acme/ui-kit", "runtime"),
        ("jest", "dev"),
        ("left-pad", "optional"),
    }
    assert {e["source_version_id"] for e in edges} == {NPM + "@acme/web@1.4.0"}


def test_dependencies_forward_and_reverse(conn):
    reverse = get(conn, "/dependencies", package="markupsafe", direction="reverse").data
    assert [r["related_package"] for r in reverse["dependencies"]] == ["jinja2", "werkzeug"]
    forward = get(conn, "/dependencies", package="sinatra", ecosystem="ruby").data
    assert [(r["related_package"], r["dependency_range"]) for r in forward["dependencies"]] == [
        ("rack", ">= 3.0.0, < 4"),
        ("tilt", "~> 2.0"),
    ]
    assert refused(conn, "/dependencies", direction="reverse") == (
        "package is required for direction=reverse"
    )
    assert "forward" in refused(conn, "/dependencies", direction="sideways")


def test_dependency_chains_explain_how_transitive_packages_arrive(conn):
    data = get(conn, "/package-registry/dependency-chains", repository_id="collectors", limit="200")
    chains = {c["package_id"]: c for c in data.data["chains"]}
    assert data.data["count"] == 36
    assert chains[NPM + "js-tokens"]["direct"] is False
    assert chains[NPM + "js-tokens"]["dependency_path"] == [
        NPM + "react",
        NPM + "loose-envify",
        NPM + "js-tokens",
    ]
    kit = chains[NPM + "@acme/ui-kit"]
    assert [(p["repository_name"], p["self_reference"]) for p in kit["publishers"]] == [
        ("collectors", True)
    ]
    assert kit["ambiguous"] is False
    assert chains["gomod://proxy.golang.org/golang.org/x/sync"]["direct"] is False
    assert chains["gomod://proxy.golang.org/github.com/spf13/pflag"]["direct"] is False
    assert chains["composer://repo.packagist.org/psr/log"]["direct"] is False


def test_package_routes_refuse_bad_arguments(conn):
    assert refused(conn, "/package-registry/packages", ecosystem="npm") == "limit is required"
    assert refused(conn, "/package-registry/packages", limit="5") == (
        "package_id or ecosystem is required"
    )
    assert refused(conn, "/package-registry/packages", name="react", limit="5") == (
        "ecosystem is required when name is provided"
    )
    assert refused(conn, "/package-registry/versions", limit="5") == "package_id is required"
    assert "visibility must be one of" in refused(
        conn, "/package-registry/packages/count", visibility="secret"
    )
    assert "group_by must be one of" in refused(
        conn, "/package-registry/packages/inventory", group_by="colour"
    )
    assert refused(conn, "/package-registry/dependency-chains", limit="5") == (
        "repository_id is required"
    )


# ------------------------------------------------------------------ documentation


def test_findings_flag_mentions_of_code_the_index_does_not_have(conn):
    answer = get(conn, "/documentation/findings", repo="collectors")
    findings = answer.data["findings"]
    missing = {
        (f["document_id"], f["claim_text"]) for f in findings if f["status"] == "missing_evidence"
    }
    assert missing == {
        ("docs/design.rst", "payments.OldLedger"),
        ("docs/guide.md", "removed_helper()"),
        ("docs/guide.md", "services/api/app/legacy_fees.py"),
    }
    valid = {f["claim_text"] for f in findings if f["status"] == "valid"}
    assert {"compute_fee", "compute_fee()", "FeeSchedule.rate_for", "guide.md"} <= valid
    assert "../services/api/pyproject.toml" in valid  # relative to the document
    [bare] = [f for f in findings if f["claim_text"] == "fees.py"]  # a bare name, by base name
    assert bare["candidate_refs"][0]["id"] == "services/api/app/fees.py"
    assert "/api/reference" not in {f["claim_text"] for f in findings}  # a site route
    assert "not_a_mention()" not in str(findings)  # inside a fenced block
    assert answer.truth["capability"] == "documentation_findings.list"


def test_finding_count_and_inventory(conn):
    count = get(conn, "/documentation/findings/count").data
    assert count["total_findings"] == 11
    assert count["by_status"] == {"missing_evidence": 3, "valid": 8}
    only = get(conn, "/documentation/findings/count", status="missing_evidence").data
    assert (only["total_findings"], only["scope"]) == (3, {"status": "missing_evidence"})
    by_source = get(conn, "/documentation/findings/count", source_id="collectors").data
    assert by_source["total_findings"] == 11  # the source is the repository, by any selector
    inventory = get(conn, "/documentation/findings/inventory", group_by="finding_type").data
    assert inventory["buckets"] == [
        {"dimension": "finding_type", "value": "path_reference", "count": 6},
        {"dimension": "finding_type", "value": "code_reference", "count": 5},
    ]
    assert "group_by must be one of" in refused(
        conn, "/documentation/findings/inventory", group_by="document_id"
    )


def test_facts_resolve_mentions_to_indexed_entities(conn):
    data = get(
        conn,
        "/documentation/facts",
        repo="collectors",
        fact_kind="entity_mention",
        target_id="compute_fee",
    ).data
    assert [(f["source_uri"], f["payload"]["mention_text"]) for f in data["facts"]] == [
        ("docs/design.rst", "compute_fee"),
        ("docs/guide.md", "compute_fee()"),
    ]
    [ref] = data["facts"][0]["payload"]["candidate_refs"]
    assert (ref["display_name"], ref["source_uri"]) == ("compute_fee", "services/api/app/fees.py:4")
    sections = get(
        conn, "/documentation/facts", document_id="docs/design.rst", fact_kind="section"
    ).data["facts"]
    assert [(f["payload"]["heading_text"], f["payload"]["level"]) for f in sections] == [
        ("Design", 1),
        ("Fees", 2),
        ("Retired", 3),
    ]


def test_documentation_routes_refuse_bad_arguments(conn):
    assert "require scope_id, repo" in refused(conn, "/documentation/facts")
    assert refused(conn, "/documentation/facts", repo="collectors", fact_kind="poem") == (
        "unsupported documentation fact_kind"
    )
    assert "between 1 and 200" in refused(conn, "/documentation/findings", limit="500")
    assert "cursor must be" in refused(conn, "/documentation/findings", cursor="abc")
