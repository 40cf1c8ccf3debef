#!/usr/bin/env python3
"""
Call-graph truth on Python repositories nobody tuned the index for, against their own tests.

For each repository given (a source tree: ``--repo NAME=PATH``), copies it into a fresh git
repository, indexes it in process with the eshu_mcp found on ``sys.path`` (run from the
checkout you measure: ``PYTHONPATH=. python scripts/bench_heldout.py ...``), runs the
repository's tests with pytest under ``sys.setprofile`` (the hook of
``callgraph_trace.py``, cached per tree) and measures:

* *caller recall*: of the (caller, definition) pairs that ran, where the definition was named
  at the site (a call ``f(...)``/``x.f(...)``, a class constructed, ``super().__init__()``,
  or an attribute read or assigned, which runs a property's getter or setter), the share the
  index has a CALLS edge for, from that caller to that exact definition (an ambiguous
  candidate counts); per site too (*site recall*), and without property uses;
* *single-target precision*: of the CALLS edges with one target whose site ran and called
  something of the target's name, the share whose target ran there (``callgraph_runtime``);
* the question set: :data:`QUESTIONS` asked through the tools (in process), each graded by
  facts read from the repository's source (a file and line the answer must name, or must
  not).

Repositories measured for the README (2026-12-05): tomlkit (python-poetry/tomlkit, tests
but ``test_toml_tests.py``, which needs a git submodule) and boltons (mahmoud/boltons).

    python scripts/bench_heldout.py --repo tomlkit=PATH/TO/tomlkit \\
        --repo boltons=PATH/TO/boltons [--workdir DIR] [--json]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import attr
from callgraph_ast import scan_tree
from callgraph_index import load_index
from callgraph_runtime import definitions_that_ran, judge, observed_calls

PYTEST_ARGS = {
    "tomlkit": ["tests", "--ignore=tests/test_toml_tests.py"],
    "boltons": ["tests"],
}
"""What pytest runs in each repository (default: ``tests``)."""
TRACE_FORMAT = 1


@attr.s(frozen=True, slots=True)
class Question:
    """An everyday question, the tool call an assistant makes for it, and the facts read from
    the repository's source that the answer must state (``must``: in its text, or all of a
    fact's words in one structured row) or its text must not."""

    repository: str = attr.ib()
    asked: str = attr.ib()
    tool: str = attr.ib()
    arguments: dict = attr.ib()
    must: tuple[str, ...] = attr.ib()
    must_not: tuple[str, ...] = attr.ib(default=())


