#!/usr/bin/env python3
"""
Call-graph truth on the installed Twisted sources: is every edge the definition that runs?

Copies Twisted into a fresh git repository, indexes it in process with the eshu_mcp found on
the current sys.path (run it from the checkout you measure: ``PYTHONPATH=. python
.../bench_callgraph.py``), opens the index read-only and measures:

* callers, per benchmark name, against Python's ``ast`` (every ``NAME(...)``/``x.NAME(...)``
  call, attributed to its enclosing def; calls that are not calls into the tree are left
  out: on a name imported from outside it, like ``sys.stdout.write``, on a local or a
  ``self`` attribute only ever bound to an outside value, like ``f = open(p)``, and, with
  the runtime trace, sites where only outside code of that name ran; an edge at one of
  them counts against precision): *site recall* (call sites with a CALLS edge into
  some definition of the name), *caller recall* (enclosing defs with one), *edge precision*
  (edges at such a call site, not to an ``@overload`` stub), and the same through the tools
  an assistant calls (in process, through the /api/v0 Resource);
* runtime: part of Twisted's own test suite run under ``sys.setprofile`` (cached per
  Twisted version): for every CALLS edge whose call-site line ran and called something of
  the target's name, did the target run there? Per resolution method: edges, checked,
  measured precision, stored confidence; ambiguous edges also as candidate sets;
* hierarchy: direct subclasses of Deferred and Protocol by ``ast`` against INHERITS edges;
* dead code: what find_dead_code reports, and the share of it referenced nowhere else;
* the issue's "Done when" figures, in one block.

    python scripts/bench_callgraph.py [--quick] [--workdir DIR [--reuse]] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import callgraph_ast
from callgraph_api import measure_api
from callgraph_ast import SourceTree, ancestors, direct_subclasses, resolve_dotted, scan_tree
from callgraph_index import load_index
from callgraph_report import print_report
from callgraph_runtime import definitions_that_ran, judge, observed_calls, tier_table
from callgraph_trace import load_trace

# (name, kind, receiver pattern restricting the recall sites, or None)
NAMES = [
    ("gatherResults", "single", None),
    ("deferLater", "single", None),
    ("ensureDeferred", "single", None),
    ("succeed", "module_attr", r"^defer$"),
    ("fail", "module_attr", r"^defer$"),
    ("maybeDeferred", "overload", None),
    ("addCallback", "overload", None),
    ("addCallbacks", "many_classes", None),
    ("addErrback", "many_classes", None),
    ("addBoth", "many_classes", None),
    ("callLater", "many_classes", None),
    ("callback", "many_classes", None),
    ("write", "many_classes", None),
    ("write", "self_attr_chain", r"^self(\.\w+)+$"),
    ("dataReceived", "many_classes", None),
    ("loseConnection", "many_classes", None),
    ("loseConnection", "self_attr_chain", r"^self(\.\w+)+$"),
    ("makeConnection", "many_classes", None),
    ("connectionLost", "many_classes", None),
    ("sendLine", "many_classes", None),
    ("listenTCP", "module_attr", r"(^|\.)reactor$"),
    ("connectTCP", "module_attr", r"(^|\.)reactor$"),
    ("msg", "module_attr", r"^log$"),
    ("Deferred", "constructor", None),
    ("DeferredList", "constructor", None),
    ("Failure", "constructor", None),
]
QUICK = {"gatherResults", "maybeDeferred", "addCallback", "write", "listenTCP", "Deferred"}

# Offline, loopback-only and quick (about 6,000 tests, two minutes under the profiler).
# Modules that need hamcrest or hypothesis (twisted.test.test_defer...) fail to import.
PACKAGES = (
    "application cred logger mail names pair persisted positioning protocols python runner"
    " spread web words"
)
INTERNET_TESTS = "base core defer_await defer_yieldfrom endpoints inlinecb protocol testing time"
TWISTED_TESTS = (
    "amp application compat context cooperator dirdbm error factories fdesc ftp htb internet iosim"
    " lockfile log loopback modules monkey paths persisted policies postfix protocols randbytes"
    " reflect roots sip socks stateful task tcp_internals text threads tpfile twistd udp usage"
)
DEFAULT_MODULES = [
    *(f"twisted.{name}" for name in PACKAGES.split()),
    *(f"twisted.internet.test.test_{name}" for name in INTERNET_TESTS.split()),
    *(f"twisted.test.test_{name}" for name in TWISTED_TESTS.split()),
]

HIERARCHY = [("twisted.internet.defer", "Deferred"), ("twisted.internet.protocol", "Protocol")]
REPOSITORY = "twisted-src"  # the copy's folder under the work directory


def load_scan(cache_dir: Path, repo: Path, version: str, log) -> SourceTree:
    """The ast scan of the copy, cached per Twisted version and scanner source."""
    digest = hashlib.sha256(Path(callgraph_ast.__file__).read_bytes()).hexdigest()[:12]
    path = cache_dir / f"ast-{version}-py{sys.version_info[0]}{sys.version_info[1]}-{digest}.pickle"
    if path.exists():
        log(f"ast scan: cached {path}")
        tree = pickle.loads(path.read_bytes())
        tree.root = repo
        return tree
    tree = scan_tree(repo)
    cache_dir.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(tree))
    return tree


def in_span(spans: dict, path: str, line: int) -> bool:
    return any(start <= line <= end for start, end in spans.get(path, ()))


def ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


INTERFACE_BASES = frozenset({"Interface", "Protocol"})


def declares(tree, definition) -> bool:
    """Whether a definition is a method of an interface (a zope ``Interface`` or a
    ``typing.Protocol``, or a class deriving from one): it declares, it never runs."""
    parent = tree.definitions.get(definition.parent) if definition.parent else None
    if parent is None or parent.kind != "class":
        return False
    for key in (definition.parent, *ancestors(tree, definition.parent)):
        module = tree.module_of.get(key[0])
        for base in tree.class_bases.get(key, ()):  # an outside Interface, not a tree class
            if base.rsplit(".", 1)[-1] in INTERFACE_BASES and not resolve_dotted(
                tree, module, base
            ):
                return True
    return False


def ran_outside(site, seen: dict) -> bool:
    """Whether the trace saw this site call its name, and only outside code of that name ran
    there (a builtin's or a library's method: no definition of the tree is its callee)."""
    ran = [r for r in seen.get((site.path, site.line), ()) if r.name == site.name]
    return bool(ran) and all(r.key is None for r in ran)


def measure_name(name, kind, pattern, tree, index, seen) -> dict:
    """Callers of one name: ast call sites against the index's CALLS edges into its definitions."""
    all_sites = tree.calls_named(name)
    outside = {s for s in all_sites if s.external or ran_outside(s, seen)}
    spans = defaultdict(list)
    for site in all_sites:
        if site not in outside:  # an edge from sys.stdout.write() into a twisted write is wrong
            spans[site.path].append((site.line, site.attr_line))
    sites = [s for s in all_sites if s not in outside]
    if pattern:
        sites = [s for s in sites if s.receiver and re.search(pattern, s.receiver)]
    edges = index.calls_into(name)
    edge_lines = defaultdict(set)
    for edge in edges:
        edge_lines[edge.path].add(edge.line)
    found = [s for s in sites if any(s.line <= x <= s.attr_line for x in edge_lines[s.path])]
    declarations = {k for k, d in tree.definitions.items() if d.name == name and declares(tree, d)}
    implemented_lines = defaultdict(set)
    for edge in edges:
        if edge.target.key not in declarations:
            implemented_lines[edge.path].add(edge.line)
    found_implemented = [
        s for s in found if any(s.line <= x <= s.attr_line for x in implemented_lines[s.path])
    ]
    callers = {s.caller or (s.path, 0) for s in sites}
    edge_callers = {e.source for e in edges}
    all_callers = {s.caller or (s.path, 0) for s in all_sites}
    stubs = {k for k, d in tree.definitions.items() if d.name == name and d.is_overload}
    precise = [e for e in edges if e.target.key not in stubs and in_span(spans, e.path, e.line)]
    definitions = index.definitions(name)
    keys = {d.key for d in definitions}
    # sites (matching the pattern) where a definition of the name ran, through a decorator's
    # wrapper or not, called by that name (not through an alias)
    runtime_sites = {
        (s.path, s.line)
        for s in sites
        if any(r.key in keys for r in seen.get((s.path, s.line), ()))
    }
    exact = {(e.path, e.line, e.target.key) for e in edges}
    runtime_found = {
        where
        for where in runtime_sites
        if any((*where, r.key) in exact for r in seen[where] if r.key in keys)
    }
    single = [e for e in edges if "ambiguous" not in e.method]
    verdicts = [judge(edge, seen, tree) for edge in single] if seen else []
    right = sum(v.startswith("correct") for v in verdicts)
    checked = right + sum(v.startswith("wrong") for v in verdicts)
    return {
        "name": name if not pattern else f"{name} [{pattern}]",
        "kind": kind,
        "definitions": len(definitions),
        "ast_sites": len(sites),
        "ast_external_sites": sum(1 for s in all_sites if s.external),
        "ast_sites_outside_at_runtime": len(outside) - sum(1 for s in all_sites if s.external),
        "sites_found": len(found),
        "sites_found_beyond_interfaces": len(found_implemented),
        "site_recall": ratio(len(found), len(sites)),
        "ast_callers": len(callers),
        "caller_recall": ratio(len(callers & edge_callers), len(callers)),
        "edges": len(edges),
        "ambiguous_edges": len(edges) - len(single),
        "edge_precision": ratio(len(precise), len(edges)),
        "edges_to_overload_stubs": sum(1 for e in edges if e.target.key in stubs),
        "caller_precision": ratio(len(edge_callers & all_callers), len(edge_callers)),
        "runtime_sites": len(runtime_sites),
        "runtime_recall_exact": ratio(len(runtime_found), len(runtime_sites)),
        "runtime_checked_edges": checked,
        "runtime_precision": ratio(right, checked),
        "_plain": pattern is None,
        "_callers": callers,
        "_precise": len(precise),
        "_all_callers": all_callers,
    }


