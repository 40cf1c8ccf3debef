"""
What each file's imports bind: local names to repository files (or to nothing, when the
module is external). Feeds the ``import_binding`` tier of call and base resolution.
"""

from __future__ import annotations

import posixpath
import re
import sqlite3
from collections import defaultdict

from attrs import frozen

from eshu_mcp.query.local.index.parse.registry import entry
from eshu_mcp.query.local.index.resolve.modules import ModuleIndex, go_module_paths


@frozen
class Binding:
    """A local name bound by an import in one file."""

    file_ids: tuple[int, ...]  # () when the module is not in the repository
    symbol: str | None  # the imported symbol's name; None when the name binds a module
    line: int


@frozen
class ImportRecord:
    """One imports row, with what it resolved to."""

    import_id: int | None  # None while a first build has not stored the row yet
    file_id: int
    module: str
    imported_name: str | None
    alias: str | None
    import_type: str | None
    line: int
    resolved_file_id: int | None


class FileBindings:
    """Bindings of one repository, per file, plus files whose names are all visible (star)."""

    def __init__(self) -> None:
        self.names: dict[int, dict[str, Binding]] = defaultdict(dict)
        self.star: dict[int, list[int]] = defaultdict(list)
        self.static_star: dict[int, list[int]] = {}  # Java ``import static a.b.C.*``: C's file

    def lookup(self, file_id: int, name: str) -> Binding | None:
        """The binding of ``name`` (or a dotted receiver) in a file."""
        return self.names.get(file_id, {}).get(name)


class ImportResolver:
    """Resolves imports to repository files and binds the names they bring in, file by file."""

    def __init__(self, files: list[tuple[int, str, str | None]], go_mods: dict[str, str]) -> None:
        self.index = ModuleIndex(files, go_mods)
        self.path_of = {file_id: (path, language) for file_id, path, language in files}
        self.bindings = FileBindings()
        self.records: list[ImportRecord] = []

    def resolved(self, file_id: int, module: str, imported_name: str | None) -> int | None:
        """The repository file an import of one file resolves to, or None (a renamed export
        of the file's own name, module ``""``, resolves to the file itself)."""
        if not module and imported_name:
            return file_id
        path, language = self.path_of.get(file_id, ("", None))
        return self.index.resolve(language, path, module, imported_name)

    def add(self, record: ImportRecord) -> None:
        """Keep a resolved import and bind the name it brings in."""
        self.records.append(record)
        language = self.path_of.get(record.file_id, ("", None))[1]
        _bind(self.bindings, record, language, self.index, self.path_of)


def repository_files(conn: sqlite3.Connection, repo_id: str) -> list[tuple[int, str, str | None]]:
    """(file_id, relative_path, language) of every file of a repository."""
    return conn.execute(
        "SELECT file_id, relative_path, language FROM files WHERE repo_id = ?", (repo_id,)
    ).fetchall()


def repository_go_mods(conn: sqlite3.Connection, repo_id: str) -> dict[str, str]:
    """go.mod path -> module path, of every go.mod file of a repository."""
    return go_module_paths(
        conn.execute(
            "SELECT relative_path, content FROM files WHERE repo_id = ?"
            " AND (relative_path = 'go.mod' OR relative_path LIKE '%/go.mod')",
            (repo_id,),
        ).fetchall()
    )


def resolve_imports(
    conn: sqlite3.Connection, repo_id: str, only: frozenset[int] | None = None
) -> tuple[list[ImportRecord], FileBindings, set[int]]:
    """
    Resolve the repository's imports to files, update the imports rows, bind names.

    With ``only``, imports of other files keep the file they resolved to (right when no
    path was added or removed). Returns the records (in the order the files wrote them), the
    bindings and the files whose imports now resolve differently.
    """
    resolver, changed_files = import_resolver(conn, repo_id, only)
    return resolver.records, resolver.bindings, changed_files


def import_resolver(
    conn: sqlite3.Connection, repo_id: str, only: frozenset[int] | None = None
) -> tuple[ImportResolver, set[int]]:
    """As :func:`resolve_imports`, returning the resolver that holds the records and
    bindings (and the repository's module index) and the files that resolve differently."""
    resolver = ImportResolver(repository_files(conn, repo_id), repository_go_mods(conn, repo_id))
    rows = plain_rows(conn).execute(
        "SELECT import_id, file_id, module, imported_name, alias, import_type, line_number,"
        " resolved_file_id FROM imports WHERE repo_id = ? ORDER BY import_id",
        (repo_id,),
    )
    return resolver, resolve_rows(conn, resolver, rows, only)


def plain_rows(conn: sqlite3.Connection) -> sqlite3.Cursor:
    """A cursor giving plain tuples, whatever the connection's row factory: reading a
    million rows as ``sqlite3.Row`` costs a second more, and they are only indexed."""
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor


