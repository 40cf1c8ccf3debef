"""
Building the ``edges`` table of one repository from raw parser evidence (local-backend §5.5):
CALLS through the tiers same_file -> import_binding -> type_inferred -> scope_unique_name ->
repo_unique_name, INHERITS/IMPLEMENTS from bases, OVERRIDES, CONTAINS and IMPORTS.
"""

from __future__ import annotations

import json
import posixpath
import sqlite3
from collections import defaultdict

from attrs import frozen

from .bindings import FileBindings, resolve_imports
from .calls import CALLABLE_TYPES, Catalog, Entity, resolve_call

CONFIDENCE = {
    "declared": 0.95,
    "same_file": 0.95,
    "import_binding": 0.90,
    "type_inferred": 0.80,
    "scope_unique_name": 0.70,
    "repo_unique_name": 0.50,
}


@frozen
class ChangeSet:
    """What a generation changed, so only the affected part of the graph is rebuilt."""

    changed_files: frozenset[int]  # added or modified files (their current file ids)
    deleted_files: frozenset[int]  # file ids that no longer exist
    touched_names: frozenset[str]  # names whose definitions appeared, vanished or moved


def _affected_files(conn, repo_id: str, change: ChangeSet, import_changed: set[int]) -> set[int]:
    affected = set(change.changed_files) | import_changed
    touched_files = change.changed_files | change.deleted_files
    names = change.touched_names
    for chunk in _chunks(sorted(touched_files)):
        marks = ",".join("?" * len(chunk))
        affected.update(
            r[0]
            for r in conn.execute(
                f"SELECT file_id, imported_name FROM imports WHERE resolved_file_id IN ({marks})",
                chunk,
            )
            if r[1] in names
        )
    for chunk in _chunks(sorted(change.touched_names)):
        marks = ",".join("?" * len(chunk))
        affected.update(
            r[0]
            for r in conn.execute(
                f"SELECT DISTINCT file_id FROM call_sites WHERE repo_id = ?"
                f" AND callee_name IN ({marks})",
                (repo_id, *chunk),
            )
        )
    return affected - set(change.deleted_files)


def _chunks(items: list, size: int = 500):
    for start in range(0, len(items), size):
        yield items[start : start + size]


