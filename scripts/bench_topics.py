"""
How often "where is the code that does X?" lands on the definition that does it.

Questions in plain words on two repositories (the installed Twisted sources, Python, and a
Go repository, spf13/cobra by default), each with the definitions that answer it (found by
reading the source). For every question the script asks

* ``keyword``: ``investigate_code_topic`` (``POST /code/topics/investigate``),
* ``semantic`` and ``hybrid``: ``search_semantic_context`` in those modes (when the
  ``semantic`` extra is installed),
* ``baseline``: ``investigate_code_topic`` of another checkout (``--baseline``, e.g. the
  commit before the definition index) in the same run,

and reports per mode and repository: definition hit at 1, 5 and 10 (a row that is one of
the expected definitions: same file, same name and class), MRR over the first 10 rows, the
share of questions whose file appears in the first 5 rows, and the route's latency (median
of ``--rounds`` calls per question; p50 and p90 over questions; and the CPU time's p50).

Each checkout runs in its own interpreter (``PYTHONPATH`` = that checkout) and builds its
own index of both repositories in a temporary directory.

Usage: ``python scripts/bench_topics.py --baseline /path/to/old/checkout
[--cobra /path/to/cobra] [--rounds 3] [--json]``. Make a baseline checkout with
``git archive <commit> | tar -x -C <dir>``; fetch cobra with ``git clone
https://github.com/spf13/cobra``.

Large repositories: ``--scale-index DB`` (an index of a large tree of Twisted copies, such
as ``bench_scale.py --keep DIR``'s ``DIR/monorepo.sqlite``, 25,839 files) also asks the
Twisted questions on it, in ``--scale-modes`` (default ``keyword,hybrid,semantic``), read
only, by the current checkout and the ``--baseline`` one in turn: ``--rounds`` rounds, each
a fresh interpreter per checkout (the order alternating), one call per question after one
untimed call; per question the median over rounds, then p50, p90 and max over questions
of the wall-clock time and p50 and p90 of the CPU time (less disturbed by a busy machine),
and the current/baseline ratios. The work tree's freshness comparison (which re-lists an
unwatched tree every few seconds, seconds on 25k files) is kept out of the timings: it is
the same for every route and not topic search's. ``--scale-only`` skips the two small
repositories.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

# (question, expected definitions as "path::Class.name" or "path::name"). Twisted paths are
# below the copied repository's twisted/ folder.
TWISTED = [
    (
        "give up on an asynchronous result that takes too long",
        ["twisted/internet/defer.py::Deferred.addTimeout"],
    ),
    (
        "call a function after a delay",
        [
            "twisted/internet/interfaces.py::IReactorTime.callLater",
            "twisted/internet/base.py::ReactorBase.callLater",
            "twisted/internet/task.py::deferLater",
        ],
    ),
    (
        "check a username and password",
        [
            "twisted/cred/credentials.py::UsernamePassword.checkPassword",
            "twisted/cred/credentials.py::IUsernamePassword.checkPassword",
            "twisted/cred/checkers.py::InMemoryUsernamePasswordDatabaseDontUse.requestAvatarId",
        ],
    ),
    (
        "run a blocking function in a thread and get its result later",
        ["twisted/internet/threads.py::deferToThread"],
    ),
    (
        "reconnect with an increasing delay after the connection is lost",
        [
            "twisted/internet/protocol.py::ReconnectingClientFactory",
            "twisted/internet/protocol.py::ReconnectingClientFactory.retry",
            "twisted/application/_client_service.py::backoffPolicy",
        ],
    ),
    ("call a function repeatedly at a fixed interval", ["twisted/internet/task.py::LoopingCall"]),
    (
        "wait until several asynchronous results have all arrived",
        ["twisted/internet/defer.py::DeferredList", "twisted/internet/defer.py::gatherResults"],
    ),
    (
        "split a stream of received bytes into lines",
        [
            "twisted/protocols/basic.py::LineReceiver",
            "twisted/protocols/basic.py::LineOnlyReceiver",
            "twisted/protocols/basic.py::LineReceiver.dataReceived",
            "twisted/protocols/basic.py::LineOnlyReceiver.dataReceived",
        ],
    ),
    ("parse the date in an HTTP header", ["twisted/web/http.py::stringToDatetime"]),
    ("format a timestamp as an HTTP date string", ["twisted/web/http.py::datetimeToString"]),
    (
        "escape text before putting it in HTML",
        ["twisted/web/_flatten.py::escapeForContent"],
    ),
    (
        "limit how many connections one client address may open",
        ["twisted/protocols/policies.py::LimitConnectionsByPeer"],
    ),
    (
        "drop a connection that has been idle for too long",
        [
            "twisted/protocols/policies.py::TimeoutMixin",
            "twisted/protocols/policies.py::TimeoutFactory",
            "twisted/protocols/policies.py::TimeoutMixin.setTimeout",
        ],
    ),
    (
        "generate a new RSA key for SSH",
        ["twisted/conch/scripts/ckeygen.py::generateRSAkey"],
    ),
    (
        "look up the mail servers of a domain in DNS",
        [
            "twisted/names/client.py::lookupMailExchange",
            "twisted/mail/relaymanager.py::MXCalculator.getMX",
            "twisted/internet/interfaces.py::IResolver.lookupMailExchange",
        ],
    ),
    ("send an email message over SMTP", ["twisted/mail/smtp.py::sendmail"]),
    ("serve the files of a directory over HTTP", ["twisted/web/static.py::File"]),
    (
        "start a new log file when the current one gets too big",
        [
            "twisted/python/logfile.py::LogFile.shouldRotate",
            "twisted/python/logfile.py::LogFile.rotate",
            "twisted/python/logfile.py::LogFile",
        ],
    ),
    ("find every plugin that provides an interface", ["twisted/plugin.py::getPlugins"]),
    (
        "mark a function as deprecated since a version",
        ["twisted/python/deprecate.py::deprecated"],
    ),
    ("copy a directory and everything in it", ["twisted/python/filepath.py::FilePath.copyTo"]),
    (
        "pass an open file descriptor to another process over a unix socket",
        [
            "twisted/internet/unix.py::_SendmsgMixin.sendFileDescriptor",
            "twisted/internet/interfaces.py::IUNIXTransport.sendFileDescriptor",
        ],
    ),
    (
        "start a child process and collect everything it prints",
        ["twisted/internet/utils.py::getProcessOutput"],
    ),
    (
        "a fake clock whose time only moves forward when told to",
        ["twisted/internet/task.py::Clock", "twisted/internet/task.py::Clock.advance"],
    ),
    (
        "build TLS client options that check the server's hostname",
        ["twisted/internet/_sslverify.py::optionsForClientTLS"],
    ),
]
COBRA = [
    (
        "suggest similar command names when the user mistypes one",
        ["command.go::Command.SuggestionsFor", "command.go::Command.findSuggestions"],
    ),
    ("compute the edit distance between two strings", ["cobra.go::ld"]),
    (
        "make a flag mandatory",
        [
            "shell_completions.go::Command.MarkFlagRequired",
            "shell_completions.go::MarkFlagRequired",
            "shell_completions.go::Command.MarkPersistentFlagRequired",
        ],
    ),
    (
        "flags that cannot be used together",
        ["flag_groups.go::Command.MarkFlagsMutuallyExclusive"],
    ),
    (
        "generate a bash completion script",
        [
            "bash_completions.go::Command.GenBashCompletion",
            "bash_completionsV2.go::Command.GenBashCompletionV2",
            "bash_completions.go::Command.GenBashCompletionFile",
            "bash_completionsV2.go::Command.GenBashCompletionFileV2",
        ],
    ),
    (
        "write man pages for a command and all its subcommands",
        ["doc/man_docs.go::GenManTree", "doc/man_docs.go::GenManTreeFromOpts"],
    ),
    (
        "write markdown documentation for a command",
        [
            "doc/md_docs.go::GenMarkdown",
            "doc/md_docs.go::GenMarkdownCustom",
            "doc/md_docs.go::GenMarkdownTree",
        ],
    ),
    ("require at least some number of positional arguments", ["args.go::MinimumNArgs"]),
    (
        "reject arguments that are not in the list of valid ones",
        ["args.go::OnlyValidArgs"],
    ),
    (
        "find which subcommand the command line arguments select",
        ["command.go::Command.Find", "command.go::Command.Traverse"],
    ),
    ("run a function before any command executes", ["cobra.go::OnInitialize"]),
    (
        "print the usage message of a command",
        ["command.go::Command.Usage", "command.go::Command.UsageString"],
    ),
    ("add child commands to a command", ["command.go::Command.AddCommand"]),
    ("remove a subcommand", ["command.go::Command.RemoveCommand"]),
    (
        "check that every required flag was given",
        ["command.go::Command.ValidateRequiredFlags"],
    ),
    ("flags inherited from the parent commands", ["command.go::Command.InheritedFlags"]),
    (
        "provide dynamic completion values for a flag",
        ["completions.go::Command.RegisterFlagCompletionFunc"],
    ),
    (
        "restrict completion of a flag to files with given extensions",
        [
            "shell_completions.go::Command.MarkFlagFilename",
            "shell_completions.go::MarkFlagFilename",
        ],
    ),
    ("print debug messages while computing completions", ["completions.go::CompDebug"]),
    ("run the root command with a context", ["command.go::Command.ExecuteContext"]),
]

WORKER = r"""
import json, sys, time, sqlite3, statistics
sys.path.insert(0, sys.argv[1])
import eshu_mcp.query.local.api  # noqa: F401  (registers the routes)
from eshu_mcp.query.local.api.platform import framework
from eshu_mcp.query.local.api.platform.framework import ApiContext, ApiError
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader

