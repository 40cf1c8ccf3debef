"""
What the local collectors cost the indexer on the installed Twisted sources.

Indexes a git copy of Twisted from scratch with the collector registry emptied (the
indexer as it was before the collectors) and with it in place, alternating, RUNS times
each in one process (the parser pool forks, so the switch reaches the workers), and reports
the median CPU and wall-time ratios. Also times the path test every file pays
(``collector_for``) and how many Twisted files a collector reads.
Usage: ``python scripts/bench_collectors.py [--runs 5] [--workers N] [--json]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_index import cpu_seconds
from bench_support import print_result, twisted_repository

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.parse import collectors


def use_collectors(enabled: bool) -> None:
    """Switch the registry on (the shipped collectors) or off (none at all)."""
    collectors._BY_BASENAME.clear()
    collectors._BY_SUFFIX.clear()
    collectors._COLLECTORS = None if enabled else []
    collectors._load()


def index_once(root: Path, repo: Path, workers: int | None) -> tuple[float, float]:
    for stale in root.glob("bench.sqlite*"):
        stale.unlink()
    started, cpu_started = time.perf_counter(), cpu_seconds()
    report = index_repositories(root / "bench.sqlite", [repo], workers=workers)
    assert report.ok, report
    return time.perf_counter() - started, cpu_seconds() - cpu_started


def path_test_cost(repo: Path) -> tuple[int, float, int]:
    """(files, microseconds per path test, files a collector reads)."""
    paths = [
        str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts
    ]
    use_collectors(True)
    rounds = 50
    started = time.perf_counter()
    for _ in range(rounds):
        for path in paths:
            collectors.collector_for(path)
    micros = (time.perf_counter() - started) / (rounds * len(paths)) * 1e6
    collected = sum(1 for path in paths if collectors.collector_for(path) is not None)
    return len(paths), micros, collected


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-collectors-") as tmp:
        root = Path(tmp)
        repo = twisted_repository(root, "twisted-src")
        files, micros, collected = path_test_cost(repo)
        timings: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
        for run in range(options.runs * 2):
            enabled = run % 2 == 1
            use_collectors(enabled)
            timings[enabled].append(index_once(root, repo, options.workers))
        use_collectors(True)

    def median(enabled: bool, column: int) -> float:
        return statistics.median(t[column] for t in timings[enabled])

    result = {
        "files": files,
        "files_collected": collected,
        "path_test_microseconds_per_file": round(micros, 2),
        "wall_seconds_without": [round(t[0], 2) for t in timings[False]],
        "wall_seconds_with": [round(t[0], 2) for t in timings[True]],
        "cpu_seconds_without": [round(t[1], 2) for t in timings[False]],
        "cpu_seconds_with": [round(t[1], 2) for t in timings[True]],
        "median_wall_ratio": round(median(True, 0) / median(False, 0), 3),
        "median_cpu_ratio": round(median(True, 1) / median(False, 1), 3),
        "path_tests_share_of_cpu": round(files * micros / 1e6 / median(False, 1), 5),
    }
    print_result(result, options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
