"""
One-file builds that move definitions, against one that appends one, in the same process.

Builds (or reuses, in --keep) the synthetic monorepo of ``bench_scale.py`` (COPIES renamed
copies of Twisted) and its full index, then, in this process and as the daemon's builder
child does (graph inputs kept between builds, warmed first, the watcher's changed path
given), makes EDITS rounds of six one-file builds of ``twisted_c00/internet/defer.py``:
a line inserted at the top (every definition below moves), the line removed again, a new
function inserted at the top (one definition added, every other one moves), that function
removed again, a function appended (the baseline: nothing moves), the function removed.
Reports each kind's median CPU seconds and files re-resolved, and the ratios of a move and
of an insertion to an append. Usage:
``python scripts/bench_moves.py [--copies 5] [--edits 3] [--keep DIR] [--json]``.
"""

from __future__ import annotations

import resource
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import full_index, monorepo
from bench_support import argument_parser, print_result, scratch_folder

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.resolve import input_cache

EDITED = "twisted_c00/internet/defer.py"
TOP_LINE = "# a line inserted at the top moves every definition below it\n"
APPENDED = "\n\ndef bench_moves_appended(value):\n    return value\n"
INSERTED = "def bench_moves_inserted(value):\n    return value\n\n\n"


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def build(db: Path, repo: Path, text: str) -> tuple[float, int]:
    """Write the edited file, build for it; (CPU seconds, files re-resolved)."""
    (repo / EDITED).write_text(text)
    started = cpu_seconds()
    report = index_repositories(db, [repo], workers=1, changed={str(repo): [EDITED]})
    spent = cpu_seconds() - started
    result = report.repositories[0]
    if result.modified != (EDITED,):
        raise SystemExit(f"expected one modified file, the build says {result.modified}")
    return spent, result.edges["rebuilt_files"]


def main() -> None:
    parser = argument_parser(__doc__)
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--edits", type=int, default=3)
    options = parser.parse_args()
    workdir = scratch_folder(options.keep, "eshu-bench-moves-")
    repo = monorepo(workdir, options.copies)
    db = workdir / "moves.sqlite"
    if not db.exists():
        print(f"indexing {repo} ...", file=sys.stderr)
        full_index(repo, db)
    original = (repo / EDITED).read_text()
    input_cache.keep_between_builds()
    first = index_repositories(db, [repo], workers=1)  # whatever an earlier run left
    input_cache.warm(db, [first.repositories[0].repo_id])
    runs: dict[str, list[tuple[float, int]]] = {
        "move": [],
        "move_back": [],
        "insert": [],
        "insert_back": [],
        "append": [],
        "append_back": [],
    }
    try:
        for _ in range(options.edits):
            runs["move"].append(build(db, repo, TOP_LINE + original))
            runs["move_back"].append(build(db, repo, original))
            runs["insert"].append(build(db, repo, INSERTED + original))
            runs["insert_back"].append(build(db, repo, original))
            runs["append"].append(build(db, repo, original + APPENDED))
            runs["append_back"].append(build(db, repo, original))
    finally:
        (repo / EDITED).write_text(original)
    figures = {
        kind: {
            "cpu_s_median": round(statistics.median(cpu for cpu, _ in done), 3),
            "rebuilt_files": sorted({files for _, files in done}),
        }
        for kind, done in runs.items()
    }
    result = {
        "copies": options.copies,
        "edited": EDITED,
        "builds": figures,
        "move_over_append_cpu": round(
            figures["move"]["cpu_s_median"] / figures["append"]["cpu_s_median"], 2
        ),
        "insert_over_append_cpu": round(
            figures["insert"]["cpu_s_median"] / figures["append"]["cpu_s_median"], 2
        ),
    }
    print_result(result, options.json)


if __name__ == "__main__":
    main()
