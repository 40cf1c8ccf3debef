"""
Compare full index builds of this checkout with another one (a baseline commit), measured in
the same run so both see the same machine load.

Each round builds the installed Twisted sources from scratch once with each checkout, in a
fresh interpreter (``PYTHONPATH`` = that checkout), alternating which goes first. Reports per
checkout the CPU seconds of the whole process tree (the indexer, its parser pool and its
forked resolver: user + system, from ``wait4``), wall seconds and index bytes, and the ratios
to the baseline: the median of the per-round ratios (rounds pair builds made under the same
load), a 95 % interval for that median (distribution-free, from the ratios' order
statistics; six rounds or more) and the ratio of the medians.

``--together`` runs each round's two builds at the same moment instead, each a single
process (``workers=1``) pinned to a core of its own (swapped every round): CPU seconds on a
shared machine move with what its other tenants do, and two builds made at once see the
same of it (on a shared 2-core machine, 30 such rounds' ratios ran from 1.00x to 1.23x, and
100 alternating ones from 0.94x to 1.32x).

Usage: ``python scripts/bench_index_baseline.py --baseline /path/to/checkout [--rounds 5]
[--workers N | --together] [--instructions] [--json]``. Make a baseline checkout with
``git worktree add <dir> <commit>``.

``--instructions`` adds one single-process build (``workers=1``) per checkout under
``valgrind --tool=callgrind`` (a fixed hash seed) and reports the instructions each executed,
and their ratio:
a count that does not move with the machine's load, unlike CPU seconds (about 50 times
slower to run; valgrind must be installed).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from math import comb
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from bench_support import print_result, twisted_repository

HERE = Path(__file__).resolve().parent.parent

BUILD = (
    "import sys\n"
    "from eshu_mcp.query.local.index.build.indexer import index_repositories\n"
    "report = index_repositories(sys.argv[1], [sys.argv[2]], workers=int(sys.argv[3]))\n"
    "sys.exit(0 if report.ok else 1)\n"
)


def build_env(checkout: Path) -> dict[str, str]:
    """The environment of a build by ``checkout``: its modules first, compiled bytecode used
    (as an installed package's is), even where the shell sets PYTHONDONTWRITEBYTECODE."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_checkout(checkout: Path) -> None:
    """Compile a checkout's modules, so that no build pays for compiling them."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(checkout / "eshu_mcp")],
        env=build_env(checkout),
        check=True,
    )


def build(checkout: Path, repo: Path, db: Path, workers: int) -> tuple[float, float, int]:
    """One full build by ``checkout`` in a fresh interpreter: CPU s, wall s, index bytes."""
    started = time.perf_counter()
    child = start_build(checkout, repo, db, workers)
    _, status, usage = os.wait4(child.pid, 0)
    return finished(checkout, db, status, usage, time.perf_counter() - started)


def builds_together(
    checkouts: dict[str, Path], repo: Path, root: Path, cores: list[int]
) -> dict[str, tuple[float, float, int]]:
    """
    One single-process build by each checkout, started at the same moment, each on its own
    core (``cores``, one per checkout): whatever the machine does meanwhile, both see it.
    """
    started = time.perf_counter()
    children = {
        start_build(checkout, repo, root / f"{name}.sqlite", 1, core).pid: name
        for (name, checkout), core in zip(checkouts.items(), cores, strict=True)
    }
    results = {}
    while children:
        pid, status, usage = os.wait4(-1, 0)
        name = children.pop(pid)
        wall = time.perf_counter() - started
        db = root / f"{name}.sqlite"
        results[name] = finished(checkouts[name], db, status, usage, wall)
    return results


def start_build(
    checkout: Path, repo: Path, db: Path, workers: int, core: int | None = None
) -> subprocess.Popen:
    """A full build by ``checkout`` in a fresh interpreter, on ``core`` alone if given."""
    for stale in db.parent.glob(db.name + "*"):
        stale.unlink()
    return subprocess.Popen(
        [sys.executable, "-c", BUILD, str(db), str(repo), str(workers)],
        cwd=checkout,
        env=build_env(checkout),
        preexec_fn=None if core is None else partial(os.sched_setaffinity, 0, {core}),
    )


def finished(
    checkout: Path, db: Path, status: int, usage: Any, wall: float
) -> tuple[float, float, int]:
    """A build's CPU s (the process tree's user + system), wall s and index bytes."""
    if status != 0:
        raise SystemExit(f"the build by {checkout} failed (wait status {status})")
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    size = sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file())
    return usage.ru_utime + usage.ru_stime, wall, size


def instructions(checkout: Path, repo: Path, db: Path) -> int:
    """Instructions a single-process full build by ``checkout`` executes (callgrind)."""
    for stale in db.parent.glob(db.name + "*"):
        stale.unlink()
    env = dict(build_env(checkout), PYTHONHASHSEED="0")  # set iteration orders move counts
    out = db.parent / "callgrind.out"
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-c",
            BUILD,
            str(db),
            str(repo),
            "1",
        ],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
    )
    out.unlink(missing_ok=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"the callgrind build by {checkout} failed:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def median_interval(values: list[float], confidence: float = 0.95) -> list[float] | None:
    """
    A distribution-free interval holding the median of what ``values`` sample with at least
    ``confidence``: the order statistics k and n + 1 - k, k the most that the binomial
    (n, 1/2) keeps below with at most half the rest (None under 6 values: none is that sure).
    """
    ordered = sorted(values)
    count = len(ordered)
    tail, below, k = (1 - confidence) / 2, 0.0, 0
    while k < count and below + comb(count, k) / 2**count <= tail:
        below += comb(count, k) / 2**count
        k += 1
    return None if k == 0 else [round(ordered[k - 1], 3), round(ordered[count - k], 3)]


def summary(runs: list[tuple[float, float, int]], base: list[tuple[float, float, int]]) -> dict:
    cpu = [r[0] for r in runs]
    wall = [r[1] for r in runs]
    ratios = [r[0] / b[0] for r, b in zip(runs, base, strict=True)]
    return {
        "cpu_seconds": [round(x, 2) for x in cpu],
        "cpu_median_seconds": round(statistics.median(cpu), 2),
        "wall_seconds": [round(x, 2) for x in wall],
        "wall_median_seconds": round(statistics.median(wall), 2),
        "index_bytes": runs[-1][2],
        "cpu_ratio_paired_median": round(statistics.median(ratios), 3),
        "cpu_ratio_paired_median_95": median_interval(ratios),
        "cpu_ratio_of_medians": round(
            statistics.median(cpu) / statistics.median(b[0] for b in base), 3
        ),
        "wall_ratio_paired_median": round(
            statistics.median(r[1] / b[1] for r, b in zip(runs, base, strict=True)), 3
        ),
        "index_bytes_ratio": round(runs[-1][2] / base[-1][2], 3),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--together", action="store_true")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args(argv)
    if options.instructions and shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind on PATH")
    cores = sorted(os.sched_getaffinity(0))[:2] if hasattr(os, "sched_getaffinity") else []
    if options.together and len(cores) < 2:
        raise SystemExit("--together needs two cores this process may run on")
    baseline = options.baseline.resolve()
    if not (baseline / "eshu_mcp").is_dir():
        raise SystemExit(f"{baseline} is no eshu-mcp checkout")
    checkouts = {"baseline": baseline, "this": HERE}
    runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in checkouts}
    with tempfile.TemporaryDirectory(prefix="bench-index-baseline-") as tmp:
        root = Path(tmp)
        repo = twisted_repository(root, "twisted-src")
        for checkout in checkouts.values():  # compile both, and warm the disk cache
            compile_checkout(checkout)
            build(checkout, repo, root / "warm.sqlite", options.workers)
        for round_number in range(options.rounds):
            order = list(checkouts) if round_number % 2 == 0 else list(checkouts)[::-1]
            if options.together:  # cores swapped every round
                made = builds_together({name: checkouts[name] for name in order}, repo, root, cores)
                for name in checkouts:
                    runs[name].append(made[name])
                continue
            for name in order:
                runs[name].append(
                    build(checkouts[name], repo, root / "index.sqlite", options.workers)
                )
        counted = {
            name: instructions(checkout, repo, root / "counted.sqlite")
            for name, checkout in checkouts.items()
            if options.instructions
        }
    result = {
        "baseline": str(baseline),
        "rounds": options.rounds,
        "workers": 1 if options.together else options.workers,
        "mode": "together" if options.together else "alternating",
        "cpus": os.cpu_count(),
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }
    if options.rounds:
        result.update({name: summary(runs[name], runs["baseline"]) for name in checkouts})
    if counted:
        result["instructions"] = {
            **counted,
            "ratio": round(counted["this"] / counted["baseline"], 3),
        }
    print_result(result, options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