db, repos, questions, modes, rounds = sys.argv[2], json.loads(sys.argv[3]), json.loads(
    sys.argv[4]), json.loads(sys.argv[5]), int(sys.argv[6])
started = time.perf_counter()
report = index_repositories(db, [path for path in repos.values()], workers=2)
assert report.ok, report
built = time.perf_counter() - started
conn = open_reader(db)
repo_ids = {name: conn.execute("SELECT repo_id FROM repositories WHERE local_path = ?",
            (path,)).fetchone()[0] for name, path in repos.items()}

def post(pattern, body):
    route = framework.ROUTES.find("POST", pattern)
    return route.handler(ApiContext(conn, "POST", {}, {}, body, False, None)).data

def classes(ids):
    out = {}
    for entity_id in ids:
        row = conn.execute("SELECT class_context FROM entities WHERE entity_id = ?",
                           (entity_id,)).fetchone()
        out[entity_id] = row[0] if row else None
    return out

def ask(mode, repo_id, question):
    if mode == "keyword":
        data = post("/code/topics/investigate",
                    {"topic": question, "repo_id": repo_id, "limit": 10})
        rows = data["evidence_groups"]
        found = classes([r["entity_id"] for r in rows if r.get("entity_id")])
        return [(r["relative_path"], r.get("entity_name") or "",
                 found.get(r.get("entity_id")), r["source_kind"]) for r in rows]
    try:
        data = post("/search/semantic", {"repo_id": repo_id, "query": question, "mode": mode,
                                         "limit": 10, "timeout_ms": 5000})
    except ApiError as error:
        return {"error": str(error.detail)}
    out = []
    for result in data["results"]:
        document = result["document"]
        refs = document.get("entity_refs") or []
        if refs:
            entity_id = refs[0]["entity_id"]
            name = conn.execute("SELECT entity_name, class_context FROM entities"
                                " WHERE entity_id = ?", (entity_id,)).fetchone()
            out.append((document["path"], name[0], name[1], "entity"))
        else:
            out.append((document.get("path") or "", "", None, "file"))
    return out