def overall(all_rows: list[dict]) -> dict:
    """Pooled over the names; a receiver-pattern row counts only when its name has no plain
    row (its sites are a subset of that row's)."""
    plain = {r["name"] for r in all_rows if r["_plain"]}
    rows = [r for r in all_rows if r["_plain"] or r["name"].split(" [")[0] not in plain]
    sites = sum(r["ast_sites"] for r in rows)
    edges = sum(r["edges"] for r in rows)
    found = sum(r["sites_found"] for r in rows)
    beyond = sum(r["sites_found_beyond_interfaces"] for r in rows)
    precise = sum(r["_precise"] for r in rows)
    return {
        "names": len(rows),
        "ast_sites": sites,
        "site_recall": ratio(found, sites),
        "site_recall_beyond_interfaces": ratio(beyond, sites),
        "edges": edges,
        "edge_precision": ratio(precise, edges),
        "mean_site_recall": round(sum(r["site_recall"] or 0 for r in rows) / len(rows), 3),
    }


def hierarchy(tree, index) -> list[dict]:
    rows = []
    by_key = {e.key: e for e in index.entities.values() if e.entity_type == "Class"}
    for module, name in HIERARCHY:
        path = next(p for p, m in tree.module_of.items() if m == module)
        anchor = next(
            d
            for d in tree.definitions.values()
            if d.path == path and d.qualname == name and d.kind == "class"
        )
        truth = direct_subclasses(tree, module, name)
        entity = by_key.get((anchor.path, anchor.line))
        stored = {
            index.entities[s].key
            for s, t, _ in index.inherits
            if entity is not None and t == entity.entity_id and s in index.entities
        }
        rows.append(
            {
                "class": f"{module}.{name}",
                "ast_children": len(truth),
                "index_children": len(stored),
                "found": len(truth & stored),
                "recall": ratio(len(truth & stored), len(truth)),
                "precision": ratio(len(truth & stored), len(stored)),
                "missing_examples": sorted(f"{p}:{n}" for p, n in truth - stored)[:5],
                "entity_id": entity.entity_id if entity else None,
                "_truth": truth,
            }
        )
    return rows


