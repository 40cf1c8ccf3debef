#!/usr/bin/env python3
"""
The relationship tools as an assistant uses them, on the installed Twisted sources.

Indexes Twisted into a temporary git repository (or reuses ``--keep DIR``), then calls
``analyze_code_relationships`` through the in-process dispatch (the MCP tool result, with
its response budget) and reports:

* answer sizes at ``limit`` 200 for names with one or many definitions (bytes as the
  budget counts them: both wire copies), rows served, whether the answer was clamped;
* paging: every page of the callers of the most-called definitions, read by
  ``next_offset`` at several page sizes, compared with the stored edges read in one SQL
  query (rows lost, rows served twice);
* that a ``target`` holding an entity id or handle, and ``start_entity_id``, answer that
  one entity.

    python scripts/bench_relationships.py [--keep DIR] [--json]
"""

import itertools
import json
import shutil
import sqlite3
from collections import Counter
from pathlib import Path

from bench_support import argument_parser, in_process, react, scratch_folder, twisted_index

from eshu_mcp.dispatch.budget import DEFAULT_RESPONSE_BUDGET, measure

AMBIGUOUS_NAMES = ("write", "dataReceived", "addCallback", "loseConnection", "callLater")
# (tool, page size) pairs paged through; each tool's arguments naming one entity's callers.
PAGINGS = (
    ("analyze_code_relationships", 25),
    ("analyze_code_relationships", 77),
    ("analyze_code_relationships", 200),
    ("get_code_relationship_story", 25),
    ("get_code_relationship_story", 200),
)
PAGED_CALLERS = {
    "analyze_code_relationships": lambda entity_id: {
        "query_type": "find_callers",
        "target": entity_id,
    },
    "get_code_relationship_story": lambda entity_id: {
        "entity_id": entity_id,
        "direction": "incoming",
        "relationship_type": "CALLS",
    },
}
MOST_CALLED = 4
MAX_PAGES = 400


def payload(result: dict) -> dict:
    """The structured payload of a tool result (the envelope's data, or the error)."""
    return result.get("structuredContent") or {}


async def sizes(call) -> list[dict]:
    """Answer size and rows at limit 200 for names shared by many definitions."""
    report = []
    for name in AMBIGUOUS_NAMES:
        for query_type in ("find_callers", "find_callees"):
            args = {"query_type": query_type, "target": name, "limit": 200}
            result = await call("analyze_code_relationships", args)
            body = payload(result)
            data = body.get("data") or {}
            resolution = data.get("target_resolution", {})
            report.append(
                {
                    "name": name,
                    "query_type": query_type,
                    "bytes": measure(body),
                    "is_error": bool(result.get("isError")),
                    "rows": len(data.get("relationships", [])),
                    "status": resolution.get("status"),
                    "definitions": resolution.get("candidate_count"),
                    "groups_with_rows": data.get("summary", {}).get("groups_with_rows"),
                    "truncated": data.get("summary", {}).get("truncated"),
                }
            )
    return report


def stored_callers(db: Path, entity_id: str) -> Counter:
    """Every stored CALLS edge into ``entity_id``, read in one query."""
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT source_id, line_number FROM edges WHERE target_id = ? AND type = 'CALLS'",
        (entity_id,),
    ).fetchall()
    conn.close()
    return Counter(rows)


