"""
Edit-to-answer through the README's stdio launch, driven by the official MCP SDK client.
Copies the installed Twisted sources into a git repository, starts
``eshu-mcp stdio --repo REPO`` (no ``--watch``: watching is the default) under the SDK's
stdio client, waits for its first index, then RUNS times appends a new function to one file
and times from the write until ``find_symbol`` finds it. The figure is the median of the
runs (target <= 0.5 s); the baseline, measured in the same run, is one ``find_symbol`` call
for a symbol already indexed, so ``ratio`` is edit-to-answer over a plain call.
Usage: ``python scripts/bench_fresh_stdio.py [--runs 3] [--keep DIR] [--json]``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import argument_parser, print_result, scratch_folder, twisted_repository
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PROJECT_ROOT = Path(__file__).resolve().parent.parent
EDITED = "twisted/python/util.py"
KNOWN_SYMBOL = "mergeFunctionMetadata"
POLL_SECONDS = 0.02
ANSWER_DEADLINE = 30.0


def found(result) -> bool:
    """Whether a ``find_symbol`` result names at least one match."""
    if result.is_error:
        raise RuntimeError(f"find_symbol failed: {result.content}")
    data = (result.structured_content or {}).get("data") or result.structured_content or {}
    for key in ("results", "matches", "symbols", "entities"):
        rows = data.get(key) if isinstance(data, dict) else None
        if rows:
            return True
    return False


async def until_found(session: ClientSession, symbol: str, deadline: float) -> float:
    """Call ``find_symbol`` until it finds ``symbol``; the monotonic time of that answer."""
    while time.monotonic() < deadline:
        result = await session.call_tool("find_symbol", {"symbol": symbol})
        if found(result):
            return time.monotonic()
        await asyncio.sleep(POLL_SECONDS)
    raise RuntimeError(f"{symbol} not found within {ANSWER_DEADLINE}s")


async def measure(repo: Path, db: Path, runs: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "ESHU_MCP_DB": str(db)}
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "eshu_mcp.cli", "stdio", "--repo", str(repo)],
        env=env,
        cwd=str(repo),
    )
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(server, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            started = time.monotonic()
            await until_found(session, KNOWN_SYMBOL, started + 600)
            first_index = time.monotonic() - started
            await asyncio.sleep(1.0)  # let the watcher settle on the tree
            plain = []
            for _ in range(5):
                before = time.monotonic()
                await until_found(session, KNOWN_SYMBOL, before + ANSWER_DEADLINE)
                plain.append(time.monotonic() - before)
            edits = []
            for run in range(runs):
                name = f"fresh_bench_added_{run}_{os.getpid()}"
                text = f"\n\ndef {name}(value):\n    return value\n"
                written = time.monotonic()
                with (repo / EDITED).open("a") as source:
                    source.write(text)
                answered = await until_found(session, name, written + ANSWER_DEADLINE)
                edits.append(answered - written)
                await asyncio.sleep(0.5)
    edit = statistics.median(edits)
    call = statistics.median(plain)
    return {
        "files": sum(1 for _ in (repo / "twisted").rglob("*.py")),
        "first_index_s": round(first_index, 2),
        "plain_call_median_s": round(call, 4),
        "edit_to_answer_s": [round(value, 3) for value in edits],
        "edit_to_answer_median_s": round(edit, 3),
        "ratio_edit_to_plain_call": round(edit / call, 1),
        "target_met": edit <= 0.5,
    }


def main() -> None:
    parser = argument_parser(__doc__)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    workdir = scratch_folder(options.keep, "eshu-fresh-stdio-")
    repo = twisted_repository(workdir)
    db = workdir / "index.sqlite"
    result = asyncio.run(measure(repo, db, options.runs))
    print_result(result, options.json)


if __name__ == "__main__":
    main()
