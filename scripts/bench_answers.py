#!/usr/bin/env python3
"""
What an assistant's questions cost: answer bytes and tokens on the Twisted sources.

Copies the installed Twisted package into a git repository, indexes it (as
``bench_index.py`` does), changes one file and indexes it again (so that changed-since
has two generations to compare), then asks a fixed set of assistant questions as MCP
``tools/call`` requests through the protocol core, the dispatch and the embedded query
Resource, in process (every toolset enabled, so that one collector-fed tool can be
asked too). For each answer it reports the bytes of the MCP result as a client
receives it (the JSON of ``result``), estimated tokens (bytes / 4), the bytes of the
text block alone, and whether that text block carries the answer: it names the
answer's key item (the top row, the chain, the file lines), read from the structured
content. One question's right answer is an error (an ambiguous call chain, see
``ANSWERED_BY_AN_ERROR``): its text must name the candidates and what to pass. Then
median / p95 / max over all questions.

    python scripts/bench_answers.py [--keep DIR] [--json] [--dump DIR] [--only NAME]
                                    [--answer-rows N] [--answer-detail compact|full]
"""

import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import (
    argument_parser,
    in_process,
    react,
    scratch_folder,
    tool_result,
    twisted_index,
)

from eshu_mcp.encoding import dumps

# An expectation reads, from the structured content, the strings the text block must
# contain for it to carry the answer on its own (every one of them).
Expect = Callable[[Any], list[str]]


def _dig(value: Any, *path: Any) -> Any:
    for step in path:
        if isinstance(step, int):
            if not isinstance(value, list) or len(value) <= step:
                return None
            value = value[step]
        else:
            if not isinstance(value, dict):
                return None
            value = value.get(step)
    return value


def top(*path: Any) -> Expect:
    """The value at ``path`` under ``data`` (a top row's name, say)."""

    def expect(structured: Any) -> list[str]:
        value = _dig(structured, "data", *path)
        return [str(value)] if value not in (None, "") else ["<missing in structured content>"]

    return expect


def first_of(*expects: Expect) -> Expect:
    """The first expectation that finds its value (answers that list the same thing under
    another key in compact detail: a shared name's candidates as ``definition_groups``)."""

    def expect(structured: Any) -> list[str]:
        for one in expects:
            found = one(structured)
            if not any(text.startswith("<missing") for text in found):
                return found
        return expects[-1](structured)

    return expect


def every(*expects: Expect) -> Expect:
    def expect(structured: Any) -> list[str]:
        return [text for one in expects for text in one(structured)]

    return expect


def literal(*texts: str) -> Expect:
    return lambda structured: list(texts)


def file_line(*path: Any) -> Expect:
    """The first line of a file answer's content that has a letter in it."""

    def expect(structured: Any) -> list[str]:
        value = _dig(structured, "data", *path)
        if isinstance(value, list):
            value = "\n".join(str(_dig(row, "content") or "") for row in value)
        for line in str(value or "").splitlines():
            if any(c.isalpha() for c in line):
                return [line.strip()]
        return ["<no content>"]

    return expect


# Questions whose right answer is an error: ``callLater`` names 17 definitions, several
# reachable from ``deferLater``, and Eshu answers an ambiguous chain with HTTP 400 naming
# the reachable pairs. Its text carries the answer when it names them and what to pass.
ANSWERED_BY_AN_ERROR = frozenset({"function call chain"})

REPO = "{repo}"
ENTITY = "{entity}"
FIRST_GENERATION = "{first_generation}"

