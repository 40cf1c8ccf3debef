"""
Truth blocks for the embedded backend: level rules, the capability matrix, freshness.

Eshu labels every answer with how far it can be trusted. The embedded backend always
reports the ``local_lightweight`` profile; its level comes from the evidence basis,
capped by the capability's maximum for that profile, and its freshness from the index's
generations compared with what the work tree holds now.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from twisted.logger import Logger

from eshu_mcp.query.local.api.platform.keeper_view import KeeperView
from eshu_mcp.query.local.api.platform.tree_changes import TREE_CHANGES
from eshu_mcp.query.local.api.platform.truth_heads import current_head, git_dir  # noqa: F401
from eshu_mcp.query.local.api.platform.work_trees import WORK_TREES
from eshu_mcp.query.local.api.platform.writer_state import writer_alive

log = Logger()

PROFILE = "local_lightweight"

_LEVEL_RANK = {"fallback": 0, "derived": 1, "exact": 2}

_BASIS_LEVEL = {
    "authoritative_graph": "exact",
    "semantic_facts": "exact",
    "runtime_state": "exact",
    "content_index": "derived",
    "hybrid": "derived",
}

# Maximum truth level per capability in local_lightweight. Capabilities Eshu marks
# unsupported there are still answered by the embedded backend from its own SQLite call
# graph, so they are capped at "derived". None = no cap (the label is informational).
CAPABILITY_MAX_LEVEL: dict[str, str | None] = {
    "code_search.exact_symbol": "exact",
    "code_search.symbol_lookup": "exact",
    "code_search.fuzzy_symbol": "derived",
    "code_search.content_search": "derived",
    "code_search.topic_investigation": "derived",
    "code_search.variable_lookup": "derived",
    "code_inventory.structural": "derived",
    "code_quality.complexity": "derived",
    "code_quality.dead_code": "derived",
    "code_quality.refactoring": "derived",
    "security.hardcoded_secrets": "derived",
    "evidence_citation.packet": "derived",
    "symbol_graph.decorators": "derived",
    "symbol_graph.argument_names": "derived",
    "symbol_graph.class_methods": "derived",
    "symbol_graph.imports": "derived",
    "symbol_graph.inheritance": "derived",
    "symbol_graph.import_dependencies": "derived",
    "symbol_graph.language_entities": "derived",
    "call_graph.direct_callers": "derived",
    "call_graph.direct_callees": "derived",
    "call_graph.relationship_story": "derived",
    "call_graph.transitive_callers": "derived",
    "call_graph.transitive_callees": "derived",
    "call_graph.call_chain_path": "derived",
    "call_graph.metrics": "derived",
    "call_graph.route_to_caller": "derived",
    "graph_query.read_only_cypher": None,
    "visualization.graph_query": None,
    "platform_impact.catalog": "derived",
    "platform_impact.context_overview": "derived",
    "platform_impact.change_surface": "derived",
    "platform_impact.pre_change": "derived",
    # local infrastructure collectors (Terraform, Kubernetes/Helm/Compose, Dockerfile, CI)
    "platform_impact.deployment_chain": "derived",
    "platform_impact.container_image_list": "derived",
    "iac_inventory.resources.list": "derived",
    "iac_quality.dead_iac": "derived",
    "iac_management.get_status": "derived",
    "iac_management.find_unmanaged_resources": "derived",
    "infra_inventory.resources.count": "derived",
    "infra_inventory.resources.inventory": "derived",
    "kubernetes.correlations.list": "derived",
    "cicd.run_correlations.inventory": "derived",
    "ci_cd.run_correlations.list": "derived",
    "ci_cd.run_correlations.count": "derived",
    "supply_chain.container_image_identities.list": "derived",
    "supply_chain.container_image_identities.count": "derived",
    "semantic_search.curated_retrieval": "derived",
    "graph_entity_inventory": "derived",
    "query.playbooks": "exact",
    "query.investigation_workflows": "exact",
    "freshness.generation_lifecycle": "exact",
    "freshness.changed_since": "exact",
    "repository_freshness.status": "exact",
    "freshness.service_changed_since": None,
    "capability_catalog.list": "exact",
    "surface_inventory.list": "exact",
    # local collectors: facts parsed from the repository's own files
    "codeowners.ownership.list": "derived",
    "package_registry.packages.list": "derived",
    "package_registry.versions.list": "derived",
    "package_registry.dependencies.list": "derived",
    "package_registry.dependency_chains.list": "derived",
    "package_registry.packages.aggregate": "derived",
    "dependencies.list": "derived",
    "documentation_facts.list": "derived",
    "documentation_findings.list": "derived",
    "documentation_findings.aggregate": "derived",
}


def is_known_capability(capability: str) -> bool:
    """Whether the embedded matrix has a row for ``capability`` (tests check every use)."""
    if capability in CAPABILITY_MAX_LEVEL:
        return True
    family = capability.split(".", 1)[0]
    return family in _OPEN_FAMILIES


# Capability families answered only by the empty "collector not configured" page; any id
# inside them is accepted and capped at "fallback" by their basis anyway.
_OPEN_FAMILIES = frozenset(
    {
        "ask",
        "aws",
        "ci_cd",
        "cloud",
        "code_flow",
        "codeowners",
        "component_extensions",
        "documentation",
        "iac",
        "images",
        "incidents",
        "kubernetes",
        "package_registry",
        "replatforming",
        "secrets_iam",
        "service_catalog",
        "supply_chain",
    }
)


def truth_level(capability: str, basis: str) -> str:
    """Eshu's ``BuildTruthEnvelope`` rule: basis level, capped by the capability maximum."""
    level = _BASIS_LEVEL.get(basis, "fallback")
    if capability and not is_known_capability(capability):
        log.warn("truth label for unknown capability {capability}", capability=capability)
        return level
    cap = CAPABILITY_MAX_LEVEL.get(capability)
    if cap is not None and _LEVEL_RANK[cap] < _LEVEL_RANK[level]:
        return cap
    return level


