"""
Tool definitions: one value per contract record, rendered per MCP revision.

The catalog is data (``data/tools.json``); this module turns each record into a
:class:`ToolDefinition` and renders the MCP ``Tool`` object a client sees for the
protocol revision it negotiated. Every Eshu tool only reads, so every tool carries
the same read-only annotations; ``openWorldHint`` says whether its answer depends on
collectors outside the indexed git content.
"""

from functools import cache
from typing import Any

from attrs import field, frozen

from eshu_mcp.catalog.contract import load_contract

#: The MCP revisions this catalog renders, oldest first.
PROTOCOL_REVISIONS: tuple[str, ...] = (
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
)

# First revisions that carry a feature (revision strings are ISO dates, so they
# compare in time order).
_ANNOTATIONS_SINCE = "2025-03-26"
_TITLE_SINCE = "2025-06-18"
_OUTPUT_SCHEMA_SINCE = "2025-06-18"

#: Routes that answer plain JSON, never the data/truth/error envelope.
PLAIN_JSON_ROUTES: frozenset[tuple[str, str]] = frozenset(
    {
        ("GET", "/api/v0/status/collectors"),
        ("GET", "/api/v0/status/ingesters"),
        ("GET", "/api/v0/status/ingesters/{ingester}"),
        ("GET", "/api/v0/index-status"),
        ("GET", "/api/v0/status/index"),
        ("GET", "/api/v0/status/hosted-readiness"),
        ("GET", "/api/v0/status/pipeline"),
    }
)

#: Output schema of envelope tools. Deliberately loose: clients validate every
#: successful ``structuredContent`` against it, and ``data`` may be any JSON value.
ENVELOPE_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "data": {},
        "truth": {"type": ["object", "null"]},
        "error": {"type": ["object", "null"]},
    },
    "required": ["data", "truth", "error"],
}

# Words whose title-case spelling is not just a capital first letter.
_TITLE_WORDS = {
    "api": "API",
    "aws": "AWS",
    "cfg": "CFG",
    "iac": "IaC",
    "iam": "IAM",
    "pdg": "PDG",
    "sbom": "SBOM",
}


def tool_title(name: str) -> str:
    """A readable title derived from a tool name: ``list_ci_cd_runs`` -> ``List CI/CD runs``."""
    words = name.split("_")
    out: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word == "ci" and index + 1 < len(words) and words[index + 1] == "cd":
            out.append("CI/CD")
            index += 2
            continue
        out.append(_TITLE_WORDS.get(word, word))
        index += 1
    first = out[0]
    if first.islower():
        out[0] = first[:1].upper() + first[1:]
    return " ".join(out)


def route_templates(route: dict) -> tuple[tuple[str, str], ...]:
    """
    Every ``(method, path_template)`` a tool's calls can be sent to.

    That is the tool's route, or for ``analyze_code_relationships`` each variant route
    and the route of values outside its enum. Fallback routes used only when an
    argument is missing are not included.
    """
    found: list[tuple[str, str]] = []
    if "method" in route:
        found.append((route["method"], route["path_template"]))
    for variant in route.get("route_variants", ()):
        found.append((variant["method"], variant["path_template"]))
    unlisted = route.get("unlisted_value_route")
    if unlisted:
        found.append((unlisted["method"], unlisted["path_template"]))
    return tuple(dict.fromkeys(found))


def _check_revision(revision: str) -> None:
    if revision not in PROTOCOL_REVISIONS:
        raise ValueError(
            f"unknown MCP protocol revision {revision!r}; known revisions are "
            + ", ".join(PROTOCOL_REVISIONS)
        )


@frozen
class ToolDefinition:
    """One read-only tool: what clients are shown and where its calls go."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(hash=False)
    group: str
    toolset: str
    domain: str
    data_source: str
    route: dict[str, Any] = field(hash=False)
    envelope: bool
    _rendered: dict[str, dict[str, Any]] = field(init=False, eq=False, repr=False, factory=dict)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "ToolDefinition":
        """Build a definition from one contract record of ``data/tools.json``."""
        route = record["route"]
        templates = route_templates(route)
        return cls(
            name=record["name"],
            description=record["description"],
            input_schema=record["input_schema"],
            group=record["group"],
            toolset=record["toolset"],
            domain=record["domain"],
            data_source=record["data_source"],
            route=route,
            envelope=not all(template in PLAIN_JSON_ROUTES for template in templates),
        )

    @property
    def title(self) -> str:
        """The human-readable title shown by 2025-06-18+ clients."""
        return tool_title(self.name)

    @property
    def routes(self) -> tuple[tuple[str, str], ...]:
        """The ``(method, path_template)`` pairs this tool's calls can reach."""
        return route_templates(self.route)

    @property
    def open_world(self) -> bool:
        """Whether answers depend on collectors beyond indexed git content."""
        return self.data_source != "static"

    def to_mcp(self, revision: str) -> dict[str, Any]:
        """
        The MCP ``Tool`` object for a negotiated protocol revision.

        The dict is built once per revision and shared: callers must not mutate it.
        """
        rendered = self._rendered.get(revision)
        if rendered is None:
            _check_revision(revision)
            rendered = self._render(revision)
            self._rendered[revision] = rendered
        return rendered

    def _render(self, revision: str) -> dict[str, Any]:
        tool: dict[str, Any] = {"name": self.name}
        if revision >= _TITLE_SINCE:
            tool["title"] = self.title
        tool["description"] = self.description
        tool["inputSchema"] = self.input_schema
        if revision >= _OUTPUT_SCHEMA_SINCE and self.envelope:
            tool["outputSchema"] = ENVELOPE_OUTPUT_SCHEMA
        if revision >= _ANNOTATIONS_SINCE:
            annotations: dict[str, Any] = {}
            if revision < _TITLE_SINCE:
                annotations["title"] = self.title
            annotations["readOnlyHint"] = True
            annotations["destructiveHint"] = False
            annotations["idempotentHint"] = True
            annotations["openWorldHint"] = self.open_world
            tool["annotations"] = annotations
        return tool


@cache
def read_only_tools() -> tuple[ToolDefinition, ...]:
    """All catalog tools, in the contract's order (the order ``tools/list`` keeps)."""
    return tuple(ToolDefinition.from_record(record) for record in load_contract())
