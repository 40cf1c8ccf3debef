"""MCP protocol revisions and what changes between them."""

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Revisions that open with ``initialize``, oldest first."""

MODERN_VERSIONS = ("2026-07-28",)
"""Stateless revisions: every request carries its protocol version in ``_meta``."""

SUPPORTED_VERSIONS = HANDSHAKE_VERSIONS + MODERN_VERSIONS
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[-1]

DEFAULT_HTTP_VERSION = "2025-03-26"
"""What an HTTP request without ``MCP-Protocol-Version`` is assumed to speak."""

PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"


def negotiate(requested: object) -> str:
    """Answer the client's handshake revision when supported, else the newest one."""
    if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS:
        return requested
    return LATEST_HANDSHAKE_VERSION


def accepts_batches(version: str) -> bool:
    """JSON-RPC batches exist only in 2025-03-26."""
    return version == "2025-03-26"


def has_structured_content(version: str) -> bool:
    """``structuredContent`` and ``outputSchema`` arrived in 2025-06-18."""
    return version >= "2025-06-18"


def is_modern(version: str) -> bool:
    """Whether ``version`` is a stateless revision."""
    return version in MODERN_VERSIONS
