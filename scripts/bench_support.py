"""
What the benchmark scripts share: the installed Twisted sources copied into a fresh git
repository and indexed, the embedded query backend started in process with its dispatcher
and MCP connections, one ``tools/call`` driver, and a percentile helper.

Scripts import it by bare name (``scripts/`` is their ``sys.path[0]``). It imports the
``eshu_mcp`` found on ``sys.path``, so a script that measures a given checkout imports
this module only after it has checked where ``eshu_mcp`` comes from.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from attrs import frozen
from twisted.internet import defer, task

from eshu_mcp.dispatch.inprocess import InProcessDispatcher
from eshu_mcp.protocol.server import CallContext
from eshu_mcp.query.local.backend import LocalQueryBackend
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.service import ServerSettings, build_mcp_server

# The protocol revision the official SDKs speak.
PROTOCOL_VERSION = "2025-11-25"
MESSAGE_IDS = itertools.count(1)


def twisted_package() -> Path:
    """The installed ``twisted`` package folder (found without importing it)."""
    spec = importlib.util.find_spec("twisted")
    return Path(next(iter(spec.submodule_search_locations)))


def twisted_repository(into: Path, name: str = "twisted-sources") -> Path:
    """``into/name``: a fresh git repository of one commit holding the Twisted sources."""
    repo = into / name
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(
        twisted_package(), repo / "twisted", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "twisted sources"]):
        subprocess.run(
            ["git", "-C", str(repo), "-c", "user.email=b@example.com", "-c", "user.name=b", *args],
            check=True,
            capture_output=True,
        )
    return repo


def twisted_index(workdir: Path, *, two_generations: bool = False) -> Path:
    """
    ``workdir/index.sqlite``, indexed from a Twisted repository unless it already exists.

    ``two_generations`` indexes again after appending a function to one file, so that
    changed-since has two generations to compare.
    """
    db = workdir / "index.sqlite"
    if db.exists():
        return db
    repo = twisted_repository(workdir)
    again = " twice (a change in between)" if two_generations else ""
    print(f"indexing {repo}{again} ...", file=sys.stderr)
    index_repositories(db, [repo])
    if two_generations:
        with (repo / "twisted" / "python" / "util.py").open("a") as source:
            source.write("\n\ndef _bench_added(value):\n    return value + 1\n")
        index_repositories(db, [repo])
    return db


def python_trees(root: Path) -> Iterator[tuple[str, ast.Module]]:
    """(relative path, ``ast`` tree) of every Python file below ``root`` that parses."""
    for path in sorted(root.rglob("*.py")):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        yield path.relative_to(root).as_posix(), tree


def scratch_folder(keep: str | None, prefix: str) -> Path:
    """The ``--keep`` folder, or a new temporary one."""
    return Path(keep or tempfile.mkdtemp(prefix=prefix))


def argument_parser(doc: str) -> argparse.ArgumentParser:
    """A parser described by ``doc``'s first line, with ``--keep DIR`` and ``--json``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[1])
    parser.add_argument("--keep", help="reuse or keep the index in this folder")
    parser.add_argument("--json", action="store_true")
    return parser


def react(main, *args) -> None:
    """Run ``await main(reactor, *args)`` under the reactor, then exit."""
    task.react(lambda reactor: defer.ensureDeferred(main(reactor, *args)))


@frozen
class InProcess:
    """The embedded query backend on one index, its in-process dispatcher, and the reactor."""

    backend: LocalQueryBackend
    dispatcher: InProcessDispatcher
    reactor: Any

    def connection(self, **settings: Any):
        """An MCP connection through the protocol core, every toolset enabled."""
        server = build_mcp_server(
            self.backend.resource,
            clock=self.reactor,
            settings=ServerSettings(toolsets="all", **settings),
            backend=self.backend,
        )
        return server.connection(default_version=PROTOCOL_VERSION)


@asynccontextmanager
async def in_process(reactor, db: Path) -> AsyncIterator[InProcess]:
    """The query backend on ``db``, started for the block and stopped after it."""
    backend = LocalQueryBackend(str(db), reactor=reactor)
    backend.startService()
    try:
        yield InProcess(backend, InProcessDispatcher(backend.resource, reactor), reactor)
    finally:
        await defer.maybeDeferred(backend.stopService)


def tools_call(connection, tool: str, args: dict) -> defer.Deferred:
    """Send one ``tools/call`` through ``connection``; fires with the JSON-RPC reply."""
    message = {
        "jsonrpc": "2.0",
        "id": next(MESSAGE_IDS),
        "method": "tools/call",
        "params": {"name": tool, "arguments": args},
    }
    return connection.handle(message, CallContext(transport="bench"))


async def tool_result(connection, tool: str, args: dict) -> dict:
    """The MCP tool result of one ``tools/call``."""
    reply = await tools_call(connection, tool, args)
    return reply["result"]


def percentile(values: list[float], fraction: float) -> float:
    """The value at rank ``int(len * fraction)`` of the sorted values (the last one at most)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def print_result(result: dict, as_json: bool) -> None:
    """A benchmark's figures: one JSON document, or ``key  value`` lines."""
    if as_json:
        print(json.dumps(result, sort_keys=True))
        return
    width = max(len(key) for key in result)
    for key, value in result.items():
        print(f"{key:<{width}}  {value}")


_LISTENING = re.compile(r"Site starting on (\d+)")


def start_loopback_daemon(
    workdir: Path, log_path: Path, daemon_args: list[str], ready_seconds: float
) -> tuple[subprocess.Popen, int]:
    """
    ``twistd -n eshu-mcp DAEMON_ARGS`` on a kernel-chosen loopback port, with this checkout
    on ``PYTHONPATH`` and ``ESHU_HOME`` in ``workdir``; returns once ``/readyz`` answers.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("ESHU_")}
    env.update(PYTHONPATH=str(Path(__file__).resolve().parent.parent), ESHU_HOME=str(workdir))
    command = [
        sys.executable,
        "-c",
        "from twisted.scripts.twistd import run; run()",
        "--nodaemon",
        "--pidfile=",
        "--logfile=-",
        "eshu-mcp",
        "--listen",
        "tcp:0:interface=127.0.0.1",
        *daemon_args,
    ]
    log = log_path.open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=workdir)
    deadline = time.monotonic() + ready_seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"daemon exited:\n{log_path.read_text()}")
        bound = _LISTENING.search(log_path.read_text(errors="replace"))
        if bound is not None:
            port = int(bound.group(1))
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5):
                    return process, port
            except (urllib.error.URLError, OSError):
                pass
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"daemon not ready after {ready_seconds:.0f} s")
