"""
Benchmark edit-to-answer latency through a running daemon with ``--watch``.
Copies the installed Twisted sources into a git repository, indexes it, starts
``twistd -n eshu-mcp --repo REPO --watch`` on a loopback port, then RUNS times appends a new
function to one file and times from the write until a ``find_symbol`` tool call over
Streamable HTTP (``POST /mcp``) finds it. Median of the runs is the figure (target < 0.5 s);
``build_median_s`` is the indexer's own time for those builds (from the daemon's log), so the
rest is the daemon's share (notice, debounce, hand-over, answer).

The baseline, alternating with it on a second copy of the sources under the same load, is the
old design: a fresh ``python -m eshu_mcp.query.local.index.build.command`` process per change (the
old 2 s poll interval not counted), timed from the write until a second daemon, serving that
copy's index, answers the same way.
Usage: ``python scripts/bench_watch.py [--runs 5] [--keep DIR] [--json]``.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_support import (
    argument_parser,
    print_result,
    scratch_folder,
    start_loopback_daemon,
    twisted_repository,
)

from eshu_mcp.query.local.index.build.indexer import index_repositories

PROJECT_ROOT = Path(__file__).resolve().parent.parent
EDITED = "twisted/python/util.py"
PROTOCOL = "2026-07-28"
ANSWER_DEADLINE = 30.0
POLL_SECONDS = 0.05
"""Between tool calls while waiting: often enough to see the answer, rarely enough not to
slow the build down (on 2 cores, tighter polling measurably lengthens it)."""
BUILD_SECONDS = re.compile(r" indexed in ([\d.]+)s: 1 files parsed")


def append_function(repo: Path, name: str) -> float:
    """Append ``def name()`` to the edited file; returns the monotonic time of the write."""
    text = f"\n\ndef {name}(value):\n    return value\n"
    started = time.monotonic()
    with (repo / EDITED).open("a") as source:
        source.write(text)
    return started


def finds_symbol(port: int, symbol: str) -> bool:
    """Whether a ``find_symbol`` tool call through the daemon finds ``symbol``."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "find_symbol", "arguments": {"symbol": symbol}},
    }
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        data=json.dumps(message).encode(),
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": PROTOCOL,
            "mcp-method": "tools/call",
            "mcp-name": "find_symbol",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        reply = json.loads(response.read())
    result = reply.get("result") or {}
    if result.get("isError"):
        raise RuntimeError(f"find_symbol failed: {result}")
    data = (result.get("structuredContent") or {}).get("data") or {}
    return any(row.get("name") == symbol for row in data.get("results") or [])


def wait_for_answer(port: int, symbol: str, started: float) -> float:
    """Seconds from ``started`` until the daemon answers with ``symbol``."""
    while time.monotonic() - started < ANSWER_DEADLINE:
        if finds_symbol(port, symbol):
            return time.monotonic() - started
        time.sleep(POLL_SECONDS)
    raise RuntimeError(f"{symbol} not found after {ANSWER_DEADLINE}s")


def per_change_process(port: int, repo: Path, db: Path, symbol: str) -> float:
    """The old design: the write, then a new indexer process for the change; until answered."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    started = append_function(repo, symbol)
    command = [sys.executable, "-m", "eshu_mcp.query.local.index.build.command", str(repo)]
    indexer = subprocess.Popen([*command, "--db", str(db)], env=env, stdout=subprocess.DEVNULL)
    try:
        return wait_for_answer(port, symbol, started)
    finally:
        indexer.wait(timeout=120)


def start_daemon(
    workdir: Path, repo: Path, db: Path, *, watch: bool
) -> tuple[subprocess.Popen, int, Path]:
    """
    ``twistd -n eshu-mcp --repo REPO --watch`` (or, for the baseline, a daemon that only
    serves ``db``) on a kernel-chosen loopback port.
    """
    log_path = workdir / f"bench-watch-daemon-{'watch' if watch else 'plain'}.log"
    args = [*(["--repo", str(repo), "--watch"] if watch else []), "--db", str(db)]
    process, port = start_loopback_daemon(workdir, log_path, [*args, "--toolsets", "all"], 120)
    return process, port, log_path


def indexed_copy(workdir: Path, name: str) -> tuple[Path, Path]:
    """A Twisted repository and its index (built unless kept from an earlier run)."""
    repo = twisted_repository(workdir, name)
    db = workdir / f"{name}.sqlite"
    for stale in workdir.glob(f"{name}.sqlite*"):
        stale.unlink()
    print(f"indexing {repo} ...", file=sys.stderr)
    index_repositories(db, [repo])
    return repo, db


def main() -> None:
    parser = argument_parser(__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-baseline", action="store_true", help="skip the old design")
    options = parser.parse_args()
    workdir = scratch_folder(options.keep, "eshu-bench-watch-")
    repo, db = indexed_copy(workdir, "watched")
    daemons = [start_daemon(workdir, repo, db, watch=True)]
    if not options.no_baseline:
        base_repo, base_db = indexed_copy(workdir, "per-change")
        daemons.append(start_daemon(workdir, base_repo, base_db, watch=False))
    latencies, baseline = [], []
    try:
        time.sleep(1.0)  # let the start-up build (nothing to do) and its events settle
        for run in range(options.runs):  # the two designs alternate, under the same load
            symbol = f"bench_watch_{run}_{time.time_ns()}"
            started = append_function(repo, symbol)
            latencies.append(wait_for_answer(daemons[0][1], symbol, started))
            time.sleep(0.5)  # a quiet gap: each run measures one change
            if len(daemons) > 1:
                symbol = f"bench_baseline_{run}_{time.time_ns()}"
                baseline.append(per_change_process(daemons[1][1], base_repo, base_db, symbol))
                time.sleep(0.5)
        stopping = time.monotonic()
        daemons[0][0].terminate()
        daemons[0][0].wait(timeout=30)
        stop_seconds = time.monotonic() - stopping
    finally:
        for process, _, _ in daemons:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=30)
    log_path = daemons[0][2]
    builds = [line for line in log_path.read_text().splitlines() if "files parsed" in line]
    build_seconds = [float(s) for s in BUILD_SECONDS.findall("\n".join(builds))]
    result = {
        "files": sum(1 for _ in (repo / "twisted").rglob("*.py")),
        "runs": options.runs,
        "edit_to_answer_median_s": round(statistics.median(latencies), 3),
        "edit_to_answer_s": [round(v, 3) for v in latencies],
        "build_median_s": round(statistics.median(build_seconds), 3) if build_seconds else None,
        "daemon_stop_s": round(stop_seconds, 3),
        "last_build_log": builds[-1].split("] ", 1)[-1] if builds else None,
    }
    if baseline:
        result["per_change_process_median_s"] = round(statistics.median(baseline), 3)
        result["per_change_process_s"] = [round(v, 3) for v in baseline]
        result["speedup"] = round(statistics.median(baseline) / statistics.median(latencies), 2)
    print_result(result, options.json)


if __name__ == "__main__":
    main()
