"""
Check stored CALLS edges against a runtime trace (scripts/callgraph_trace.py).

An edge (file, line) -> target is *checked* when its call-site line ran and something named
like the target was called there (a repository definition, a library function or a
builtin); it is *correct* when the target is among the definitions that ran there. Edges
to generator or coroutine functions cannot be checked (calling one runs none of its code
yet), nor can lines that never ran or whose call of that name never happened.
"""

from __future__ import annotations

import os
from collections import defaultdict

import attr
from callgraph_ast import SourceTree, ancestors
from callgraph_index import CallEdge


@attr.s(frozen=True, slots=True)
class Ran:
    """One callee seen at a call site: a definition of the tree (key) or an outside name."""

    key: tuple[str, int] | None = attr.ib()
    name: str = attr.ib()
    via_wrapper: bool = attr.ib()


def observed_calls(trace: dict, tree: SourceTree) -> dict[tuple[str, int], set[Ran]]:
    """Map (path, line) of each call site to what ran there, in the tree's relative paths."""
    base = os.path.dirname(trace["package_dir"].rstrip(os.sep))
    functions = {
        (d.path, d.first_line): d for d in tree.definitions.values() if d.kind == "function"
    }
    classes = {(d.path, d.qualname): d for d in tree.definitions.values() if d.kind == "class"}
    path_of = {module: path for path, module in tree.module_of.items()}
    starts = defaultdict(set)  # a method call's CPython line -> its call expression's line
    for call in tree.calls:
        if call.attr_line != call.line:
            starts[(call.path, call.attr_line)].add(call.line)
    seen: dict[tuple[str, int], set[Ran]] = defaultdict(set)
    for site_file, line, (kind, where, number, name), via in trace["calls"]:
        path = os.path.relpath(site_file, base).replace(os.sep, "/")
        key = None
        if kind == "py" and where.startswith(base + os.sep):
            found = functions.get((os.path.relpath(where, base).replace(os.sep, "/"), number))
            key = (found.path, found.line) if found else None
        elif kind == "new":
            module_path = path_of.get(where)
            found = classes.get((module_path, number.replace(".<locals>", "")))
            key = (found.path, found.line) if found else None
        ran = Ran(key, name, bool(via))
        seen[(path, line)].add(ran)
        for start in starts.get((path, line), ()):
            seen[(path, start)].add(ran)
    return seen


def judge(edge: CallEdge, seen: dict, tree: SourceTree) -> str:
    """correct | correct_via_wrapper | wrong | wrong_override | wrong_outside | not_run |
    name_not_seen | generator (``wrong_override``: what ran overrides the target or is
    overridden by it; ``wrong_outside``: what ran is outside the repository, a library
    function or a builtin)."""
    target = tree.definitions.get(edge.target.key)
    if target is not None and target.is_generator:
        return "generator"
    ran = seen.get((edge.path, edge.line))
    if not ran:
        return "not_run"
    keys = {r.key for r in ran if not r.via_wrapper}
    if edge.target.key in keys:
        return "correct"
    if edge.target.key in {r.key for r in ran}:
        return "correct_via_wrapper"
    same_name = [r for r in ran if r.name == edge.target.name]
    if not same_name:
        return "name_not_seen"
    if target is not None and any(_related(tree, target, r.key) for r in same_name):
        return "wrong_override"
    return "wrong_outside" if all(r.key is None for r in same_name) else "wrong"


def _related(tree: SourceTree, target, ran_key) -> bool:
    """Are ``target`` and the definition that ran methods of classes related by inheritance?
    (the site is polymorphic: the pick is one of several definitions it can reach)"""
    ran = tree.definitions.get(ran_key) if ran_key else None
    if ran is None or target.parent is None or ran.parent is None:
        return False
    if tree.definitions.get(target.parent, target).kind != "class":
        return False
    return target.parent in ancestors(tree, ran.parent) or ran.parent in ancestors(
        tree, target.parent
    )


def judge_candidates(keys: set, name: str, ran: set[Ran] | None) -> str:
    """For an ambiguous edge group: does the candidate set contain what ran?"""
    if not ran:
        return "not_run"
    if keys & {r.key for r in ran}:
        return "contains"
    same_name = [r for r in ran if r.name == name]
    if not same_name:
        return "name_not_seen"
    return "misses_outside" if all(r.key is None for r in same_name) else "misses"


