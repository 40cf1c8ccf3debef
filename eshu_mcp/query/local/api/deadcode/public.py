"""
Public API, which code outside the repository may use: public names of importable Python
modules, and definitions public by their language's visibility rules.

Nothing in Twisted uses ``twisted.conch.insults.window.AbsoluteBox``, yet it is part of the
library: deleting it breaks Twisted's users. So a definition nothing in its repository
reaches is *ambiguous*, never cleanup-ready, when an importer elsewhere could name it:

* a top-level function or class of a *public module*: its name has no leading underscore,
  its module is in a package (the folder holds ``__init__.py``), no folder or module of its
  path starts with an underscore, and the module's ``__all__``, when it declares one, lists
  it;
* a public method of a *public class*: a class a public module defines or re-exports (a
  package's ``__init__.py``, or a module whose ``__all__`` lists the imported name:
  ``twisted.internet.ssl`` re-exports ``_sslverify.KeyPair``), and every base of such a
  class, whose methods its users inherit (``BaseSerialPort.setBaudRate`` through
  ``serialport.SerialPort``).

Other languages say it themselves, each by the rule the language registry declares for it:
gson's ``public JsonNull getAsJsonNull()`` is API whether or not gson calls it, and so is a
Kotlin ``fun`` of default visibility, a Swift ``open func``, a PHP method without
``private``, or a Ruby method of ``lib/`` above ``private``.
"""

from __future__ import annotations

import posixpath
import re
import sqlite3
from collections.abc import Sequence
from typing import Any

from eshu_mcp.query.local.api.code.common import in_clause, in_clauses
from eshu_mcp.query.local.index.parse.registry import entry
from eshu_mcp.query.local.index.store.codes import EDGE_TYPES

PUBLIC_API_REASON = "python.public_api"
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
_ANNOTATION = re.compile(r"@[\w.]+(?:\([^)]*\))?")
_WORD = re.compile(r"\w+")
_ALL = re.compile(r"^__all__\s*(?::[^=\n]*)?\+?=\s*([\[(][^\])]*[\])])?", re.MULTILINE)
_QUOTED = re.compile(r"""["']([A-Za-z_]\w*)["']""")
_SCRIPTS = frozenset({"__main__", "setup", "conftest", "manage"})


def public_api_modules(conn: sqlite3.Connection, rows: Sequence[dict[str, Any]]) -> dict[int, str]:
    """The rids among ``rows`` (candidate rows) that are Python public API, each with the
    dotted name an importer reaches it by (a method's: its public class's)."""
    rows = [row for row in rows if row["language"] == "python"]
    if not rows or not any(not row["entity_name"].startswith("_") for row in rows):
        return {}
    repo_ids = sorted({row["repo_id"] for row in rows})
    files = _public_modules(conn, repo_ids)
    classes = _public_classes(conn, repo_ids, files)
    found: dict[int, str] = {}
    for row in rows:
        name = row["entity_name"]
        if name.startswith("_"):
            continue
        if row["class_context"] is not None:
            reached_as = classes.get(row["parent"])
            if reached_as is not None:
                found[row["rid"]] = reached_as
        elif row["parent"] is None and row["file_id"] in files:
            module, exported, _ = files[row["file_id"]]
            if exported is None or name in exported:
                found[row["rid"]] = f"{module}.{name}"
    return found


Modules = dict[int, tuple[str, "frozenset[str] | None", str]]
"""file_id -> (dotted module, the names its ``__all__`` lists or None, file name)."""


def _public_modules(conn: sqlite3.Connection, repo_ids: list[str]) -> Modules:
    """Every public Python module of the repositories."""
    scope, params = in_clause("repo_id", repo_ids)
    paths = {
        file_id: (repo_id, path)
        for file_id, repo_id, path in conn.execute(
            f"SELECT file_id, repo_id, relative_path FROM files WHERE {scope}"
            " AND language = 'python' AND NOT is_test",
            params,
        )
    }
    packages = {
        (repo_id, posixpath.dirname(path))
        for repo_id, path in paths.values()
        if posixpath.basename(path) in ("__init__.py", "__init__.pyi")
    }
    public = {
        file_id: _dotted(repo_id, path, packages)
        for file_id, (repo_id, path) in paths.items()
        if (repo_id, posixpath.dirname(path)) in packages and _public_path(path)
    }
    exported: dict[int, frozenset[str]] = {}
    for clause, clause_params in in_clauses("file_id", sorted(public)):
        for file_id, content in conn.execute(
            f"SELECT file_id, content FROM files WHERE {clause} AND instr(content, '__all__')",
            clause_params,
        ):
            declared = declared_all(content or "")
            if declared is not None:
                exported[file_id] = frozenset(declared)
    return {
        file_id: (module, exported.get(file_id), posixpath.basename(paths[file_id][1]))
        for file_id, module in public.items()
    }


