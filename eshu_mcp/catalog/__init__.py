"""
The read-only tool catalog: 162 tool definitions as data, and the toolsets that slice it.

``read_only_tools()`` gives every definition in contract order; ``ToolCatalog`` is
the set one server serves (``ToolCatalog.full().select("code,content")``, or
``select("core")``, the embedded backend's default).
"""

from eshu_mcp.catalog.contract import load_contract
from eshu_mcp.catalog.tools import (
    ENVELOPE_OUTPUT_SCHEMA,
    PROTOCOL_REVISIONS,
    ToolDefinition,
    read_only_tools,
)
from eshu_mcp.catalog.toolsets import (
    CORE_TOOLS,
    SELECTIONS,
    TOOLSETS,
    ToolCatalog,
    available_toolsets,
    embedded_backend_answers,
)

__all__ = [
    "CORE_TOOLS",
    "ENVELOPE_OUTPUT_SCHEMA",
    "PROTOCOL_REVISIONS",
    "SELECTIONS",
    "TOOLSETS",
    "ToolCatalog",
    "ToolDefinition",
    "available_toolsets",
    "embedded_backend_answers",
    "load_contract",
    "read_only_tools",
]