async def paging(call, db: Path) -> list[dict]:
    """Page through the callers of the most-called definitions; compare with SQL."""
    conn = sqlite3.connect(db)
    targets = conn.execute(
        "SELECT target_id, COUNT(*) FROM edges WHERE type = 'CALLS'"
        " AND target_id LIKE 'content-entity:%' GROUP BY target_id ORDER BY 2 DESC LIMIT ?",
        (MOST_CALLED,),
    ).fetchall()
    conn.close()
    report = []
    for (entity_id, count), (tool, size) in itertools.product(targets, PAGINGS):
        expected = stored_callers(db, entity_id)
        served: Counter = Counter()
        offset, pages, largest, clamped = 0, 0, 0, 0
        while offset is not None and pages < MAX_PAGES:
            args = {"limit": size, "offset": offset, **PAGED_CALLERS[tool](entity_id)}
            body = payload(await call(tool, args))
            data = body.get("data") or {}
            rows = data.get("relationships", [])
            largest = max(largest, measure(body))
            served.update((r["source_id"], r.get("line_number")) for r in rows)
            pages += 1
            summary = data.get("summary", {})
            clamped += int(len(rows) < size and summary.get("truncated", False))
            if "next_offset" in summary:
                offset = summary["next_offset"]
            else:  # a build without next_offset: the client's usual guess
                offset = offset + size if summary.get("truncated") else None
            if offset is not None and offset > 10000:
                offset = None
        reachable = min(count, 10000 + size)
        report.append(
            {
                "tool": tool,
                "entity_id": entity_id,
                "edges": count,
                "page_size": size,
                "pages": pages,
                "served": sum(served.values()),
                "lost": sum((expected - served).values()) - max(count - reachable, 0),
                "repeated": sum((served - expected).values()),
                "largest_page_bytes": largest,
                "pages_clamped_by_budget": clamped,
            }
        )
    return report


async def anchoring(call, db: Path) -> list[dict]:
    """A target holding an id, a handle, or start_entity_id answers that entity."""
    conn = sqlite3.connect(db)
    (entity_id,) = conn.execute(
        "SELECT entity_id FROM entities WHERE entity_name = 'write'"
        " AND class_context = 'FileDescriptor' LIMIT 1"
    ).fetchone()
    conn.close()
    report = []
    for label, args in (
        ("target=id", {"target": entity_id}),
        ("target=handle", {"target": "entity:" + entity_id}),
        ("start_entity_id", {"start_entity_id": entity_id}),
    ):
        body = payload(
            await call("analyze_code_relationships", {"query_type": "find_callers", **args})
        )
        resolution = (body.get("data") or {}).get("target_resolution", {})
        report.append(
            {
                "argument": label,
                "status": resolution.get("status"),
                "answers_that_entity": resolution.get("entity_id") == entity_id,
            }
        )
    return report


async def run(reactor, options) -> None:
    workdir = scratch_folder(options.keep, "eshu-bench-rel-")
    try:
        db = twisted_index(workdir)
        async with in_process(reactor, db) as bench:
            call = bench.dispatcher.call
            report = {
                "budget_bytes": DEFAULT_RESPONSE_BUDGET,
                "sizes_at_limit_200": await sizes(call),
                "paging": await paging(call, db),
                "anchoring": await anchoring(call, db),
            }
    finally:
        if not options.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    if options.json:
        print(json.dumps(report, indent=1))
        return
    print(f"response budget {report['budget_bytes']} bytes")
    for row in report["sizes_at_limit_200"]:
        print(
            f"{row['query_type']:<13} {row['name']:<15} {row['bytes']:>7} B"
            f" rows {row['rows']:>3} {row['status']} definitions {row['definitions']}"
            f" groups {row['groups_with_rows']} truncated {row['truncated']}"
            f"{' ERROR' if row['is_error'] else ''}"
        )
    for row in report["paging"]:
        print(
            f"{row['tool']} {row['entity_id']} ({row['edges']} callers)"
            f" by {row['page_size']}:"
            f" {row['pages']} pages, lost {row['lost']}, repeated {row['repeated']},"
            f" largest page {row['largest_page_bytes']} B,"
            f" {row['pages_clamped_by_budget']} clamped by the budget"
        )
    for row in report["anchoring"]:
        print(
            f"{row['argument']:<16} {row['status']}"
            f" answers that entity: {row['answers_that_entity']}"
        )


def main() -> None:
    react(run, argument_parser(__doc__).parse_args())


if __name__ == "__main__":
    main()