def build_truth(
    capability: str,
    *,
    basis: str,
    freshness: dict[str, Any],
    level: str | None = None,
    reason: str = "",
) -> dict[str, Any]:
    """A truth block in Go field order; empty optional fields are omitted."""
    truth: dict[str, Any] = {"level": level or truth_level(capability, basis)}
    if capability:
        truth["capability"] = capability
    truth["profile"] = PROFILE
    if basis:
        truth["basis"] = basis
    truth["freshness"] = freshness
    if reason:
        truth["reason"] = reason
    return truth


def unavailable_freshness(detail: str) -> dict[str, Any]:
    """Freshness for evidence the embedded backend has no collector for."""
    return {"state": "unavailable", "detail": detail}


# ------------------------------------------------------------------ work tree checks


MISSING_CAUSE = "repository_missing"


def missing_detail(repo: sqlite3.Row) -> str:
    """What to say about a repository whose work tree directory is gone."""
    return (
        f"repository directory {repo['local_path']} is missing; the answer is from its last"
        f" index (run `eshu-mcp index --forget {repo['repo_id']}` or `eshu-mcp index --prune`)"
    )


# A repository's generations as freshness reads them, in one statement (each statement
# is a round trip through the GIL on a busy daemon): a pending one, an active one, and
# the newest active one's observation time. ``?1`` is the repository id.
_GENERATION_STATE = (
    "EXISTS(SELECT 1 FROM generations WHERE repo_id = {id} AND status = 'pending')"
    " AS generation_pending,"
    " EXISTS(SELECT 1 FROM generations WHERE repo_id = {id} AND status = 'active')"
    " AS generation_active,"
    " (SELECT observed_at FROM generations WHERE repo_id = {id} AND status = 'active'"
    " ORDER BY seq DESC LIMIT 1) AS generation_observed_at"
)
_ONE_REPOSITORY = "SELECT " + _GENERATION_STATE.format(id="?1")
_EVERY_REPOSITORY = (
    "SELECT r.*, "
    + _GENERATION_STATE.format(id="r.repo_id")
    + " FROM repositories AS r ORDER BY r.repo_id"
)


def repository_freshness(
    conn: sqlite3.Connection, repo: sqlite3.Row, keeper: KeeperView | None = None
) -> dict[str, Any]:
    """
    Freshness of one repository: building, unavailable, stale (HEAD moved, or the work
    tree holds changes the index does not) or fresh. ``keeper`` is what the daemon's
    index keeper knows (watched trees' changes come from it, others are compared).
    """
    state = conn.execute(_ONE_REPOSITORY, (repo["repo_id"],)).fetchone()
    return _freshness(conn, repo, state, keeper)


