"""
Graph inputs kept between builds by a long-lived indexer (the daemon's builder child).

Resolving a one-file change used to read the whole repository's graph inputs back (every
entity, import, base and file) and rebuild the catalog and bindings: most of a warm build.
Here a process keeps, per (index file, repository), the :class:`GraphInputs` its last
committed build resolved with, and the next build with the same layout (files modified, none
added or removed) patches them: it re-reads only the changed files' entities, imports and
bases, re-resolves those imports, and swaps them into the catalog and bindings. A build that
adds or removes a path, or rebuilds the whole graph, reads everything back as before and
keeps the result.

The kept inputs are used only when they describe exactly what the index holds: the
repository's active generation must be the one they were committed with (another process's
build, a forget or a rebuild changes it), the extractor version must be the one they were
read with, and the build that last patched them must have committed (a failed or stopped
build leaves them marked unsettled, and they are dropped).
"""

from __future__ import annotations

import os
import sqlite3
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable

from attrs import define

from eshu_mcp.query.local.index.parse.extractors import EXTRACTOR_VERSION
from eshu_mcp.query.local.index.resolve.bindings import (
    ImportRecord,
    ImportResolver,
    resolve_rows,
)
from eshu_mcp.query.local.index.resolve.calls import Catalog, Entity
from eshu_mcp.query.local.index.resolve.inputs import (
    BASE_ROWS,
    CATALOG_ROWS,
    GraphInputs,
    declared_key,
    read_graph_inputs,
)
from eshu_mcp.query.local.index.resolve.receivers import nested_names
from eshu_mcp.query.local.index.store.database import open_reader

IMPORT_COLUMNS = (
    "SELECT import_id, file_id, module, imported_name, alias, import_type, line_number,"
    " resolved_file_id FROM imports"
)
"""Import rows, as ``bindings.resolve_imports`` reads them."""


@define
class KeptInputs:
    """One repository's graph inputs as its last committed build left them."""

    generation_id: str | None  # the active generation they describe
    extractor: str
    inputs: GraphInputs
    resolver: ImportResolver  # the repository's module index (same layout: still right)
    base_rows: dict[int, list[tuple]]  # file_id -> (declared_key, base row) of its bases
    settled: bool = True  # False from a patch or read until its build commits
    inheritance: set[tuple] | None = None  # the inheritance edge rows stored (rebuilt_edges)
    retired: frozenset[int] = frozenset()  # files whose edges this build deleted
    patched: bool = False  # this build patched them (rather than reading them back)
    base_outcomes: dict | None = None  # how each Python base row resolved (graph.py)
    edge_counts: dict[int, int] | None = None  # the repository's edges by type code
    hierarchy: object | None = None  # kept_inheritance.KeptInheritance of the last build
    entities_of: dict[int, list[Entity]] | None = None  # file id -> its catalog entities
    records_of: dict[int, list[ImportRecord]] | None = None  # file id -> its import records


_kept: dict[tuple[str, str], KeptInputs] = {}
_keeping = False


def keep_between_builds(keep: bool = True) -> None:
    """Start (or stop) keeping graph inputs in this process; stopping drops what is kept.
    Only a process that builds again and again gains (a one-shot CLI run would just hold
    memory and read a little more)."""
    global _keeping
    _keeping = keep
    if not keep:
        _kept.clear()


def drop_kept() -> None:
    """Forget every kept repository (the next build of each reads back)."""
    _kept.clear()


