"""
Helpers for tests that drive a real daemon with the official MCP SDK client: a committed
copy of a fixture repository, and one Streamable HTTP session that lists every page of
tools and makes calls.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import PaginatedRequestParams

GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
MAX_TOOL_PAGES = 20


def committed_copy(fixture: Path, repo: Path) -> Path:
    """``fixture`` copied to ``repo`` and committed as a git work tree."""
    shutil.copytree(fixture, repo)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*GIT, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(repo), "commit", "-qm", "fixture"], check=True)
    return repo


def session_calls(url: str, calls, *, list_tools: bool = True):
    """
    In one session on ``url`` (the daemon's ``/mcp``): the names of every listed tool (every
    page; empty when ``list_tools`` is false) and the results of ``calls`` (name, arguments).
    """

    async def run():
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            names: list[str] = []
            cursor = None
            for _ in range(MAX_TOOL_PAGES if list_tools else 0):
                params = PaginatedRequestParams(cursor=cursor) if cursor else None
                listed = await session.list_tools(params=params)
                names += [tool.name for tool in listed.tools]
                cursor = listed.next_cursor
                if not cursor:
                    break
            results = [await session.call_tool(name, arguments) for name, arguments in calls]
            return names, results

    return anyio.run(run)
