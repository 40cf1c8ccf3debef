"""
Tool results as each MCP revision can carry them: a dispatcher result reshaped for the
client's revision, and the result for a tool the enabled catalog does not hold.
"""

from eshu_mcp.dispatch.results import with_resource_copy
from eshu_mcp.protocol import versions

__all__ = ["adapt_tool_result", "unknown_tool_result"]


def unknown_tool_result(name: str) -> dict:
    """The tool result for a name the enabled catalog does not hold."""
    return {"content": [{"type": "text", "text": f"unknown tool: {name}"}], "isError": True}


def shutdown_tool_result(name: str) -> dict:
    """The tool result for a call still running when the server stopped."""
    text = (
        f"{name} was not answered: the server is shutting down; call it again once the"
        " server is back"
    )
    return {"content": [{"type": "text", "text": text}], "isError": True}


_ENVELOPE_KEYS = frozenset({"data", "truth", "error"})


def adapt_tool_result(result: dict, version: str, *, envelope_tool: bool = False) -> dict:
    """
    Shape a dispatcher result for the revision the client speaks.

    A compact result carries its JSON once, as ``structuredContent``; a client
    that cannot read that (before 2025-06-18, or a non-object before 2026-07-28)
    gets it as a resource block instead.

    Before 2026-07-28 ``structuredContent`` must be an object; a tool that
    advertises the envelope ``outputSchema`` must answer an envelope, so a
    plain answer from such a tool is wrapped as ``data`` with no truth claim.
    """
    structured = result.get("structuredContent")
    if structured is None:
        return result
    if not versions.has_structured_content(version) and not _has_resource(result):
        return with_resource_copy(result)
    if result.get("isError"):
        return result
    if envelope_tool and versions.has_structured_content(version):
        if not (isinstance(structured, dict) and structured.keys() >= _ENVELOPE_KEYS):
            return {
                **result,
                "structuredContent": {"data": structured, "truth": None, "error": None},
            }
        return result
    if isinstance(structured, dict) or versions.is_modern(version):
        return result
    return with_resource_copy(result)


def _has_resource(result: dict) -> bool:
    return any(block.get("type") == "resource" for block in result.get("content", ()))