def graph_inputs(
    conn: sqlite3.Connection, repo_id: str, changed: frozenset[int] | None, same_layout: bool
) -> GraphInputs:
    """
    The repository's graph inputs for a resolve that is not a first build (``changed`` is
    None when the whole graph is rebuilt): the kept ones patched with the ``changed`` files
    when they are still exact and the layout is the same, else read back (and, when this
    process keeps them, kept for the next build). Inside the build's write transaction.
    """
    reresolve = changed if same_layout else None
    if not _keeping:
        return read_graph_inputs(conn, repo_id, reresolve)
    key = (_db_file(conn), repo_id)
    kept = _kept.pop(key, None)
    active = _active_generation(conn, repo_id)
    usable = (
        kept is not None
        and kept.settled
        and kept.generation_id == active
        and kept.extractor == EXTRACTOR_VERSION
        and same_layout
        and changed is not None
    )
    if usable:
        _patch(conn, kept, changed)
        kept.retired = changed  # their edges were deleted before resolving (retire_edges)
        kept.patched = True
    else:
        kept = _read(conn, repo_id, reresolve)
    kept.settled = False
    kept.generation_id = None
    _kept[key] = kept
    return kept.inputs


def warm(
    db_path: str | os.PathLike[str], repo_ids: list[str], inheritance: Callable | None = None
) -> int:
    """
    Read back and keep the inputs of repositories this process does not keep yet (after a
    first build, or a build that found nothing to do), from one read snapshot, so that the
    next change is patched rather than read back. Imports keep the files they resolved to,
    as a build with the same layout keeps them. ``inheritance(conn, repo_id, inputs,
    base_rows)`` (``graph.warm_inheritance``) resolves the inheritance too, so the next build
    patches that as well; it returns (hierarchy, stored rows, base outcomes) or None.
    Returns how many repositories it read.
    """
    if not _keeping or not repo_ids:
        return 0
    read = 0
    conn = open_reader(db_path)
    try:
        conn.execute("BEGIN")
        for repo_id in repo_ids:
            key = (_db_file(conn), repo_id)
            active = _active_generation(conn, repo_id)
            kept = _kept.get(key)
            if active is None or (kept and kept.settled and kept.generation_id == active):
                continue
            kept = _kept[key] = _read(conn, repo_id, frozenset())
            read += 1
            kept.generation_id, kept.settled = active, True
            resolved = inheritance and inheritance(conn, repo_id, kept.inputs, kept.base_rows)
            if resolved:
                kept.hierarchy, kept.inheritance, kept.base_outcomes = resolved
            kept.edge_counts = dict(
                conn.execute(
                    "SELECT type, COUNT(*) FROM edge_rows WHERE repo = (SELECT repo_key"
                    " FROM repositories WHERE repo_id = ?) GROUP BY type",
                    (repo_id,),
                )
            )
        conn.execute("ROLLBACK")
    finally:
        conn.close()
    return read


def stored_inheritance(conn: sqlite3.Connection, repo_id: str) -> set[tuple] | None:
    """During a build that patched the kept inputs: the inheritance edge rows stored now
    (those the last build stored, less those of files this one rewrote); else None."""
    kept = _kept.get((_db_file(conn), repo_id))
    if kept is None or kept.settled or kept.inheritance is None:
        return None
    retired = kept.retired
    return {row for row in kept.inheritance if row[9] not in retired}


def previous_base_outcomes(conn: sqlite3.Connection, repo_id: str) -> dict | None:
    """During a build that patched the kept inputs: how the last build resolved each Python
    base row (graph.py reuses those its change cannot affect); else None."""
    kept = _kept.get((_db_file(conn), repo_id))
    if kept is None or kept.settled or not kept.patched:
        return None
    return kept.base_outcomes


def keep_base_outcomes(conn: sqlite3.Connection, repo_id: str, outcomes: dict) -> None:
    """During a build: how it resolved each Python base row (kept if the build commits)."""
    kept = _kept.get((_db_file(conn), repo_id))
    if kept is not None and not kept.settled:
        kept.base_outcomes = outcomes


def kept_edge_counts(conn: sqlite3.Connection, repo_id: str) -> dict[int, int] | None:
    """Before a build changes anything: the repository's edge counts by type code, when the
    kept ones describe the active generation; else None (they are counted)."""
    kept = _kept.get((_db_file(conn), repo_id))
    if (
        kept is None
        or not kept.settled
        or kept.edge_counts is None
        or kept.extractor != EXTRACTOR_VERSION
        or kept.generation_id != _active_generation(conn, repo_id)
    ):
        return None
    return kept.edge_counts