def resolve_repository(
    conn: sqlite3.Connection, repo_id: str, change: ChangeSet | None = None
) -> dict[str, int]:
    """
    Rebuild the repository's modules, edges and unresolved_calls; return counts by type.

    With a :class:`ChangeSet`, CALLS/IMPORTS/CONTAINS are rebuilt only for files whose
    resolution can have changed: the changed files, files whose imports now resolve
    differently, files importing a touched name from them, and files calling a touched name.
    (A name is touched when an entity id with that name appeared or vanished: candidate pools
    of every other name are unchanged, so calls to them resolve as before.)
    Inheritance and overrides are always rebuilt (they are few).
    """
    records, bindings, import_changed = resolve_imports(conn, repo_id)
    files = conn.execute(
        "SELECT file_id, relative_path, language FROM files WHERE repo_id = ?", (repo_id,)
    ).fetchall()
    dirs = {r[0]: posixpath.dirname(r[1]) for r in files}
    language_of = {r[0]: r[2] for r in files}
    catalog = Catalog(
        conn.execute(
            "SELECT entity_id, file_id, entity_type, entity_name, class_context,"
            " parent_entity_id, language, start_line FROM entities WHERE repo_id = ?",
            (repo_id,),
        ).fetchall(),
        dirs,
        conn.execute(
            "SELECT e.entity_name, b.base_name FROM bases b"
            " JOIN entities e ON e.entity_id = b.entity_id WHERE b.repo_id = ?",
            (repo_id,),
        ).fetchall(),
    )
    if change is None:
        scope = None
        conn.execute("DELETE FROM edges WHERE repo_id = ?", (repo_id,))
        conn.execute(
            "DELETE FROM unresolved_calls WHERE call_id IN"
            " (SELECT call_id FROM call_sites WHERE repo_id = ?)",
            (repo_id,),
        )
    else:
        scope = _affected_files(conn, repo_id, change, import_changed)
        gone = sorted(scope | set(change.deleted_files))
        conn.execute(
            "DELETE FROM edges WHERE repo_id = ?"
            " AND type IN ('INHERITS', 'IMPLEMENTS', 'OVERRIDES')",
            (repo_id,),
        )
        for chunk in _chunks(gone):
            marks = ",".join("?" * len(chunk))
            conn.execute(
                f"DELETE FROM edges WHERE repo_id = ? AND type IN ('CALLS', 'IMPORTS', 'CONTAINS')"
                f" AND evidence_file_id IN ({marks})",
                (repo_id, *chunk),
            )
            conn.execute(
                f"DELETE FROM unresolved_calls WHERE call_id IN"
                f" (SELECT call_id FROM call_sites WHERE file_id IN ({marks}))",
                chunk,
            )
    edges: list[tuple] = []
    unresolved: list[tuple[int, str]] = []
    seen: set[tuple] = set()

    def edge(kind, source, target, method, line, file_id, call_kind=None, reason=None):
        """Queue one edge row, once per (type, source, target, line)."""
        identity = (kind, source, target, line)
        if identity in seen:
            return
        seen.add(identity)
        edges.append(
            (
                repo_id,
                kind,
                source,
                target,
                call_kind,
                reason,
                method,
                CONFIDENCE[method],
                line,
                file_id,
                "",
            )
        )

    for entity in catalog.by_id.values():
        if scope is None or entity.file_id in scope:
            source = entity.parent or f"file:{entity.file_id}"
            edge("CONTAINS", source, entity.entity_id, "declared", None, entity.file_id)
    for call in _calls(conn, repo_id, scope):
        target, how = resolve_call(call, catalog, bindings, language_of)
        if target is None:
            unresolved.append((call[0], how))
            continue
        kind = "constructor_call" if target.entity_type in CALLABLE_TYPES else call[7]
        source = call[2] or f"file:{call[1]}"
        edge("CALLS", source, target.entity_id, how, call[8], call[1], kind)
    _inheritance(conn, repo_id, catalog, bindings, edge)
    _imports(conn, repo_id, records, catalog, bindings, language_of, edge, scope)
    conn.executemany(
        "INSERT INTO edges (repo_id, type, source_id, target_id, call_kind, reason,"
        " resolution_method, confidence, line_number, evidence_file_id, generation_id)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        edges,
    )
    conn.executemany("INSERT INTO unresolved_calls (call_id, reason) VALUES (?, ?)", unresolved)
    counts = dict(
        conn.execute(
            "SELECT type, COUNT(*) FROM edges WHERE repo_id = ? GROUP BY type", (repo_id,)
        ).fetchall()
    )
    counts["rebuilt_files"] = len(files) if scope is None else len(scope)
    return counts


def _calls(conn, repo_id: str, scope: set[int] | None):
    columns = (
        "SELECT call_id, file_id, caller_entity_id, callee_name, full_name, receiver,"
        " inferred_type, call_kind, line_number FROM call_sites"
    )
    if scope is None:
        yield from conn.execute(columns + " WHERE repo_id = ?", (repo_id,))
        return
    for chunk in _chunks(sorted(scope)):
        marks = ",".join("?" * len(chunk))
        yield from conn.execute(columns + f" WHERE file_id IN ({marks})", chunk).fetchall()


def _pick_among(pool: list[Entity], file_id: int, dirs: dict[int, str]):
    """Directory-unique, then repository-unique candidate of a short list (base types)."""
    directory = dirs.get(file_id)
    scoped = [e for e in pool if dirs.get(e.file_id) == directory]
    if len(scoped) == 1:
        return scoped[0], "scope_unique_name"
    if len(pool) == 1:
        return pool[0], "repo_unique_name"
    return None, None


