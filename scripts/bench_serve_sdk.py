"""
The official MCP SDK's server in its fastest configuration, for ``bench_serve.py``.

One uvicorn process (access log off) serves a trivial async ``echo`` tool over Streamable
HTTP at ``/mcp`` (stateless, JSON replies: both protocol eras) and legacy HTTP+SSE at
``/sse`` + ``/messages/``. Run as ``python scripts/bench_serve_sdk.py PORT``.
"""

from __future__ import annotations

import sys

import uvicorn
from mcp.server.mcpserver import MCPServer


def build_app():
    """A Starlette app with both transports of one MCPServer."""
    server = MCPServer("bench-echo", log_level="WARNING")

    @server.tool()
    async def echo(text: str = "") -> str:
        """Return the text unchanged."""
        return text

    app = server.streamable_http_app(stateless_http=True, json_response=True)
    app.router.routes.extend(server.sse_app().routes)
    return app


def main() -> None:
    port = int(sys.argv[1])
    config = uvicorn.Config(
        build_app(), host="127.0.0.1", port=port, log_level="warning", access_log=False
    )
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