def describe(edge: CallEdge, ran: set[Ran] | None, tree: SourceTree) -> str:
    """One line for a wrong edge: where, what the index says, what ran there."""
    source = tree.definitions.get(edge.source)
    target = tree.definitions.get(edge.target.key)
    ran_names = sorted(
        f"{r.key[0]}:{r.key[1]}:{tree.definitions[r.key].qualname}"
        if r.key in tree.definitions
        else f"<outside>:{r.name}"
        for r in ran or ()
        if r.name == edge.target.name
    )
    return (
        f"{edge.path}:{edge.line} in {source.qualname if source else '<module>'} -> "
        f"{edge.target.path}:{edge.target.line}:{target.qualname if target else edge.target.name}"
        f" [{edge.method} {edge.confidence}]; ran: {', '.join(ran_names[:3])}"
    )


def tier_table(edges: list[CallEdge], seen: dict, tree: SourceTree, examples: int = 0) -> dict:
    """
    Per resolution method (and per method x call kind): counts, precision, confidence.
    Ambiguous edges (one per candidate) are judged one by one here, and also as a group per
    call site: does the candidate set hold what ran?
    """
    rows: dict[str, dict] = {}
    wrong: dict[str, list[str]] = defaultdict(list)
    ambiguous: dict[tuple, dict] = {}
    for edge in edges:
        if "ambiguous" in edge.method:
            group = ambiguous.setdefault(
                (edge.path, edge.line, edge.target.name, edge.method),
                {"keys": set(), "confidence": edge.confidence},
            )
            group["keys"].add(edge.target.key)
        verdict = judge(edge, seen, tree)
        if verdict.startswith("wrong") and len(wrong[edge.method]) < examples:
            wrong[edge.method].append(describe(edge, seen.get((edge.path, edge.line)), tree))
        for label in (edge.method, f"{edge.method}/{edge.call_kind}"):
            row = rows.setdefault(label, defaultdict(float))
            row["edges"] += 1
            row[verdict] += 1
            row["confidence_sum"] += edge.confidence or 0.0
    table = {}
    for label, row in sorted(rows.items()):
        correct = row["correct"] + row["correct_via_wrapper"]
        mistaken = row["wrong"] + row["wrong_override"] + row["wrong_outside"]
        checked = correct + mistaken
        table[label] = {
            "edges": int(row["edges"]),
            "checked": int(checked),
            "correct": int(correct),
            "correct_only_via_wrapper": int(row["correct_via_wrapper"]),
            "wrong": int(mistaken),
            "wrong_override": int(row["wrong_override"]),
            "wrong_outside": int(row["wrong_outside"]),
            "not_run": int(row["not_run"]),
            "name_not_seen": int(row["name_not_seen"]),
            "generator_target": int(row["generator"]),
            "precision": round(correct / checked, 3) if checked else None,
            "stored_confidence": round(row["confidence_sum"] / row["edges"], 3),
        }
        if checked:
            table[label]["confidence_gap"] = round(
                table[label]["stored_confidence"] - correct / checked, 3
            )
    groups: dict[str, dict] = {}
    for (path, line, name, method), group in ambiguous.items():
        verdict = judge_candidates(group["keys"], name, seen.get((path, line)))
        row = groups.setdefault(method, defaultdict(float))
        row["sites"] += 1
        row["candidates"] += len(group["keys"])
        row[verdict] += 1
        row["confidence_sum"] += group["confidence"] or 0.0
    ambiguous_table = {
        method: {
            "sites": int(row["sites"]),
            "mean_candidates": round(row["candidates"] / row["sites"], 1),
            "checked": int(row["contains"] + row["misses"] + row["misses_outside"]),
            "contains_what_ran": int(row["contains"]),
            "misses_ran_outside_repo": int(row["misses_outside"]),
            "share_containing": round(
                row["contains"] / (row["contains"] + row["misses"] + row["misses_outside"]), 3
            )
            if row["contains"] + row["misses"] + row["misses_outside"]
            else None,
            "stored_confidence": round(row["confidence_sum"] / row["sites"], 3),
        }
        for method, row in groups.items()
    }
    return {"tiers": table, "ambiguous": ambiguous_table, "wrong_examples": dict(wrong)}


def definitions_that_ran(trace: dict) -> dict[str, set[tuple[int, str]]]:
    """Per relative path, the (first line, name) of every repository function that ran."""
    base = os.path.dirname(trace["package_dir"].rstrip(os.sep))
    ran: dict[str, set[tuple[int, str]]] = defaultdict(set)
    for _, _, (kind, where, number, name), _ in trace["calls"]:
        if kind == "py" and where.startswith(base):
            ran[os.path.relpath(where, base).replace(os.sep, "/")].add((number, name))
    return ran
