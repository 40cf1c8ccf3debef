"""
What resolving a repository's graph reads: its files, an entity catalog, resolved imports
and bindings, base-type evidence and file node numbers. Read back from the database
(:func:`read_graph_inputs`), or gathered while a first build writes its files
(:class:`FirstBuildInputs`), so the build's serial tail starts with them ready.
"""

from __future__ import annotations

import json
import posixpath
import sqlite3
from collections import Counter

from attrs import define

from eshu_mcp.query.local.index.parse.languages import language_of
from eshu_mcp.query.local.index.resolve.bindings import (
    FileBindings,
    ImportRecord,
    ImportResolver,
    import_resolver,
    plain_rows,
)
from eshu_mcp.query.local.index.resolve.calls import Catalog
from eshu_mcp.query.local.index.resolve.modules import go_module_paths
from eshu_mcp.query.local.index.store.writer import (
    PreparedFile,
)

CATALOG_ROWS = (
    "SELECT r.rid, r.file_id, r.entity_type, r.entity_name, r.class_context, r.parent,"
    " f.language, r.start_line, CASE WHEN json_extract(r.metadata, '$.returns') IS NULL"
    " THEN r.signature ELSE r.signature || ' -> ' || json_extract(r.metadata, '$.returns') END,"
    " json_extract(r.metadata, '$.attribute_types'), r.arg_count FROM entity_rows r"
    " JOIN files f ON f.file_id = r.file_id"
)
"""Catalog rows (see ``Catalog.add``); a read-back adds ``ORDER BY r.file_id, r.rid``."""
BASE_ROWS = (
    "SELECT b.entity_id, n.nid, r.entity_name, b.base_name, b.kind, b.file_id,"
    " json_extract(r.metadata, '$.bases') FROM bases b"
    " JOIN nodes n ON n.node_id = b.entity_id JOIN entity_rows r ON r.rid = n.nid"
)
"""Base-type evidence rows, as :func:`declared_order` takes them."""


@define
class GraphInputs:
    """Everything call, import and inheritance resolution reads of one repository."""

    files: list[tuple[int, str, str | None]]  # (file_id, relative_path, language)
    catalog: Catalog
    records: list[ImportRecord]
    bindings: FileBindings
    import_changed: set[int]  # files whose imports now resolve differently
    bases: list[tuple[int, str, str, int]]  # (entity nid, base name, kind, file_id)
    file_nids: dict[int, int]
    calls: list[tuple] | None = None  # every call row, when already in memory
    declared: Counter | None = None  # a first build's writer-made edges by type code
    references: list[tuple] | None = None  # every reference row, when already in memory
    nested: dict[int, set[str]] | None = None  # file -> names defined in functions, when kept
    records_of: dict[int, list[ImportRecord]] | None = None  # file -> its records, when kept
    modules_touched: set[str] | None = None  # modules whose import rows a patch changed
    module_records: dict[str, list[ImportRecord]] | None = None  # module -> records, when kept
    languages: dict[int, str | None] | None = None
    keyed_bases: list[tuple] | None = None  # read back: (declared order key, base row)
    resolver: ImportResolver | None = None  # read back: the one that resolved the imports

    @property
    def language_of(self) -> dict[int, str | None]:
        """Each file's language."""
        if self.languages is None:
            self.languages = {file_id: language for file_id, _, language in self.files}
        return self.languages


def declared_order(rows: list[tuple]) -> list[tuple]:
    """(nid, class name, base name, kind, file_id) rows ordered by class, then by the order
    the class lists its bases (the MRO depends on it), from (entity id, nid, class name, base
    name, kind, file_id, the class's bases as JSON) rows."""
    return [tuple(row[1:6]) for row in sorted(rows, key=declared_key)]