def _freshness(
    conn: sqlite3.Connection,
    repo: sqlite3.Row,
    state: sqlite3.Row,
    keeper: KeeperView | None = None,
) -> dict[str, Any]:
    found = _generation_freshness(conn, repo, state, keeper or KeeperView())
    if keeper is not None and keeper.waited is not None:
        found["waited_seconds"] = round(keeper.waited, 3)
        if found["state"] == "fresh":
            found["detail"] = (
                f"waited {keeper.waited:.2f}s for the work tree's latest changes to be indexed"
            )
    return found


def _generation_freshness(
    conn: sqlite3.Connection, repo: sqlite3.Row, state: sqlite3.Row, keeper: KeeperView
) -> dict[str, Any]:
    pending = bool(state["generation_pending"])
    if pending and not writer_alive(conn):
        pending = False  # left by a run that died: the active generation is still current
    if not state["generation_active"]:
        if pending:
            return {"state": "building", "detail": "the first generation is being indexed"}
        return {"state": "unavailable", "detail": "repository has no active generation"}
    freshness: dict[str, Any] = {"state": "fresh", "observed_at": state["generation_observed_at"]}
    present, head = WORK_TREES.state(repo["local_path"])
    if not present:
        freshness["state"] = "stale"
        freshness["cause"] = MISSING_CAUSE
        freshness["detail"] = missing_detail(repo)
        return freshness
    if pending:
        freshness["state"] = "building"
        freshness["detail"] = "a newer generation is being indexed"
        return freshness
    indexed = repo["head_commit"]
    if head and indexed and head != indexed:
        freshness["state"] = "stale"
        freshness["detail"] = f"work tree HEAD {head[:12]} differs from indexed {indexed[:12]}"
        return freshness
    return _work_tree_changes(conn, repo, freshness, keeper)


def _work_tree_changes(
    conn: sqlite3.Connection, repo: sqlite3.Row, freshness: dict[str, Any], keeper: KeeperView
) -> dict[str, Any]:
    """Stale when the work tree holds changes the active generation does not."""
    path = repo["local_path"]
    outstanding = keeper.outstanding(path, repo["active_generation_id"])
    if keeper.watches(path):
        if outstanding is None:
            return freshness
        count, rebuilding = outstanding
        sample: tuple[str, ...] = ()
    else:
        difference = TREE_CHANGES.difference(conn, repo)
        if difference is None or not difference.changed:
            return freshness
        count, sample = difference.changed, difference.sample
        rebuilding = outstanding is not None and outstanding[1]
    freshness["state"] = "stale"
    paths = (
        "changed paths"
        if count is None
        else ("1 changed path" if count == 1 else f"{count} changed paths")
    )
    example = f" (such as {', '.join(sample)})" if sample else ""
    if rebuilding:
        todo = "a rebuild is under way"
    elif keeper.watches(path):
        todo = "a rebuild is queued"
    else:
        todo = (
            "no watcher keeps it current: serve it with --repo (watching) or run"
            f" `eshu-mcp index {path}`"
        )
    freshness["detail"] = f"the work tree has {paths}{example} not in the index; {todo}"
    if count is not None:
        freshness["changed_paths"] = count
    freshness["rebuilding"] = bool(rebuilding)
    return freshness


def index_freshness(
    conn: sqlite3.Connection,
    repo_ids: tuple[str, ...] | None = None,
    keeper: KeeperView | None = None,
) -> dict[str, Any]:
    """
    Freshness over the whole index (or over ``repo_ids``, a daemon's own repositories):
    the worst repository state, newest observation.
    """
    rows = conn.execute(_EVERY_REPOSITORY).fetchall()
    if repo_ids is not None:
        rows = [row for row in rows if row["repo_id"] in repo_ids]
    if not rows:
        return {"state": "unavailable", "detail": "no repository has been indexed"}
    order = {"fresh": 0, "stale": 1, "building": 2, "unavailable": 3}
    worst: dict[str, Any] | None = None
    observed = ""
    for repo in rows:
        item = _freshness(conn, repo, repo, keeper)
        observed = max(observed, item.get("observed_at", ""))
        if worst is None or order[item["state"]] > order[worst["state"]]:
            worst = item
    assert worst is not None
    result: dict[str, Any] = {"state": worst["state"]}
    if observed:
        result["observed_at"] = observed
    for key in ("detail", "cause", "changed_paths", "rebuilding", "waited_seconds"):
        if key in worst:
            result[key] = worst[key]
    return result