answers = {}
for mode in modes:
    for repo, question in questions:
        timings, cpu = [], []
        for _ in range(rounds):
            began, used = time.perf_counter(), time.process_time()
            rows = ask(mode, repo_ids[repo], question)
            timings.append((time.perf_counter() - began) * 1000)
            cpu.append((time.process_time() - used) * 1000)
        answers[f"{mode}|{repo}|{question}"] = {"rows": rows,
                                                "ms": statistics.median(timings),
                                                "cpu_ms": statistics.median(cpu)}
print(json.dumps({"index_seconds": built, "answers": answers}))
"""


SCALE_WORKER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import eshu_mcp.query.local.api  # noqa: F401  (registers the routes)
from eshu_mcp.query.local.api.platform import framework
from eshu_mcp.query.local.api.platform.framework import ApiContext
from eshu_mcp.query.local.index.store.database import open_reader
try:  # the work tree is compared with the index once, not every few seconds
    from eshu_mcp.query.local.api.platform import tree_changes
    tree_changes.KEEP_SECONDS = float("inf")
except ImportError:
    pass

conn = open_reader(sys.argv[2])
questions, modes = json.loads(sys.argv[3]), json.loads(sys.argv[4])
repo_id = conn.execute("SELECT repo_id FROM repositories ORDER BY repo_id").fetchone()[0]

def ask(mode, question):
    if mode == "keyword":
        pattern, body = "/code/topics/investigate", {"topic": question, "repo_id": repo_id,
                                                      "limit": 10}
    else:
        pattern, body = "/search/semantic", {"repo_id": repo_id, "query": question,
                                             "mode": mode, "limit": 10, "timeout_ms": 5000}
    route = framework.ROUTES.find("POST", pattern)
    return route.handler(ApiContext(conn, "POST", {}, {}, body, False, None)).data

timings = {}
for mode in modes:
    ask(mode, questions[0])
    for question in questions:
        began, cpu = time.perf_counter(), time.process_time()
        ask(mode, question)
        timings[f"{mode}|{question}"] = (time.perf_counter() - began) * 1000
        timings[f"cpu|{mode}|{question}"] = (time.process_time() - cpu) * 1000
print(json.dumps(timings))
"""