QUESTIONS = [
    # tomlkit/api.py: ``Parser(string).parse()`` (106), ``parser = Parser(raw)`` (283),
    # ``Parser(src)._parse_key_value()`` (298)
    Question(
        "tomlkit",
        "Who constructs a Parser?",
        "analyze_code_relationships",
        {"query_type": "find_callers", "target": "Parser.__init__"},
        ("tomlkit/api.py:106 parse", "tomlkit/api.py:283 value", "tomlkit/api.py:298 key_value"),
    ),
    # tomlkit/container.py:695 ``table.trivia.trail`` in _render_table (``table: Table``)
    Question(
        "tomlkit",
        "Where is the Item.trivia property read?",
        "analyze_code_relationships",
        {"query_type": "find_callers", "target": "Item.trivia"},
        ("_render_table -> trivia (reads the property)",),
        ("not found",),
    ),
    # 17 ``def as_string`` in tomlkit/ (grep)
    Question(
        "tomlkit",
        "How many as_string methods are there?",
        "find_symbol",
        {"symbol": "as_string"},
        ("10 of 17 definitions",),
    ),
    # seven files import tomlkit.items: tests/test_api.py, test_items.py, test_parser.py,
    # util.py and tomlkit/api.py, container.py, parser.py (grep)
    Question(
        "tomlkit",
        "Which files import tomlkit.items?",
        "investigate_import_dependencies",
        {"query_type": "importers", "target_module": "tomlkit.items"},
        ("in 7 files",),
    ),
    # container.py:20 imports items at load; items.py:40 imports container under
    # ``if TYPE_CHECKING:`` only
    Question(
        "tomlkit",
        "Does tomlkit have an import cycle that breaks at load?",
        "investigate_import_dependencies",
        {"query_type": "file_import_cycles", "repo_id": "tomlkit"},
        ("1 import cycle", "0 close while the modules load", "items.py:40 (for type checkers"),
    ),
    # tomlkit/api.py:53 ``return parse(string)``
    Question(
        "tomlkit",
        "What does loads call?",
        "analyze_code_relationships",
        {"query_type": "find_callees", "target": "loads"},
        ("loads -> parse",),
    ),
    # a read of Item.trivia in _render_table (container.py:695); the depth is stated
    Question(
        "tomlkit",
        "What is affected if Item.trivia changes?",
        "analyze_pre_change_impact",
        {"target": "Item.trivia", "repo_id": "tomlkit", "limit": 100},
        ("within 4 hops", "_render_table"),
    ),
    # items.py: ``class Whitespace(Item)`` (544), ``class Integer(Item, _CustomInt)`` (602)
    Question(
        "tomlkit",
        "Which classes derive from Item?",
        "analyze_code_relationships",
        {"query_type": "class_hierarchy", "target": "Item", "limit": 25},
        ("Whitespace", "Integer", "descendants"),
    ),
    # boltons/fileutils.py:261 ``return AtomicSaver(dest_path, **kwargs)``;
    # tests/test_fileutils.py:34 ``with fileutils.AtomicSaver(dest) as f:``
    Question(
        "boltons",
        "Who creates an AtomicSaver?",
        "analyze_code_relationships",
        {"query_type": "find_callers", "target": "AtomicSaver.__init__"},
        ("boltons/fileutils.py:261 atomic_save", "tests/test_fileutils.py:34"),
    ),
    # tests/test_urlutils.py:389 ``url.path = '/x/y/z'`` (the setter at urlutils.py:578)
    Question(
        "boltons",
        "Who assigns URL.path?",
        "analyze_code_relationships",
        {"query_type": "find_callers", "target": "URL.path"},
        ("test_netloc_slashes -> URL.path (sets the property)",),
        ("not found",),
    ),
    # ioutils.py:107 (in SpooledIOBase.close... every reader/writer checks first)
    Question(
        "boltons",
        "Who calls SpooledIOBase._checkClosed?",
        "analyze_code_relationships",
        {"query_type": "find_callers", "target": "_checkClosed", "limit": 25},
        ("boltons/ioutils.py:107", "boltons/ioutils.py:299 read"),
    ),
    # four ``def write`` in boltons (grep)
    Question(
        "boltons",
        "How many write methods are there?",
        "find_symbol",
        {"symbol": "write"},
        ("4 definitions",),
    ),
]
"""Twelve questions graded by source facts; two more per repository are graded by the
runtime trace (:func:`dead_code_that_ran`): nothing called cleanup-ready ran in the tests."""
IGNORED = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".tox", "docs", "*.egg-info")


def copy_repository(source: Path, into: Path) -> Path:
    """A fresh one-commit git repository of ``source``'s files."""
    shutil.rmtree(into, ignore_errors=True)
    shutil.copytree(source, into, ignore=IGNORED)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "held-out sources"]):
        subprocess.run(
            ["git", "-C", str(into), "-c", "user.email=b@example.com", "-c", "user.name=b", *args],
            check=True,
            capture_output=True,
        )
    return into


def tree_digest(root: Path) -> str:
    """A digest of the tree's Python sources (the trace cache key)."""
    digest = hashlib.sha256(str(TRACE_FORMAT).encode())
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def trace_child(out: str, root: str, pytest_args: list[str]) -> None:
    """In a child: run pytest in ``root`` under the profile hook; write what ran where."""
    import pytest
    from callgraph_trace import _record

    os.chdir(root)
    sys.path.insert(0, root)
    seen: set = set()
    via: set = set()
    sys.setprofile(_record(root, seen, via))
    try:
        status = pytest.main(["-q", "-p", "no:cacheprovider", *pytest_args])
    finally:
        sys.setprofile(None)
    rows = [[f, line, list(callee), False] for f, line, callee in seen]
    rows += [[f, line, list(callee), True] for f, line, callee in via]
    payload = {
        "format": TRACE_FORMAT,
        # observed_calls makes paths relative to this folder's parent: the root
        "package_dir": os.path.join(root, "_"),
        "pytest_status": int(status),
        "calls": rows,
    }
    Path(out).write_text(json.dumps(payload))


