"""
REFERENCES edges: a function, method or class used as a value (``d.addCallback(self._cb)``,
``createWorker=fn``, ``handlers = {"a": cb}``, ``@decorator``) is linked from the entity
(or file) that mentions it to the definition, from the ``reference_rows`` the extractors
write.

Resolution is conservative and scoped like a Python name lookup: ``self.x``/``cls.x`` through
the enclosing class and its bases, a bare name through the file's own definitions (innermost
enclosing scope first) and then its imports, ``module.x`` and ``Class.x`` through imports or
a class of that name. A reference that none of these explain makes no edge: most bare names
are local values, not definitions.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable

from eshu_mcp.query.local.index.resolve.bindings import FileBindings
from eshu_mcp.query.local.index.resolve.calls import CALLABLE_TYPES, SELF_RECEIVERS, Catalog, Entity

REFERENCE_COLUMNS = "SELECT file_id, name, receiver, source, line_number FROM reference_rows"


def read_references(
    conn: sqlite3.Connection, repo_id: str, scope: set[int] | None = None
) -> list[tuple]:
    """A repository's reference rows (only the ``scope`` files', when given)."""
    if scope is None:
        return conn.execute(
            REFERENCE_COLUMNS + " WHERE file_id IN (SELECT file_id FROM files WHERE repo_id = ?)",
            (repo_id,),
        ).fetchall()
    found: list = []
    ordered = sorted(scope)
    for start in range(0, len(ordered), 500):
        chunk = ordered[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found.extend(conn.execute(REFERENCE_COLUMNS + f" WHERE file_id IN ({marks})", chunk))
    return found


def files_referring(conn: sqlite3.Connection, repo_id: str, names: Iterable[str]) -> set[int]:
    """Files of the repository holding a value reference to any of ``names``."""
    ordered = sorted(names)
    found: set[int] = set()
    for start in range(0, len(ordered), 500):
        chunk = ordered[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found.update(  # CROSS JOIN: through the name index, never every file's references
            file_id
            for (file_id,) in conn.execute(
                f"SELECT DISTINCT r.file_id FROM reference_rows r CROSS JOIN files f"
                f" ON f.file_id = r.file_id WHERE r.name IN ({marks}) AND f.repo_id = ?",
                (*chunk, repo_id),
            )
        )
    return found


def resolve_references(
    references: Iterable[tuple],
    catalog: Catalog,
    bindings: FileBindings,
    file_nids: dict[int, int],
    edge: Callable[..., None],
    language_of: dict[int, str | None] | None = None,
    receiver_types: dict[tuple[int, str], str] | None = None,
) -> None:
    """
    Queue a REFERENCES edge (through ``edge``) for every reference that resolves.
    ``receiver_types`` (entity nid, receiver) -> type: what the calls in that entity say
    a receiver is, so ``mx.routeHTTP`` in a Go method whose calls on ``mx`` are typed
    ``Mux`` names ``Mux.routeHTTP``.
    """
    languages = language_of or {}
    typed = receiver_types or {}
    for file_id, name, receiver, source, line in references:
        owner = catalog.by_id.get(source) if source else None
        declared = typed.get((source, receiver)) if receiver else None
        if declared is None and receiver and owner is not None and owner.language == "go":
            declared = _receiver_type(owner, receiver, catalog)
        targets, method = reference_targets(
            file_id, name, receiver, owner, catalog, bindings, declared
        )
        if not targets and not receiver and languages.get(file_id) == "go":
            targets, method = _same_package(file_id, name, catalog)
        origin = source or file_nids.get(file_id)
        if origin is None:
            continue
        for target in targets:
            if target.nid != origin:
                edge("REFERENCES", origin, target.nid, method, line, file_id)


def reference_targets(
    file_id: int,
    name: str,
    receiver: str,
    owner: Entity | None,
    catalog: Catalog,
    bindings: FileBindings,
    declared: str | None = None,
) -> tuple[list[Entity], str | None]:
    """The definitions one reference can mean, and how that was decided (``declared``:
    the receiver's type, when the calls around it state it)."""
    if not receiver:
        return _bare(file_id, name, owner, catalog, bindings)
    if receiver in SELF_RECEIVERS:
        context = enclosing_class(owner, catalog)
        if context is None:
            return [], None
        members = catalog.by_class.get((context, name), [])
        if members:
            local = [e for e in members if e.file_id == file_id]
            return (local, "same_file") if local else (members, "type_inferred")
        inherited = catalog.inherited(context, name)
        return ([inherited], "type_inferred") if inherited is not None else ([], None)
    binding = bindings.lookup(file_id, receiver)
    if binding is not None:
        if not binding.file_ids:
            return [], None
        if binding.symbol is None:
            found = catalog.callables.in_files(name, binding.file_ids)
        else:
            found = catalog.by_class.get((binding.symbol, name), [])
        return (found, "import_binding") if found else ([], None)
    if declared:
        members = catalog.by_class.get((declared, name)) or [catalog.inherited(declared, name)]
        if members[0] is not None:
            return members, "type_inferred"
    type_name = receiver.rsplit(".", 1)[-1]
    if type_name[:1].isupper():
        members = catalog.by_class.get((type_name, name), [])
        local = [e for e in members if e.file_id == file_id]
        if local or members:
            return (local or members), "same_file" if local else "type_inferred"
    return [], None


def _bare(
    file_id: int, name: str, owner: Entity | None, catalog: Catalog, bindings: FileBindings
) -> tuple[list[Entity], str | None]:
    same = catalog.callables.in_file(name, file_id) + [
        e
        for e in catalog.types.get(name, ())
        if e.file_id == file_id and e.entity_type not in CALLABLE_TYPES
    ]
    if owner is not None and owner.entity_type != "Function":  # a class body sees its members
        same += [e for e in catalog.by_class.get((owner.name, name), ()) if e.file_id == file_id]
    if same:
        scopes = _scopes(owner, catalog)
        visible = [e for e in same if e.parent is None or e.parent in scopes]
        return (visible or same), "same_file"
    binding = bindings.lookup(file_id, name)
    if binding is not None:
        if not binding.file_ids or binding.symbol is None:
            return [], None
        symbol = binding.symbol
        files = set(binding.file_ids)
        found = catalog.callables.in_files(symbol, binding.file_ids) + [
            e
            for e in catalog.types.get(symbol, ())
            if e.file_id in files and e.entity_type not in CALLABLE_TYPES
        ]
        return (found, "import_binding") if found else ([], None)
    star = bindings.star.get(file_id)
    if star:
        found = catalog.callables.in_files(name, star)
        if found:
            return found, "import_binding"
    return [], None


def _same_package(file_id: int, name: str, catalog: Catalog) -> tuple[list[Entity], str | None]:
    """A Go package's functions are visible from every file of its directory."""
    directory = catalog.dirs.get(file_id)
    found = [e for e in catalog.callables.in_dir(name, directory) if e.language == "go"]
    return (found, "scope_unique_name") if len(found) == 1 else ([], None)


def _scopes(owner: Entity | None, catalog: Catalog) -> set[int]:
    """Node numbers of the owner and every entity enclosing it."""
    scopes: set[int] = set()
    current = owner
    while current is not None and current.nid not in scopes:
        scopes.add(current.nid)
        current = catalog.by_id.get(current.parent) if current.parent else None
    return scopes


def _receiver_type(owner: Entity, receiver: str, catalog: Catalog) -> str | None:
    """The type of a Go method's receiver, named inside it or in a closure of it."""
    current: Entity | None = owner
    for _ in range(16):
        if current is None:
            return None
        if current.receiver is not None:
            return current.class_context if current.receiver == receiver else None
        current = catalog.by_id.get(current.parent) if current.parent else None
    return None


def enclosing_class(owner: Entity | None, catalog: Catalog) -> str | None:
    """The class a ``self``/``cls`` inside ``owner`` is an instance of (nested functions too)."""
    current = owner
    for _ in range(16):
        if current is None:
            return None
        if current.class_context:
            return current.class_context
        if current.entity_type != "Function":
            return current.name
        current = catalog.by_id.get(current.parent) if current.parent else None
    return None
