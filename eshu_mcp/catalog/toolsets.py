"""
Toolsets: named slices of the catalog, and the catalog a server actually serves.

162 tool definitions cost tens of thousands of tokens in every client turn, so an
operator picks the slices a deployment needs (``--toolsets code,relationships``),
drops single tools (``--exclude-tools``), asks for ``available`` (the tools whose
routes the configured query backend answers for real or from a static catalog), or
keeps ``core``: the small set that answers every code question, the embedded
backend's default. Every tool belongs to exactly one toolset (its record's
``toolset`` field in ``data/tools.json``); a tool outside the selection is neither
listed nor callable.
"""

import difflib
import json
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from importlib import resources
from typing import Any

from attrs import Factory, field, frozen

from eshu_mcp.catalog.tools import ToolDefinition, read_only_tools

#: Every toolset, in documentation order, with what it holds.
TOOLSETS: dict[str, str] = {
    "code": "symbol and text search over code entities, entity resolution, inventories, "
    "dead code, complexity and quality, hard-coded secrets",
    "relationships": "callers, callees, importers, hierarchies, call chains, relationship "
    "stories and evidence, contract impact, blast radius, typed graph edges",
    "repository": "indexed repositories, per-language counts, stats, coverage, context, "
    "story, file trees, CODEOWNERS ownership",
    "content": "file and entity source reads, line ranges, full-text and semantic search, "
    "evidence citations",
    "code_flow": "taint paths, reaching definitions, control-flow and program-dependence summaries",
    "graph": "read-only Cypher, graph visualisation, ecosystem overview and graph summaries",
    "change_impact": "pre-change impact, developer change plans and change surfaces",
    "freshness": "index generations, what changed since, repository and service freshness, "
    "staleness causes",
    "status": "collectors, ingesters, index and hosted readiness, operator views, dead "
    "letters, component extensions, optional-feature status",
    "catalog": "capability and surface catalogs, fact schema versions, collector readiness, "
    "query playbooks and investigation workflows",
    "services": "service and workload context, stories, investigations, intelligence "
    "reports, service-catalog correlations",
    "deployment": "deployment chains, deployment config influence, environment comparison, "
    "correlation admission decisions",
    "infrastructure": "infrastructure resources and relationships, resource-to-code traces, "
    "unused IaC, Terraform config/state drift",
    "cloud": "cloud inventory, runtime drift, IaC management status, import and "
    "replatforming plans",
    "kubernetes": "Kubernetes workload correlations",
    "package_registry": "registry packages, versions, dependencies, correlations and bundles",
    "supply_chain": "vulnerability impact, advisories, alert reconciliation, SBOM and "
    "attestation attachments, container image identities",
    "iam": "identity trust chains, privilege posture, secret access paths, posture gaps",
    "cicd": "CI/CD run correlations",
    "observability": "monitoring coverage correlations",
    "incidents": "incident context and work-item evidence",
    "documentation": "documentation findings, facts, evidence packets and semantic observations",
    "ask": "free-form questions answered by Eshu's optional LLM planner",
}

ALL = "all"
AVAILABLE = "available"
CORE = "core"

#: The ``core`` selection: one tool per code question (search, definitions, callers,
#: callees, chains, hierarchy, change impact, imports, structure, dead code, complexity,
#: secrets, repositories, files, freshness, index status). Tools another core tool already
#: answers are left out (``find_code`` is ``find_symbol`` fuzzy, ``find_function_call_chain``
#: is ``analyze_code_relationships`` call_chain, ``get_repository_stats`` is
#: ``get_repo_summary``...); ``available`` and the toolsets still offer them.
CORE_TOOLS: frozenset[str] = frozenset(
    {
        "find_symbol",
        "investigate_code_topic",
        "search_file_content",
        "search_entity_content",
        "analyze_code_relationships",
        "analyze_pre_change_impact",
        "investigate_import_dependencies",
        "inspect_code_inventory",
        "find_dead_code",
        "find_most_complex_functions",
        "calculate_cyclomatic_complexity",
        "investigate_hardcoded_secrets",
        "list_indexed_repositories",
        "get_repo_summary",
        "get_repo_story",
        "list_repository_files",
        "get_file_content",
        "get_file_lines",
        "get_entity_content",
        "get_changed_since",
        "get_repository_freshness",
        "get_index_status",
    }
)

#: The named selections besides toolsets, with what each serves (for ``--help``).
SELECTIONS: dict[str, str] = {
    CORE: "the tools that answer every code question (default on the embedded backend)",
    AVAILABLE: "every tool the query backend answers",
    ALL: "the whole catalog",
}

#: ``answers(method, path_template)``: whether a query backend serves a route for real.
RouteAnswers = Callable[[str, str], bool]


def available_toolsets() -> tuple[str, ...]:
    """The toolset names an operator may choose, besides the named ``SELECTIONS``."""
    return tuple(TOOLSETS)