def declared_key(row: tuple, decoded: dict[str, list] | None = None) -> tuple:
    """Where one (entity id, nid, class name, base name, kind, file_id, bases as JSON) row
    goes in :func:`declared_order`; ``decoded`` keeps the lists of bases already decoded
    (a class has a row per base, all with the same list)."""
    entity_id, _, _, base_name, kind, _, written = row
    if not written:
        return _declared_place(entity_id, base_name, kind, [])
    listed = None if decoded is None else decoded.get(written)
    if listed is None:
        listed = json.loads(written)
        if decoded is not None:
            decoded[written] = listed
    return _declared_place(entity_id, base_name, kind, listed)


def _declared_place(entity_id: str, base_name: str, kind: str, listed: list[str]) -> tuple:
    position = listed.index(base_name) if base_name in listed else len(listed)
    return entity_id, position, base_name, kind


def read_graph_inputs(
    conn: sqlite3.Connection, repo_id: str, reresolve: frozenset[int] | None = None
) -> GraphInputs:
    """
    Read a repository's graph inputs back, resolving its imports again on the way (only
    those of the ``reresolve`` files, when the repository's layout is unchanged).
    """
    resolver, import_changed = import_resolver(conn, repo_id, reresolve)
    files = conn.execute(
        "SELECT file_id, relative_path, language FROM files WHERE repo_id = ?", (repo_id,)
    ).fetchall()
    decoded: dict[str, list] = {}
    keyed = sorted(
        (declared_key(row, decoded), row[1:6])
        for row in plain_rows(conn).execute(BASE_ROWS + " WHERE b.repo_id = ?", (repo_id,))
    )
    bases = [row for _, row in keyed]  # as declared_order gives them
    catalog = Catalog(
        plain_rows(conn).execute(
            CATALOG_ROWS + " WHERE f.repo_id = ? ORDER BY r.file_id, r.rid", (repo_id,)
        ),
        {file_id: posixpath.dirname(path) for file_id, path, _ in files},
        [(row[1], row[2]) for row in bases],
    )
    file_nids = {  # the writer numbers each file's node when it first stores the file
        file_id: nid
        for file_id, nid in conn.execute(
            "SELECT f.file_id, n.nid FROM files f JOIN nodes n ON n.node_id = 'file:' || f.file_id"
            " WHERE f.repo_id = ?",
            (repo_id,),
        )
    }
    inputs = GraphInputs(
        files,
        catalog,
        resolver.records,
        resolver.bindings,
        import_changed,
        [(row[0], row[2], row[3], row[4]) for row in bases],
        file_nids,
    )
    inputs.keyed_bases = keyed
    inputs.resolver = resolver
    return inputs