# name -> (tool, arguments, expectation)
QUESTIONS: dict[str, tuple[str, dict, Expect]] = {
    "search Deferred": ("find_code", {"query": "Deferred"}, top("results", 0, "name")),
    "search callLater limit 50": (
        "find_code",
        {"query": "callLater", "limit": 50},
        top("results", 0, "name"),
    ),
    "search Protocol limit 50": (
        "find_code",
        {"query": "Protocol", "limit": 50},
        top("results", 0, "name"),
    ),
    "symbol Deferred": ("find_symbol", {"symbol": "Deferred"}, top("results", 0, "name")),
    "symbol callLater": ("find_symbol", {"symbol": "callLater"}, top("results", 0, "name")),
    "symbol LineReceiver class": (
        "find_symbol",
        {"symbol": "LineReceiver", "entity_type": "class"},
        top("results", 0, "name"),
    ),
    "resolve entity Failure": (
        "resolve_entity",
        {"query": "Failure", "repo_id": REPO},
        literal("Failure"),
    ),
    "callers gatherResults": (
        "analyze_code_relationships",
        {"query_type": "find_callers", "target": "gatherResults"},
        top("relationships", 0, "source_name"),
    ),
    "callees addCallbacks": (
        "analyze_code_relationships",
        {"query_type": "find_callees", "target": "addCallbacks"},
        top("relationships", 0, "target_name"),
    ),
    "all callers deferLater": (
        "analyze_code_relationships",
        {"query_type": "find_all_callers", "target": "deferLater"},
        top("relationships", 0, "source_name"),
    ),
    "all callees deferLater": (
        "analyze_code_relationships",
        {"query_type": "find_all_callees", "target": "deferLater"},
        top("relationships", 0, "target_name"),
    ),
    "importers of defer": (
        "analyze_code_relationships",
        {"query_type": "find_importers", "target": "twisted.internet.defer"},
        top("relationships", 0, "source_file_path"),
    ),
    "class hierarchy LineReceiver": (
        "analyze_code_relationships",
        {"query_type": "class_hierarchy", "target": "LineReceiver"},
        literal("LineReceiver"),
    ),
    "overrides dataReceived (ambiguous)": (
        "analyze_code_relationships",
        {"query_type": "overrides", "target": "dataReceived"},
        first_of(
            top("target_resolution", "candidates", 0, "entity_id"),
            top("definition_groups", 0, "entity_id"),
        ),
    ),
    "relationship story addCallbacks": (
        "get_code_relationship_story",
        {"target": "addCallbacks", "direction": "incoming"},
        literal("addCallbacks"),
    ),
    "call chain cbEcho->DeferredList": (
        "analyze_code_relationships",
        {"query_type": "call_chain", "target": "cbEcho->DeferredList"},
        literal("->"),
    ),
    "function call chain": (
        "find_function_call_chain",
        {"start": "deferLater", "end": "callLater"},
        literal(
            "deferLater", "Clock.callLater", "qualified names", "start_entity_id and end_entity_id"
        ),
    ),
    "dead code": ("find_dead_code", {"repo_id": REPO}, top("results", 0, "name")),
    "dead code limit 50": (
        "analyze_code_relationships",
        {"query_type": "dead_code", "limit": 50},
        top("results", 0, "name"),
    ),
    "investigate dead code": ("investigate_dead_code", {"repo_id": REPO}, literal("dead")),
    "file lines defer.py 40-80": (
        "get_file_lines",
        {
            "repo_id": REPO,
            "relative_path": "twisted/internet/defer.py",
            "start_line": 40,
            "end_line": 80,
        },
        file_line("content"),
    ),
    "file content copyright.py": (
        "get_file_content",
        {"repo_id": REPO, "relative_path": "twisted/copyright.py"},
        file_line("content"),
    ),
    "file content task.py": (
        "get_file_content",
        {"repo_id": REPO, "relative_path": "twisted/internet/task.py"},
        file_line("content"),
    ),
    "entity content callLater": ("get_entity_content", {"entity_id": ENTITY}, literal("callLater")),
    "entity context callLater": ("get_entity_context", {"entity_id": ENTITY}, literal("callLater")),
    "repository list": ("list_indexed_repositories", {}, top("repositories", 0, "name")),
    "repository summary": ("get_repo_summary", {"repo_id": REPO}, literal("twisted-sources")),
    "repository stats": ("get_repository_stats", {"repo_id": REPO}, literal("twisted-sources")),
    "repository story": ("get_repo_story", {"repo_id": REPO}, literal("twisted-sources")),
    "repository context": ("get_repo_context", {"repo_id": REPO}, literal("twisted-sources")),
    "repository files internet": (
        "list_repository_files",
        {"repo_id": REPO, "path": "twisted/internet"},
        literal("twisted/internet/"),
    ),
    "most complex functions": (
        "find_most_complex_functions",
        {"repo_id": REPO, "limit": 10},
        top("results", 0, "name"),
    ),
    "complexity _runCallbacks": (
        "calculate_cyclomatic_complexity",
        {"function_name": "_runCallbacks", "repo_id": REPO},
        literal("_runCallbacks"),
    ),
    "code quality": ("inspect_code_quality", {"repo_id": REPO}, top("results", 0, "name")),
    "hardcoded secrets": ("investigate_hardcoded_secrets", {"repo_id": REPO}, literal("secret")),
    "import dependencies of defer.py": (
        "investigate_import_dependencies",
        {
            "repo_id": REPO,
            "query_type": "imports_by_file",
            "source_file": "twisted/internet/defer.py",
        },
        literal("defer.py"),
    ),
    "callers of callLater": (
        "analyze_code_relationships",
        {"query_type": "find_callers", "target": "callLater"},
        literal("callLater"),
    ),
    "inventory dataReceived classes": (
        "inspect_code_inventory",
        {"repo_id": REPO, "inventory_kind": "class_with_method", "method_name": "dataReceived"},
        top("results", 0, "name"),
    ),
    "topic TLS": ("investigate_code_topic", {"repo_id": REPO, "topic": "TLS"}, literal("TLS")),
    "search file content": (
        "search_file_content",
        {"pattern": "def callLater"},
        top("results", 0, "relative_path"),
    ),
    "search entity content": (
        "search_entity_content",
        {"pattern": "reactor.callLater("},
        top("results", 0, "entity_name"),
    ),
    "changed since": (
        "get_changed_since",
        {"repository": REPO, "since_generation_id": FIRST_GENERATION},
        literal("files:"),
    ),
    "call graph hubs": (
        "inspect_call_graph_metrics",
        {"repo_id": REPO, "metric_type": "hub_functions"},
        top("functions", 0, "function_name"),
    ),
    "recursive functions": (
        "inspect_call_graph_metrics",
        {"repo_id": REPO, "metric_type": "recursive_functions"},
        top("functions", 0, "function_name"),
    ),
    "index generations": (
        "get_generation_lifecycle",
        {"repository": REPO},
        top("generations", 0, "status"),
    ),
    "repository freshness": ("get_repository_freshness", {"repo_id": REPO}, top("verdict")),
    "index status": ("get_index_status", {}, literal("index status")),
    "query playbooks": ("list_query_playbooks", {}, literal("playbook")),
    "kubernetes (no manifests)": ("list_kubernetes_correlations", {}, literal("collector")),
}


