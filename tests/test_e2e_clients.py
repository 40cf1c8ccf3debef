"""
End to end: the real daemon, the real index, the official MCP Python SDK client.

One ``twistd -n eshu-mcp --repo`` process indexes a small git repository and is
driven over legacy HTTP+SSE and Streamable HTTP (both protocol eras); ``eshu-mcp
stdio`` is driven the way editors launch it. Every client initializes, lists every
tool by following pagination, and calls tools whose answers come from the index.
"""

import json
import sys

import anyio
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import PaginatedRequestParams

from eshu_mcp.catalog import load_contract
from tests.daemon import (
    child_environment,
    indexed_daemon_args,
    serving,
)

CONTRACT_NAMES = [tool["name"] for tool in load_contract()]


@pytest.fixture(scope="module")
def daemon(workdir, repository):
    with serving(workdir, indexed_daemon_args(workdir, repository)) as server:
        yield server


async def exercise(session: ClientSession, *, modern: bool = False) -> dict:
    """Handshake, list every tool across pages, and call a few real tools."""
    if modern:
        await session.discover()
    else:
        await session.initialize()
    names, cursor, pages = [], None, 0
    while pages < 20:
        page = await session.list_tools(
            params=PaginatedRequestParams(cursor=cursor) if cursor else None
        )
        names += [tool.name for tool in page.tools]
        pages += 1
        cursor = page.next_cursor
        if not cursor:
            break
    found = await session.call_tool("find_code", {"query": "parse_config"})
    callers = await session.call_tool(
        "analyze_code_relationships", {"query_type": "find_callers", "target": "parse_config"}
    )
    unknown = await session.call_tool("no_such_tool", {})
    return {
        "protocol": session.protocol_version,
        "names": names,
        "pages": pages,
        "found": found,
        "callers": callers,
        "unknown": unknown,
    }


def check(observed: dict) -> None:
    assert observed["names"] == CONTRACT_NAMES
    assert observed["pages"] == 4
    found = observed["found"]
    assert not found.is_error
    assert "parse_config" in json.dumps(found.structured_content)
    # Compact answers go out once: the summary beside the structured envelope.
    assert [block.type for block in found.content] == ["text"]
    assert set(found.structured_content) == {"data", "truth", "error"}
    callers = observed["callers"]
    assert not callers.is_error, callers.content[0].text
    assert "main" in json.dumps(callers.structured_content)
    assert observed["unknown"].is_error
    assert observed["unknown"].content[0].text == "unknown tool: no_such_tool"


def test_streamable_http_client(daemon):
    async def run():
        async with (
            streamable_http_client(daemon.url + "/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            return await exercise(session)

    observed = anyio.run(run)
    assert observed["protocol"] == "2025-11-25"
    check(observed)


def test_streamable_http_client_in_the_stateless_revision(daemon):
    async def run():
        async with (
            streamable_http_client(daemon.url + "/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            return await exercise(session, modern=True)

    observed = anyio.run(run)
    assert observed["protocol"] == "2026-07-28"
    check(observed)


def test_legacy_sse_client(daemon):
    async def run():
        async with (
            sse_client(daemon.url + "/sse") as (read, write),
            ClientSession(read, write) as session,
        ):
            return await exercise(session)

    check(anyio.run(run))


def test_stdio_client(workdir, repository):
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "eshu_mcp.cli",
            "stdio",
            "--repo",
            str(repository),
            "--db",
            str(workdir / "stdio-index.sqlite"),
            "--toolsets",
            "all",
        ],
        env=child_environment(workdir),
    )

    async def run():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            return await exercise(session)

    check(anyio.run(run))


def test_health_readiness_and_metrics(daemon):
    assert daemon.get("/health") == (200, b'{"status":"ok"}')
    assert daemon.get("/readyz")[0] == 200
    status, body = daemon.get("/metrics")
    assert status == 200
    assert b"eshu_mcp_tool_calls_total" in body


def test_http_api_and_tool_answer_are_the_same_bytes(daemon, repository):
    accept = {"accept": "application/eshu.envelope+json", "eshu-answer-detail": "compact"}
    # the daemon serves one --repo: a call naming none is about it
    status, api_body = daemon.post(
        "/api/v0/code/search",
        {
            "query": "parse_config",
            "limit": 10,
            "exact": False,
            "language": "",
            "repo_id": str(repository),
        },
        accept,
    )
    assert status == 200
    status, reply = daemon.post(
        "/mcp/message",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "find_code", "arguments": {"query": "parse_config"}},
        },
    )
    assert status == 200
    result = json.loads(reply)["result"]
    assert json.loads(result["content"][1]["resource"]["text"]) == json.loads(api_body)


def test_plain_http_callers_keep_the_full_shape(daemon):
    query = {"query": "parse_config", "limit": 10, "exact": False, "language": "", "repo_id": ""}
    accept = {"accept": "application/eshu.envelope+json"}
    status, full_body = daemon.post("/api/v0/code/search", query, accept)
    assert status == 200
    full = json.loads(full_body)["data"]
    status, compact_body = daemon.post(
        "/api/v0/code/search", query, {**accept, "eshu-answer-detail": "compact"}
    )
    compact = json.loads(compact_body)["data"]
    assert full["matches"] == full["results"]
    assert "relative_path" in full["results"][0]
    assert "matches" not in compact
    assert [row["entity_id"] for row in compact["results"]] == [
        row["entity_id"] for row in full["results"]
    ]


def test_bad_http_requests_get_json_errors(daemon):
    status, body = daemon.post("/mcp/message", b"{nope")
    assert status == 400
    assert json.loads(body)["error"]["code"] == -32700
    status, body = daemon.get("/no/such/path")
    assert status == 404
    assert json.loads(body)["error"] == "Not Found"
    status, body = daemon.post(
        "/api/v0/content/files/read", {"repo_id": "x", "relative_path": "../../etc/passwd"}
    )
    assert 400 <= status < 500
    assert "root:" not in body.decode(errors="replace")


@pytest.fixture(scope="module")
def guarded_daemon(workdir, repository):
    args = ["--repo", str(repository), "--db", str(workdir / "guarded.sqlite")]
    with serving(workdir, args, ESHU_API_KEY="e2e-secret-token") as server:
        yield server


def test_credentials_guard_every_http_transport(guarded_daemon):
    for path in ("/sse", "/api/v0/repositories"):
        status, body = guarded_daemon.get(path)
        assert status == 401
        assert b"find_code" not in body
    status, body = guarded_daemon.post(
        "/mcp",
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"accept": "application/json, text/event-stream"},
    )
    assert status == 401
    assert json.loads(body)["error_code"] == "unauthenticated"

    async def run():
        client = httpx2.AsyncClient(headers={"Authorization": "Bearer e2e-secret-token"})
        async with (
            client,
            streamable_http_client(guarded_daemon.url + "/mcp", http_client=client) as (
                read,
                write,
            ),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listing = await session.list_tools()
            found = await session.call_tool("find_symbol", {"symbol": "write_row"})
            return listing, found

    listing, found = anyio.run(run)
    assert 0 < len(listing.tools) < 162
    assert "find_code" not in [tool.name for tool in listing.tools]
    assert not found.is_error
    assert "write_row" in json.dumps(found.structured_content)
