"""
Terraform read back from the collectors' facts: module directories, which of them are
called from where (so a module's resources get their ``module.x.`` addresses), the
declarations nothing references (dead IaC), and configuration against a committed state
file (management status).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from typing import Any

from attrs import define, field

from eshu_mcp.query.local.api.collected.facts import CollectedFact, collected_facts
from eshu_mcp.query.local.api.collected.infra_graph import module_source_dir
from eshu_mcp.query.local.api.platform.framework import ApiContext

TF_KINDS = (
    "tf_resource",
    "tf_data",
    "tf_module",
    "tf_variable",
    "tf_output",
    "tf_local",
    "tf_reference",
    "tf_provider",
    "tf_settings",
    "tfstate",
    "tfstate_resource",
)
MAX_MODULE_DEPTH = 8


@define
class TerraformRepo:
    """One repository's Terraform facts, grouped by module directory."""

    repo_id: str
    declared: dict[str, list[CollectedFact]] = field(factory=lambda: defaultdict(list))
    references: dict[str, list[CollectedFact]] = field(factory=lambda: defaultdict(list))
    states: list[CollectedFact] = field(factory=list)
    state_resources: dict[str, list[CollectedFact]] = field(factory=lambda: defaultdict(list))

    def calls(self) -> dict[str, list[tuple[str, CollectedFact]]]:
        """Local module directory -> (calling directory, module block) pairs."""
        found: dict[str, list[tuple[str, CollectedFact]]] = defaultdict(list)
        for directory, facts in self.declared.items():
            for fact in facts:
                if fact.kind == "tf_module":
                    target = module_source_dir(directory, fact.payload.get("source", ""))
                    if target:
                        found[target].append((directory, fact))
        return found

    def addresses(self, root: str) -> dict[str, CollectedFact]:
        """Managed resources reachable from a root directory, by their state address."""
        found: dict[str, CollectedFact] = {}
        calls = self.calls()
        callers: dict[str, list[tuple[str, str]]] = defaultdict(list)  # dir -> (sub, name)
        for target, pairs in calls.items():
            for directory, fact in pairs:
                callers[directory].append((target, fact.payload.get("module_name", "")))
        stack = [(root, "", 0)]
        while stack:
            directory, prefix, depth = stack.pop()
            for fact in self.declared.get(directory, ()):
                if fact.kind == "tf_resource":
                    found[f"{prefix}{fact.name}"] = fact
            if depth < MAX_MODULE_DEPTH:
                for target, name in callers.get(directory, ()):
                    stack.append((target, f"{prefix}module.{name}.", depth + 1))
        return found


def terraform_repos(ctx: ApiContext, scope: str) -> list[TerraformRepo]:
    """The Terraform facts of every repository in scope."""
    facts, _ = collected_facts(ctx, TF_KINDS, scope=scope)
    repos: dict[str, TerraformRepo] = {}
    for fact in facts:
        repo = repos.setdefault(fact.repo_id, TerraformRepo(fact.repo_id))
        if fact.kind == "tfstate":
            repo.states.append(fact)
        elif fact.kind == "tfstate_resource":
            repo.state_resources[fact.relative_path].append(fact)
        elif fact.kind == "tf_reference":
            repo.references[fact.payload.get("module_dir", "")].append(fact)
        else:
            repo.declared[fact.payload.get("module_dir", "")].append(fact)
    return [repos[key] for key in sorted(repos)]


def _finding(repo: TerraformRepo, fact: CollectedFact, reachability: str, why: str, **extra):
    return {
        "id": f"terraform:{repo.repo_id}:{fact.relative_path}:{fact.line}:{fact.name}",
        "family": "terraform",
        "repo_id": repo.repo_id,
        "artifact": fact.name,
        "reachability": reachability,
        "finding": why,
        "confidence": 0.9 if reachability == "unused" else 0.4,
        "evidence": [f"{fact.relative_path}:{fact.line}"],
        "limitations": [],
        "relative_path": fact.relative_path,
        "line_number": fact.line,
        **extra,
    }