def percentile(values: list[float], fraction: float) -> float:
    """
    The value at rank ``round(fraction * (len - 1))`` of the sorted values.

    Not bench_support's rank (``int(len * fraction)``): the published figures use this one.
    """
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def fill(args: dict, names: dict[str, str]) -> dict:
    return {
        key: names.get(value, value) if isinstance(value, str) else value
        for key, value in args.items()
    }


def text_of(result: dict) -> str:
    for block in result.get("content", ()):
        if block.get("type") == "text":
            return block.get("text", "")
    return ""


async def run(reactor, options) -> None:
    workdir = scratch_folder(options.keep, "eshu-bench-answers-")
    db = twisted_index(workdir, two_generations=True)
    async with in_process(reactor, db) as bench:
        settings = {}
        if options.answer_rows is not None:
            settings["answer_rows"] = options.answer_rows
        if options.answer_detail is not None:
            settings["answer_detail"] = options.answer_detail
        connection = bench.connection(**settings)

        def call(tool: str, args: dict):
            return tool_result(connection, tool, args)

        repos = await call("list_indexed_repositories", {})
        names = {REPO: repos["structuredContent"]["data"]["repositories"][0]["id"]}
        symbol = await call("find_symbol", {"symbol": "callLater", "limit": 1})
        names[ENTITY] = symbol["structuredContent"]["data"]["results"][0]["entity_id"]
        generations = await call("get_generation_lifecycle", {"repository": names[REPO]})
        oldest = generations["structuredContent"]["data"]["generations"][-1]
        names[FIRST_GENERATION] = oldest["generation_id"]
        rows = []
        for name, (tool, args, expect) in QUESTIONS.items():
            if options.only and options.only not in name:
                continue
            result = await call(tool, fill(args, names))
            size = len(dumps(result).encode("utf-8"))
            text = text_of(result)
            wanted = expect(result.get("structuredContent"))
            answerable = not result.get("isError") or name in ANSWERED_BY_AN_ERROR
            carried = answerable and all(w in text for w in wanted)
            rows.append(
                {
                    "question": name,
                    "tool": tool,
                    "bytes": size,
                    "tokens": size // 4,
                    "text_bytes": len(text.encode("utf-8")),
                    "is_error": bool(result.get("isError")),
                    "text_carries_answer": carried,
                }
            )
            if options.dump:
                out = Path(options.dump)
                out.mkdir(parents=True, exist_ok=True)
                slug = "".join(c if c.isalnum() else "_" for c in name)
                (out / f"{slug}.json").write_text(
                    json.dumps({"tool": tool, "args": args, "wanted": wanted, "result": result})
                )
                (out / f"{slug}.txt").write_text(text)
        sizes = [row["bytes"] for row in rows]
        summary = {
            "questions": len(rows),
            "median_bytes": statistics.median(sizes),
            "p95_bytes": percentile(sizes, 0.95),
            "max_bytes": max(sizes),
            "median_tokens": statistics.median(sizes) // 4,
            "p95_tokens": percentile(sizes, 0.95) // 4,
            "max_tokens": max(sizes) // 4,
            "median_text_bytes": statistics.median(row["text_bytes"] for row in rows),
            "max_text_bytes": max(row["text_bytes"] for row in rows),
            "errors": sum(row["is_error"] for row in rows),
            "text_carries_answer": sum(row["text_carries_answer"] for row in rows),
        }
        if options.json:
            print(json.dumps({"answers": rows, "summary": summary}, indent=1))
            return
        print(f"{'question':<36} {'tool':<34} {'bytes':>8} {'tokens':>7} {'text':>6}  answer")
        for row in rows:
            mark = "yes" if row["text_carries_answer"] else "no"
            if row["is_error"]:
                mark += " (error)"
            print(
                f"{row['question']:<36} {row['tool']:<34} {row['bytes']:>8} {row['tokens']:>7}"
                f" {row['text_bytes']:>6}  {mark}"
            )
        for key, value in summary.items():
            print(f"{key:<20} {value}")


def main() -> None:
    parser = argument_parser(__doc__)
    parser.add_argument("--dump", help="write each result and its text block to this folder")
    parser.add_argument("--only", help="ask only the questions whose name contains this")
    parser.add_argument(
        "--answer-rows",
        type=int,
        help="the compact first page's rows (the server's --answer-rows; 0: the tools' defaults)",
    )
    parser.add_argument(
        "--answer-detail", choices=("compact", "full"), help="the server's --answer-detail"
    )
    react(run, parser.parse_args())


if __name__ == "__main__":
    main()
