"""
CALLS edges from call sites, through the tiers of ``calls.resolve_call``: memoised (calls
that look alike resolve alike) and, for large repositories, split by file between this
process and one forked child so both cores work on the indexer's serial tail.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from eshu_mcp.query.local.index.build.stopping import start_worker
from eshu_mcp.query.local.index.resolve.bindings import FileBindings
from eshu_mcp.query.local.index.resolve.calls import (
    CALLABLE_TYPES,
    CONSTRUCTIONS,
    PROPERTY_KINDS,
    Catalog,
    Entity,
    resolve_call,
)
from eshu_mcp.query.local.index.resolve.receivers import CALLER_SCOPE, PythonCalls
from eshu_mcp.query.local.index.store.codes import CALL_KINDS, CONFIDENCE, EDGE_TYPES, METHODS

CALLS = EDGE_TYPES["CALLS"]
CONSTRUCTOR_CALL = CALL_KINDS["constructor_call"]
AMBIGUOUS_SHARE = 75
"""An ambiguous call's n edges get this confidence (hundredths) over n each: measured on
Twisted, what runs is one of the candidates (each as likely) about three times in four, and
something outside the repository (a builtin type's or a library's method) otherwise."""
SPLIT_ABOVE = 200_000
"""Calls below this are resolved in-process. The child fills its own caches again (class
lookups, candidate lists, names) and copies the pages it touches: on Twisted (99k calls)
the split resolved with a third more CPU (0.58 s against 0.43 s), and whole builds took
0.25-0.8 s more CPU and no less wall time on a 2-core machine."""


def resolve_calls(
    calls: list[tuple],
    catalog: Catalog,
    bindings: FileBindings,
    language_of: dict[int, str | None],
    file_nids: dict[int, int],
    python: PythonCalls | None = None,
) -> tuple[list[tuple], list[tuple[int, str]]]:
    """
    Resolve call_rows tuples (call_id, file_id, caller, name, full_name, receiver, inferred,
    call_kind, arg_count, line) to CALLS edge_rows tuples without ``repo`` (type first) and
    (call_id, reason) pairs for the calls that resolve to nothing. One edge per
    (source, target, line); an ambiguous call has one edge per candidate.
    Python calls go through ``python`` (receiver types) when given.
    """
    edges: list[tuple] = []
    unresolved: list[tuple[int, str]] = []
    by_id = catalog.by_id
    nested = python.nested if python is not None else {}
    accessors = catalog.accessors
    scope_rule = python.scope_rule if python is not None else None
    class_scopes: dict[int, object] = {}  # caller -> the scope key of its class's calls
    unnested_rules: dict[tuple, int | None] = {}  # (receiver, type) -> scope rule, in files
    #                                               without definitions nested in functions
    add_edge, add_unresolved = edges.append, unresolved.append
    prepared = _Prepared(python.constructors if python is not None else None)
    current = None  # the file whose calls these are: memo and seen hold its calls only
    for call in calls:
        call_id, file_id, caller_nid, name, _, receiver, inferred, kind, _, line = call
        if file_id != current:
            # a call's source is in its file, and its file is part of what decides it
            current, seen, memo = file_id, set(), {}
            # Python calls by their name, receiver and inferred type: what they resolve to
            # when no caller decides, else which part of the caller does (an int rule)
            plain: dict[tuple, tuple | int] = {}
            property_rules: dict[tuple, int | None] = {}  # ... and of attributes, the rule
            is_python = python is not None and language_of.get(file_id) == "python"
            has_nested = bool(nested.get(file_id))
        if kind in PROPERTY_KINDS:  # an attribute: a use of a property, or of nothing
            if name not in accessors:
                continue
            if is_python:
                named = (name, receiver, inferred)
                rule = property_rules.get(named, False)
                if rule is False:
                    rule = property_rules[named] = scope_rule(file_id, name, receiver, inferred)
                caller = by_id.get(caller_nid)
                scope = None if caller is None else python.scope_of(caller, rule)
                key = (kind, scope, name, receiver, inferred)
            else:
                caller = by_id.get(caller_nid) if caller_nid else None
                key = (kind, caller.class_context if caller else None, *call[3:9])
            found = memo.get(key)
            if found is None:
                caller = by_id.get(caller_nid) if caller_nid else None
                if is_python:
                    found = python.property_use(call, caller)
                else:
                    found = accessor_use(
                        resolve_call(call, catalog, bindings, language_of), kind, catalog
                    )
                found = memo[key] = _prepared(found)
            if found[0] is None:
                continue  # not a property: no call, nothing unlinked
        elif is_python:
            # the caller's scopes and class decide: equal keys resolve equally (nothing
            # else of a call than its name, receiver and inferred type is read)
            named = (name, receiver, inferred)
            found = plain.get(named)
            if found is None:
                if has_nested:
                    rule = scope_rule(file_id, name, receiver, inferred)
                elif receiver is None:
                    rule = None
                else:  # no nested definitions: the receiver and type alone decide the rule
                    rule = unnested_rules.get((receiver, inferred), False)
                    if rule is False:
                        rule = unnested_rules[receiver, inferred] = scope_rule(
                            file_id, name, receiver, inferred
                        )
                if rule is None:
                    caller = by_id.get(caller_nid) if caller_nid else None
                    found = plain[named] = prepared(python.resolve(call, caller))
                else:
                    found = plain[named] = rule
            if found.__class__ is int:  # a rule: the caller's node, or its class, decides
                if found == CALLER_SCOPE:
                    scope = caller_nid if caller_nid and caller_nid in by_id else None
                else:
                    scope = class_scopes.get(caller_nid, False)
                    if scope is False:
                        caller = by_id.get(caller_nid) if caller_nid else None
                        scope = class_scopes[caller_nid] = (
                            None if caller is None else python.scope_of(caller, found)
                        )
                key = (scope, named)
                found = memo.get(key)
                if found is None:
                    caller = by_id.get(caller_nid) if caller_nid else None
                    found = memo[key] = prepared(python.resolve(call, caller))
        else:
            # Everything resolve_call reads of a call (its argument count picks overloads):
            # equal keys resolve equally.
            caller = by_id.get(caller_nid) if caller_nid else None
            key = (caller.class_context if caller else None, *call[3:9])
            found = memo.get(key)
            if found is None:
                found = memo[key] = _prepared(
                    resolve_call(call, catalog, bindings, language_of),
                    catalog.constructor_of if kind in CONSTRUCTIONS else None,
                )
        targets, how = found
        if targets is None:
            add_unresolved((call_id, how))
            continue
        source = caller_nid or file_nids[file_id]
        for nid, constructs, method, confidence in targets:
            identity = (source, nid, line)
            if identity in seen:
                continue
            seen.add(identity)
            edge_kind = CONSTRUCTOR_CALL if constructs else kind
            add_edge((CALLS, source, nid, edge_kind, None, method, confidence, line, file_id))
    return edges, unresolved


def accessor_use(found: tuple, kind: str, catalog: Catalog) -> tuple:
    """A member read or assigned (JavaScript/TypeScript), resolved as a method call: the
    ``get`` or ``set`` accessor of the method(s) found, beside them in their class; (None,
    reason) when none is one."""
    target = found[0]
    if target is None:
        return found
    wanted = "set" if kind == "property_write" else "get"
    kept = []
    for method in target if isinstance(target, list) else [target]:
        if method.accessor is None or method.parent is None:
            continue
        kept += [
            sibling
            for sibling in catalog.children.get(method.parent, ())
            if sibling.name == method.name and sibling.accessor == wanted
        ][:1]
    if not kept:
        return None, "no_definition"
    if isinstance(target, list) or len(kept) > 1:
        return kept, "ambiguous", max(found[2] if len(found) > 2 else 0, len(kept))
    return kept[0], found[1]


def _prepared(found: tuple, constructors: Callable[[Entity], list[Entity]] | None = None) -> tuple:
    """A resolution as (None, reason) or ((nid, is a class, method code, confidence) for
    each target, how): what every call resolving alike writes. A class constructed is also
    a call of what ``constructors`` says runs (``__new__``/``__init__``/``__post_init__``,
    ``constructor``), as sure as the class is."""
    target, how = found[0], found[1]
    if target is None:
        return None, how
    confidence = CONFIDENCE[how]
    if isinstance(target, list):  # each candidate as likely as the others
        could_run = found[2] if len(found) > 2 else len(target)
        confidence = max(1, round(AMBIGUOUS_SHARE / could_run))
    else:
        target = [target]
    method = METHODS[how]
    rows = [(e.nid, e.entity_type in CALLABLE_TYPES, method, confidence) for e in target]
    if constructors is not None:
        for e in target:
            if e.entity_type in CALLABLE_TYPES:
                rows.extend((c.nid, False, method, confidence) for c in constructors(e))
    return tuple(rows), how


class _Prepared:
    """:func:`_prepared` with ``constructors`` of calls resolving to the same targets the
    same way, made once: Twisted's 42k resolutions have 10k distinct outcomes."""

    def __init__(self, constructors: Callable[[Entity], list[Entity]] | None) -> None:
        self.constructors = constructors
        self.made: dict[tuple, tuple] = {}

    def __call__(self, found: tuple) -> tuple:
        target = found[0]
        if target is None:
            return found if len(found) == 2 else (None, found[1])
        if isinstance(target, list):
            could_run = found[2] if len(found) > 2 else None
            key = (*[(e.nid, e.entity_type) for e in target], found[1], could_run)
        else:  # what a row says of a target: its node and whether it is a class
            key = (target.nid, target.entity_type, found[1])
        made = self.made.get(key)
        if made is None:
            made = self.made[key] = _prepared(found, self.constructors)
        return made