def kept_counts(conn: sqlite3.Connection, repo_id: str) -> dict[str, int] | None:
    """After a build: the repository's files and entities, when the kept inputs describe the
    active generation (``conn`` sees); else None (they are counted)."""
    kept = _kept.get((_db_file(conn), repo_id))
    if (
        kept is None
        or not kept.settled
        or kept.extractor != EXTRACTOR_VERSION
        or kept.generation_id != _active_generation(conn, repo_id)
    ):
        return None
    inputs = kept.inputs
    return {"files": len(inputs.files), "entities": len(inputs.catalog.by_id)}


def keep_edge_counts(conn: sqlite3.Connection, repo_id: str, counts: dict[int, int]) -> None:
    """During a build: the repository's edge counts by type code (kept if it commits)."""
    kept = _kept.get((_db_file(conn), repo_id))
    if kept is not None and not kept.settled:
        kept.edge_counts = dict(counts)


def previous_hierarchy(conn: sqlite3.Connection, repo_id: str):
    """During a build that patched the kept inputs: the inheritance the last build resolved
    (a ``KeptInheritance``, patched in place by this one); else None."""
    kept = _kept.get((_db_file(conn), repo_id))
    if kept is None or kept.settled or not kept.patched:
        return None
    return kept.hierarchy


def keep_hierarchy(conn: sqlite3.Connection, repo_id: str, hierarchy) -> None:
    """During a build: the inheritance it resolved (kept if the build commits)."""
    kept = _kept.get((_db_file(conn), repo_id))
    if kept is not None and not kept.settled:
        kept.hierarchy = hierarchy


def kept_base_rows(conn: sqlite3.Connection, repo_id: str) -> dict[int, list[tuple]] | None:
    """During a build: the kept base rows by file, each as (declared order key, (nid, class
    name, base name, kind, file id)); None when this process keeps nothing."""
    kept = _kept.get((_db_file(conn), repo_id))
    if kept is None or kept.settled:
        return None
    return kept.base_rows


def replace_inheritance(
    conn: sqlite3.Connection, repo_id: str, gone: list[tuple], new: list[tuple]
) -> None:
    """During a build that replaced some classes' inheritance rows: the stored set now."""
    kept = _kept.get((_db_file(conn), repo_id))
    if kept is not None and not kept.settled and kept.inheritance is not None:
        kept.inheritance.difference_update(gone)
        kept.inheritance.update(new)


def keep_inheritance(conn: sqlite3.Connection, repo_id: str, rows: set[tuple]) -> None:
    """During a build: the inheritance edge rows it stores (kept if the build commits)."""
    kept = _kept.get((_db_file(conn), repo_id))
    if kept is not None and not kept.settled:
        kept.inheritance = rows


def committed(conn: sqlite3.Connection, repo_id: str, generation_id: str) -> None:
    """The build that used (and patched) a repository's kept inputs committed this
    generation: they describe it now."""
    kept = _kept.get((_db_file(conn), repo_id))
    if kept is not None and not kept.settled:
        kept.generation_id = generation_id
        kept.settled = True


def _db_file(conn: sqlite3.Connection) -> str:
    return conn.execute("PRAGMA database_list").fetchone()[2]


def _active_generation(conn: sqlite3.Connection, repo_id: str) -> str | None:
    row = conn.execute(
        "SELECT active_generation_id FROM repositories WHERE repo_id = ?", (repo_id,)
    ).fetchone()
    return None if row is None else row[0]


