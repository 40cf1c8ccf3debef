"""
What the local collectors add to a full index of the installed Twisted sources.

Indexes a git copy of Twisted from scratch, alternating runs with the collectors switched
off (an empty registry, as main had before them) and on in ABBA order, so both sides share
the machine's load; reports median wall and CPU seconds of each side, their ratio, and the
facts the collectors stored. Usage: ``python scripts/bench_collectors.py [--rounds 3] [--json]``.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_index import cpu_seconds
from bench_support import print_result, twisted_repository

from eshu_mcp.query.local.index import collectors
from eshu_mcp.query.local.index.indexer import index_repositories


def use_collectors(enabled: bool) -> None:
    """Switch the registry the forked parser workers inherit."""
    collectors._BY_BASENAME.clear()
    collectors._BY_SUFFIX.clear()
    collectors._COLLECTORS = None if enabled else []


def one_run(repo: Path, db: Path, workers: int | None) -> tuple[float, float]:
    for stale in db.parent.glob(db.name + "*"):
        stale.unlink()
    started, cpu_started = time.perf_counter(), cpu_seconds()
    report = index_repositories(db, [repo], workers=workers)
    if not report.ok:
        raise SystemExit(f"index failed: {report.repositories[0].error}")
    return time.perf_counter() - started, cpu_seconds() - cpu_started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args(argv)
    samples: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="bench-collectors-") as tmp:
        root = Path(tmp)
        repo = twisted_repository(root, "twisted-src")
        db = root / "index.sqlite"
        one_run(repo, db, options.workers)  # warm the file cache and imports
        for round_number in range(options.rounds):
            # ABBA order, so drift in the machine's load does not favour either side
            for enabled in (False, True) if round_number % 2 == 0 else (True, False):
                use_collectors(enabled)
                samples[enabled].append(one_run(repo, db, options.workers))
        conn = sqlite3.connect(db)
        facts = conn.execute("SELECT COUNT(*) FROM artifact_facts").fetchone()[0]
        typed = conn.execute("SELECT COUNT(*) FROM files WHERE artifact_type IS NOT NULL")
        files = typed.fetchone()[0]
        conn.close()
    wall = {k: statistics.median(s[0] for s in v) for k, v in samples.items()}
    cpu = {k: statistics.median(s[1] for s in v) for k, v in samples.items()}
    result = {
        "rounds": options.rounds,
        "without_collectors_wall_seconds": round(wall[False], 2),
        "with_collectors_wall_seconds": round(wall[True], 2),
        "wall_ratio": round(wall[True] / wall[False], 3),
        "without_collectors_cpu_seconds": round(cpu[False], 2),
        "with_collectors_cpu_seconds": round(cpu[True], 2),
        "cpu_ratio": round(cpu[True] / cpu[False], 3),
        "wall_seconds_off_on": [
            (round(off[0], 2), round(on[0], 2))
            for off, on in zip(samples[False], samples[True], strict=True)
        ],
        "files_collected": files,
        "facts": facts,
    }
    print_result(result, options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
