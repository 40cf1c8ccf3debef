#!/usr/bin/env python3
"""
Whether a qualified name names the definition an assistant means, on the Twisted sources.

Indexes a copy of the installed Twisted package (as ``bench_answers.py`` does), then takes
the methods Python's own ``ast`` finds in module-level classes (``@overload`` stubs left
out: they answer as their implementation), a fixed random sample of them, and asks
``find_symbol`` through the MCP protocol core for each in three spellings an assistant
uses: ``Class.method``, ``package.module.Class.method`` and ``Class.method()``. A lookup
is *exact* when the one definition answered is the method at its ``ast`` place (the
``def`` line or a decorator's), *among* when that method is one of several answered,
*wrong* when only other definitions answer and *missed* when nothing does.

    python scripts/bench_qualified_names.py [--keep DIR] [--json] [--sample N]
"""

import ast
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import (
    argument_parser,
    in_process,
    print_result,
    python_trees,
    react,
    scratch_folder,
    tool_result,
    twisted_index,
)

SEED = 20261203


def methods(root: Path) -> list[tuple[str, str, str, set[int]]]:
    """(relative path, class, method, lines it may start on) for every method ``ast`` sees."""
    found = []
    for relative, tree in python_trees(root):
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            for item in node.body:
                if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                decorators = [ast.unparse(d) for d in item.decorator_list]
                if any(d.rsplit(".", 1)[-1] == "overload" for d in decorators):
                    continue
                lines = {item.lineno, *(d.lineno for d in item.decorator_list)}
                found.append((relative, node.name, item.name, lines))
    return found


def spellings(path: str, klass: str, method: str) -> dict[str, str]:
    module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return {
        "Class.method": f"{klass}.{method}",
        "package.module.Class.method": f"{module}.{klass}.{method}",
        "Class.method()": f"{klass}.{method}()",
    }


def verdict(rows: list[dict], path: str, lines: set[int]) -> str:
    hits = [r for r in rows if r.get("file_path") == path and r.get("start_line") in lines]
    if not rows:
        return "missed"
    if not hits:
        return "wrong"
    return "exact" if len(rows) == 1 else "among"


async def measure(reactor, db: Path, root: Path, sample: int) -> dict:
    chosen = methods(root)
    random.Random(SEED).shuffle(chosen)
    chosen = chosen[:sample]
    counts: dict[str, Counter] = {}
    async with in_process(reactor, db) as bench:
        connection = bench.connection()
        for path, klass, method, lines in chosen:
            for spelling, name in spellings(path, klass, method).items():
                result = await tool_result(connection, "find_symbol", {"symbol": name, "limit": 25})
                data = (result.get("structuredContent") or {}).get("data") or {}
                rows = data.get("results") or []
                shared = data.get("results_shared") or {}
                rows = [{**shared, **row} for row in rows]
                counts.setdefault(spelling, Counter())[verdict(rows, path, lines)] += 1
    figures: dict = {"methods_in_ast": len(methods(root)), "sampled": len(chosen)}
    for spelling, counter in counts.items():
        total = sum(counter.values())
        for key in ("exact", "among", "wrong", "missed"):
            figures[f"{spelling} {key}"] = round(counter[key] / total, 3)
    return figures


def main() -> int:
    parser = argument_parser(__doc__)
    parser.add_argument("--sample", type=int, default=1000, help="methods asked about")
    options = parser.parse_args()
    workdir = scratch_folder(options.keep, "eshu-bench-qualified-")
    db = twisted_index(workdir)
    root = workdir / "twisted-sources"
    result: dict = {}

    async def run(reactor):
        result.update(await measure(reactor, db, root, options.sample))

    try:
        react(run)
    except SystemExit as stop:
        if stop.code:
            raise
    print_result(result, options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
