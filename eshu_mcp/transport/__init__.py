"""MCP transports: stdio, legacy HTTP+SSE and Streamable HTTP, all over one protocol core."""

from eshu_mcp.transport.message import in_process_message_handler

__all__ = ["in_process_message_handler"]
