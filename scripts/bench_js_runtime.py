#!/usr/bin/env python3
"""
JavaScript answers against what runs: the call graph and find_dead_code of a JavaScript
repository, checked against V8's coverage of the repository's own test suite.

Run the tests with ``NODE_V8_COVERAGE=DIR`` first (for express: ``npm install`` then
``NODE_V8_COVERAGE=DIR npx mocha --require test/support/env test/ test/acceptance/``).
This script indexes the repository (in a scratch folder) and, with V8's block coverage:

* call edges: a single-target CALLS edge whose call site ran (the innermost block V8
  counted around the call's line ran) to a target V8 saw never called is certainly
  wrong; the share of such edges among those whose site ran is a lower bound on the
  wrong ones (a target that ran may still have been reached from elsewhere);
* dead code: every ``find_dead_code`` row, paged as an assistant would; a reported
  definition that ran is certainly not dead; and of the functions outside tests that
  ran, how many the scan called dead.

    python scripts/bench_js_runtime.py --repo PATH --coverage DIR [--keep DIR] [--json]
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import argument_parser, in_process, print_result, react, scratch_folder

from eshu_mcp.query.local.index.indexer import index_repositories

PAGES = 100


def coverage_ranges(
    coverage: Path, repo: Path
) -> tuple[dict[str, list[tuple[int, int, int]]], dict[str, list[tuple[int, int, int]]]]:
    """Repository path -> (start, end, calls) of every function V8 reported in it, and
    path -> (start, end, count) of every block range (functions included)."""
    prefix = repo.resolve().as_uri() + "/"
    spans: dict[str, list[tuple[int, int, int]]] = {}
    blocks: dict[str, list[tuple[int, int, int]]] = {}
    for report in sorted(coverage.glob("*.json")):
        for script in json.loads(report.read_text()).get("result", []):
            url = script.get("url", "")
            if not url.startswith(prefix) or "/node_modules/" in url:
                continue
            path = url[len(prefix) :]
            for function in script.get("functions", []):
                ranges = function.get("ranges") or []
                if ranges:
                    whole = ranges[0]
                    spans.setdefault(path, []).append(
                        (whole["startOffset"], whole["endOffset"], whole["count"])
                    )
                    blocks.setdefault(path, []).extend(
                        (r["startOffset"], r["endOffset"], r["count"]) for r in ranges
                    )
    return spans, blocks


def count_at(blocks: list[tuple[int, int, int]], offset: int) -> int | None:
    """The count of the innermost block V8 reported around ``offset``."""
    inside = [block for block in blocks if block[0] <= offset < block[1]]
    if not inside:
        return None
    return min(inside, key=lambda block: block[1] - block[0])[2]


def line_offsets(text: str) -> list[int]:
    """Offset of the first non-blank character of each line (index 0 = line 1)."""
    offsets, at = [], 0
    for line in text.split("\n"):
        offsets.append(at + len(line) - len(line.lstrip()))
        at += len(line) + 1
    return offsets


def edge_check(conn: sqlite3.Connection, repo_id: str, spans: dict, blocks: dict) -> dict:
    """Single-target CALLS edges whose call site ran, and those of them whose target V8
    saw never called (certainly wrong)."""
    texts: dict[str, list[int]] = {}
    checked, wrong, examples = 0, 0, []
    for path, line, t_path, t_name, t_start, t_end, method in conn.execute(
        "SELECT f.relative_path, e.line_number, t.relative_path, t.entity_name,"
        " t.start_byte, t.end_byte, e.resolution_method FROM edges e"
        " JOIN files f ON f.file_id = e.evidence_file_id"
        " JOIN entities t ON t.entity_id = e.target_id"
        " WHERE e.type = 'CALLS' AND e.repo_id = ? AND e.resolution_method <> 'ambiguous'"
        " AND f.language IN ('javascript', 'typescript', 'tsx')",
        (repo_id,),
    ):
        if path not in blocks or line is None:
            continue
        if path not in texts:
            (content,) = conn.execute(
                "SELECT content FROM files WHERE relative_path = ? AND repo_id = ?",
                (path, repo_id),
            ).fetchone()
            texts[path] = line_offsets(content or "")
        offsets = texts[path]
        if not 0 < line <= len(offsets) or not count_at(blocks[path], offsets[line - 1]):
            continue
        target_ran = ran({"relative_path": t_path, "start_byte": t_start, "end_byte": t_end}, spans)
        if target_ran is None:
            continue
        checked += 1
        if not target_ran:
            wrong += 1
            examples.append(f"{path}:{line} -> {t_path}:{t_name} [{method}]")
    return {
        "single_target_edges_with_a_call_site_that_ran": checked,
        "certainly_wrong": wrong,
        "certainly_wrong_share": round(wrong / checked, 3) if checked else None,
        "certainly_wrong_examples": examples[:8],
    }


def ran(row: dict, spans: dict[str, list[tuple[int, int, int]]]) -> bool | None:
    """Whether the outermost function inside a definition's span was called; None when V8
    reported nothing inside it (its file never loaded, or it holds no function)."""
    start, end = row.get("start_byte"), row.get("end_byte")
    inside = [
        span
        for span in spans.get(row["relative_path"], ())
        if start is not None and start <= span[0] and span[1] <= end
    ]
    if not inside:
        return None
    outermost = max(inside, key=lambda span: span[1] - span[0])
    return outermost[2] > 0


async def measure(reactor, db: Path, repo_id: str, spans: dict, result: dict) -> None:
    rows: list[dict] = []
    async with in_process(reactor, db) as bench:
        offset = 0
        for _ in range(PAGES):
            answer = await bench.dispatcher.call(
                "find_dead_code", {"repo_id": repo_id, "limit": 100, "offset": offset}
            )
            data = (answer.get("structuredContent") or {}).get("data") or {}
            rows += data.get("results") or []
            if data.get("next_offset") is None:
                break
            offset = data["next_offset"]
    result["reported"] = len(rows)
    result["rows"] = rows


def main() -> int:
    parser = argument_parser(__doc__)
    parser.add_argument("--repo", required=True, help="the JavaScript repository (tests run)")
    parser.add_argument("--coverage", required=True, help="the NODE_V8_COVERAGE folder")
    args = parser.parse_args()
    repo = Path(args.repo).resolve()
    folder = scratch_folder(args.keep, "eshu-dead-js-")
    db = folder / "index.sqlite"
    report = index_repositories(db, [repo])
    if not report.ok:
        raise SystemExit(f"indexing {repo} failed")
    repo_id = report.repositories[0].repo_id
    spans, blocks = coverage_ranges(Path(args.coverage), repo)
    found: dict = {}
    try:
        react(measure, db, repo_id, spans, found)
    except SystemExit as stop:
        if stop.code:
            raise
    conn = sqlite3.connect(db)
    where = {
        (path, name, line): (start, end)
        for path, name, line, start, end in conn.execute(
            "SELECT relative_path, entity_name, start_line, start_byte, end_byte FROM entities"
            " WHERE repo_id = ?",
            (repo_id,),
        )
    }
    verdicts: dict[str, dict[str, int]] = {}
    ran_examples = []
    for row in found["rows"]:
        key = (row["file_path"], row["name"], row["start_line"])
        start, end = where.get(key, (None, None))
        seen = ran({"relative_path": row["file_path"], "start_byte": start, "end_byte": end}, spans)
        tally = verdicts.setdefault(row.get("classification", "?"), {})
        state = {True: "ran", False: "not_run", None: "not_loaded"}[seen]
        tally[state] = tally.get(state, 0) + 1
        if seen:
            ran_examples.append(f"{row['file_path']}:{row['start_line']} {row['name']}")
    reported_ids = {(row["file_path"], row["name"], row["start_line"]) for row in found["rows"]}
    functions = conn.execute(
        "SELECT relative_path, entity_name, start_line, start_byte, end_byte FROM entities"
        " WHERE repo_id = ? AND entity_type = 'Function' AND NOT is_test"
        " AND language IN ('javascript', 'typescript', 'tsx')",
        (repo_id,),
    ).fetchall()
    ran_functions = [
        f
        for f in functions
        if ran({"relative_path": f[0], "start_byte": f[3], "end_byte": f[4]}, spans)
    ]
    wrongly_dead = [f for f in ran_functions if (f[0], f[1], f[2]) in reported_ids]
    print_result(
        {
            "repository": str(repo),
            **edge_check(conn, repo_id, spans, blocks),
            "files_with_coverage": len(spans),
            "reported": found["reported"],
            "reported_by_classification": verdicts,
            "reported_that_ran": len(ran_examples),
            "reported_that_ran_examples": ran_examples[:10],
            "functions_outside_tests": len(functions),
            "functions_that_ran": len(ran_functions),
            "functions_that_ran_reported_dead": len(wrongly_dead),
        },
        args.json,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