def resolve_rows(
    conn: sqlite3.Connection,
    resolver: ImportResolver,
    rows: list,
    only: frozenset[int] | None = None,
) -> set[int]:
    """
    Resolve imports rows (``import_id, file_id, module, imported_name, alias, import_type,
    line_number, resolved_file_id``) into ``resolver`` in their order, update the rows whose
    file changed, and return the files whose imports now resolve differently. With ``only``,
    rows of other files keep the file they resolved to.
    """
    updates = []
    changed_files: set[int] = set()
    for row in rows:
        if only is not None and row[1] not in only:
            resolver.add(ImportRecord(*row))
            continue
        resolved = resolver.resolved(row[1], row[2], row[3])
        if resolved != row[7]:
            updates.append((resolved, 0 if resolved else 1, row[0]))
            changed_files.add(row[1])
        resolver.add(ImportRecord(*row[:7], resolved))
    if updates:
        conn.executemany(
            "UPDATE imports SET resolved_file_id = ?, is_external = ? WHERE import_id = ?",
            updates,
        )
    return changed_files


GO_MAJOR_VERSION = re.compile(r"v[2-9]|v[1-9][0-9]+")
"""A Go import path's major version element (``.../chi/v5``), which names no package."""


GO_NAME_PADDING = re.compile(r"^go[-.]|[-.]go$|\.v[0-9]+$")
GO_NAME_SEPARATORS = re.compile(r"[-.]")
GO_OUTSIDE_DOT_IMPORT = "."
"""The name bound in a Go file that dot-imports a package outside the repository (no
identifier can be ``.``): its bare calls may run that package's functions."""


def go_package_name(import_path: str) -> str:
    """The name a Go import binds when it has no alias: the path's last element, less a
    major version suffix (``github.com/go-chi/chi/v5`` -> ``chi``, ``gopkg.in/yaml.v3`` ->
    ``yaml``); for an element no package can be named, the conventional name
    (``github.com/mattn/go-isatty`` -> ``isatty``, ``github.com/satori/go.uuid`` -> ``uuid``)."""
    parts = [part for part in import_path.split("/") if part]
    if len(parts) > 1 and GO_MAJOR_VERSION.fullmatch(parts[-1]):
        parts.pop()
    last = parts[-1] if parts else import_path
    if import_path.startswith("gopkg.in/"):
        last = last.split(".v", 1)[0]
    if not last.isidentifier():  # no package can be named so: the conventional name
        last = GO_NAME_PADDING.sub("", last)
        last = "".join(GO_NAME_SEPARATORS.split(last)) or last
    return last


def _bind(
    bindings: FileBindings,
    record: ImportRecord,
    language: str | None,
    index: ModuleIndex,
    path_of: dict[int, tuple[str, str | None]],
) -> None:
    target = (record.resolved_file_id,) if record.resolved_file_id is not None else ()
    names = bindings.names[record.file_id]
    module, name, alias, line = record.module, record.imported_name, record.alias, record.line
    style = entry(language).imports
    if style == "go":
        directory = index.go_package_dir(module)
        files = ()
        if directory is not None:
            files = tuple(
                fid
                for path, fid in index.by_dir.get(directory, ())
                if path.endswith(".go") and not path.endswith("_test.go")
            )
        local = alias or go_package_name(module)
        if local not in ("_", "."):
            names[local] = Binding(files, None, line)
        elif local == ".":
            bindings.star[record.file_id].extend(files)
            if not files:
                names.setdefault(GO_OUTSIDE_DOT_IMPORT, Binding((), None, line))
        return
    if name == "*":
        if alias:  # ``import * as ns``: the module under one name, not its names in scope
            names[alias] = Binding(target, None, line)
        elif target and record.import_type == "static":  # a class's members, not a package's
            bindings.static_star.setdefault(record.file_id, []).extend(target)
        elif target:
            bindings.star[record.file_id].extend(target)
        return
    if name is None:
        if entry(language).whole_file_imports:
            if target:
                bindings.star[record.file_id].extend(target)
            return
        if style == "python" and alias is None:
            names[module] = Binding(target, None, line)
            head = module.split(".", 1)[0]
            head_file = index.python.get(head)
            names.setdefault(head, Binding(() if head_file is None else (head_file,), None, line))
            return
        local = alias or module.rsplit(".", 1)[-1].rsplit("/", 1)[-1]
        names[local] = Binding(target, None, line)
        return
    if name == "default" and alias:
        names[alias] = Binding(target, None, line)
        return
    is_module = False
    if style == "python" and record.resolved_file_id is not None:
        resolved_path = path_of.get(record.resolved_file_id, ("", None))[0]
        is_module = index.module_name(resolved_path).endswith("." + name) or (
            posixpath.basename(resolved_path).removesuffix(".py") == name
            and not resolved_path.endswith("__init__.py")
        )
    local = alias or name
    names[local] = Binding(target, None if is_module else name, line)
