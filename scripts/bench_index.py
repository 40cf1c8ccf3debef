"""
Benchmark the embedded indexer on the installed Twisted package's sources.

Copies Twisted into a temporary git repository, indexes it from scratch RUNS times (median
reported), then measures re-indexing after a one-file change. Reports files/s, lines/s,
index bytes per source byte, CPU seconds (indexer + parser pool: steadier than wall time on a
shared machine), the serial tail (graph resolution and commit, after the last file is
written), peak RSS (this process and the parser pool) and the incremental time.

Where the CPU goes, layer by layer, measured in the same run on the same files (one process,
collector off as in the workers): tree-sitter's own parse and capture query, then the
extraction (``parse_file``: tree-sitter plus the Python sweep), then row preparation (what a
worker returns: extraction plus rows), against the whole build (writer, resolution, SQLite).
Each layer includes the ones before it. All as CPU seconds per source MB, and each as a ratio
to tree-sitter's. Full builds run with 1 and 2 parser processes, interleaved, to show how the
build scales: whole builds, and their parse phase alone (the part workers share).
Usage: ``python scripts/bench_index.py [--runs 3] [--workers N] [--json]``.
"""

from __future__ import annotations

import argparse
import gc
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

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.parse.extractors import engine_for
from eshu_mcp.query.local.index.parse.languages import is_parsed_language
from eshu_mcp.query.local.index.parse.rows import parse_file
from eshu_mcp.query.local.index.store import writer

MB = 1_000_000


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


def layer_cpu_seconds(repo: Path, db: Path) -> dict[str, float]:
    """
    CPU seconds of each layer over the indexed files, in this process: tree-sitter's parse +
    capture query (parsed languages only), ``parse_file`` (every file), ``prepare_rows``.
    """
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT relative_path, language, repo_id FROM files").fetchall()
    conn.close()
    sources = [(path, language, (repo / path).read_bytes(), rid) for path, language, rid in rows]
    parsed = [(engine_for(lang), data) for _, lang, data, _ in sources if is_parsed_language(lang)]
    parsed = [(engine, data) for engine, data in parsed if engine is not None]
    from tree_sitter import QueryCursor

    timings = {}
    was_enabled = gc.isenabled()
    gc.disable()  # as in the indexer and its workers
    try:
        started = time.process_time()
        for engine, data in parsed:
            QueryCursor(engine.query).captures(engine.parser.parse(data).root_node)
        timings["tree_sitter"] = time.process_time() - started
        started = time.process_time()
        for path, _, data, _ in sources:
            parse_file(path, data)
        timings["parse_file"] = time.process_time() - started
        started = time.process_time()
        for path, _, data, rid in sources:
            writer.prepare_rows(parse_file(path, data), rid)
        timings["prepare_rows"] = time.process_time() - started
    finally:
        if was_enabled:
            gc.enable()
    timings["tree_sitter_source_bytes"] = sum(len(data) for _, data in parsed)
    return timings


def full_build(repo: Path, db: Path, workers: int | None) -> tuple[float, float, float, float]:
    """One build from scratch: wall seconds, CPU seconds, serial tail, parse phase seconds."""
    for stale in db.parent.glob(db.name + "*"):
        stale.unlink()
    phases: dict[str, float] = {}
    mark = partial(first_seen, phases)
    started, cpu_started = time.perf_counter(), cpu_seconds()
    report = index_repositories(db, [repo], workers=workers, progress=mark)
    wall = time.perf_counter() - started
    if not report.ok:
        raise SystemExit(f"build failed: {report.repositories[0].error}")
    tail = phases["committed"] - phases["resolve"]
    return wall, cpu_seconds() - cpu_started, tail, phases["resolve"] - phases["write"]


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
        scaling: dict[int, list[tuple[float, float, float]]] = {1: [], 2: []}
        db = root / "full.sqlite"
        chosen = options.workers or os.cpu_count() or 1
        for _ in range(options.runs):
            baseline.append(read_and_hash(repo))
            for workers in sorted({1, 2, chosen}):  # interleaved: all see the same load
                wall, cpu, tail, parsing = full_build(repo, db, workers)
                if workers in scaling:
                    scaling[workers].append((wall, cpu, parsing))
                if workers == chosen:
                    full.append(wall)
                    full_cpu.append(cpu)
                    tails.append(tail)
        files, size, lines = source_totals(db)
        layers = layer_cpu_seconds(repo, db)
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
        source_mb = size / MB
        build_cpu = statistics.median(full_cpu)
        tree_sitter = layers["tree_sitter"]
        per_mb = {
            "tree_sitter_parse_and_query": tree_sitter / (layers["tree_sitter_source_bytes"] / MB),
            "parse_file": layers["parse_file"] / source_mb,
            "prepare_rows": layers["prepare_rows"] / source_mb,
            "full_index": build_cpu / source_mb,
        }
        walls = {w: statistics.median(x[0] for x in runs) for w, runs in scaling.items()}
        cpus = {w: statistics.median(x[1] for x in runs) for w, runs in scaling.items()}
        parse = {w: statistics.median(x[2] for x in runs) for w, runs in scaling.items()}
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
            "cpu_seconds_per_source_mb": {k: round(v, 2) for k, v in per_mb.items()},
            "cpu_ratio_to_tree_sitter": {
                k: round(v / per_mb["tree_sitter_parse_and_query"], 1) for k, v in per_mb.items()
            },
            "layer_cpu_seconds": {
                k: round(v, 2) for k, v in layers.items() if k != "tree_sitter_source_bytes"
            },
            "workers_1_vs_2": {
                "wall_median_seconds": {w: round(v, 2) for w, v in walls.items()},
                "cpu_median_seconds": {w: round(v, 2) for w, v in cpus.items()},
                "speedup": round(walls[1] / walls[2], 2),
                "parse_phase_median_seconds": {w: round(v, 2) for w, v in parse.items()},
                "parse_phase_speedup": round(parse[1] / parse[2], 2),
                "files_per_second": {w: round(files / v, 1) for w, v in walls.items()},
            },
        }
    print_result(result, options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
