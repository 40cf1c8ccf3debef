"""
Scale benchmark: a synthetic monorepo of renamed Twisted copies against Twisted itself.
Builds COPIES copies of the installed Twisted sources under renamed packages
(``twisted_c00`` ...; every ``twisted`` import rewritten) in one git repository (29 copies:
about 25,800 files), and, as the baseline in the same run, one plain copy. For each it
measures: the full index (wall, CPU of the indexer process, CPU per parsed MB); one-file
edits through a running daemon that watches the repository (``twistd -n eshu-mcp --repo``,
watching by default), edit-to-answer with ``find_symbol`` (median); the repository-wide
tools, warm (second call), with their status; and CLIENTS concurrent MCP clients
(Streamable HTTP, stateless) for SECONDS with nine point lookups to one repository-wide
call: calls/s, error results, point-lookup p50/p99. Figures are given beside Twisted's and
as ratios against it. Usage:
``python scripts/bench_scale.py [--copies 29] [--seconds 60] [--clients 8] [--edits 5]
[--reuse-index] [--keep DIR] [--json]``.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import (
    argument_parser,
    percentile,
    print_result,
    scratch_folder,
    start_loopback_daemon,
    twisted_package,
    twisted_repository,
)

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PROTOCOL = "2026-07-28"
TWISTED_WORD = re.compile(rb"\btwisted\b")
ANSWER_DEADLINE = 180.0
POLL_SECONDS = 0.05
POINT_SYMBOLS = (
    "Deferred",
    "callLater",
    "succeed",
    "inlineCallbacks",
    "LoopingCall",
    "Protocol",
    "Factory",
    "FilePath",
    "Failure",
    "Resource",
)
MESSAGE_IDS = itertools.count(1)


def wide_tools(repo: str) -> list[tuple[str, dict]]:
    """The repository-wide calls measured (and mixed into the load)."""
    return [
        ("get_repo_summary", {"repo_id": repo}),
        ("find_dead_code", {"repo_id": repo, "limit": 25}),
        ("investigate_import_dependencies", {"repo_id": repo, "query_type": "file_import_cycles"}),
        ("investigate_import_dependencies", {"repo_id": repo, "query_type": "module_dependencies"}),
        ("inspect_call_graph_metrics", {"repo_id": repo}),
        ("find_code", {"repo_id": repo, "query": "test", "limit": 25}),
        ("find_most_complex_functions", {"repo_id": repo, "limit": 25}),
    ]


# -- the repositories ----------------------------------------------------------------------


def git_commit(repo: Path) -> None:
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "sources"]):
        subprocess.run(
            ["git", "-C", str(repo), "-c", "user.email=b@example.com", "-c", "user.name=b", *args],
            check=True,
            capture_output=True,
        )


def monorepo(workdir: Path, copies: int) -> Path:
    """``workdir/monorepo``: ``copies`` renamed copies of Twisted, committed (kept if built)."""
    repo = workdir / f"monorepo-{copies}"
    if (repo / ".git").is_dir():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    source = twisted_package()
    for number in range(copies):
        package = f"twisted_c{number:02d}"
        for path in source.rglob("*"):
            if "__pycache__" in path.parts or path.suffix == ".pyc" or not path.is_file():
                continue
            target = repo / package / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            data = path.read_bytes()
            if path.suffix == ".py":
                data = TWISTED_WORD.sub(package.encode(), data)
            target.write_bytes(data)
    git_commit(repo)
    return repo


def tree_size(repo: Path) -> tuple[int, int]:
    files = [p for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts]
    return len(files), sum(p.stat().st_size for p in files)


def full_index(repo: Path, db: Path) -> dict:
    """Index ``repo`` from scratch in a child process: wall seconds and its CPU seconds."""
    for stale in db.parent.glob(db.name + "*"):
        stale.unlink()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    subprocess.run(
        [sys.executable, "-m", "eshu_mcp.cli", "index", str(repo), "--db", str(db)],
        check=True,
        env=env,
        capture_output=True,
    )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    files, size = tree_size(repo)
    return {
        "files": files,
        "megabytes": round(size / 1e6, 1),
        "index_wall_s": round(wall, 1),
        "index_cpu_s": round(cpu, 1),
        "cpu_s_per_mb": round(cpu / (size / 1e6), 3),
        "index_file_mb": round(db.stat().st_size / 1e6, 1),
    }


# -- the daemon ----------------------------------------------------------------------------


def start_daemon(workdir: Path, repo: Path, db: Path, name: str) -> tuple[subprocess.Popen, int]:
    """``twistd -n eshu-mcp --repo REPO`` (watching by default) on a loopback port."""
    args = ["--repo", str(repo), "--db", str(db), "--toolsets", "all"]
    return start_loopback_daemon(workdir, workdir / f"daemon-{name}.log", args, 600)


def call_tool(port: int, tool: str, arguments: dict, timeout: float = 60.0) -> dict:
    """One ``tools/call`` over Streamable HTTP (stateless); the MCP tool result."""
    message = {
        "jsonrpc": "2.0",
        "id": next(MESSAGE_IDS),
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        data=json.dumps(message).encode(),
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": PROTOCOL,
            "mcp-method": "tools/call",
            "mcp-name": tool,
        },
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        reply = json.loads(response.read())
    if "error" in reply:
        return {"isError": True, "content": [{"type": "text", "text": str(reply["error"])}]}
    return reply.get("result") or {}


def result_text(result: dict) -> str:
    blocks = result.get("content") or [{}]
    return str(blocks[0].get("text", ""))[:160]


def finds(port: int, symbol: str) -> bool:
    result = call_tool(port, "find_symbol", {"symbol": symbol})
    if result.get("isError"):
        raise RuntimeError(f"find_symbol failed: {result_text(result)}")
    data = (result.get("structuredContent") or {}).get("data") or {}
    return any(row.get("name") == symbol for row in data.get("results") or [])


def edit_to_answer(port: int, edited: Path, runs: int) -> list[float]:
    """Append a function ``runs`` times; seconds from each write until find_symbol sees it."""
    times = []
    for run in range(runs):
        symbol = f"bench_scale_{run}_{time.time_ns()}"
        started = time.monotonic()
        with edited.open("a") as source:
            source.write(f"\n\ndef {symbol}(value):\n    return value\n")
        while not finds(port, symbol):
            if time.monotonic() - started > ANSWER_DEADLINE:
                raise RuntimeError(f"{symbol} not found after {ANSWER_DEADLINE}s")
            time.sleep(POLL_SECONDS)
        times.append(time.monotonic() - started)
        time.sleep(1.0)  # one change at a time
    return times


def repository_wide(port: int, repo: str) -> dict:
    """Each repository-wide tool twice; the second (warm) time and how it ended."""
    figures = {}
    for tool, arguments in wide_tools(repo):
        label = arguments.get("query_type") or tool
        call_tool(port, tool, arguments, timeout=120)
        started = time.monotonic()
        result = call_tool(port, tool, arguments, timeout=120)
        seconds = time.monotonic() - started
        figures[label] = {
            "warm_s": round(seconds, 3),
            "ok": not result.get("isError"),
            **({"error": result_text(result)} if result.get("isError") else {}),
        }
    return figures


def load(port: int, repo: str, clients: int, seconds: float) -> dict:
    """``clients`` threads calling for ``seconds``: nine point lookups to one repo-wide call."""
    wide = wide_tools(repo)
    point_times: list[float] = []
    wide_times: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def client(number: int) -> None:
        chooser = random.Random(number)
        for turn in itertools.count():
            if time.monotonic() >= stop_at:
                return
            is_wide = turn % 10 == number % 10
            if is_wide:
                tool, arguments = chooser.choice(wide)
            else:
                tool, arguments = "find_symbol", {"symbol": chooser.choice(POINT_SYMBOLS)}
            started = time.monotonic()
            try:
                result = call_tool(port, tool, arguments, timeout=120)
                failed = result_text(result) if result.get("isError") else ""
            except (OSError, urllib.error.URLError, ValueError) as error:
                failed = f"{type(error).__name__}: {error}"
            elapsed = time.monotonic() - started
            with lock:
                (wide_times if is_wide else point_times).append(elapsed)
                if failed:
                    errors.append(f"{tool}: {failed}")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    total = len(point_times) + len(wide_times)
    return {
        "calls_per_s": round(total / seconds, 1),
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:3],
        "point_p50_ms": round(percentile(point_times, 0.5) * 1000, 1) if point_times else None,
        "point_p99_ms": round(percentile(point_times, 0.99) * 1000, 1) if point_times else None,
        "wide_p50_ms": round(percentile(wide_times, 0.5) * 1000, 1) if wide_times else None,
    }


def measure(workdir: Path, repo: Path, name: str, edited: str, options) -> dict:
    db = workdir / f"{name}.sqlite"
    if options.reuse_index and db.exists():  # a kept index: its figures are a kept run's
        files, size = tree_size(repo)
        figures = {"files": files, "megabytes": round(size / 1e6, 1), "index_reused": True}
    else:
        print(f"{name}: indexing {repo} ...", file=sys.stderr)
        figures = full_index(repo, db)
    process, port = start_daemon(workdir, repo, db, name)
    try:
        time.sleep(2.0)  # the start-up build (nothing to do) settles
        print(f"{name}: edits ...", file=sys.stderr)
        edits = edit_to_answer(port, repo / edited, options.edits)
        figures["edit_to_answer_median_s"] = round(statistics.median(edits), 3)
        figures["edit_to_answer_s"] = [round(v, 3) for v in edits]
        print(f"{name}: repository-wide tools ...", file=sys.stderr)
        figures["repository_wide"] = repository_wide(port, repo.name)
        print(f"{name}: {options.clients} clients for {options.seconds}s ...", file=sys.stderr)
        figures["load"] = load(port, repo.name, options.clients, options.seconds)
    finally:
        process.terminate()
        process.wait(timeout=60)
    return figures


def ratio(mono: float | None, base: float | None) -> float | None:
    return round(mono / base, 2) if mono and base else None


def main() -> None:
    parser = argument_parser(__doc__)
    parser.add_argument("--copies", type=int, default=29)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument(
        "--reuse-index",
        action="store_true",
        help="keep the --keep folder's indexes (no full index)",
    )
    options = parser.parse_args()
    workdir = scratch_folder(options.keep, "eshu-bench-scale-")
    base_repo = workdir / "twisted-baseline"
    if not (options.reuse_index and (base_repo / ".git").is_dir()):
        base_repo = twisted_repository(workdir, "twisted-baseline")
    mono_repo = monorepo(workdir, options.copies)
    base = measure(workdir, base_repo, "twisted", "twisted/python/util.py", options)
    mono = measure(workdir, mono_repo, "monorepo", "twisted_c00/python/util.py", options)
    wide_ok = all(item["ok"] for item in mono["repository_wide"].values())
    slowest = max(item["warm_s"] for item in mono["repository_wide"].values())
    result = {
        "copies": options.copies,
        "twisted": base,
        "monorepo": mono,
        "ratios_monorepo_over_twisted": {
            "files": ratio(mono["files"], base["files"]),
            "cpu_s_per_mb": ratio(mono.get("cpu_s_per_mb"), base.get("cpu_s_per_mb")),
            "edit_to_answer": ratio(
                mono["edit_to_answer_median_s"], base["edit_to_answer_median_s"]
            ),
            "point_p99": ratio(mono["load"]["point_p99_ms"], base["load"]["point_p99_ms"]),
            "calls_per_s": ratio(mono["load"]["calls_per_s"], base["load"]["calls_per_s"]),
        },
        "targets": {
            "edit_to_answer_le_0_5_s": mono["edit_to_answer_median_s"] <= 0.5,
            "every_wide_tool_answers": wide_ok,
            "wide_tools_le_2_s_warm": slowest <= 2.0,
            "no_errors_under_load": mono["load"]["errors"] == 0,
            "point_p99_le_250_ms": (mono["load"]["point_p99_ms"] or 1e9) <= 250,
        },
    }
    if options.json:
        print(json.dumps(result, sort_keys=True))
    else:
        print_result({key: json.dumps(value) for key, value in result.items()}, False)


if __name__ == "__main__":
    main()