def dead_terraform(repo: TerraformRepo) -> list[dict[str, Any]]:
    """
    Declarations referenced nowhere in their module: variables, locals, data sources
    and (in called modules) outputs are ``unused``; resources, which act by existing,
    and module directories no local call reaches are ``ambiguous`` unless clearly dead.
    """
    findings: list[dict[str, Any]] = []
    calls = repo.calls()
    consumed_outputs: dict[str, set[str]] = defaultdict(set)  # module dir -> outputs read
    for directory, refs in repo.references.items():
        for ref in refs:
            if ref.name.startswith("module.") and ref.payload.get("output"):
                for target, pairs in calls.items():
                    if any(d == directory and f.name == ref.name for d, f in pairs):
                        consumed_outputs[target].add(ref.payload["output"])
    for directory in sorted(repo.declared):
        facts = repo.declared[directory]
        used = {ref.name for ref in repo.references.get(directory, ())}
        called = directory in calls
        for fact in facts:
            if fact.kind in ("tf_variable", "tf_local") and fact.name not in used:
                what = "variable" if fact.kind == "tf_variable" else "local value"
                findings.append(
                    _finding(repo, fact, "unused", f"unused_terraform_{what.split()[0]}")
                )
            elif fact.kind == "tf_data" and fact.name not in used:
                findings.append(_finding(repo, fact, "unused", "unused_terraform_data_source"))
            elif fact.kind == "tf_output" and called:
                output = fact.name.removeprefix("output.")
                if output not in consumed_outputs.get(directory, set()):
                    findings.append(_finding(repo, fact, "unused", "unused_terraform_output"))
            elif fact.kind == "tf_resource" and fact.name not in used:
                findings.append(
                    _finding(
                        repo,
                        fact,
                        "ambiguous",
                        "unreferenced_terraform_resource",
                        limitations=[
                            "a resource acts by existing: nothing referencing it does not make"
                            " it dead"
                        ],
                    )
                )
        if not called and _is_module_dir(directory) and facts:
            first = min(facts, key=lambda f: (f.relative_path, f.line))
            finding = _finding(repo, first, "unused", "unused_terraform_module")
            finding.update(id=f"terraform:{repo.repo_id}:{directory}", artifact=directory)
            findings.append(finding)
    return findings


def _is_module_dir(directory: str) -> bool:
    """A directory laid out as a reusable module (``modules/<name>``), not a root."""
    parts = directory.split("/")
    return "modules" in parts[:-1]


def state_roots(repo: TerraformRepo) -> list[str]:
    """The state files of a repository (their directory is the root they describe)."""
    return sorted(repo.state_resources) or sorted(fact.relative_path for fact in repo.states)


def management(repo: TerraformRepo) -> list[dict[str, Any]]:
    """
    Every managed resource in configuration or state, with its local management status:
    ``managed_by_terraform`` (declared and in state), ``terraform_state_only``,
    ``terraform_config_only``. Repositories without a state file yield nothing.
    """
    rows = []
    for state_path in state_roots(repo):
        root = posixpath.dirname(state_path)
        config = repo.addresses(root)
        state = {
            fact.name: fact
            for fact in repo.state_resources.get(state_path, ())
            if fact.payload.get("mode") == "managed"
        }
        for address in sorted(set(config) | set(state)):
            declared, recorded = config.get(address), state.get(address)
            if declared and recorded:
                status = "managed_by_terraform"
            elif recorded:
                status = "terraform_state_only"
            else:
                status = "terraform_config_only"
            source = declared or recorded
            rows.append(
                {
                    "address": address,
                    "resource_type": source.payload.get("type", ""),
                    "provider": source.payload.get("provider", ""),
                    "management_status": status,
                    "state_file": state_path,
                    "config_file": declared.relative_path if declared else "",
                    "config_line": declared.line if declared else 0,
                    "module_path": address.rsplit(".", 2)[0]
                    if address.startswith("module.")
                    else "",
                    "repo_id": repo.repo_id,
                }
            )
    return rows
