#!/usr/bin/env python3
"""
JavaScript dead code against what runs: find_dead_code on a JavaScript repository, checked
against V8's coverage of the repository's own test suite.

Run the tests with ``NODE_V8_COVERAGE=DIR`` first (for express: ``npm install`` then
``NODE_V8_COVERAGE=DIR npx mocha --require test/support/env test/ test/acceptance/``).
This script indexes the repository (in a scratch folder), pages through every
``find_dead_code`` row as an assistant would, and counts the reported definitions V8 saw
run: a definition ran when the outermost function V8 reports inside its span was called.
A reported definition that ran is certainly not dead; one that did not run may still be
live (the tests do not run everything), so the figure is a lower bound on wrong reports.
Also reported: of the repository's functions outside tests that ran, how many the dead
code scan called dead (the same check from the other side).

    python scripts/bench_dead_code_js.py --repo PATH --coverage DIR [--keep DIR] [--json]
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


def ran_spans(coverage: Path, repo: Path) -> dict[str, list[tuple[int, int, int]]]:
    """Repository path -> (start, end, calls) of every function V8 reported in it."""
    prefix = repo.resolve().as_uri() + "/"
    spans: dict[str, list[tuple[int, int, int]]] = {}
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
    return spans


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
    spans = ran_spans(Path(args.coverage), repo)
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
