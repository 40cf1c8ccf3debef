"""
Benchmark the embedded indexer on the installed Twisted package's sources.

Copies Twisted into a temporary git repository, indexes it from scratch RUNS times (median
reported), then measures re-indexing after a one-file change. Reports files/s, lines/s,
index bytes per source byte, CPU seconds (indexer + parser pool: steadier than wall time on a
shared machine), the serial tail (graph resolution and commit, after the last file is
written), peak RSS (this process and the parser pool) and the incremental time.
Usage: ``python scripts/bench_index.py [--runs 3] [--workers N] [--json]``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from bench_support import print_result, twisted_repository

from eshu_mcp.query.local.index.indexer import index_repositories


def database_bytes(db: Path) -> int:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file())


def source_totals(db: Path) -> tuple[int, int, int]:
    conn = sqlite3.connect(db)
    files, size, lines = conn.execute(
        "SELECT COUNT(*), SUM(byte_size), SUM(line_count) FROM files"
    ).fetchone()
    conn.close()
    return files, size, lines


def peak_rss_mib() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return round(own, 1), round(children, 1)


def cpu_seconds() -> float:
    """User + system CPU of this process and its reaped children (the parser pool)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def first_seen(phases: dict[str, float], event: dict) -> None:
    """Progress callback: when each phase was first reported."""
    phases.setdefault(event["phase"], time.perf_counter())


def read_and_hash(repo: Path) -> float:
    """Seconds to read and SHA-256 every file of the work tree (the baseline)."""
    started = time.perf_counter()
    for path in sorted(repo.rglob("*")):
        if path.is_file() and ".git" not in path.parts:
            hashlib.sha256(path.read_bytes()).hexdigest()
    return time.perf_counter() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp:
        root = Path(tmp)
        repo = twisted_repository(root, "twisted-src")
        full: list[float] = []
        full_cpu: list[float] = []
        tails: list[float] = []
        baseline: list[float] = []
        db = root / "full.sqlite"
        for run in range(options.runs):
            for stale in root.glob("full.sqlite*"):
                stale.unlink()
            baseline.append(read_and_hash(repo))
            phases: dict[str, float] = {}
            mark = partial(first_seen, phases)
            started, cpu_started = time.perf_counter(), cpu_seconds()
            report = index_repositories(db, [repo], workers=options.workers, progress=mark)
            full.append(time.perf_counter() - started)
            tails.append(phases["committed"] - phases["resolve"])
            full_cpu.append(cpu_seconds() - cpu_started)
            if not report.ok:
                print(f"run {run} failed: {report.repositories[0].error}", file=sys.stderr)
                return 1
        files, size, lines = source_totals(db)
        index_bytes = database_bytes(db)
        incremental: list[float] = []
        target = repo / "twisted" / "python" / "util.py"
        for run in range(options.runs):
            with target.open("a") as handle:
                handle.write(f"\n\ndef _bench_added_{run}(value):\n    return value + {run}\n")
            started = time.perf_counter()
            report = index_repositories(db, [repo], workers=options.workers)
            incremental.append(time.perf_counter() - started)
            assert report.repositories[0].reparsed == ("twisted/python/util.py",), report
        median = statistics.median(full)
        result = {
            "files": files,
            "lines": lines,
            "source_bytes": size,
            "cpus": os.cpu_count(),
            "full_index_seconds": [round(x, 2) for x in full],
            "full_index_median_seconds": round(median, 2),
            "full_index_cpu_seconds": [round(x, 2) for x in full_cpu],
            "resolve_and_commit_median_seconds": round(statistics.median(tails), 2),
            "files_per_second": round(files / median, 1),
            "baseline_read_hash_median_seconds": round(statistics.median(baseline), 3),
            "full_index_to_baseline_ratio": round(median / statistics.median(baseline), 1),
            "lines_per_second": round(lines / median),
            "index_bytes": index_bytes,
            "index_bytes_per_source_byte": round(index_bytes / size, 2),
            "peak_rss_mib": dict(zip(("indexer", "parser_pool"), peak_rss_mib(), strict=True)),
            "reindex_one_file_seconds": [round(x, 3) for x in incremental],
            "reindex_one_file_median_seconds": round(statistics.median(incremental), 3),
        }
    print_result(result, options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
