"""
When a Python import runs: as its module loads, or later.

An import cycle breaks a program only through imports that run while the modules load.
``click/core.py`` imports ``click.decorators`` inside a function (line 1217), and a typed
module imports under ``if TYPE_CHECKING:`` for annotations only, and a module run as a
script imports under ``if __name__ == "__main__":`` (never when it is imported): none of
them runs at load, so the cycle they close is harmless, and an assistant told "8 import
cycles" should know which of them matter.
"""

from __future__ import annotations

import re
import sqlite3

from eshu_mcp.query.local.api.code.common import in_clauses

AT_LOAD = "module_load"
IN_FUNCTION = "function_call"
TYPE_CHECKING_ONLY = "type_checking_only"
SCRIPT_ONLY = "script_only"
_TYPE_CHECKING = re.compile(r"\s*if\s+(?:\w+\.)?TYPE_CHECKING\s*:")
_MAIN = re.compile(r"""\s*if\s+__name__\s*==\s*(['"])__main__\1\s*:""")


def import_timing(
    conn: sqlite3.Connection, lines: set[tuple[int, int]]
) -> dict[tuple[int, int], tuple[str, str]]:
    """
    (file_id, line) of imports -> (when it runs, the function it runs in or ""): one of
    :data:`AT_LOAD`, :data:`IN_FUNCTION`, :data:`TYPE_CHECKING_ONLY`, :data:`SCRIPT_ONLY`.
    """
    by_file: dict[int, set[int]] = {}
    for file_id, line in lines:
        by_file.setdefault(file_id, set()).add(line)
    timing: dict[tuple[int, int], tuple[str, str]] = {}
    for clause, params in in_clauses("file_id", sorted(by_file)):
        functions: dict[int, list[tuple[int, int, str]]] = {}
        for file_id, start, end, name in conn.execute(
            f"SELECT file_id, start_line, end_line, entity_name FROM entity_rows WHERE {clause}"
            " AND entity_type = 'Function'",
            params,
        ):
            functions.setdefault(file_id, []).append((start, end, name))
        for file_id, content in conn.execute(
            f"SELECT file_id, content FROM files WHERE {clause}", params
        ):
            text = (content or "").splitlines()
            for line in by_file[file_id]:
                enclosing = [
                    (start, name)
                    for start, end, name in functions.get(file_id, ())
                    if start <= line <= end
                ]
                if enclosing:
                    timing[(file_id, line)] = (IN_FUNCTION, max(enclosing)[1])
                else:
                    guard = _guarded_by(text, line)
                    if guard is not None:
                        timing[(file_id, line)] = (guard, "")
                        continue
                    timing[(file_id, line)] = (AT_LOAD, "")
    return timing


def _guarded_by(text: list[str], line: int) -> str | None:
    """:data:`TYPE_CHECKING_ONLY` or :data:`SCRIPT_ONLY` when 1-based ``line`` sits in an
    ``if TYPE_CHECKING:`` or ``if __name__ == "__main__":`` block; None otherwise."""
    if not 0 < line <= len(text):
        return None
    own = text[line - 1]
    indent = len(own) - len(own.lstrip())
    for above in range(line - 2, -1, -1):
        candidate = text[above]
        if not candidate.strip() or candidate.lstrip().startswith("#"):
            continue
        depth = len(candidate) - len(candidate.lstrip())
        if depth < indent:
            if _TYPE_CHECKING.match(candidate):
                return TYPE_CHECKING_ONLY
            if _MAIN.match(candidate):
                return SCRIPT_ONLY
            indent = depth
            if depth == 0:
                return None
    return None