def done_when(result: dict, tree, index) -> dict:
    """The issue's acceptance figures, each with its threshold."""
    checks: dict = {}
    callers = result["callers"]["overall"]
    checks["callers site recall >= 0.90"] = callers["site_recall"]
    checks["callers edge precision (ast) >= 0.97"] = callers["edge_precision"]
    runtime = result.get("runtime")
    if runtime:
        single = [v for k, v in runtime["tiers"].items() if "/" not in k and "ambiguous" not in k]
        correct, checked = sum(t["correct"] for t in single), sum(t["checked"] for t in single)
        checks["single-target edges right at runtime >= 0.95"] = ratio(correct, checked)
        checks["tiers with |stored confidence - precision| > 0.05"] = sorted(
            k
            for k, v in runtime["tiers"].items()
            if "/" not in k and abs(v.get("confidence_gap", 0)) > 0.05
        )
    for row in result["hierarchy"]:
        checks[f"{row['class']} direct subclasses recall"] = row["recall"]
    implementation = [
        d
        for d in tree.definitions.values()
        if d.name == "maybeDeferred" and d.path == "twisted/internet/defer.py" and not d.is_overload
    ]
    keys = {(d.path, d.line) for d in implementation}
    checks["maybeDeferred implementation callers (edges)"] = sum(
        1 for e in index.calls_into("maybeDeferred") if e.target.key in keys
    )
    dead = result.get("api", {}).get("dead_code")
    if dead:
        checks["dead code files scanned / python files"] = (
            f"{dead['scan'].get('candidate_scan_files', '?')} / {dead['repository_files']}"
        )
        checks["dead code referenced nowhere >= 0.90"] = dead["share_referenced_nowhere"]
        if dead.get("ran_at_runtime") is not None:
            checks["dead code that ran in the runtime trace"] = dead["ran_at_runtime"]
            checks["dead code classified unused (cleanup-ready) that ran"] = dead.get(
                "unused_ran_at_runtime"
            )
        checks["dead code by classification"] = dead.get("classifications")
    return checks


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--workdir", help="keep the repository copy and index here")
    parser.add_argument("--reuse", action="store_true", help="reuse the index in --workdir")
    parser.add_argument("--quick", action="store_true", help="fewer names and test modules")
    parser.add_argument("--no-runtime", action="store_true", help="skip the runtime trace")
    parser.add_argument("--no-api", action="store_true", help="skip the /api/v0 measures")
    parser.add_argument("--trace-seconds", type=float, default=300.0)
    parser.add_argument(
        "--trace-cache",
        default=str(Path.home() / ".cache" / "eshu-mcp-bench-callgraph"),
        help="folder of cached runtime traces and ast scans (keyed by Twisted version)",
    )
    parser.add_argument(
        "--name", action="append", default=[], help="also measure this name (repeatable)"
    )
    parser.add_argument("--examples", type=int, default=3, help="wrong edges shown per tier")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    options = parser.parse_args(argv)
    log = (lambda *a: print(*a, file=sys.stderr)) if options.json else print
    try:
        import eshu_mcp
    except ImportError:
        print("eshu_mcp is not importable: run from a checkout with PYTHONPATH=.", file=sys.stderr)
        return 2
    from bench_support import twisted_repository

    from eshu_mcp.query.local.index.build.indexer import index_repositories
    from eshu_mcp.query.local.index.store.database import open_reader

    log(f"eshu_mcp from {Path(eshu_mcp.__file__).parent}")
    workdir = Path(options.workdir or tempfile.mkdtemp(prefix="bench-callgraph-"))
    workdir.mkdir(parents=True, exist_ok=True)
    db = workdir / "index.sqlite"
    result: dict = {"eshu_mcp": str(Path(eshu_mcp.__file__).parent)}
    try:
        if options.reuse and db.exists():
            repo = workdir / REPOSITORY
            log(f"reusing {db}")
        else:
            for stale in workdir.glob("index.sqlite*"):
                stale.unlink()
            repo = twisted_repository(workdir, REPOSITORY)
            started = time.perf_counter()
            report = index_repositories(db, [repo])
            result["index_seconds"] = round(time.perf_counter() - started, 2)
            if not report.ok:
                log(f"indexing failed: {report.repositories[0].error}")
                return 1
        import twisted

        started = time.perf_counter()
        tree = load_scan(Path(options.trace_cache), repo, twisted.__version__, log)
        conn = open_reader(db)
        index = load_index(conn)
        conn.close()
        log(f"ast and index read in {time.perf_counter() - started:.1f} s")

        seen: dict = {}
        ran: dict = {}
        if not options.no_runtime:
            modules = DEFAULT_MODULES  # --quick too: the same cached trace
            trace = load_trace(
                Path(options.trace_cache),
                twisted.__version__,
                modules,
                options.trace_seconds,
                log,
            )
            seen = observed_calls(trace, tree)
            ran = definitions_that_ran(trace)
            result["runtime"] = {
                "modules": len(modules),
                "timed_out": trace["timed_out"],
                "call_sites_seen": len(seen),
                **tier_table(index.calls, seen, tree, options.examples),
            }
        names = [n for n in NAMES if not options.quick or n[0] in QUICK]
        names += [(name, "asked", None) for name in options.name]
        rows = [measure_name(*spec, tree, index, seen) for spec in names]
        result["callers"] = {"names": rows, "overall": overall(rows)}
        result["hierarchy"] = hierarchy(tree, index)
        result["files"] = len(tree.module_of)
        if not options.no_api:
            started = time.perf_counter()
            result["api"] = measure_api(db, index, tree, rows, result["hierarchy"], log, ran)
            result["api_seconds"] = round(time.perf_counter() - started, 2)
        for row in rows:
            for hidden in ("_callers", "_all_callers", "_precise", "_plain"):
                row.pop(hidden)
        for row in result["hierarchy"]:
            row.pop("_truth")
        result["done_when"] = done_when(result, tree, index)
    finally:
        if not options.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    if options.json:
        print(json.dumps(result, sort_keys=True, default=str))
    else:
        print_report(result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