def run_scale(checkouts: dict[str, Path], index: Path, modes: list[str], rounds: int) -> dict:
    """
    Per checkout, mode and question: the median over ``rounds`` of one call's milliseconds
    on the large index, each round a fresh interpreter per checkout, the order alternating.
    """
    questions = [question for question, _ in TWISTED]
    runs: dict[str, list[dict]] = {label: [] for label in checkouts}
    for round_number in range(rounds):
        order = list(checkouts.items())
        if round_number % 2:
            order.reverse()
        for label, checkout in order:
            done = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    SCALE_WORKER,
                    str(checkout),
                    str(index),
                    json.dumps(questions),
                    json.dumps(modes),
                ],
                cwd=checkout,
                env=dict(os.environ, PYTHONPATH=str(checkout)),
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise SystemExit(f"the scale run of {checkout} failed:\n{done.stderr[-3000:]}")
            runs[label].append(json.loads(done.stdout.strip().splitlines()[-1]))
    table: dict[str, dict] = {}
    for label, measured in runs.items():
        for mode in modes:
            found = table.setdefault(mode, {})[label] = {}
            for clock, prefix in (("", ""), ("cpu_", "cpu|")):
                times = sorted(
                    statistics.median(run[f"{prefix}{mode}|{question}"] for run in measured)
                    for question in questions
                )
                found[f"{clock}p50_ms"] = statistics.median(times)
                found[f"{clock}p90_ms"] = times[min(len(times) - 1, int(0.9 * len(times)))]
                found[f"{clock}max_ms"] = times[-1]
    if "baseline" in checkouts:
        for found in table.values():
            for name in ("p50_ms", "p90_ms", "max_ms", "cpu_p50_ms", "cpu_p90_ms"):
                found.setdefault("ratio", {})[name] = round(
                    found["current"][name] / (found["baseline"][name] or 1.0), 3
                )
    return table


