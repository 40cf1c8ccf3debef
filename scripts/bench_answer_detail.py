#!/usr/bin/env python3
"""
Answer sizes on a real index, full detail against compact: the installed Twisted sources,
indexed into a temporary database, each question asked in process through the protocol
core (tools/call at 2025-11-25, the revision the official SDKs speak) with
``--answer-detail full`` and with ``compact``.

Bytes are those of the JSON-RPC ``result`` as it goes on the wire; "over budget" marks an
answer replaced by the response-budget error (full) or cut to fit it (compact, with
``truncated`` and the next offset).

    python scripts/bench_answer_detail.py [--keep DIR] [--json]
"""

import json
import statistics

from bench_support import (
    argument_parser,
    in_process,
    percentile,
    react,
    scratch_folder,
    tool_result,
    twisted_index,
)

from eshu_mcp.encoding import dumps

DEFER = {"relative_path": "twisted/internet/defer.py"}
QUESTIONS = [
    ("find_symbol Deferred", "find_symbol", {"symbol": "Deferred"}),
    ("find_code Protocol limit 10", "find_code", {"query": "Protocol", "limit": 10}),
    ("find_code Protocol limit 50", "find_code", {"query": "Protocol", "limit": 50}),
    ("find_code Protocol limit 200", "find_code", {"query": "Protocol", "limit": 200}),
    (
        "callers of gatherResults",
        "analyze_code_relationships",
        {"query_type": "find_callers", "target": "gatherResults"},
    ),
    (
        "callees of DeferredList",
        "analyze_code_relationships",
        {"query_type": "find_callees", "target": "DeferredList"},
    ),
    (
        "class hierarchy of Protocol",
        "analyze_code_relationships",
        {"query_type": "class_hierarchy", "target": "Protocol"},
    ),
    (
        "call chain cbEcho->DeferredList",
        "analyze_code_relationships",
        {"query_type": "call_chain", "target": "cbEcho->DeferredList"},
    ),
    (
        "relationship story Deferred limit 200",
        "get_code_relationship_story",
        {"target": "Deferred", "limit": 200},
    ),
    (
        "relationship story Deferred token_budget 2000",
        "get_code_relationship_story",
        {"target": "Deferred", "limit": 200, "token_budget": 2000},
    ),
    ("dead code limit 50", "analyze_code_relationships", {"query_type": "dead_code", "limit": 50}),
    ("search_entity_content callLater", "search_entity_content", {"pattern": "callLater"}),
    (
        "search_entity_content callLater limit 200",
        "search_entity_content",
        {"pattern": "callLater", "limit": 200},
    ),
    (
        "get_file_lines defer.py 40-80",
        "get_file_lines",
        {**DEFER, "start_line": 40, "end_line": 80},
    ),
    ("get_file_content defer.py", "get_file_content", DEFER),
    ("get_entity_content Deferred", "get_entity_content", "ENTITY"),
    ("most complex functions", "find_most_complex_functions", {"limit": 10}),
    ("hardcoded secrets", "investigate_hardcoded_secrets", {}),
]


async def ask(connection, tool: str, args: dict) -> tuple[int, bool, dict]:
    """Wire bytes of the result, whether the budget replaced or cut it, and the result."""
    result = await tool_result(connection, tool, args)
    structured = result.get("structuredContent") or {}
    data = structured.get("data") if isinstance(structured, dict) else None
    error = structured.get("error") if isinstance(structured, dict) else None
    over = bool(
        (isinstance(error, dict) and error.get("code") == "mcp_response_over_budget")
        or (isinstance(data, dict) and "truncation_note" in data)
    )
    return len(dumps(result).encode("utf-8")), over, result


async def run(reactor, options) -> None:
    db = twisted_index(scratch_folder(options.keep, "eshu-bench-detail-"))
    async with in_process(reactor, db) as bench:
        connections = {
            detail: bench.connection(answer_detail=detail) for detail in ("full", "compact")
        }
        _, _, repos = await ask(connections["full"], "list_indexed_repositories", {})
        repo_id = repos["structuredContent"]["data"]["repositories"][0]["id"]
        _, _, found = await ask(connections["full"], "find_symbol", {"symbol": "Deferred"})
        entity_id = found["structuredContent"]["data"]["results"][0]["entity_id"]
        report = []
        print(f"{'question':<48} {'full bytes':>11} {'compact bytes':>14} {'ratio':>7}")
        for label, tool, args in QUESTIONS:
            if args == "ENTITY":
                args = {"entity_id": entity_id}
            if tool in ("get_file_lines", "get_file_content"):
                args = {"repo_id": repo_id, **args}
            full, full_over, _ = await ask(connections["full"], tool, args)
            compact, compact_over, _ = await ask(connections["compact"], tool, args)
            report.append(
                {
                    "question": label,
                    "full_bytes": full,
                    "full_over_budget": full_over,
                    "compact_bytes": compact,
                    "compact_trimmed": compact_over,
                }
            )
            print(
                f"{label:<48} {full:>9}{' !' if full_over else '  '}"
                f" {compact:>12}{' ~' if compact_over else '  '} {full / compact:>6.1f}x"
            )
        for key in ("full_bytes", "compact_bytes"):
            sizes = sorted(row[key] for row in report)
            print(
                f"{key}: median {statistics.median(sizes):.0f},"
                f" p95 {percentile(sizes, 0.95)}, max {sizes[-1]}"
            )
        print("! replaced by the over-budget error   ~ cut to the budget with truncated")
        if options.json:
            print(json.dumps(report))


def main() -> None:
    react(run, argument_parser(__doc__).parse_args())


if __name__ == "__main__":
    main()