def load_trace(cache: Path, name: str, repo: Path, pytest_args: list[str], log) -> dict:
    """The cached trace of this tree's tests, running them when needed."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"heldout-{name}-{tree_digest(repo)}.json"
    if path.exists():
        log(f"{name}: runtime trace cached {path}")
        return json.loads(path.read_text())
    log(f"{name}: running its tests under the profiler ...")
    partial = path.with_suffix(f".{os.getpid()}.partial")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    command = [sys.executable, __file__, "--trace-child", str(partial), str(repo), *pytest_args]
    with open(cache / f"{name}-pytest.log", "wb") as output:
        subprocess.run(
            command,
            cwd=Path(__file__).parent,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            timeout=900,
            check=False,
        )
    if not partial.exists():
        raise RuntimeError(f"the traced test run wrote nothing: see {cache}/{name}-pytest.log")
    partial.replace(path)
    return json.loads(path.read_text())


def named_at(root: Path) -> dict[tuple[str, int], dict[str, tuple[tuple[str, int], bool]]]:
    """(path, line) -> {name written there: (the enclosing def's (path, def line), whether it
    is only an attribute read or assigned there, not called)}: each call's callee name, each
    attribute's name (a property use), at the first and last line of the expression (CPython
    reports a method call or an attribute at the attribute's line)."""
    found: dict[tuple[str, int], dict] = defaultdict(dict)
    for file in sorted(root.rglob("*.py")):
        path = file.relative_to(root).as_posix()
        try:
            module = ast.parse(file.read_bytes())
        except (SyntaxError, ValueError):
            continue

        def visit(node, caller, path=path):
            called = node.func if isinstance(node, ast.Call) else None
            for child in ast.iter_child_nodes(node):
                inner = caller
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    inner = (path, child.lineno)
                name = None
                if isinstance(child, ast.Attribute):
                    name = child.attr
                elif isinstance(child, ast.Call) and isinstance(child.func, ast.Name):
                    name = child.func.id
                if name is not None:
                    attribute_only = isinstance(child, ast.Attribute) and child is not called
                    for line in {child.lineno, child.end_lineno or child.lineno}:
                        before = found[(path, line)].get(name)
                        if before is None or (before[1] and not attribute_only):
                            found[(path, line)][name] = (caller, attribute_only)
                visit(child, inner)

        visit(module, (path, 0))
    return found


def measure(name: str, source: Path, workdir: Path, cache: Path, log) -> dict:
    """Index one repository, trace its tests, and compare."""
    from eshu_mcp.query.local.index.build.indexer import index_repositories
    from eshu_mcp.query.local.index.store.database import open_reader

    repo = copy_repository(source, workdir / name)
    db = workdir / f"{name}.sqlite"
    for stale in workdir.glob(f"{name}.sqlite*"):
        stale.unlink()
    report = index_repositories(db, [repo])
    if not report.ok:
        raise RuntimeError(f"{name}: indexing failed: {report.repositories[0].error}")
    tree = scan_tree(repo)
    conn = open_reader(db)
    index = load_index(conn)
    conn.close()
    trace = load_trace(cache, name, repo, PYTEST_ARGS.get(name, ["tests"]), log)
    seen = observed_calls(trace, tree)
    names = named_at(repo)
    exact_sites = {(e.path, e.line, e.target.key) for e in index.calls}
    exact_callers = {(e.source, e.target.key) for e in index.calls}
    sites: dict[tuple, bool] = {}
    callers: dict[tuple, bool] = {}
    kinds: dict[tuple, str] = {}
    missed: list[str] = []
    for (path, line), ran in seen.items():
        written = names.get((path, line), {})
        for r in ran:
            definition = tree.definitions.get(r.key) if r.key else None
            if definition is None or r.via_wrapper or definition.name not in written:
                continue  # not named at this site: a dunder run by syntax, a resumed generator
            caller, attribute_only = written[definition.name]
            site = (path, line, r.key)
            sites[site] = site in exact_sites
            kinds[(caller, r.key)] = "property" if attribute_only else "call"
            callers[(caller, r.key)] = callers.get((caller, r.key), False) or (
                (caller, r.key) in exact_callers
            )
            if not sites[site] and len(missed) < 12:
                missed.append(f"{path}:{line} -> {definition.qualname}")
    single = [e for e in index.calls if "ambiguous" not in e.method]
    verdicts = [judge(edge, seen, tree) for edge in single]
    right = sum(v.startswith("correct") for v in verdicts)
    checked = right + sum(v.startswith("wrong") for v in verdicts)
    wrong = [
        f"{e.path}:{e.line} -> {e.target.path}:{e.target.line} {e.target.name} [{e.method}]"
        for e, v in zip(single, verdicts, strict=True)
        if v.startswith("wrong")
    ][:8]
    plain = {k: v for k, v in callers.items() if kinds[k] == "call"}
    dead = dead_code_that_ran(db, trace)
    return {
        "repository": name,
        "files": len(tree.module_of),
        "pytest_status": trace.get("pytest_status"),
        "call_sites_seen": len(seen),
        "runtime_pairs": len(callers),
        "caller_recall": _ratio(sum(callers.values()), len(callers)),
        "caller_recall_without_properties": _ratio(sum(plain.values()), len(plain)),
        "property_pairs": len(callers) - len(plain),
        "site_recall": _ratio(sum(sites.values()), len(sites)),
        "single_target_edges": len(single),
        "single_target_checked": checked,
        "single_target_precision": _ratio(right, checked),
        "cleanup_ready": dead["cleanup_ready"],
        "cleanup_ready_that_ran": dead["cleanup_ready_that_ran"],
        "wrong_examples": wrong,
        "missed_examples": missed,
    }


