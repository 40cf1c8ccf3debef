"""
End to end: progress during a first index build, and the server's log, with the
official MCP Python SDK client.

A repository of a few thousand generated files keeps the first build busy for
seconds. One daemon is asked over legacy HTTP+SSE and ``/mcp`` (both eras) while
that build runs, ``eshu-mcp stdio`` the way an editor starts it; every call made
with a progress callback hears at least three increasing steps, the build's own
among them, and a session that set its log level hears the server's events.
"""

import subprocess
import sys

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.daemon import Daemon, child_environment

# The SDK client warns that logging/setLevel is gone from 2026-07-28; these sessions
# negotiate an earlier revision, where it is the way to ask for the server's log.
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

GENERATED_FILES = 2400


@pytest.fixture(scope="module")
def repository(workdir):
    """A git repository big enough that indexing it takes a while."""
    repo = workdir / "big-repo"
    for number in range(GENERATED_FILES):
        path = repo / f"pkg{number % 40}" / f"mod{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"def helper_{number}(value):\n    return value + {number}\n\n\n"
            f"def caller_{number}():\n    return helper_{number}(1)\n"
        )
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    return repo


@pytest.fixture(scope="module")
def building_daemon(workdir, repository):
    """A daemon whose first build has just started: it listens but is not ready."""
    daemon = Daemon(
        workdir,
        [
            "--repo",
            str(repository),
            "--db",
            str(workdir / "http.sqlite"),
            "--toolsets",
            "all",
        ],
    )
    try:
        daemon.wait_listening()
        yield daemon
    finally:
        daemon.stop()


async def call_with_progress(session: ClientSession, *, modern: bool = False) -> dict:
    """Call a tool with a progress callback; collect what the server said."""
    if modern:
        await session.discover()
    else:
        await session.initialize()
    heard: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress, total, message):
        heard.append((progress, total, message))

    result = await session.call_tool(
        "list_indexed_repositories", {}, read_timeout_seconds=120, progress_callback=on_progress
    )
    return {"result": result, "progress": heard}


def check_progress(observed: dict) -> None:
    assert not observed["result"].is_error, observed["result"].content
    values = [progress for progress, _, _ in observed["progress"]]
    messages = [message or "" for _, _, message in observed["progress"]]
    assert len(values) >= 3, observed["progress"]
    assert values == sorted(values) and len(set(values)) == len(values), values
    assert any("waiting for the index build" in m for m in messages), messages
    assert any(m.startswith("indexing:") for m in messages), messages
    assert messages[-1] == "done"


async def run_logged(session_factory):
    """setLevel info, then a call whose arguments are refused: that refusal is logged."""
    logged = []

    async def on_log(params):
        logged.append(params)

    async with session_factory(on_log) as session:
        await session.initialize()
        await session.set_logging_level("info")
        refused = await session.call_tool("find_code", {})
        with anyio.fail_after(30):
            while not any("arguments refused" in str(p.data) for p in logged):
                await anyio.sleep(0.05)
    assert refused.is_error
    return logged


def test_calls_during_the_first_build_hear_its_progress_over_http(building_daemon):
    observed = {}

    async def over_sse():
        async with (
            sse_client(building_daemon.url + "/sse") as (read, write),
            ClientSession(read, write) as session,
        ):
            observed["sse"] = await call_with_progress(session)

    async def over_streamable(modern: bool):
        async with (
            streamable_http_client(building_daemon.url + "/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            observed["modern" if modern else "mcp"] = await call_with_progress(
                session, modern=modern
            )

    async def run():
        async with anyio.create_task_group() as group:
            group.start_soon(over_sse)
            group.start_soon(over_streamable, False)
            group.start_soon(over_streamable, True)

    anyio.run(run)
    for transport in ("sse", "mcp", "modern"):
        check_progress(observed[transport])


def test_a_session_that_set_its_log_level_hears_the_server(building_daemon):
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def sse_session(on_log):
        async with (
            sse_client(building_daemon.url + "/sse") as (read, write),
            ClientSession(read, write, logging_callback=on_log) as session,
        ):
            yield session

    @asynccontextmanager
    async def streamable_session(on_log):
        async with (
            streamable_http_client(building_daemon.url + "/mcp") as (read, write),
            ClientSession(read, write, logging_callback=on_log) as session,
        ):
            yield session

    for factory in (sse_session, streamable_session):
        logged = anyio.run(run_logged, factory)
        assert all(p.level in ("info", "notice", "warning", "error") for p in logged)
        assert not any(p.level == "debug" for p in logged)


def test_stdio_during_the_first_build(workdir, repository):
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "eshu_mcp.cli",
            "stdio",
            "--repo",
            str(repository),
            "--db",
            str(workdir / "stdio.sqlite"),
            "--toolsets",
            "all",
        ],
        env=child_environment(workdir),
    )

    async def run():
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            observed = await call_with_progress(session)
        return observed

    check_progress(anyio.run(run))

    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def stdio_session(on_log):
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, logging_callback=on_log) as session,
        ):
            yield session

    logged = anyio.run(run_logged, stdio_session)
    assert any("arguments refused" in str(p.data) for p in logged)
