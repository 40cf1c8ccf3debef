"""
Call sites a callers story cannot show: calls of the name on a receiver whose type the
index could not tell, with more same-named definitions than it links (``x.write()`` with
137 ``write`` methods in the repository). The index keeps them unlinked rather than guess;
a callers answer counts them so that "3 callers" never reads as "3 call sites in all".
"""

from __future__ import annotations

import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code_scope import repo_clause

_AMBIGUOUS = "ambiguous:"

# CROSS JOIN keeps SQLite from scanning every call row: the ambiguous rows are few.
_UNLINKED = (
    "SELECT COUNT(*), MAX(CAST(substr(u.reason, {start}) AS INTEGER))"
    " FROM unresolved_calls u CROSS JOIN call_rows c ON c.call_id = u.call_id"
    " JOIN files f ON f.file_id = c.file_id"
    " WHERE u.reason LIKE '{prefix}%' AND c.callee_name = ? AND {scope}"
)


def unlinked_call_sites(conn: sqlite3.Connection, name: str, scope: Any) -> dict[str, Any] | None:
    """
    ``{call_sites, most_candidates, explanation}`` for the calls of ``name`` the index left
    unlinked among too many same-named definitions, in ``scope``; None when there are none.
    """
    clause, params = repo_clause("f.repo_id", scope)
    sql = _UNLINKED.format(start=len(_AMBIGUOUS) + 1, prefix=_AMBIGUOUS, scope=clause)
    count, most = conn.execute(sql, [name, *params]).fetchone()
    if not count:
        return None
    return {
        "call_sites": count,
        "most_candidates": most,
        "explanation": (
            f"{count} more call sites of {name}() could each run any of up to {most}"
            " same-named definitions, too many to link (the index cannot tell which); read"
            f" them with search_file_content for '{name}('"
        ),
    }
