#!/usr/bin/env python3
"""
What a scoped token's granted reader costs: the installed Twisted sources and a second
repository (the test fixture) indexed into one database, each question asked in process
by a token granted Twisted only and by an unscoped caller, alternately, several times.

The ratio (scoped / unscoped median) is the cost of the shadow views that keep the
second repository out of the scoped caller's answers; both run in this one command, so
a noisy machine moves both.

    python scripts/bench_grants.py [--keep DIR] [--rounds N] [--json]
"""

import json
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from bench_support import argument_parser, scratch_folder, twisted_repository
from twisted.internet.task import Clock
from twisted.python.failure import Failure

from eshu_mcp.auth import CredentialPolicy, guard
from eshu_mcp.auth.principal import SCOPED, Principal
from eshu_mcp.auth.scoped import ScopedToken, ScopedTokenChecker, token_sha256
from eshu_mcp.dispatch import run_read_only_tool
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "polyglot"
TOKEN = "bench-scoped-token"
QUESTIONS = [
    ("find_symbol Deferred", "find_symbol", {"symbol": "Deferred"}),
    ("find_code Protocol", "find_code", {"query": "Protocol", "limit": 50}),
    (
        "callers of gatherResults",
        "analyze_code_relationships",
        {"query_type": "find_callers", "target": "gatherResults"},
    ),
    (
        "call chain",
        "find_function_call_chain",
        {"start": "Clock.callLater", "end": "Clock.seconds", "max_depth": 4},
    ),
    ("list repositories", "list_indexed_repositories", {}),
    ("index status", "get_index_status", {}),
    ("most complex", "find_most_complex_functions", {"limit": 20}),
    ("search content", "search_file_content", {"pattern": "callLater"}),
    ("dead code", "find_dead_code", {"limit": 50}),
]


class InlinePool:
    """Runs each query at once on the calling thread (no reactor needed)."""

    def callInThreadWithCallback(self, on_result, func, *args, **kwargs):
        try:
            result = func(*args, **kwargs)
        except BaseException:
            on_result(False, Failure())
        else:
            on_result(True, result)


class InlineReactor(Clock):
    def callFromThread(self, f, *args, **kwargs):
        f(*args, **kwargs)


def fixture_repository(into: Path) -> Path:
    repo = into / "polyglot"
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(FIXTURE, repo)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "fixture"]):
        subprocess.run(
            ["git", "-C", str(repo), "-c", "user.email=b@example.com", "-c", "user.name=b", *args],
            check=True,
            capture_output=True,
        )
    return repo


def ask(resource, tool: str, args: dict, token: str | None) -> float:
    header = f"Bearer {token}" if token else None
    started = time.perf_counter()
    outcome = run_read_only_tool(resource, tool, args, header, clock=InlineReactor(), timeout=300)
    results: list = []
    outcome.addBoth(results.append)
    elapsed = time.perf_counter() - started
    if not results or isinstance(results[0], Failure) or results[0].get("isError"):
        raise SystemExit(f"{tool} {args} did not answer: {results[:1]}")
    return elapsed


def main() -> None:
    parser = argument_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    workdir = scratch_folder(options.keep, "eshu-bench-grants-")
    db = workdir / "index.sqlite"
    if not db.exists():
        index_repositories(db, [twisted_repository(workdir), fixture_repository(workdir)])
    conn = open_reader(db)
    twisted_id = conn.execute(
        "SELECT repo_id FROM repositories WHERE name = 'twisted-sources'"
    ).fetchone()[0]
    conn.close()
    principal = Principal(
        mode=SCOPED, tenant_id="t", workspace_id="w", allowed_repository_ids=(twisted_id,)
    )
    checker = ScopedTokenChecker((ScopedToken(token_sha256(TOKEN), principal),))
    policy = CredentialPolicy(checkers=(checker,), scoped_tokens_file="bench")
    resource = LocalQueryResource(str(db), reactor=InlineReactor(), threadpool=InlinePool())
    scoped, unscoped = guard(resource, policy), resource
    rows = []
    for label, tool, args in QUESTIONS:
        ask(scoped, tool, args, TOKEN)  # warm both readers and caches
        ask(unscoped, tool, args, None)
        times: dict[str, list[float]] = {"scoped": [], "unscoped": []}
        for _ in range(options.rounds):
            times["unscoped"].append(ask(unscoped, tool, args, None))
            times["scoped"].append(ask(scoped, tool, args, TOKEN))
        scoped_ms = statistics.median(times["scoped"]) * 1000
        unscoped_ms = statistics.median(times["unscoped"]) * 1000
        rows.append(
            {
                "question": label,
                "unscoped_ms": round(unscoped_ms, 2),
                "scoped_ms": round(scoped_ms, 2),
                "ratio": round(scoped_ms / unscoped_ms, 2),
            }
        )
    if options.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'question':28} {'unscoped ms':>12} {'scoped ms':>10} {'ratio':>6}")
    for row in rows:
        print(
            f"{row['question']:28} {row['unscoped_ms']:12.2f} {row['scoped_ms']:10.2f}"
            f" {row['ratio']:6.2f}"
        )


if __name__ == "__main__":
    main()
