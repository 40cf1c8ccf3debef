"""
Resolving one repository's graph from raw parser evidence (local-backend §5.5): CALLS
through the tiers same_file -> import_binding -> type_inferred -> scope_unique_name ->
repo_unique_name (Python: by receiver type, or ambiguous; see ``receivers.py``),
INHERITS/IMPLEMENTS from bases (Python: through the file's imports, building the class
hierarchy Python calls resolve with), OVERRIDES, IMPORTS file -> entity, and the modules
table. The edges a file declares by itself are the writer's (``declared.py``).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable

from attrs import frozen

from eshu_mcp.query.local.index.parse.registry import entry
from eshu_mcp.query.local.index.resolve import input_cache, rebuilt_edges
from eshu_mcp.query.local.index.resolve.bindings import FileBindings
from eshu_mcp.query.local.index.resolve.call_edges import resolve_calls_split
from eshu_mcp.query.local.index.resolve.calls import REEXPORT_HOPS, Catalog, Entity, reexported
from eshu_mcp.query.local.index.resolve.edge_tally import EdgeTally
from eshu_mcp.query.local.index.resolve.inputs import GraphInputs
from eshu_mcp.query.local.index.resolve.kept_inheritance import KeptInheritance
from eshu_mcp.query.local.index.resolve.pyclasses import EXTERNAL, Hierarchy
from eshu_mcp.query.local.index.resolve.receivers import INTERFACE_ROOTS, PythonCalls
from eshu_mcp.query.local.index.resolve.references import (
    files_referring,
    read_references,
    resolve_references,
)
from eshu_mcp.query.local.index.resolve.typed_receivers import RECEIVER_TYPED
from eshu_mcp.query.local.index.store.bulk import insert_rows
from eshu_mcp.query.local.index.store.codes import CONFIDENCE, EDGE_TYPES, METHODS
from eshu_mcp.query.local.index.store.writer import INSERT_EDGES, insert_edges_of

REBUILT_ALWAYS = tuple(EDGE_TYPES[t] for t in ("INHERITS", "IMPLEMENTS", "OVERRIDES"))
RESOLVED_BY_FILE = (
    f"(type IN ({EDGE_TYPES['CALLS']}, {EDGE_TYPES['REFERENCES']})"
    f" OR (type = {EDGE_TYPES['IMPORTS']} AND method = {METHODS['import_binding']}))"
)
"""The per-file edges this module owns (declared.py writes CONTAINS and module IMPORTS)."""


def retire_edges(conn: sqlite3.Connection, file_ids: list[int]) -> None:
    """Delete every edge whose evidence is in one of these files (about to be rewritten)."""
    for chunk in _chunks(sorted(file_ids)):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM edge_rows WHERE evidence_file_id IN ({marks})", chunk)


@frozen
class ChangeSet:
    """What a generation changed, so only the affected part of the graph is rebuilt."""

    changed_files: frozenset[int]  # added or modified files (their current file ids)
    deleted_files: frozenset[int]  # file ids that no longer exist
    touched_names: frozenset[str]  # names whose definitions appeared, vanished or moved
    same_layout: bool = False  # no path added or removed, no go.mod changed: imports of
    #                            unchanged files resolve as they did


def _affected_files(conn, repo_id: str, change: ChangeSet, import_changed: set[int]) -> set[int]:
    affected = set(change.changed_files) | import_changed
    touched_files = set(change.changed_files | change.deleted_files)
    names = set(change.touched_names)
    for _ in range(REEXPORT_HOPS + 1):  # importers, then importers of what barrels hand on
        barrels: set[int] = set()
        for chunk in _chunks(sorted(touched_files)):
            marks = ",".join("?" * len(chunk))
            for file_id, name, alias, kind in conn.execute(
                "SELECT file_id, imported_name, alias, import_type FROM imports"
                f" WHERE resolved_file_id IN ({marks})",
                chunk,
            ):
                if name in names or (kind == "reexport" and name == "*"):
                    affected.add(file_id)
                    if kind == "reexport":
                        barrels.add(file_id)
                        names.add(alias or name)
        touched_files = barrels - touched_files
        if not touched_files:
            break
    for chunk in _chunks(sorted(change.touched_names)):
        marks = ",".join("?" * len(chunk))
        affected.update(  # CROSS JOIN: through the callee index, never every file's calls
            r[0]
            for r in conn.execute(
                f"SELECT DISTINCT c.file_id FROM call_rows c CROSS JOIN files f"
                f" ON f.file_id = c.file_id WHERE c.callee_name IN ({marks}) AND f.repo_id = ?",
                (*chunk, repo_id),
            )
        )
    affected |= files_referring(conn, repo_id, names)
    return affected - set(change.deleted_files)


def _chunks(items: list, size: int = 500):
    for start in range(0, len(items), size):
        yield items[start : start + size]


def resolve_repository(
    conn: sqlite3.Connection,
    repo_id: str,
    change: ChangeSet | None = None,
    inputs: GraphInputs | None = None,
    meanwhile: Callable[[], None] | None = None,
    tally: EdgeTally | None = None,
) -> dict[str, int]:
    """
    Rebuild the repository's modules, edges and unresolved_calls; return counts by type.

    With a :class:`ChangeSet`, CALLS and file -> entity IMPORTS are rebuilt only for files
    whose resolution can have changed: the changed files, files whose imports now resolve
    differently, files importing a touched name from them, and files calling a touched name.
    (A name is touched when an entity id with that name appeared or vanished: candidate pools
    of every other name are unchanged, so calls to them resolve as before.)
    Inheritance and overrides are resolved whole, except in a process that kept the last
    build's hierarchy (see kept_inheritance.py): there only the classes the change can
    affect are resolved again. CONTAINS and file -> module
    IMPORTS edges are the writer's (see declared.py). ``inputs`` gathered by a first build
    spare reading back the rows it just wrote (and deleting what cannot exist yet).
    ``meanwhile`` runs on a thread, using the connection, while call resolution runs without
    it (pure Python). ``tally``, started before the build changed any edge, spares counting
    the repository's edges (see edge_tally.py).
    """
    (repo_key,) = conn.execute(
        "SELECT repo_key FROM repositories WHERE repo_id = ?", (repo_id,)
    ).fetchone()
    first_build = inputs is not None  # every edge of the repository was written by this run
    if inputs is None:  # read back, or kept by this process since its last build
        changed = None if change is None else change.changed_files
        inputs = input_cache.graph_inputs(
            conn, repo_id, changed, bool(change and change.same_layout)
        )
    records, bindings, import_changed = inputs.records, inputs.bindings, inputs.import_changed
    files, catalog, file_nids = inputs.files, inputs.catalog, inputs.file_nids
    language_of = inputs.language_of
    scope = None
    if change is None and not first_build:
        conn.execute(
            f"DELETE FROM edge_rows WHERE repo = ? AND (type IN ({_marks(REBUILT_ALWAYS)})"
            f" OR {RESOLVED_BY_FILE})",
            (repo_key, *REBUILT_ALWAYS),
        )
        conn.execute(
            "DELETE FROM unresolved_calls WHERE call_id IN (SELECT c.call_id FROM call_rows c"
            " JOIN files f ON f.file_id = c.file_id WHERE f.repo_id = ?)",
            (repo_id,),
        )
    if change is not None:
        scope = _affected_files(conn, repo_id, change, import_changed)
        gone = sorted(scope | set(change.deleted_files))  # inheritance: see rebuilt_edges
        for chunk in _chunks(gone):
            marks = ",".join("?" * len(chunk))
            conn.execute(
                f"DELETE FROM edge_rows WHERE repo = ? AND {RESOLVED_BY_FILE}"
                f" AND evidence_file_id IN ({marks})",
                (repo_key, *chunk),
            )
            conn.execute(
                f"DELETE FROM unresolved_calls WHERE call_id IN"
                f" (SELECT call_id FROM call_rows WHERE file_id IN ({marks}))",
                chunk,
            )
    queued = EdgeQueue(repo_key)
    edge, queue, edges = queued.edge, queued.queue, queued.rows

    outcomes = BaseOutcomes.for_build(conn, repo_id, change, scope)
    kept = _kept_hierarchy(conn, repo_id, change, scope, language_of)
    if kept is not None:  # only the classes the change can affect
        python = PythonCalls(catalog, bindings, kept.fresh_hierarchy(catalog), inputs.nested)
        outcomes.before = outcomes.now = kept.outcomes  # patched in place, as the hierarchy
        rows = (edge, catalog, bindings, python, language_of, outcomes)
        _patch_inheritance(conn, repo_id, change, scope, kept, rows)
    else:
        python = PythonCalls(catalog, bindings, Hierarchy(catalog), inputs.nested)
        _inheritance(inputs.bases, catalog, bindings, (edge, queue), python, language_of, outcomes)
        input_cache.keep_base_outcomes(conn, repo_id, outcomes.now)
        method_sets = _method_sets(catalog, edge)
        _keep_hierarchy(conn, repo_id, python, edges, inputs.bases, catalog, outcomes, method_sets)
        if change is not None:  # edges holds every inheritance edge: store only the difference
            edges[:] = rebuilt_edges.only_new(conn, repo_id, repo_key, edges)
    if scope is not None and inputs.records_of is not None and inputs.modules_touched is not None:
        records = [r for file_id in sorted(scope) for r in inputs.records_of.get(file_id, ())]
        _patch_modules(conn, repo_id, inputs.modules_touched, inputs.module_records, language_of)
    else:
        _modules(conn, repo_id, records, language_of)
    _imports(records, catalog, bindings, edge, scope, file_nids)
    calls = inputs.calls if inputs.calls is not None else _calls(conn, repo_id, scope)
    written: Counter = Counter()  # CALLS edges written as they were resolved

    insert_calls = insert_edges_of(repo_key)

    def write_calls(rows: list[tuple], unresolved: list[tuple[int, str]]) -> None:
        insert_rows(conn, insert_calls, rows)
        insert_rows(
            conn, "INSERT INTO unresolved_calls (call_id, reason) VALUES (?, ?)", unresolved
        )
        if rows:  # resolve_calls makes CALLS rows only
            written[EDGE_TYPES["CALLS"]] += len(rows)

    resolve_calls_split(
        calls, catalog, bindings, language_of, file_nids, meanwhile, python, write_calls
    )
    references = inputs.references
    if references is None:
        references = read_references(conn, repo_id, scope)
    typed_files = {f for f, language in language_of.items() if language in RECEIVER_TYPED}
    typed = (  # what calls say a receiver is, in each function (Go, TypeScript, Java, C#)
        {
            (call[2], call[5]): call[6]
            for call in calls
            if call[1] in typed_files and call[6] and call[5]
        }
        if typed_files  # none in Python alone
        else {}
    )
    resolve_references(references, catalog, bindings, file_nids, edge, language_of, typed)
    insert_rows(conn, INSERT_EDGES, edges)
    if first_build:  # everything the repository has was counted on the way in
        by_type = Counter(inputs.declared)
        by_type.update(row[1] for row in edges)
        by_type.update(written)
    elif tally is not None and change is not None:
        by_type = Counter(tally.counts())
    else:
        if tally is not None:
            tally.stop()
        by_type = Counter(
            dict(
                conn.execute(
                    "SELECT type, COUNT(*) FROM edge_rows WHERE repo = ? GROUP BY type",
                    (repo_key,),
                ).fetchall()
            )
        )
    input_cache.keep_edge_counts(conn, repo_id, by_type)
    names = {code: name for name, code in EDGE_TYPES.items()}
    counts = {names.get(code, str(code)): count for code, count in sorted(by_type.items())}
    counts["rebuilt_files"] = len(files) if scope is None else len(scope)
    return counts


class EdgeQueue:
    """Edge rows a resolve makes, once per (type, source, target, line)."""

    def __init__(self, repo_key: int) -> None:
        self.repo_key = repo_key
        self.rows: list[tuple] = []
        self.seen: set[tuple] = set()

    def edge(
        self,
        kind,
        source,
        target,
        method,
        line,
        file_id,
        call_kind=None,
        reason=None,
        *,
        queued=True,
    ):
        """Queue one edge row, once per (type, source, target, line); returns the row
        (only makes it when not ``queued``)."""
        row = (
            self.repo_key,
            EDGE_TYPES[kind],
            source,
            target,
            call_kind,
            reason,
            METHODS[method],
            CONFIDENCE[method],
            line,
            file_id,
        )
        if queued:
            self.queue(row)
        return row

    def queue(self, row: tuple) -> None:
        """Queue an edge row made earlier (a kept one), once per (type, source, target, line)."""
        identity = (row[1], row[2], row[3], row[8])
        if identity not in self.seen:
            self.seen.add(identity)
            self.rows.append(row)


def warm_inheritance(conn: sqlite3.Connection, repo_id: str, inputs: GraphInputs, base_rows):
    """
    Between builds, in a process that keeps inputs (just read back): resolve the whole
    inheritance as a build does, so that the next one-file build patches it rather than
    resolving every base row itself (seconds at 26k files, paid by the first edit after
    the daemon started). Returns (the kept hierarchy, the inheritance rows, the base
    outcomes), or None when the rows differ from the stored ones (another version wrote
    them: the next build resolves them whole, as before).
    """
    (repo_key,) = conn.execute(
        "SELECT repo_key FROM repositories WHERE repo_id = ?", (repo_id,)
    ).fetchone()
    catalog, bindings, language_of = inputs.catalog, inputs.bindings, inputs.language_of
    queued = EdgeQueue(repo_key)
    python = PythonCalls(catalog, bindings, Hierarchy(catalog), inputs.nested)
    outcomes = BaseOutcomes(None, None, frozenset())
    _inheritance(
        inputs.bases, catalog, bindings, (queued.edge, queued.queue), python, language_of, outcomes
    )
    method_sets = _method_sets(catalog, queued.edge)
    rows = set(queued.rows)
    if rows != rebuilt_edges.stored_rows(conn, repo_key):
        return None
    order = {row[0]: key[0] for rows in base_rows.values() for key, row in rows}
    kept = KeptInheritance.of_build(python.classes, queued.rows, inputs.bases, catalog, order)
    kept.outcomes = outcomes.now
    kept.method_sets = method_sets
    return kept, rows, outcomes.now


def _marks(values: tuple) -> str:
    return ",".join("?" * len(values))


def _calls(conn, repo_id: str, scope: set[int] | None):
    columns = (
        "SELECT call_id, file_id, caller, callee_name, full_name, receiver,"
        " inferred_type, call_kind, arg_count, line_number FROM call_rows"
    )
    if scope is None:
        return conn.execute(
            columns + " WHERE file_id IN (SELECT file_id FROM files WHERE repo_id = ?)",
            (repo_id,),
        ).fetchall()
    found: list = []
    for chunk in _chunks(sorted(scope)):
        marks = ",".join("?" * len(chunk))
        found.extend(conn.execute(columns + f" WHERE file_id IN ({marks})", chunk).fetchall())
    return found


def _pick_among(pool: list[Entity], file_id: int, dirs: dict[int, str]):
    """Directory-unique, then repository-unique candidate of a short list (base types)."""
    directory = dirs.get(file_id)
    scoped = [e for e in pool if dirs.get(e.file_id) == directory]
    if len(scoped) == 1:
        return scoped[0], "scope_unique_name"
    if len(pool) == 1:
        return pool[0], "repo_unique_name"
    return None, None


def _python_base(child: Entity, base_name: str, kind: str, file_id: int, python: PythonCalls):
    """A Python base (or ``@implementer`` interface) through the file's definitions and
    imports; records the hierarchy."""
    found = python.dotted(base_name, file_id, catalog_parent(python, child))
    hierarchy = python.classes
    if isinstance(found, Entity) and found.entity_type != "Function" and found.nid != child.nid:
        if kind == "implements":
            hierarchy.implements(child.nid, found.nid)
        else:
            hierarchy.add(child.nid, found.nid)
        return found, "same_file" if found.file_id == file_id else "import_binding"
    if kind == "implements":
        return None, None
    hierarchy.open.add(child.nid)
    if found == EXTERNAL and base_name.rsplit(".", 1)[-1] in INTERFACE_ROOTS:
        hierarchy.declarations.add(child.nid)
    return None, None


def catalog_parent(python: PythonCalls, entity: Entity) -> Entity | None:
    """The definition enclosing ``entity`` (where its base names are looked up)."""
    return python.catalog.by_id.get(entity.parent) if entity.parent else None


class BaseOutcomes:
    """
    How each Python base row (child nid, base name, kind, file id) resolved, kept between
    builds by the indexer child: a one-file change re-resolves only the base rows it can
    affect (rows of affected files, and base names whose definitions appeared, vanished or
    moved); the others replay the last build's outcome, hierarchy records included. Resolving
    every base again made a one-file build at 26k files cost seconds.

    A found base keeps the edge rows it gave (its INHERITS or IMPLEMENTS row, then the
    OVERRIDES rows of the child's methods): while neither the child's file nor the base's
    changed, both classes have the same methods, so the rows are queued again as they are
    rather than matched method by method.
    """

    def __init__(
        self,
        before: dict | None,
        scope: set[int] | None,
        touched: frozenset[str],
        changed: frozenset[int] = frozenset(),
    ):
        self.before = before
        self.scope = scope or set()
        self.touched = touched
        self.changed = changed  # files whose entities were replaced (or removed)
        self.now: dict[tuple, tuple] = {}

    @classmethod
    def for_build(cls, conn, repo_id: str, change: ChangeSet | None, scope: set[int] | None):
        """The outcomes a build may reuse (none unless it patched the kept inputs)."""
        if change is None or scope is None or not change.same_layout:
            return cls(None, None, frozenset())
        before = input_cache.previous_base_outcomes(conn, repo_id)
        changed = change.changed_files | change.deleted_files
        return cls(before, scope, change.touched_names, changed)

    def reusable(self, key: tuple, catalog: Catalog) -> tuple | None:
        """The last outcome of a base row this build's change cannot affect, else None."""
        if self.before is None or key[3] in self.scope:
            return None
        if key[1].rsplit(".", 1)[-1] in self.touched:
            return None
        outcome = self.before.get(key)
        if outcome is None or (outcome[0] == "found" and outcome[1] not in catalog.by_id):
            return None
        return outcome

    def kept_rows(self, outcome: tuple, child: Entity, base: Entity) -> tuple | None:
        """The edge rows a reused found base gave last time, while still exact, else None."""
        if len(outcome) < 4 or child.file_id in self.changed or base.file_id in self.changed:
            return None
        return outcome[3]


def _replayed_base(child: Entity, kind: str, outcome: tuple, python: PythonCalls):
    """What :func:`_python_base` did for this row last time, done again without resolving."""
    hierarchy = python.classes
    if outcome[0] == "found":
        found = python.catalog.by_id[outcome[1]]
        if kind == "implements":
            hierarchy.implements(child.nid, found.nid)
        else:
            hierarchy.add(child.nid, found.nid)
        return found, outcome[2]
    if outcome[0] == "open":
        hierarchy.open.add(child.nid)
        if outcome[1]:
            hierarchy.declarations.add(child.nid)
    return None, None


def _python_base_kept(child, base_name, kind, file_id, python, outcomes: BaseOutcomes, catalog):
    """(base, method, kept edge rows or None) of one Python base row, reused when it can be."""
    key = (child.nid, base_name, kind, file_id)
    outcome = outcomes.reusable(key, catalog)
    if outcome is not None:
        outcomes.now[key] = outcome
        target, method = _replayed_base(child, kind, outcome, python)
        kept = None if target is None else outcomes.kept_rows(outcome, child, target)
        return target, method, kept
    target, method = _python_base(child, base_name, kind, file_id, python)
    if target is not None:
        outcomes.now[key] = ("found", target.nid, method)
    elif kind == "implements":
        outcomes.now[key] = ("none",)
    else:
        outcomes.now[key] = ("open", child.nid in python.classes.declarations)
    return target, method, None


def _base_of(child, base_name, kind, file_id, catalog, bindings, python, language_of, outcomes):
    """(edge type, base, method, kept rows or None, Python row key or None) of one base row
    of ``child``, or None when it names no definition of the repository."""
    if language_of.get(file_id) == "python":
        target, method, kept = _python_base_kept(
            child, base_name, kind, file_id, python, outcomes, catalog
        )
        if target is None:
            return None
        edge_type = "IMPLEMENTS" if kind == "implements" else "INHERITS"
        return edge_type, target, method, kept, (child.nid, base_name, kind, file_id)
    pool = [e for e in catalog.types.get(base_name, []) if e.nid != child.nid]
    target, method = None, None
    binding = bindings.lookup(file_id, base_name)
    if any(e.file_id == file_id for e in pool):
        target, method = next(e for e in pool if e.file_id == file_id), "same_file"
    elif binding is not None and binding.file_ids:
        wanted = binding.symbol or base_name
        bound = reexported(catalog.types_in, bindings, wanted, binding.file_ids)
        if bound:
            target, method = bound[0], "import_binding"
    if target is None and (binding is None or binding.file_ids):
        target, method = _pick_among(pool, file_id, catalog.dirs)
    if target is None:
        return None
    edge_type = "IMPLEMENTS" if kind in ("implements", "trait_impl") else "INHERITS"
    return edge_type, target, method, None, None


def _inheritance(
    bases,
    catalog: Catalog,
    bindings: FileBindings,
    emitters,
    python: PythonCalls,
    language_of,
    outcomes: BaseOutcomes | None = None,
) -> None:
    """INHERITS and IMPLEMENTS edges of the base rows, then the OVERRIDES edges below them.
    ``emitters`` are (edge, queue): queue an edge by its parts (returning its row), or a
    row kept from the last build."""
    edge, queue = emitters
    outcomes = outcomes or BaseOutcomes(None, None, frozenset())
    resolved: list[tuple] = []  # (child, base, method, python row key, rows so far or kept)
    for nid, base_name, kind, file_id in bases:
        child = catalog.by_id.get(nid)
        if child is None:
            continue
        found = _base_of(
            child, base_name, kind, file_id, catalog, bindings, python, language_of, outcomes
        )
        if found is None:
            continue
        edge_type, target, method, kept, key = found
        if kept is not None:
            queue(kept[0])
            resolved.append((None, None, None, None, kept))
            continue
        row = edge(edge_type, child.nid, target.nid, method, child.line, file_id)
        resolved.append((child, target, method, key, None if key is None else [row]))
    members: dict[int, dict[str, Entity]] = {}  # base -> its members by name
    for child, base, method, key, rows in resolved:
        if child is None:  # kept: the same methods on both sides
            for row in rows[1:]:
                queue(row)
            continue
        for row in _overrides(child, base, method, catalog, edge, members):
            if rows is not None:
                rows.append(row)
        if key is not None:
            outcomes.now[key] = ("found", base.nid, method, tuple(rows))


def _overrides(
    child: Entity, base: Entity, method: str, catalog: Catalog, edge, members: dict | None = None
) -> list:
    """The OVERRIDES rows of the child's methods that the base also defines (``members``
    keeps each base's members by name, for bases many classes derive from)."""
    rows = []
    base_methods = None if members is None else members.get(base.nid)
    if base_methods is None:
        base_methods = {m.name: m for m in catalog.children.get(base.nid, [])}
        if members is not None:
            members[base.nid] = base_methods
    for member in catalog.children.get(child.nid, []):
        overridden = base_methods.get(member.name)
        if overridden is not None and member.entity_type == "Function":
            rows.append(edge("OVERRIDES", member.nid, overridden.nid, method, None, member.file_id))
    return rows


def _child_inheritance(child, rows, catalog, bindings, python, language_of, outcomes, edge):
    """Every inheritance row of one class (its base rows in declared order), once per
    (type, source, target, line) as a whole build gives them (no two classes share one)."""
    found_rows: list[tuple] = []
    resolved = []
    for _, base_name, kind, file_id in rows:
        found = _base_of(
            child, base_name, kind, file_id, catalog, bindings, python, language_of, outcomes
        )
        if found is None:
            continue
        edge_type, target, method, kept, key = found
        if kept is not None:
            found_rows.append(kept[0])
            resolved.append((None, kept, None, None))
            continue
        row = edge(edge_type, child.nid, target.nid, method, child.line, file_id)
        found_rows.append(row)
        resolved.append((target, [row], method, key))
    for target, own, method, key in resolved:
        if target is None:
            found_rows.extend(own[1:])
            continue
        own.extend(_overrides(child, target, method, catalog, edge))
        found_rows.extend(own[1:])
        if key is not None:
            outcomes.now[key] = ("found", target.nid, method, tuple(own))
    unique: dict[tuple, tuple] = {}
    for row in found_rows:
        unique.setdefault((row[1], row[2], row[3], row[8]), row)
    return list(unique.values())


def _kept_hierarchy(conn, repo_id, change: ChangeSet | None, scope, language_of):
    """The inheritance the last build kept, when this build may patch it: same layout, and
    no changed file in a language whose types implement interfaces by their methods."""
    if change is None or scope is None or not change.same_layout:
        return None
    kept = input_cache.previous_hierarchy(conn, repo_id)
    if kept is None or kept.method_sets:
        return None
    for file_id in change.changed_files:
        language = language_of.get(file_id)
        if language is not None and entry(language).method_sets:
            return None
    return kept


def _keep_hierarchy(conn, repo_id, python, edges, bases, catalog, outcomes, method_sets) -> None:
    """After a whole inheritance pass, in a process that keeps inputs: keep what it resolved
    for the next build to patch."""
    base_rows = input_cache.kept_base_rows(conn, repo_id)
    if base_rows is None:
        return
    order = {row[0]: key[0] for rows in base_rows.values() for key, row in rows}
    inheritance = [row for row in edges if row[1] in REBUILT_ALWAYS]
    kept = KeptInheritance.of_build(python.classes, inheritance, bases, catalog, order)
    kept.outcomes = outcomes.now
    kept.method_sets = method_sets
    input_cache.keep_hierarchy(conn, repo_id, kept)


def _patch_inheritance(conn, repo_id, change: ChangeSet, scope, kept: KeptInheritance, rows):
    """Resolve again the bases of the classes the change can affect, patch the kept
    hierarchy, and store only the inheritance rows that changed."""
    edge, catalog, bindings, python, language_of, outcomes = rows
    base_rows = input_cache.kept_base_rows(conn, repo_id) or {}
    retired = change.changed_files | change.deleted_files
    files = set(scope) | set(change.deleted_files)
    words = set(change.touched_names)
    dirty = kept.affected(files, words, set(retired))
    for file_id in scope:
        dirty.update(row[0] for _, row in base_rows.get(file_id, ()))
    old: list[tuple] = []
    for nid in dirty:
        old.extend(kept.forget(nid))
    by_file: dict[int, list[int]] = {}
    for nid in dirty:
        child = catalog.by_id.get(nid)
        if child is not None:
            by_file.setdefault(child.file_id, []).append(nid)
    new: list[tuple] = []

    def row_of(*parts, **named):
        return edge(*parts, **named, queued=False)

    resolved: set[int] = set()
    for file_id, nids in by_file.items():
        wanted = set(nids)
        its: dict[int, list[tuple]] = {}
        for key, row in sorted(base_rows.get(file_id, ()), key=_first):
            if row[0] in wanted:
                its.setdefault(row[0], []).append((key, row))
        for nid, declared in its.items():
            child = catalog.by_id[nid]
            bases = [(row[0], row[2], row[3], row[4]) for _, row in declared]
            found = _child_inheritance(
                child, bases, catalog, bindings, python, language_of, outcomes, row_of
            )
            kept.rows_of[nid] = found
            kept.order[nid] = declared[0][0][0]
            kept.note(nid, bases, found, catalog)
            new.extend(found)
            resolved.add(nid)
    kept.reorder(resolved)
    stored = {row for row in old if row[9] not in retired}  # the others went with their file
    wanted = set(new)
    for row in stored - wanted:
        conn.execute(rebuilt_edges.SAME_ROW, (row[2], row[0], row[1], *row[3:]))
    conn.executemany(INSERT_EDGES, [row for row in new if row not in stored])
    input_cache.replace_inheritance(conn, repo_id, old, new)
    input_cache.keep_base_outcomes(conn, repo_id, outcomes.now)
    input_cache.keep_hierarchy(conn, repo_id, kept)


def _first(item: tuple):
    return item[0]


def _method_sets(catalog: Catalog, edge) -> bool:
    """IMPLEMENTS edges of the languages whose types satisfy an interface by having its
    methods (Go): a type whose methods include every method an interface declares."""
    interfaces = [
        e
        for found in catalog.types.values()
        for e in found
        if e.entity_type == "Interface" and entry(e.language).method_sets
    ]
    if not interfaces:
        return False
    names = {e.name for e in interfaces}
    receivers: dict[str, set[str]] = {}  # method name -> the types declaring it
    for (context, name), methods in catalog.by_class.items():
        if context not in names and any(entry(m.language).method_sets for m in methods):
            receivers.setdefault(name, set()).add(context)
    for interface in interfaces:
        required = {
            m.name for m in catalog.children.get(interface.nid, ()) if m.entity_type == "Function"
        }
        if not required:
            continue  # an empty (or only embedding) interface: every type has its methods
        satisfying = set.intersection(*(receivers.get(name, set()) for name in required))
        for type_name in sorted(satisfying):
            method = catalog.by_class[(type_name, min(required))][0]
            directory = catalog.dirs.get(method.file_id)  # a type's methods are in its package
            for declared in catalog.types.get(type_name, ()):
                if declared.entity_type != "Interface" and (
                    catalog.dirs.get(declared.file_id) == directory
                ):
                    edge(
                        "IMPLEMENTS",
                        declared.nid,
                        interface.nid,
                        "type_inferred",
                        declared.line,
                        declared.file_id,
                    )
    return True


def _modules(conn, repo_id: str, records, language_of) -> None:
    """The repository's modules table, from every import record (in row order)."""
    old_keys = {
        key
        for (key,) in conn.execute("SELECT module_key FROM modules WHERE repo_id = ?", (repo_id,))
    }
    conn.execute("DELETE FROM modules WHERE repo_id = ?", (repo_id,))
    modules: dict[str, tuple] = {}
    for record in records:
        if not record.module:
            continue  # a file renaming its own export: a binding (bindings.py), no import
        key = f"{repo_id}|{record.module}"
        if key not in modules or (modules[key][4] is None and record.resolved_file_id):
            modules[key] = (
                key,
                repo_id,
                record.module,
                language_of.get(record.file_id),
                record.resolved_file_id,
            )
    conn.executemany(
        "INSERT OR REPLACE INTO modules (module_key, repo_id, name, language, file_id)"
        " VALUES (?, ?, ?, ?, ?)",
        list(modules.values()),
    )
    vanished = old_keys - set(modules)  # the writer numbers module keys as files import them
    conn.executemany("DELETE FROM nodes WHERE node_id = ?", [(key,) for key in vanished])


def _patch_modules(conn, repo_id: str, names: set[str], module_records, language_of) -> None:
    """The modules rows of the modules some changed files import (or imported), as
    :func:`_modules` makes them, from the kept import records of each module (row order)."""
    for name in sorted(names):
        if not name:
            continue  # a file renaming its own export: no import
        key = f"{repo_id}|{name}"
        records = module_records.get(name)
        if not records:  # no import names it any more
            conn.execute("DELETE FROM modules WHERE module_key = ?", (key,))
            conn.execute("DELETE FROM nodes WHERE node_id = ?", (key,))
            continue
        # the first import resolving it, else the first import
        chosen = next((r for r in records if r.resolved_file_id), records[0])
        conn.execute(
            "INSERT OR REPLACE INTO modules (module_key, repo_id, name, language, file_id)"
            " VALUES (?, ?, ?, ?, ?)",
            (key, repo_id, name, language_of.get(chosen.file_id), chosen.resolved_file_id),
        )


def _imports(records, catalog: Catalog, bindings, edge, scope, file_nids) -> None:
    """The file -> entity IMPORTS edges of the records (only the ``scope`` files')."""
    for record in records:
        if not record.module:
            continue  # a file renaming its own export: a binding (bindings.py), no import
        if scope is not None and record.file_id not in scope:
            continue
        if record.imported_name and record.imported_name not in ("*", "default"):
            binding = bindings.lookup(record.file_id, record.alias or record.imported_name)
            if binding is not None and binding.symbol and binding.file_ids:
                files = set(binding.file_ids)
                targets = catalog.callables.in_files(binding.symbol, binding.file_ids) + [
                    e for e in catalog.types.get(binding.symbol, []) if e.file_id in files
                ]
                top = [e for e in targets if e.parent is None]
                if top:  # the last top-level definition is the one imported (not @overload stubs)
                    targets = [max(top, key=lambda e: (e.file_id == top[0].file_id, e.line))]
                if targets:
                    edge(
                        "IMPORTS",
                        file_nids[record.file_id],
                        targets[0].nid,
                        "import_binding",
                        record.line,
                        record.file_id,
                    )
