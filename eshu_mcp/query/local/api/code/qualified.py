"""
Qualified names as an assistant writes them: ``Deferred.addCallbacks``, ``app.listen``,
``defer.maybeDeferred``, ``twisted.internet.defer.Deferred``, ``Server::run``, ``Ky.#retry``.

A qualified name matches a definition when its segments end the definition's dotted
path: the file's module path (``twisted/internet/defer.py`` reads ``twisted.internet.defer``;
an ``__init__`` or ``index`` file is its folder) followed by the qualified name the
index stored (``Deferred.addCallbacks``, ``app.listen``). Only the last segment is looked
up by index; the rest is compared in memory, over a bounded number of same-named rows.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

_SEPARATORS = re.compile(r"::|\.")
_PACKAGE_FILES = frozenset({"__init__", "index", "mod", "lib"})
SAME_NAME_SCAN = 5000
"""Definitions sharing the last segment that a qualified lookup reads at most."""


def without_call_parens(name: str) -> str:
    """``callLater()`` -> ``callLater``: the name an assistant wrote as a call, or ``""``."""
    name = name.strip()
    return name[:-2].rstrip() if name.endswith("()") and len(name) > 2 else ""


def qualified_parts(name: str) -> list[str]:
    """The segments of a qualified name, or [] for a bare one."""
    parts = [part.strip() for part in _SEPARATORS.split(name.strip()) if part.strip()]
    return parts if len(parts) > 1 else []


def module_parts(relative_path: str) -> list[str]:
    """A file's module path as segments: ``a/b/c.py`` -> [a, b, c]; ``a/__init__.py`` -> [a]."""
    parts = relative_path.split("/")
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    if len(parts) > 1 and parts[-1] in _PACKAGE_FILES:
        parts.pop()
    return parts


def ends_with(path: list[str], parts: list[str]) -> bool:
    """Whether ``parts`` are the last segments of ``path``."""
    return len(parts) <= len(path) and path[len(path) - len(parts) :] == parts


def qualified_matches(
    conn: sqlite3.Connection, parts: list[str], where: str, params: list[Any]
) -> list[str]:
    """
    Entity ids whose module path and qualified name end with ``parts``, among the
    entities named ``parts[-1]`` that satisfy ``where`` (an ``e.``-aliased predicate).
    Definitions the name qualifies by their class come before those it qualifies only by
    their file: ``AxiosHeaders.set`` is the class's method, not a ``set`` that a file
    named AxiosHeaders.js also holds.
    """
    rows = conn.execute(
        "SELECT e.entity_id, e.relative_path,"
        " COALESCE(e.qualified_name, e.class_context || '.' || e.entity_name, e.entity_name)"
        f" FROM entities e WHERE {where} AND e.entity_name = ? LIMIT ?",
        [*params, parts[-1], SAME_NAME_SCAN],
    )
    by_class, by_file = [], []
    for entity_id, relative_path, qualified in rows:
        dotted = qualified.split(".")
        if ends_with(dotted, parts):
            by_class.append(entity_id)
        elif ends_with(module_parts(relative_path or "") + dotted, parts):
            by_file.append(entity_id)
    return by_class or by_file