def ask(db: Path, tool: str, arguments: dict) -> tuple[str, dict]:
    """The text block and structured content of one tool call (``eshu-mcp call``)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "eshu_mcp.cli",
            "call",
            "--db",
            str(db),
            tool,
            json.dumps(arguments),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    result = json.loads(done.stdout)
    return result["content"][0]["text"], result.get("structuredContent") or {}


def in_rows(structured, fact: str) -> bool:
    """Whether one row of the structured content holds every word of ``fact`` (a path, a
    line, a name): the text block shows the first rows, an assistant reads them all."""
    words = fact.replace(":", " ").split()
    stack = [structured]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            values = [str(v) for v in item.values() if not isinstance(v, dict | list)]
            if values and all(any(w == v or w in v for v in values) for w in words):
                return True
            stack.extend(v for v in item.values() if isinstance(v, dict | list))
    return False


def grade(workdir: Path, questions: list[Question]) -> list[dict]:
    """Each question asked, and whether its answer states every fact and none it must not."""
    graded = []
    for question in questions:
        db = workdir / f"{question.repository}.sqlite"
        if not db.exists():
            continue
        text, structured = ask(db, question.tool, question.arguments)
        missing = [
            fact for fact in question.must if fact not in text and not in_rows(structured, fact)
        ]
        wrong = [fact for fact in question.must_not if fact in text]
        graded.append(
            {
                "repository": question.repository,
                "question": question.asked,
                "right": not missing and not wrong,
                "missing": missing,
                "stated_wrongly": wrong,
                "headline": text.splitlines()[0][:200] if text else "",
            }
        )
    return graded


def dead_code_that_ran(db: Path, trace: dict) -> dict:
    """The question "what can I delete?": the definitions find_dead_code calls cleanup-ready
    (``unused``), and those of them that ran in the repository's tests."""
    ran = definitions_that_ran(trace)
    _, structured = ask(db, "investigate_dead_code", {"limit": 500})
    data = structured.get("data", structured)
    buckets = data.get("candidate_buckets") or {}
    ready = [
        row
        for rows in buckets.values()
        if isinstance(rows, list)
        for row in rows
        if isinstance(row, dict) and row.get("classification") == "unused"
    ]
    that_ran = [
        f"{row.get('file_path')}:{row.get('start_line')} {row.get('name')}"
        for row in ready
        if any(name == row.get("name") for _, name in ran.get(row.get("file_path"), ()))
    ]
    return {"cleanup_ready": len(ready), "cleanup_ready_that_ran": that_ran}


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def main(argv: list[str]) -> int:
    if argv[:1] == ["--trace-child"]:
        trace_child(argv[1], argv[2], argv[3:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--repo", action="append", default=[], help="NAME=PATH (repeatable)")
    parser.add_argument("--workdir", help="keep the copies and indexes here")
    parser.add_argument(
        "--trace-cache", default=str(Path.home() / ".cache" / "eshu-mcp-bench-heldout")
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    options = parser.parse_args(argv)
    if not options.repo:
        parser.error("give at least one --repo NAME=PATH")
    log = (lambda *a: print(*a, file=sys.stderr)) if options.json else print
    workdir = Path(options.workdir or tempfile.mkdtemp(prefix="bench-heldout-"))
    workdir.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        for spec in options.repo:
            name, _, path = spec.partition("=")
            results.append(measure(name, Path(path), workdir, Path(options.trace_cache), log))
            if not options.json:
                for key, value in results[-1].items():
                    if isinstance(value, list):
                        print(f"  {key}:")
                        for item in value:
                            print(f"    {item}")
                    else:
                        print(f"  {key:36} {value}")
        questions = grade(workdir, QUESTIONS)
        for result in results:  # "can I delete what you call cleanup-ready?"
            questions.append(
                {
                    "repository": result["repository"],
                    "question": "What dead code can I delete?",
                    "right": not result["cleanup_ready_that_ran"],
                    "missing": [],
                    "stated_wrongly": result["cleanup_ready_that_ran"],
                    "headline": f"{result['cleanup_ready']} cleanup-ready",
                }
            )
        if not options.json:
            right = sum(q["right"] for q in questions)
            print(f"questions: {right} of {len(questions)} right")
            for q in questions:
                mark = "right" if q["right"] else "WRONG"
                print(f"  [{mark}] {q['repository']}: {q['question']} -- {q['headline']}")
                for fact in q["missing"]:
                    print(f"      missing: {fact}")
                for fact in q["stated_wrongly"]:
                    print(f"      stated wrongly: {fact}")
    finally:
        if not options.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    if options.json:
        print(json.dumps({"repositories": results, "questions": questions}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