def declared_all(content: str) -> list[str] | None:
    """The names a Python module's ``__all__`` lists, in order, or None when it has none."""
    declared = _ALL.findall(content)
    if not declared:
        return None
    return list(dict.fromkeys(_QUOTED.findall(" ".join(declared))))


def _public_path(path: str) -> bool:
    *folders, filename = path.split("/")
    stem = filename.rsplit(".", 1)[0]
    if stem in _SCRIPTS or (stem.startswith("_") and stem != "__init__"):
        return False
    return not any(folder.startswith((".", "_")) for folder in folders)


def _dotted(repo_id: str, path: str, packages: set[tuple[str, str]]) -> str:
    """The module name an importer uses: from the outermost package folder down."""
    *folders, filename = path.split("/")
    top = len(folders)
    while top > 0 and (repo_id, "/".join(folders[: top - 1])) in packages:
        top -= 1
    parts = folders[max(top - 1, 0) :]
    stem = filename.rsplit(".", 1)[0]
    return ".".join(parts if stem == "__init__" else [*parts, stem])


def _public_classes(
    conn: sqlite3.Connection,
    repo_ids: list[str],
    files: Modules,
) -> dict[int, str]:
    """Class rid -> the public dotted name its users reach it by: classes public modules
    define or re-export, then their bases (through INHERITS edges), nearest first."""
    scope, params = in_clause("f.repo_id", repo_ids)
    top_level: dict[tuple[int, str], int] = {}
    reached: dict[int, str] = {}
    for rid, name, file_id in conn.execute(
        "SELECT r.rid, r.entity_name, r.file_id FROM entity_rows r JOIN files f"
        f" ON f.file_id = r.file_id WHERE {scope} AND f.language = 'python'"
        " AND r.entity_type = 'Class' AND r.parent IS NULL",
        params,
    ):
        top_level[(file_id, name)] = rid
        if file_id in files and not name.startswith("_"):
            module, exported, _ = files[file_id]
            if exported is None or name in exported:
                reached[rid] = f"{module}.{name}"
    imports_scope, imports_params = in_clause("repo_id", repo_ids)
    for file_id, name, alias, source in conn.execute(
        "SELECT file_id, imported_name, alias, resolved_file_id FROM imports"
        f" WHERE {imports_scope} AND resolved_file_id IS NOT NULL"
        " AND imported_name IS NOT NULL",
        imports_params,
    ):
        rid = top_level.get((source, name))
        if rid is None or rid in reached or file_id not in files:
            continue
        module, exported, filename = files[file_id]
        public_name = alias or name
        if public_name.startswith("_"):
            continue
        if (exported is not None and public_name in exported) or (
            exported is None and filename.startswith("__init__.")
        ):
            reached[rid] = f"{module}.{public_name}"
    bases: dict[int, list[int]] = {}
    for source, target in conn.execute(
        "SELECT src, dst FROM edge_rows WHERE type = ?", (EDGE_TYPES["INHERITS"],)
    ):
        bases.setdefault(source, []).append(target)
    frontier = list(reached)
    while frontier:  # each class is added once: bounded by the number of classes
        following = []
        for rid in frontier:
            for base in bases.get(rid, ()):
                if base not in reached:
                    reached[base] = reached[rid]
                    following.append(base)
        frontier = following
    return reached


def declared_public(row: dict[str, Any], metadata: dict[str, Any]) -> bool:
    """
    Whether a definition is public API by its language's rule (the registry's
    ``public_api``): ``declared`` when its header (before its name, past annotations and
    comments) or visibility carries a public modifier (Java's ``public``, Swift's ``open``),
    ``unless_hidden`` when neither carries a hiding one (Kotlin's default visibility, PHP's
    methods without a modifier, Ruby's methods before ``private``), and, for a language
    with API folders, it lies in one (Ruby's ``lib/``).
    """
    declared = entry(row["language"])
    rule = declared.public_api
    if rule not in ("declared", "unless_hidden"):
        return False
    if declared.api_folders and not any(
        f"/{folder}/" in "/" + row["relative_path"] for folder in declared.api_folders
    ):
        return False
    visibility = str(metadata.get("visibility") or "")
    words = set(_WORD.findall(_header(row)))
    words.add(visibility)
    if rule == "declared":
        return not words.isdisjoint(declared.public_words)
    return words.isdisjoint(declared.hidden_words)


def _header(row: dict[str, Any]) -> str:
    """A definition's text before its name (its modifiers), past comments and annotations."""
    source = _COMMENTS.sub(" ", row.get("source_cache") or "")
    source = _ANNOTATION.sub(" ", source)
    name = re.search(rf"(?<![\w$]){re.escape(row['entity_name'])}(?![\w$])", source)
    if name is not None:
        return source[: name.start()]
    return source.split("{", 1)[0].split("(", 1)[0]
