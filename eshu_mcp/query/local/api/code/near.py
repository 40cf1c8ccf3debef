"""
Near misses: the indexed names and paths closest to one that matched nothing, so a "not
found" answer can say what the assistant probably meant (``Comand`` -> ``Command``,
``core.py`` -> ``click/core.py``).
"""

from __future__ import annotations

import difflib
import posixpath
import sqlite3

from eshu_mcp.query.local.api.code.scope import repo_clause

SUGGESTIONS = 3
NAME_SCAN = 5000
"""Definition names read at most: those sharing the wanted name's first letter."""
PATH_SCAN = 50_000
"""File paths of one repository read at most."""


def nearest_names(conn: sqlite3.Connection, name: str, scope: object) -> list[str]:
    """Up to :data:`SUGGESTIONS` definition names in scope closest to ``name``: the same
    name in another case first, then the closest spellings sharing its first letter."""
    name = name.strip()
    if not name:
        return []
    clause, params = repo_clause("f.repo_id", scope)
    found: dict[str, None] = {}
    for first in dict.fromkeys((name[0], name[0].swapcase())):
        for (candidate,) in conn.execute(
            "SELECT DISTINCT r.entity_name FROM entity_rows r JOIN files f"
            f" ON f.file_id = r.file_id WHERE r.entity_name >= ? AND r.entity_name < ?"
            f" AND {clause} LIMIT ?",
            [first, first + "\U0010ffff", *params, NAME_SCAN],
        ):
            found[candidate] = None
    names = list(found)
    same = [candidate for candidate in names if candidate.lower() == name.lower()]
    close = difflib.get_close_matches(name, names, n=SUGGESTIONS, cutoff=0.75)
    return list(dict.fromkeys([*same, *close]))[:SUGGESTIONS]


def nearest_paths(conn: sqlite3.Connection, repo_id: str, path: str) -> list[str]:
    """Up to :data:`SUGGESTIONS` indexed paths of the repository closest to ``path``: those
    ending with it, then those whose file name is spelled closest."""
    wanted = path.strip().strip("/")
    if not wanted:
        return []
    paths = [
        row[0]
        for row in conn.execute(
            "SELECT relative_path FROM files WHERE repo_id = ? ORDER BY relative_path LIMIT ?",
            (repo_id, PATH_SCAN),
        )
    ]
    ending = [p for p in paths if p.endswith("/" + wanted)]
    if ending:
        return ending[:SUGGESTIONS]
    by_name: dict[str, list[str]] = {}
    for candidate in paths:
        by_name.setdefault(posixpath.basename(candidate), []).append(candidate)
    close = difflib.get_close_matches(posixpath.basename(wanted), list(by_name), SUGGESTIONS, 0.7)
    folder = posixpath.dirname(wanted)
    found = [
        candidate
        for name in close
        for candidate in sorted(
            by_name[name], key=lambda p: (posixpath.dirname(p) != folder, len(p), p)
        )
    ]
    return found[:SUGGESTIONS]


def not_found_hint(suggestions: list[str]) -> str:
    """``; did you mean a, b or c?`` for an error sentence, or ``""``."""
    if not suggestions:
        return ""
    if len(suggestions) == 1:
        return f"; did you mean {suggestions[0]}?"
    return f"; did you mean {', '.join(suggestions[:-1])} or {suggestions[-1]}?"