class FirstBuildInputs:
    """
    Graph inputs of a repository's first build, gathered file by file as the writer stores
    them. File ids are planned before parsing (the walk knows every path), so imports
    resolve as each file arrives and the catalog grows in the order a read-back would give.
    """

    def __init__(self, planned: list[tuple[int, str]], go_mods: dict[str, str]) -> None:
        self.files = [(file_id, path, language_of(path)) for file_id, path in planned]
        self.imports = ImportResolver(self.files, go_mods)
        dirs = {file_id: posixpath.dirname(path) for file_id, path in planned}
        self.catalog = Catalog([], dirs, indexed=True)
        self.bases: list[tuple[str, int, str, str, str, int]] = []
        self.calls: list[tuple] = []
        self.file_nids: dict[int, int] = {}
        self.declared: Counter = Counter()
        self.references: list[tuple] = []
        self.sniffed: dict[int, str | None] = {}  # languages the paths alone did not tell

    def resolve_imports(self, file_id: int, prepared: PreparedFile) -> list[int | None]:
        """Resolve a file's imports (in row order) and bind what they bring in."""
        resolved = []
        for module, imported_name, alias, import_type, line in prepared.import_rows:
            target = self.imports.resolved(file_id, module, imported_name)
            resolved.append(target)
            self.imports.add(
                ImportRecord(None, file_id, module, imported_name, alias, import_type, line, target)
            )
        return resolved

    def add_file(
        self, file_id: int, file_nid: int, prepared: PreparedFile, nids: list[int]
    ) -> None:
        """Catalog a written file's entities and keep its base-type evidence."""
        self.file_nids[file_id] = file_nid
        language = prepared.parsed.language
        planned = self.imports.path_of.get(file_id)
        if planned is not None and planned[1] != language:  # told by its content (a .h)
            self.imports.path_of[file_id] = (planned[0], language)
            self.sniffed[file_id] = language
        add = self.catalog.add_entity  # a read-back row's fields, given one by one
        # each row unpacked once (entity_rows columns after rid/file_id), not indexed 7 times
        for nid, (
            entity_type,
            name,
            line,
            _,
            _,
            _,
            parent,
            class_context,
            _,
            arg_count,
            signature,
            metadata,
        ) in zip(nids, prepared.entity_rows, strict=True):
            if signature is not None and '"returns"' in metadata:
                signature = signature_with_return(signature, metadata)
            add(
                nid,
                file_id,
                entity_type,
                name,
                class_context,
                None if parent is None else nids[parent],
                language,
                line,
                signature,
                attribute_types_json(metadata) if '"attribute_types"' in metadata else None,
                arg_count,
            )
        for row, base_name, kind in prepared.base_rows:
            entity = prepared.entity_ids[row]
            name = prepared.entity_rows[row][1]
            self.bases.append((entity, nids[row], name, base_name, kind, file_id, row))

    def inputs(self) -> GraphInputs:
        """The gathered inputs, bases in the order a read-back gives them."""
        listed: dict[tuple[str, int], list[str]] = {}
        for entity, _, _, base_name, _, file_id, _ in self.bases:
            listed.setdefault((entity, file_id), []).append(base_name)
        unique = {(b[0], b[3], b[4]): b for b in reversed(self.bases)}  # as the table keeps
        bases = [  # as declared_order orders them, the class's list of bases at hand
            tuple(row[1:6])
            for row in sorted(
                unique.values(),
                key=lambda b: _declared_place(b[0], b[3], b[4], listed[b[0], b[5]]),
            )
        ]
        for _, class_name, base_name, _, _ in bases:
            self.catalog.add_base(class_name, base_name)
        files = self.files
        if self.sniffed:
            files = [(f, path, self.sniffed.get(f, language)) for f, path, language in files]
        return GraphInputs(
            files,
            self.catalog,
            self.imports.records,
            self.imports.bindings,
            set(),
            [(nid, base, kind, file_id) for nid, _, base, kind, file_id in bases],
            self.file_nids,
            self.calls,
            self.declared,
            self.references,
        )


def signature_with_return(signature: str | None, metadata: str) -> str | None:
    """A signature, with ``-> T`` when the extractor read what an unannotated function
    returns (``metadata.returns``: an ``__enter__`` returning ``self``), as the read-back
    gives it."""
    if '"returns"' not in metadata or signature is None:
        return signature
    returned = json.loads(metadata).get("returns")  # the word may be a parameter's name
    return signature if returned is None else f"{signature} -> {returned}"


def attribute_types_json(metadata: str) -> str | None:
    """A class's attribute types as the read-back gives them (JSON), from its metadata."""
    if '"attribute_types"' not in metadata:
        return None
    return json.dumps(json.loads(metadata)["attribute_types"], separators=(",", ":"))


GO_MOD_READ_BYTES = 1024 * 1024


def go_mods_on_disk(root, paths: list[str]) -> dict[str, str]:
    """go.mod path -> module path, read from the work tree (a first build's files)."""
    rows = []
    for path in paths:
        if path == "go.mod" or path.endswith("/go.mod"):
            try:
                with open(root / path, "rb") as handle:  # bounded: a huge go.mod costs 1 MiB
                    head = handle.read(GO_MOD_READ_BYTES)
            except OSError:
                continue
            rows.append((path, head.decode("utf-8", "replace")))
    return go_module_paths(rows)