def _names(spec: str | Iterable[str]) -> list[str]:
    """Split comma lists and drop blanks: ``"code, content"`` -> ``["code", "content"]``."""
    items = [spec] if isinstance(spec, str) else list(spec)
    return [part.strip() for item in items for part in item.split(",") if part.strip()]


def _choices() -> str:
    return ", ".join((*SELECTIONS, *TOOLSETS))


@frozen
class ToolCatalog:
    """The tools one server serves, in contract order, with lookup by name."""

    tools: tuple[ToolDefinition, ...]
    _by_name: dict[str, ToolDefinition] = field(
        init=False,
        eq=False,
        repr=False,
        default=Factory(lambda self: {tool.name: tool for tool in self.tools}, takes_self=True),
    )
    _listings: dict[str, tuple[dict[str, Any], ...]] = field(
        init=False, eq=False, repr=False, factory=dict
    )

    @classmethod
    def full(cls) -> "ToolCatalog":
        """The whole read-only catalog."""
        return cls(read_only_tools())

    @property
    def names(self) -> tuple[str, ...]:
        """Tool names in contract order."""
        return tuple(tool.name for tool in self.tools)

    def __len__(self) -> int:
        return len(self.tools)

    def __iter__(self) -> Iterator[ToolDefinition]:
        return iter(self.tools)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def get(self, name: str) -> ToolDefinition | None:
        """The tool called ``name``, or None when this catalog does not serve it."""
        return self._by_name.get(name)

    def mcp_tools(self, revision: str) -> tuple[dict[str, Any], ...]:
        """The ``tools/list`` entries for a protocol revision, built once and shared."""
        listing = self._listings.get(revision)
        if listing is None:
            listing = tuple(tool.to_mcp(revision) for tool in self.tools)
            self._listings[revision] = listing
        return listing

    def select(
        self,
        toolsets: str = ALL,
        exclude: Iterable[str] = (),
        answers: RouteAnswers | None = None,
    ) -> "ToolCatalog":
        """
        The sub-catalog an operator asked for, still in contract order.

        ``toolsets`` is a comma list of toolset names, ``all``, ``core`` (the
        ``CORE_TOOLS``), or ``available`` (tools with at least one route that
        ``answers(method, path_template)`` accepts); the union is taken.
        ``exclude`` names tools or whole toolsets to drop. Unknown names raise
        ValueError with a sentence naming the choices.
        """
        wanted = _names(toolsets)
        if not wanted:
            raise ValueError(f"no toolset named; choose one or more of: {_choices()}")
        unknown = [name for name in wanted if name not in TOOLSETS and name not in SELECTIONS]
        if unknown:
            raise ValueError(
                f"unknown toolset {', '.join(map(repr, unknown))}; choose one or more of: "
                f"{_choices()}"
            )
        if AVAILABLE in wanted and answers is None:
            raise ValueError(
                "the 'available' toolset needs a query backend that reports which routes it answers"
            )
        dropped_tools, dropped_sets = self._exclusions(exclude)
        chosen = []
        for tool in self.tools:
            if tool.name in dropped_tools or tool.toolset in dropped_sets:
                continue
            if (
                ALL in wanted
                or tool.toolset in wanted
                or (CORE in wanted and tool.name in CORE_TOOLS)
                or (AVAILABLE in wanted and any(answers(*route) for route in tool.routes))
            ):
                chosen.append(tool)
        return ToolCatalog(tuple(chosen))

    def _exclusions(self, exclude: Iterable[str]) -> tuple[set[str], set[str]]:
        tools: set[str] = set()
        sets: set[str] = set()
        for name in _names(exclude):
            if name in self._by_name:
                tools.add(name)
            elif name in TOOLSETS:
                sets.add(name)
            else:
                close = difflib.get_close_matches(name, [*self._by_name, *TOOLSETS], n=3)
                hint = f" (did you mean {' or '.join(close)}?)" if close else ""
                raise ValueError(
                    f"cannot exclude {name!r}: it is neither a tool of this catalog nor a "
                    f"toolset{hint}; toolsets are {', '.join(TOOLSETS)}, and tools/list names "
                    "every tool"
                )
        return tools, sets


@cache
def embedded_route_modes() -> dict[tuple[str, str], str]:
    """
    The routes the embedded local backend answers for real or statically.

    Maps ``(method, path_template)`` to ``serve-real``, ``serve-real-partial`` or
    ``serve-static-catalog`` (``data/embedded_routes.json``); every other route gets
    an empty "collector not configured" page or an unsupported-capability error.
    """
    text = (
        resources.files("eshu_mcp.catalog").joinpath("data/embedded_routes.json").read_text("utf-8")
    )
    modes: dict[tuple[str, str], str] = {}
    for key, mode in json.loads(text)["routes"].items():
        method, _, path = key.partition(" ")
        modes[(method, path)] = mode
    return modes


def embedded_backend_answers(method: str, path_template: str) -> bool:
    """``answers`` for the embedded local backend, from the packaged route classes."""
    return (method, path_template) in embedded_route_modes()
