"""
Nothing blocks the reactor: while the real daemon serves tool calls from the official MCP
SDK client, its reactor thread never opens SQLite nor reads a repository or index file.

The daemon runs with an audit hook (``tests/fixtures/reactor_io/sitecustomize.py``) that
notes every such open with the thread it happened on.
"""

import os

import anyio
import pytest
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from tests.daemon import PROJECT_ROOT, indexed_daemon_args, serving

HOOK_DIR = PROJECT_ROOT / "tests" / "fixtures" / "reactor_io"
CALLS = [
    ("list_indexed_repositories", {}),
    ("find_code", {"query": "parse_config"}),
    ("get_file_content", {"repo_id": "sample-repo", "relative_path": "app/config.py"}),
    ("analyze_code_relationships", {"query_type": "find_callers", "target": "parse_config"}),
]


@pytest.fixture(scope="module")
def audited(workdir, repository):
    notes = workdir / "reactor-io.log"
    db = workdir / "index.sqlite"
    env = {
        "PYTHONPATH": os.pathsep.join([str(HOOK_DIR), str(PROJECT_ROOT)]),
        "ESHU_TEST_REACTOR_IO": str(notes),
        "ESHU_TEST_WATCHED": os.pathsep.join([str(repository), str(db)]),
    }
    with serving(workdir, indexed_daemon_args(workdir, repository), **env) as server:
        yield server, notes


async def call_every_tool(session: ClientSession) -> list:
    await session.initialize()
    return [await session.call_tool(name, args) for name, args in CALLS]


def reactor_notes(notes) -> list[str]:
    return [line for line in notes.read_text().splitlines() if line.startswith("reactor ")]


def test_tool_calls_over_streamable_http_do_no_file_or_sqlite_io_on_the_reactor(audited):
    server, notes = audited

    async def run():
        async with (
            streamable_http_client(server.url + "/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            return await call_every_tool(session)

    results = anyio.run(run)
    assert [result.is_error for result in results] == [False] * len(CALLS)
    assert reactor_notes(notes) == []
    # The hook is live: the calls' own SQLite opens were seen, on the reader pool.
    assert "pool sqlite3.connect" in notes.read_text()


def test_tool_calls_over_legacy_sse_do_no_file_or_sqlite_io_on_the_reactor(audited):
    server, notes = audited

    async def run():
        async with (
            sse_client(server.url + "/sse") as (read, write),
            ClientSession(read, write) as session,
        ):
            return await call_every_tool(session)

    results = anyio.run(run)
    assert [result.is_error for result in results] == [False] * len(CALLS)
    assert reactor_notes(notes) == []
    assert "pool sqlite3.connect" in notes.read_text()