def print_scale(table: dict, index: Path) -> None:
    """The large index's latency table: per mode, each checkout and the ratios."""
    print(f"large index {index}: Twisted questions, ms per call (median of rounds)")
    names = ("p50_ms", "p90_ms", "max_ms", "cpu_p50_ms", "cpu_p90_ms")
    headings = ("p50ms", "p90ms", "maxms", "cpu50", "cpu90")
    print(f"{'mode':10} {'checkout':9}" + "".join(f" {h:>8}" for h in headings))
    for mode, found in table.items():
        for label in ("current", "baseline"):
            if label in found:
                row = found[label]
                print(f"{mode:10} {label:9}" + "".join(f" {row[n]:>8.1f}" for n in names))
        if "ratio" in found:
            ratio = found["ratio"]
            print(f"{mode:10} {'ratio':9}" + "".join(f" {ratio[n]:>8.2f}" for n in names))


def run_checkout(
    checkout: Path, repos: dict[str, str], modes: list[str], rounds: int, into: Path
) -> dict:
    """Index both repositories and ask every question, in a fresh interpreter."""
    questions = [("twisted", q) for q, _ in TWISTED] + [("cobra", q) for q, _ in COBRA]
    db = into / f"{checkout.name}-index.sqlite"
    env = dict(os.environ, PYTHONPATH=str(checkout))
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            WORKER,
            str(checkout),
            str(db),
            json.dumps(repos),
            json.dumps(questions),
            json.dumps(modes),
            str(rounds),
        ],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the run of {checkout} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def is_definition(row: list, expected: str) -> bool:
    """Whether an answer row is the expected definition (same file, name and class)."""
    path, name, class_context, kind = row
    want_path, want = expected.split("::")
    if kind != "entity" or path != want_path:
        return False
    if "." in want:
        owner, method = want.rsplit(".", 1)
        return name == method and class_context in (owner, None)
    return name == want and not class_context