def resolve_calls_split(
    calls: list[tuple],
    catalog: Catalog,
    bindings: FileBindings,
    language_of: dict[int, str | None],
    file_nids: dict[int, int],
    meanwhile: Callable[[], None] | None = None,
    python: PythonCalls | None = None,
    sink: Callable[[list[tuple], list[tuple[int, str]]], None] | None = None,
) -> tuple[list[tuple], list[tuple[int, str]]]:
    """
    :func:`resolve_calls`, the later files (half of the calls) in a forked child when it pays, with
    ``meanwhile`` run on a thread (started after the fork: a child never inherits a thread).
    With ``sink``, each half's results are handed to it as soon as they are ready (the first
    while the child still works) and nothing is returned.
    """
    if len(calls) < SPLIT_ABOVE or (os.cpu_count() or 1) < 2 or not hasattr(os, "fork"):
        with alongside(meanwhile):
            found = resolve_calls(calls, catalog, bindings, language_of, file_nids, python)
        if sink is None:
            return found
        sink(*found)
        return [], []
    per_file = Counter(call[1] for call in calls)
    boundary, taken = None, 0  # the first file of the child's half: half of the calls
    for boundary in sorted(per_file):
        if taken * 2 >= len(calls):
            break
        taken += per_file[boundary]
    mine = [call for call in calls if call[1] < boundary]
    theirs = [call for call in calls if call[1] >= boundary]
    read_end, write_end = os.pipe()
    parent = os.getpid()
    child = os.fork()
    if child == 0:  # the child: resolve, send, and leave without running any cleanup
        status = 1
        try:
            start_worker(parent)
            os.close(read_end)
            result = resolve_calls(theirs, catalog, bindings, language_of, file_nids, python)
            with os.fdopen(write_end, "wb") as pipe:
                pickle.dump(result, pipe, protocol=pickle.HIGHEST_PROTOCOL)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    pipe = os.fdopen(read_end, "rb")
    try:
        with alongside(meanwhile):
            edges, unresolved = resolve_calls(
                mine, catalog, bindings, language_of, file_nids, python
            )
        if sink is not None:  # written while the child resolves the other half
            sink(edges, unresolved)
            edges, unresolved = [], []
        payload = pipe.read()
    except BaseException:  # stopping: the child's half is not wanted any more
        os.kill(child, signal.SIGKILL)
        raise
    finally:
        pipe.close()  # before waiting: a child still writing gets EPIPE instead of blocking
        _, status = os.waitpid(child, 0)
    if status != 0 or not payload:
        raise RuntimeError(f"call resolution child failed (wait status {status})")
    their_edges, their_unresolved = pickle.loads(payload)
    if sink is not None:
        sink(their_edges, their_unresolved)
        return [], []
    return edges + their_edges, unresolved + their_unresolved


@contextmanager
def alongside(work: Callable[[], None] | None) -> Iterator[None]:
    """Run ``work`` on a thread for the duration of the block; re-raise what it raised."""
    if work is None:
        yield
        return
    failure: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as e:  # handed to the caller below
            failure.append(e)

    thread = threading.Thread(target=run, name="index-alongside")
    thread.start()
    try:
        yield
    finally:
        _join_surely(thread)
    if failure:
        raise failure[0]


def _join_surely(thread: threading.Thread) -> None:
    """Join even when a stop request interrupts the wait: the thread uses the connection."""
    stopped: BaseException | None = None
    while thread.is_alive():
        try:
            thread.join()
        except BaseException as e:  # re-raised once the connection is ours again
            stopped = e
    if stopped is not None:
        raise stopped