def _read(conn: sqlite3.Connection, repo_id: str, reresolve: frozenset[int] | None) -> KeptInputs:
    """Everything read back, as a cold incremental build reads it, plus what patching needs."""
    inputs = read_graph_inputs(conn, repo_id, reresolve)
    resolver, inputs.resolver = inputs.resolver, None  # its module index serves patches
    base_rows: dict[int, list[tuple]] = {}
    for item in inputs.keyed_bases:  # each with its place in declared_order, by file
        base_rows.setdefault(item[1][4], []).append(item)
    inputs.keyed_bases = None
    kept = KeptInputs(None, EXTRACTOR_VERSION, inputs, resolver, base_rows, False)
    catalog = inputs.catalog
    kept.entities_of = defaultdict(list)
    for entity in catalog.by_id.values():
        kept.entities_of[entity.file_id].append(entity)
    kept.records_of = defaultdict(list)
    inputs.module_records = defaultdict(list)
    for record in inputs.records:
        kept.records_of[record.file_id].append(record)
        inputs.module_records[record.module].append(record)
    inputs.nested = nested_names(catalog.by_id, catalog.by_id.values())
    inputs.records_of = kept.records_of
    return kept


def _patch(conn: sqlite3.Connection, kept: KeptInputs, changed: frozenset[int]) -> None:
    """Swap the changed files' rows into the kept inputs (no path added or removed), at a
    cost that grows with the changed files, not with the repository."""
    inputs = kept.inputs
    files = sorted(changed)
    marks = ",".join("?" * len(files))
    entities = conn.execute(
        CATALOG_ROWS + f" WHERE r.file_id IN ({marks}) ORDER BY r.file_id, r.rid", files
    ).fetchall()
    _patch_catalog(inputs.catalog, kept.entities_of, changed, entities)
    _patch_nested(inputs, kept.entities_of, changed)
    imports = conn.execute(
        IMPORT_COLUMNS + f" WHERE file_id IN ({marks}) ORDER BY import_id", files
    ).fetchall()
    inputs.import_changed = _patch_imports(conn, kept, changed, imports)
    old_bases = {file_id: kept.base_rows.pop(file_id, None) for file_id in files}
    _keep_bases(kept.base_rows, conn.execute(BASE_ROWS + f" WHERE b.file_id IN ({marks})", files))
    if all(
        sorted(kept.base_rows.get(file_id) or ()) == sorted(rows or ())
        for file_id, rows in old_bases.items()
    ):
        return  # the same base rows: the ordered bases and the catalog's bases stand
    keyed = [item for items in kept.base_rows.values() for item in items]
    keyed.sort(key=_first)
    bases = [row for _, row in keyed]  # as declared_order gives them
    catalog = inputs.catalog
    catalog.bases_of = defaultdict(list)
    catalog._below = None  # derived from bases_of on first use
    for _, class_name, base_name, _, _ in bases:
        catalog.add_base(class_name, base_name)
    inputs.bases = [(nid, base, kind, file_id) for nid, _, base, kind, file_id in bases]


def _patch_nested(inputs, entities_of: dict[int, list[Entity]], changed: frozenset[int]) -> None:
    """The changed files' names defined inside functions, found again."""
    nested = inputs.nested
    by_id = inputs.catalog.by_id
    for file_id in changed:
        nested.pop(file_id, None)
        nested.update(nested_names(by_id, entities_of.get(file_id, ())))


def _keep_bases(kept: dict[int, list[tuple]], rows) -> None:
    """Keep base rows by file, each with its place in :func:`declared_order`."""
    for row in rows:
        kept.setdefault(row[5], []).append((declared_key(row), tuple(row[1:6])))


def _first(item: tuple):
    return item[0]


