#!/usr/bin/env python3
"""
JavaScript and TypeScript answers against what runs: the call graph and find_dead_code of a
repository, checked against the coverage of the repository's own test suite.

Coverage comes either from V8 (``--coverage DIR``: run the tests with
``NODE_V8_COVERAGE=DIR``; for express: ``npm install`` then ``NODE_V8_COVERAGE=DIR npx
mocha --require test/support/env test/ test/acceptance/``) or from an istanbul JSON report
mapped to the TypeScript sources (``--istanbul FILE``: for Hono, ``npx vitest --run
--project main --coverage.reporter=json`` writes coverage/raw/default/coverage-final.json).
This script indexes the repository (in a scratch folder) and reports:

* call edges: a single-target CALLS edge whose call site ran (the innermost block or
  statement counted around the call's line ran) to a target the coverage shows never
  called is certainly wrong; the share of such edges among those whose site ran is a lower
  bound on the wrong ones (a target that ran may still have been reached from elsewhere);
* dead code: every ``find_dead_code`` row, paged as an assistant would; a reported
  definition that ran is certainly not dead; and of the functions outside tests that
  ran, how many the scan called dead.

    python scripts/bench_js_runtime.py --repo PATH (--coverage DIR | --istanbul FILE)
                                       [--keep DIR] [--json]
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import argument_parser, in_process, print_result, react, scratch_folder

from eshu_mcp.query.local.index.build.indexer import index_repositories

PAGES = 100


class V8Coverage:
    """V8 block coverage: function and block ranges with counts, by byte offset."""

    def __init__(self, folder: Path, repo: Path) -> None:
        prefix = repo.resolve().as_uri() + "/"
        self.functions: dict[str, list[tuple[int, int, int]]] = {}
        self.blocks: dict[str, list[tuple[int, int, int]]] = {}
        for report in sorted(folder.glob("*.json")):
            for script in json.loads(report.read_text()).get("result", []):
                url = script.get("url", "")
                if not url.startswith(prefix) or "/node_modules/" in url:
                    continue
                path = url[len(prefix) :]
                for function in script.get("functions", []):
                    ranges = function.get("ranges") or []
                    if ranges:
                        whole = ranges[0]
                        self.functions.setdefault(path, []).append(
                            (whole["startOffset"], whole["endOffset"], whole["count"])
                        )
                        self.blocks.setdefault(path, []).extend(
                            (r["startOffset"], r["endOffset"], r["count"]) for r in ranges
                        )

    def covers(self, path: str) -> bool:
        return path in self.blocks

    def site_ran(self, path: str, line: int, text: str) -> bool:
        offsets = _line_offsets(text)
        if not 0 < line <= len(offsets):
            return False
        inside = [b for b in self.blocks.get(path, ()) if b[0] <= offsets[line - 1] < b[1]]
        return bool(inside) and min(inside, key=lambda b: b[1] - b[0])[2] > 0

    def function_ran(self, path: str, entity: dict) -> bool | None:
        """Whether the outermost function inside the definition's span was called."""
        start, end = entity["start_byte"], entity["end_byte"]
        inside = [
            span
            for span in self.functions.get(path, ())
            if start is not None and start <= span[0] and span[1] <= end
        ]
        if not inside:
            return None
        return max(inside, key=lambda span: span[1] - span[0])[2] > 0


class IstanbulCoverage:
    """An istanbul report (source-mapped): statements and functions with counts, by line."""

    def __init__(self, report: Path, repo: Path) -> None:
        prefix = str(repo.resolve()) + "/"
        self.statements: dict[str, list[tuple[int, int, int]]] = {}
        self.functions: dict[str, list[tuple[int, int, int]]] = {}
        for key, data in json.loads(report.read_text()).items():
            if not key.startswith(prefix):
                continue
            path = key[len(prefix) :]
            self.statements[path] = [
                (span["start"]["line"], span["end"]["line"] or span["start"]["line"], data["s"][i])
                for i, span in data["statementMap"].items()
            ]
            self.functions[path] = [
                (fn["decl"]["start"]["line"], fn["loc"]["start"]["line"], data["f"][i])
                for i, fn in data["fnMap"].items()
            ]

    def covers(self, path: str) -> bool:
        return path in self.statements

    def site_ran(self, path: str, line: int, text: str) -> bool:
        statements = self.statements.get(path, ())
        starting = [s for s in statements if s[0] == line]
        if starting:
            return any(s[2] > 0 for s in starting)
        inside = [s for s in statements if s[0] <= line <= s[1]]
        return bool(inside) and min(inside, key=lambda s: s[1] - s[0])[2] > 0

    def function_ran(self, path: str, entity: dict) -> bool | None:
        """Whether the function declared on the definition's name line was called."""
        line = entity["start_line"]
        found = [f for f in self.functions.get(path, ()) if line in (f[0], f[1])]
        if not found:
            return None
        return any(f[2] > 0 for f in found)


