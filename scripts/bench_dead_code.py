"""
Measure ``find_dead_code`` on the installed Twisted package's sources.

Indexes a git copy of Twisted (or reuses ``--db``), pages ``/code/dead-code`` to the end and
reports: how many files the scan covers, whether paging is exact (no row lost or repeated,
the page count matching ``active_candidates``), latency (first scan and a kept one), and the
share of reported names referenced nowhere, checked against Python's own ``ast``: a name
counts as referenced when it appears as a ``Name``, an ``Attribute``, an imported name or a
string equal to it in any file, outside its own definition's lines. The same share is given
for the graph alone (edges and roots, without the name-level check).
Usage: ``python scripts/bench_dead_code.py [--db PATH] [--json]``.
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_support import print_result, python_trees, twisted_repository

from eshu_mcp.query.local.api.deadcode import cache, scan
from eshu_mcp.query.local.api.platform.framework import ROUTES, ApiContext
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader


def post(conn, path: str, body: dict) -> dict:
    """Run a registered POST route in process and return its data."""
    import eshu_mcp.query.local.api  # noqa: F401  (registers the routes)

    route = ROUTES.find("POST", path)
    return route.handler(ApiContext(conn, "POST", {}, {}, body, True, None)).data


def usages(root: Path) -> dict[str, list[tuple[str, int]]]:
    """Every name use in the work tree's Python files: name -> [(relative path, line)]."""
    found: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for relative, tree in python_trees(root):
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                found[node.id].append((relative, node.lineno))
            elif isinstance(node, ast.Attribute):
                found[node.attr].append((relative, node.end_lineno or node.lineno))
            elif isinstance(node, ast.alias):
                found[node.name.rsplit(".", 1)[-1]].append((relative, node.lineno))
            elif isinstance(node, ast.Constant) and str(node.value).isidentifier():
                found[node.value].append((relative, node.lineno))
    return found


def referenced(row: dict, uses: dict[str, list[tuple[str, int]]]) -> bool:
    """Whether a reported candidate's name is used outside its own definition."""
    path, first, last = row["file_path"], row["start_line"], row["end_line"]
    return any(p != path or not first <= line <= last for p, line in uses.get(row["name"], ()))


def page_everything(conn, limit: int) -> tuple[list[dict], dict, int]:
    rows: list[dict] = []
    offset, pages, first = 0, 0, None
    while offset is not None and pages < 10_000:
        data = post(conn, "/code/dead-code", {"limit": limit, "offset": offset})
        first = first or data
        rows += data["results"]
        offset = data["next_offset"]
        pages += 1
    return rows, first, pages


def timed_scan(conn, keep: bool) -> float:
    if not keep:
        cache.forget()
    started = time.perf_counter()
    post(conn, "/code/dead-code", {"limit": 100})
    return time.perf_counter() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--db", help="an index of the Twisted copy (its work tree is read)")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-dead-") as tmp:
        if options.db:
            db = Path(options.db)
        else:
            db = Path(tmp) / "index.sqlite"
            repo = twisted_repository(Path(tmp), "twisted-src")
            if not index_repositories(db, [repo]).ok:
                return 1
        conn = open_reader(db)
        (work_tree,) = conn.execute("SELECT local_path FROM repositories").fetchone()
        first_scan = [timed_scan(conn, keep=False) for _ in range(3)]
        kept_scan = [timed_scan(conn, keep=True) for _ in range(3)]
        rows, first, pages = page_everything(conn, 100)
        uses = usages(Path(work_tree))
        unreferenced = [r for r in rows if not referenced(r, uses)]
        graph = scan._scan(
            conn,
            repo="",
            language="",
            excluded_decorators=[],
            candidate_kind="",
            name_check=False,
        )
        graph_rows = [
            {**c.row, "name": c.row["entity_name"], "file_path": c.row["relative_path"]}
            for c in graph.active
        ]
        graph_free = [r for r in graph_rows if not referenced(r, uses)]
        keys = [(r["file_path"], r["name"], r["start_line"]) for r in rows]
        result = {
            "scope_files_with_candidates": first["scope_files"],
            "candidate_scan_files": first["candidate_scan_files"],
            "candidate_scan_rows": first["candidate_scan_rows"],
            "candidate_scan_truncated": first["candidate_scan_truncated"],
            "reported": len(rows),
            "active_candidates": first["active_candidates"],
            "pages_of_100": pages,
            "paging_exact": len(keys) == len(set(keys)) == first["active_candidates"],
            "reported_files": len({r["file_path"] for r in rows}),
            "reported_referenced_nowhere": len(unreferenced),
            "share_referenced_nowhere": round(len(unreferenced) / max(len(rows), 1), 3),
            "graph_only_reported": len(graph_rows),
            "graph_only_share_referenced_nowhere": round(
                len(graph_free) / max(len(graph_rows), 1), 3
            ),
            "suppressed_by_name_use": first["suppressed_by_name_use"],
            "first_scan_ms_median": round(statistics.median(first_scan) * 1000),
            "kept_scan_ms_median": round(statistics.median(kept_scan) * 1000, 1),
        }
        conn.close()
    print_result(result, options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
