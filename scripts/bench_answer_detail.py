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

import argparse
import itertools
import json
import statistics
import sys
import tempfile
from pathlib import Path

from bench_query import twisted_sources
from twisted.internet import defer, task

from eshu_mcp.encoding import dumps
from eshu_mcp.protocol.server import CallContext
from eshu_mcp.query.local.backend import LocalQueryBackend
from eshu_mcp.query.local.index.indexer import index_repositories
from eshu_mcp.service import ServerSettings, build_mcp_server

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
MESSAGE_IDS = itertools.count(1)


async def ask(connection, tool: str, args: dict) -> tuple[int, bool, dict]:
    message = {
        "jsonrpc": "2.0",
        "id": next(MESSAGE_IDS),
        "method": "tools/call",
        "params": {"name": tool, "arguments": args},
    }
    reply = await connection.handle(message, CallContext(transport="bench"))
    result = reply["result"]
    structured = result.get("structuredContent") or {}
    data = structured.get("data") if isinstance(structured, dict) else None
    error = structured.get("error") if isinstance(structured, dict) else None
    over = bool(
        (isinstance(error, dict) and error.get("code") == "mcp_response_over_budget")
        or (isinstance(data, dict) and "truncation_note" in data)
    )
    return len(dumps(result).encode("utf-8")), over, result


async def run(reactor, options) -> None:
    workdir = Path(options.keep or tempfile.mkdtemp(prefix="eshu-bench-detail-"))
    db = workdir / "index.sqlite"
    if not db.exists():
        repo = twisted_sources(workdir)
        print(f"indexing {repo} ...", file=sys.stderr)
        index_repositories(db, [repo])
    backend = LocalQueryBackend(str(db), reactor=reactor)
    backend.startService()
    try:
        connections = {}
        for detail in ("full", "compact"):
            server = build_mcp_server(
                backend.resource,
                clock=reactor,
                settings=ServerSettings(toolsets="all", answer_detail=detail),
                backend=backend,
            )
            connections[detail] = server.connection(default_version="2025-11-25")
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
                f" p95 {sizes[min(len(sizes) - 1, int(len(sizes) * 0.95))]}, max {sizes[-1]}"
            )
        print("! replaced by the over-budget error   ~ cut to the budget with truncated")
        if options.json:
            print(json.dumps(report))
    finally:
        await defer.maybeDeferred(backend.stopService)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--keep", help="reuse or keep the index in this folder")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    task.react(lambda reactor: defer.ensureDeferred(run(reactor, options)))


if __name__ == "__main__":
    main()