def _line_offsets(text: str) -> list[int]:
    """Offset of the first non-blank character of each line (index 0 = line 1)."""
    offsets, at = [], 0
    for line in text.split("\n"):
        offsets.append(at + len(line) - len(line.lstrip()))
        at += len(line) + 1
    return offsets


def edge_check(conn: sqlite3.Connection, repo_id: str, coverage) -> dict:
    """Single-target CALLS edges whose call site ran, and those of them whose target the
    coverage shows never called (certainly wrong)."""
    texts: dict[str, str] = {}
    checked, wrong, examples = 0, 0, []
    for path, line, t_path, t_name, t_line, t_start, t_end, method in conn.execute(
        "SELECT f.relative_path, e.line_number, t.relative_path, t.entity_name, t.start_line,"
        " t.start_byte, t.end_byte, e.resolution_method FROM edges e"
        " JOIN files f ON f.file_id = e.evidence_file_id"
        " JOIN entities t ON t.entity_id = e.target_id"
        " WHERE e.type = 'CALLS' AND e.repo_id = ? AND e.resolution_method <> 'ambiguous'"
        " AND f.language IN ('javascript', 'typescript', 'tsx')",
        (repo_id,),
    ):
        if line is None or not coverage.covers(path):
            continue
        if path not in texts:
            (content,) = conn.execute(
                "SELECT content FROM files WHERE relative_path = ? AND repo_id = ?",
                (path, repo_id),
            ).fetchone()
            texts[path] = content or ""
        if not coverage.site_ran(path, line, texts[path]):
            continue
        target = {"start_line": t_line, "start_byte": t_start, "end_byte": t_end}
        target_ran = coverage.function_ran(t_path, target)
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


async def dead_code_rows(reactor, db: Path, repo_id: str, found: list) -> None:
    """Every find_dead_code row, paged by ``next_offset``."""
    async with in_process(reactor, db) as bench:
        offset = 0
        for _ in range(PAGES):
            answer = await bench.dispatcher.call(
                "find_dead_code", {"repo_id": repo_id, "limit": 100, "offset": offset}
            )
            data = (answer.get("structuredContent") or {}).get("data") or {}
            found += data.get("results") or []
            if data.get("next_offset") is None:
                break
            offset = data["next_offset"]


def dead_code_check(conn: sqlite3.Connection, repo_id: str, rows: list, coverage) -> dict:
    """Reported definitions that ran, and functions that ran but were reported."""
    entity = {
        (path, name, line): {"start_line": line, "start_byte": start, "end_byte": end}
        for path, name, line, start, end in conn.execute(
            "SELECT relative_path, entity_name, start_line, start_byte, end_byte FROM entities"
            " WHERE repo_id = ?",
            (repo_id,),
        )
    }
    verdicts: dict[str, dict[str, int]] = {}
    ran_examples = []
    for row in rows:
        key = (row["file_path"], row["name"], row["start_line"])
        seen = coverage.function_ran(row["file_path"], entity[key]) if key in entity else None
        tally = verdicts.setdefault(row.get("classification", "?"), {})
        state = {True: "ran", False: "not_run", None: "not_loaded"}[seen]
        tally[state] = tally.get(state, 0) + 1
        if seen:
            ran_examples.append(f"{row['file_path']}:{row['start_line']} {row['name']}")
    reported = {(row["file_path"], row["name"], row["start_line"]) for row in rows}
    functions = [key for key, value in entity.items() if key in entity and coverage.covers(key[0])]
    ran_functions = [key for key in functions if coverage.function_ran(key[0], entity[key])]
    return {
        "reported": len(rows),
        "reported_by_classification": verdicts,
        "reported_that_ran": len(ran_examples),
        "reported_that_ran_examples": ran_examples[:10],
        "covered_definitions_that_ran": len(ran_functions),
        "covered_definitions_that_ran_reported_dead": sum(
            1 for key in ran_functions if key in reported
        ),
    }


def main() -> int:
    parser = argument_parser(__doc__)
    parser.add_argument("--repo", required=True, help="the repository (its tests run)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--coverage", help="the NODE_V8_COVERAGE folder")
    source.add_argument("--istanbul", help="an istanbul coverage-final.json")
    args = parser.parse_args()
    repo = Path(args.repo).resolve()
    folder = scratch_folder(args.keep, "eshu-js-runtime-")
    db = folder / "index.sqlite"
    report = index_repositories(db, [repo])
    if not report.ok:
        raise SystemExit(f"indexing {repo} failed")
    repo_id = report.repositories[0].repo_id
    coverage = (
        V8Coverage(Path(args.coverage), repo)
        if args.coverage
        else IstanbulCoverage(Path(args.istanbul), repo)
    )
    rows: list = []
    try:
        react(dead_code_rows, db, repo_id, rows)
    except SystemExit as stop:
        if stop.code:
            raise
    conn = sqlite3.connect(db)
    print_result(
        {
            "repository": str(repo),
            **edge_check(conn, repo_id, coverage),
            **dead_code_check(conn, repo_id, rows, coverage),
        },
        args.json,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