def _patch_imports(
    conn: sqlite3.Connection, kept: KeptInputs, changed: frozenset[int], rows: list
) -> set[int]:
    """Resolve the changed files' imports again (updating their rows), rebind their names,
    swap their records (kept in row order); returns the files whose imports now resolve
    differently. Notes the modules their old and new imports name (``modules_touched``)."""
    inputs = kept.inputs
    resolver, bindings = kept.resolver, inputs.bindings
    for file_id in changed:
        bindings.names.pop(file_id, None)
        bindings.star.pop(file_id, None)
        bindings.static_star.pop(file_id, None)
    resolver.bindings = bindings
    resolver.records = []
    import_changed = resolve_rows(conn, resolver, rows)
    records_of, by_module = kept.records_of, inputs.module_records
    gone = [r for file_id in changed for r in records_of.pop(file_id, ())]
    touched = {r.module for r in gone}
    for record in gone:
        _remove_in_order(inputs.records, record)
        _remove_in_order(by_module[record.module], record)
    for record in resolver.records:
        records_of[record.file_id].append(record)
        touched.add(record.module)
        _add_in_order(by_module[record.module], record)
    for record in resolver.records:
        _add_in_order(inputs.records, record)
    inputs.modules_touched = touched
    return import_changed


def _remove_in_order(records: list[ImportRecord], record: ImportRecord) -> None:
    """Take a record out of a list in row order."""
    at = bisect_left(records, record.import_id, key=_import_order)
    if at < len(records) and records[at] is record:
        del records[at]
    else:  # not where row order puts it: find it the slow way
        records.remove(record)


def _add_in_order(records: list[ImportRecord], record: ImportRecord) -> None:
    """Put a record into a list in row order (new rows are numbered after every other)."""
    if not records or records[-1].import_id < record.import_id:
        records.append(record)
    else:
        records.insert(bisect_left(records, record.import_id, key=_import_order), record)


def _import_order(record: ImportRecord) -> int:
    return record.import_id


def _patch_catalog(
    catalog: Catalog, entities_of: dict[int, list[Entity]], changed: frozenset[int], rows: list
) -> None:
    """Replace the changed files' entities, keeping every list in (file_id, nid) order as a
    read-back builds it."""
    old = [e for file_id in sorted(changed) for e in entities_of.pop(file_id, ())]
    for entity in old:
        del catalog.by_id[entity.nid]
        catalog.children.pop(entity.nid, None)  # a parent and its children share a file
    touched: set[str] = {e.name for e in old}
    classes: set[tuple[str, str]] = {
        (e.class_context, e.name) for e in old if e.entity_type == "Function" and e.class_context
    }
    for row in rows:
        catalog.add(tuple(row))
        entities_of[row[1]].append(catalog.by_id[row[0]])
        touched.add(row[3])
        if row[2] == "Function" and row[4]:
            classes.add((row[4], row[3]))
    new = {id(catalog.by_id[row[0]]) for row in rows}
    pools = (catalog.callables, catalog.methods, catalog.constructible)
    for name in touched:
        for pool in pools:
            _replace(pool.by_name, name, changed, new)
            pool._views.pop(name, None)  # a view of the old candidates
        _replace(catalog.types, name, changed, new)
    for key in classes:
        _replace(catalog.by_class, key, changed, new)


def _replace(lists: dict, key, changed: frozenset[int], new: set[int]) -> None:
    """Drop the old entities of the changed files from one list (``Catalog.add`` appended
    the new ones, whose ``id()`` is in ``new``) and put the new ones in (file_id, nid) order,
    as a read-back lists them. The rest of the list is in that order already: only the
    changed files' stretches move."""
    members = lists.get(key)
    if members is None:
        return
    added = 0
    while added < len(members) and id(members[-1 - added]) in new:
        added += 1
    fresh = sorted(members[len(members) - added :], key=_order)
    del members[len(members) - added :]
    for file_id in sorted(changed, reverse=True):
        start = bisect_left(members, (file_id, -1), key=_order)
        end = bisect_left(members, (file_id + 1, -1), key=_order)
        del members[start:end]
    for entity in fresh:
        members.insert(bisect_left(members, _order(entity), key=_order), entity)
    if not members:
        del lists[key]


def _order(entity: Entity) -> tuple[int, int]:
    return entity.file_id, entity.nid