def score(answers: dict, mode: str, repo: str, questions: list) -> dict:
    """Hit@1/5/10, MRR@10, file@5 and latency of one mode on one repository."""
    ranks: list[int | None] = []
    files = 0
    times = []
    cpu = []
    misses = []
    for question, expected in questions:
        answer = answers.get(f"{mode}|{repo}|{question}")
        if answer is None or isinstance(answer["rows"], dict):
            return {"unavailable": (answer or {}).get("rows", {}).get("error", "not run")}
        rows = answer["rows"][:10]
        times.append(answer["ms"])
        cpu.append(answer["cpu_ms"])
        rank = next(
            (i for i, row in enumerate(rows, 1) if any(is_definition(row, e) for e in expected)),
            None,
        )
        ranks.append(rank)
        wanted_files = {e.split("::")[0] for e in expected}
        files += any(row[0] in wanted_files for row in rows[:5])
        if rank is None or rank > 5:
            misses.append(question)
    count = len(questions)
    times.sort()
    return {
        "questions": count,
        "hit@1": sum(1 for r in ranks if r == 1) / count,
        "hit@5": sum(1 for r in ranks if r and r <= 5) / count,
        "hit@10": sum(1 for r in ranks if r) / count,
        "mrr@10": sum(1 / r for r in ranks if r) / count,
        "file@5": files / count,
        "p50_ms": statistics.median(times),
        "p90_ms": times[min(len(times) - 1, int(0.9 * len(times)))],
        "cpu_p50_ms": statistics.median(cpu),
        "missed_top5": misses,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="an older checkout to compare with")
    parser.add_argument("--cobra", type=Path, default=Path("/tmp/topics/repos/cobra"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--scale-index", type=Path, help="an index of a large Twisted tree")
    parser.add_argument("--scale-modes", default="keyword,hybrid,semantic")
    parser.add_argument("--scale-only", action="store_true", help="only the large index")
    options = parser.parse_args()
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE / "scripts"))
    from bench_support import twisted_repository

    scale = None
    if options.scale_index:
        if not options.scale_index.is_file():
            raise SystemExit(f"{options.scale_index} is not an index file")
        checkouts = {"current": HERE}
        if options.baseline:
            checkouts["baseline"] = options.baseline.resolve()
        modes = [mode for mode in options.scale_modes.split(",") if mode]
        scale = run_scale(checkouts, options.scale_index.resolve(), modes, options.rounds)
        if options.scale_only:
            if options.json:
                print(json.dumps({"scale": scale}, indent=2))
            else:
                print_scale(scale, options.scale_index)
            return
    elif options.scale_only:
        raise SystemExit("--scale-only needs --scale-index")
    if not (options.cobra / "command.go").is_file():
        raise SystemExit(f"{options.cobra} is not a cobra checkout (no command.go)")
    with tempfile.TemporaryDirectory(prefix="bench-topics-") as scratch:
        into = Path(scratch)
        repos = {"twisted": str(twisted_repository(into)), "cobra": str(options.cobra.resolve())}
        (into / "current").mkdir()
        current = run_checkout(
            HERE, repos, ["keyword", "semantic", "hybrid"], options.rounds, into / "current"
        )
        results = {"current": current}
        if options.baseline:
            (into / "baseline").mkdir()
            results["baseline"] = run_checkout(
                options.baseline.resolve(), repos, ["keyword"], options.rounds, into / "baseline"
            )
    table = {}
    for label, run in results.items():
        modes = ["keyword"] if label == "baseline" else ["keyword", "semantic", "hybrid"]
        for mode in modes:
            name = "baseline" if label == "baseline" else mode
            table[name] = {
                "twisted": score(run["answers"], mode, "twisted", TWISTED),
                "cobra": score(run["answers"], mode, "cobra", COBRA),
            }
        table.setdefault("_index_seconds", {})[label] = round(run["index_seconds"], 2)
    if scale is not None:
        table["_scale"] = scale
    if options.json:
        print(json.dumps(table, indent=2))
        return
    print(
        f"{'mode':10} {'repo':8} {'n':>3} {'hit@1':>6} {'hit@5':>6} {'hit@10':>6} "
        f"{'MRR':>6} {'file@5':>6} {'p50ms':>7} {'p90ms':>7} {'cpu50':>7}"
    )
    for mode, repos_scores in table.items():
        if mode.startswith("_"):
            continue
        for repo, found in repos_scores.items():
            if "unavailable" in found:
                print(f"{mode:10} {repo:8} unavailable: {found['unavailable'][:80]}")
                continue
            print(
                f"{mode:10} {repo:8} {found['questions']:>3} {found['hit@1']:>6.2f}"
                f" {found['hit@5']:>6.2f} {found['hit@10']:>6.2f} {found['mrr@10']:>6.2f}"
                f" {found['file@5']:>6.2f} {found['p50_ms']:>7.1f} {found['p90_ms']:>7.1f}"
                f" {found['cpu_p50_ms']:>7.1f}"
            )
    for mode, repos_scores in table.items():
        if mode.startswith("_"):
            continue
        for repo, found in repos_scores.items():
            for question in found.get("missed_top5", []):
                print(f"  {mode}/{repo} not in first 5: {question}")
    print("index build seconds:", table["_index_seconds"])
    if scale is not None:
        print_scale(scale, options.scale_index)


if __name__ == "__main__":
    main()
