"""
Benchmark edit-to-answer latency through a running daemon with ``--watch``.
Copies the installed Twisted sources into a git repository, indexes it, starts
``twistd -n eshu-mcp --repo REPO --watch`` on a loopback port, then RUNS times appends a new
function to one file and times from the write until a ``find_symbol`` tool call over
Streamable HTTP (``POST /mcp``) finds it. Median of the runs is the figure (target < 0.5 s);
``build_median_s`` is the indexer's own time for those builds (from the daemon's log), so the
rest is the daemon's share (notice, debounce, hand-over, answer).

The baseline, measured in the same run before the daemon starts, is the old design's cost of
one change: a fresh ``python -m eshu_mcp.query.local.index.command`` process per change,
from the write until that process has committed (the old poll interval, 2 s, not counted).
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

from bench_support import argument_parser, print_result, scratch_folder, twisted_repository

from eshu_mcp.query.local.index.indexer import index_repositories

PROJECT_ROOT = Path(__file__).resolve().parent.parent
EDITED = "twisted/python/util.py"
LISTENING = re.compile(r"Site starting on (\d+)")
PROTOCOL = "2026-07-28"
ANSWER_DEADLINE = 30.0
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
        time.sleep(0.02)
    raise RuntimeError(f"{symbol} not found after {ANSWER_DEADLINE}s")


def per_change_process(repo: Path, db: Path, runs: int) -> list[float]:
    """The old design: a new indexer process per change, write to committed."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    times = []
    for run in range(runs):
        started = append_function(repo, f"bench_baseline_{run}_{time.time_ns()}")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "eshu_mcp.query.local.index.command",
                str(repo),
                "--db",
                str(db),
            ],
            check=True,
            capture_output=True,
            env=env,
        )
        times.append(time.monotonic() - started)
    return times


def start_daemon(workdir: Path, repo: Path, db: Path) -> tuple[subprocess.Popen, int, Path]:
    """``twistd -n eshu-mcp --repo REPO --watch`` on a kernel-chosen loopback port."""
    log_path = workdir / "bench-watch-daemon.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ESHU_")}
    env.update(PYTHONPATH=str(PROJECT_ROOT), ESHU_HOME=str(workdir))
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
        "--repo",
        str(repo),
        "--db",
        str(db),
        "--watch",
        "--toolsets",
        "all",
    ]
    log = log_path.open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=workdir)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"daemon exited:\n{log_path.read_text()}")
        bound = LISTENING.search(log_path.read_text(errors="replace"))
        if bound is not None:
            port = int(bound.group(1))
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5):
                    return process, port, log_path
            except (urllib.error.URLError, OSError):
                pass
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("daemon not ready after 120 s")


def main() -> None:
    parser = argument_parser(__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-baseline", action="store_true", help="skip the old design")
    options = parser.parse_args()
    workdir = scratch_folder(options.keep, "eshu-bench-watch-")
    repo = twisted_repository(workdir)
    db = workdir / "index.sqlite"
    if not db.exists():
        print(f"indexing {repo} ...", file=sys.stderr)
        index_repositories(db, [repo])
    baseline = [] if options.no_baseline else per_change_process(repo, db, options.runs)
    process, port, log_path = start_daemon(workdir, repo, db)
    latencies = []
    try:
        time.sleep(1.0)  # let the start-up build (nothing to do) and its events settle
        for run in range(options.runs):
            symbol = f"bench_watch_{run}_{time.time_ns()}"
            started = append_function(repo, symbol)
            latencies.append(wait_for_answer(port, symbol, started))
            time.sleep(0.5)  # a quiet gap: each run measures one change
        stopping = time.monotonic()
        process.terminate()
        process.wait(timeout=30)
        stop_seconds = time.monotonic() - stopping
    finally:
        if process.poll() is None:
            process.kill()
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
