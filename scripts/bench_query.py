#!/usr/bin/env python3
"""
Query latency on a real index: the installed Twisted sources, indexed into a temporary
database, queried in process (straight through the /api/v0 Resource) and over MCP (a
JSON-RPC tools/call through the protocol core, dispatch and the same Resource).

Each scenario runs N sequential calls after a warm-up; the report gives p50/p99 in
milliseconds per round, the median of the rounds, and each figure as a ratio to a
baseline measured in the same run (GET /api/v0/repositories, one row, through the same
Resource and reader pool), since absolute numbers on a shared machine drift.

    python scripts/bench_query.py [--calls 200] [--rounds 3] [--keep DIR]
"""

import json
import statistics
import time

from bench_support import (
    argument_parser,
    in_process,
    percentile,
    react,
    scratch_folder,
    tools_call,
    twisted_index,
)

from eshu_mcp.dispatch.routes import resolve_route

SCENARIOS = {
    "find_code": {"query": "Deferred", "limit": 10},
    "find_symbol": {"symbol": "callLater"},
    "callers": {"query_type": "find_callers", "target": "gatherResults"},
    "call_chain": {"query_type": "call_chain", "target": "cbEcho->DeferredList"},
    "dead_code": {"query_type": "dead_code", "limit": 50},
    "file_lines": None,  # filled in once the repository id is known
}
TOOL_FOR = {
    "find_code": "find_code",
    "find_symbol": "find_symbol",
    "callers": "analyze_code_relationships",
    "call_chain": "analyze_code_relationships",
    "dead_code": "analyze_code_relationships",
    "file_lines": "get_file_lines",
}


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p99 of ``samples`` (seconds), in milliseconds."""
    return percentile(samples, 0.5) * 1000, percentile(samples, 0.99) * 1000


async def time_calls(make_call, calls: int) -> list[float]:
    for _ in range(min(20, calls)):
        await make_call()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await make_call()
        samples.append(time.perf_counter() - started)
    return samples


async def run(reactor, options) -> None:
    db = twisted_index(scratch_folder(options.keep, "eshu-bench-query-"))
    async with in_process(reactor, db) as bench:
        dispatcher = bench.dispatcher
        connection = bench.connection()
        repos = await dispatcher.call("list_indexed_repositories", {})
        repo_id = repos["structuredContent"]["data"]["repositories"][0]["id"]
        scenarios = dict(SCENARIOS)
        scenarios["file_lines"] = {
            "repo_id": repo_id,
            "relative_path": "twisted/internet/defer.py",
            "start_line": 40,
            "end_line": 80,
        }
        baseline = resolve_route("list_indexed_repositories", {})
        rows: dict[str, dict[str, list]] = {}
        for _ in range(options.rounds):
            base = await time_calls(lambda: dispatcher.request(baseline), options.calls)
            base_p50, _ = percentiles(base)
            for name, args in scenarios.items():
                tool = TOOL_FOR[name]
                route = resolve_route(tool, args)
                direct = await time_calls(
                    lambda route=route: dispatcher.request(route), options.calls
                )

                def over_mcp(tool=tool, args=args):
                    return tools_call(connection, tool, args)

                mcp = await time_calls(over_mcp, options.calls)
                entry = rows.setdefault(name, {"in_process": [], "mcp": [], "baseline": []})
                entry["in_process"].append(percentiles(direct))
                entry["mcp"].append(percentiles(mcp))
                entry["baseline"].append(base_p50)
        print(
            f"{'scenario':<12} {'in-process p50/p99 ms':>24} {'over MCP p50/p99 ms':>22}"
            f" {'p50 ratio to baseline':>22}"
        )
        report = {}
        for name, entry in rows.items():
            inproc = [statistics.median(x) for x in zip(*entry["in_process"], strict=True)]
            mcp = [statistics.median(x) for x in zip(*entry["mcp"], strict=True)]
            base = statistics.median(entry["baseline"])
            report[name] = {"in_process_ms": inproc, "mcp_ms": mcp, "baseline_p50_ms": base}
            print(
                f"{name:<12} {inproc[0]:>11.2f} / {inproc[1]:>8.2f}"
                f" {mcp[0]:>10.2f} / {mcp[1]:>8.2f}"
                f" {inproc[0] / base:>10.1f}x / {mcp[0] / base:>5.1f}x"
            )
        baseline_p50 = statistics.median(rows["find_code"]["baseline"])
        print(f"baseline (GET /api/v0/repositories in process) p50 {baseline_p50:.3f} ms")
        if options.json:
            print(json.dumps(report))


def main() -> None:
    parser = argument_parser(__doc__)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    react(run, parser.parse_args())


if __name__ == "__main__":
    main()