def _inheritance(conn, repo_id, catalog: Catalog, bindings: FileBindings, edge) -> None:
    resolved: list[tuple[Entity, Entity, str]] = []
    for entity_id, base_name, kind, file_id in conn.execute(
        "SELECT entity_id, base_name, kind, file_id FROM bases WHERE repo_id = ?", (repo_id,)
    ):
        child = catalog.by_id.get(entity_id)
        if child is None:
            continue
        pool = [e for e in catalog.types.get(base_name, []) if e.entity_id != entity_id]
        target, method = None, None
        binding = bindings.lookup(file_id, base_name)
        if any(e.file_id == file_id for e in pool):
            target, method = next(e for e in pool if e.file_id == file_id), "same_file"
        elif binding is not None and binding.file_ids:
            wanted = binding.symbol or base_name
            files = set(binding.file_ids)
            bound = [e for e in catalog.types.get(wanted, []) if e.file_id in files]
            if bound:
                target, method = bound[0], "import_binding"
        if target is None and (binding is None or binding.file_ids):
            target, method = _pick_among(pool, file_id, catalog.dirs)
        if target is None:
            continue
        edge_type = "IMPLEMENTS" if kind in ("implements", "trait_impl") else "INHERITS"
        edge(edge_type, child.entity_id, target.entity_id, method, child.line, file_id)
        resolved.append((child, target, method))
    for child, base, method in resolved:
        base_methods = {m.name: m for m in catalog.children.get(base.entity_id, [])}
        for member in catalog.children.get(child.entity_id, []):
            overridden = base_methods.get(member.name)
            if overridden is not None and member.entity_type == "Function":
                edge(
                    "OVERRIDES",
                    member.entity_id,
                    overridden.entity_id,
                    method,
                    None,
                    member.file_id,
                )


def _imports(conn, repo_id, records, catalog: Catalog, bindings, language_of, edge, scope) -> None:
    conn.execute("DELETE FROM modules WHERE repo_id = ?", (repo_id,))
    folded: dict[tuple[int, str], list] = defaultdict(list)
    modules: dict[str, tuple] = {}
    for record in records:
        key = f"{repo_id}|{record.module}"
        if key not in modules or (modules[key][4] is None and record.resolved_file_id):
            modules[key] = (
                key,
                repo_id,
                record.module,
                language_of.get(record.file_id),
                record.resolved_file_id,
            )
        if scope is not None and record.file_id not in scope:
            continue
        folded[(record.file_id, record.module)].append(record)
        if record.imported_name and record.imported_name not in ("*", "default"):
            binding = bindings.lookup(record.file_id, record.alias or record.imported_name)
            if binding is not None and binding.symbol and binding.file_ids:
                files = set(binding.file_ids)
                targets = catalog.callables.in_files(binding.symbol, binding.file_ids) + [
                    e for e in catalog.types.get(binding.symbol, []) if e.file_id in files
                ]
                if targets:
                    edge(
                        "IMPORTS",
                        f"file:{record.file_id}",
                        targets[0].entity_id,
                        "import_binding",
                        record.line,
                        record.file_id,
                    )
    conn.executemany(
        "INSERT OR REPLACE INTO modules (module_key, repo_id, name, language, file_id)"
        " VALUES (?, ?, ?, ?, ?)",
        list(modules.values()),
    )
    for (file_id, module), group in folded.items():
        names = {(r.imported_name, r.alias) for r in group}
        reason = None
        if len(names) == 1:
            imported_name, alias = next(iter(names))
            reason = json.dumps({"imported_name": imported_name, "alias": alias})
        line = min(r.line for r in group)
        edge(
            "IMPORTS",
            f"file:{file_id}",
            f"{repo_id}|{module}",
            "declared",
            line,
            file_id,
            None,
            reason,
        )
