"""
Dispatch: a tool call becomes an ``/api/v0`` request, answered in process.

The stable seams live here: :func:`resolve_route` (tool + arguments to
method, path, query and body), :class:`RouteError` (whose text is the
contract's), and :func:`run_read_only_tool` (one whole call against a query
Resource, firing with the MCP tool result).
"""

from eshu_mcp.dispatch.inprocess import InProcessDispatcher, run_read_only_tool
from eshu_mcp.dispatch.routes import Route, RouteError, resolve_route

__all__ = ["InProcessDispatcher", "Route", "RouteError", "resolve_route", "run_read_only_tool"]
