"""
What a callers story's rows alone would not say. Call sites it cannot show: calls of the
name on a receiver whose type the index could not tell, among more same-named definitions
than it links (``x.write()`` with 137 ``write`` methods in the repository); the index keeps
them unlinked rather than guess, and a callers answer counts them so that "3 callers" never
reads as "3 call sites in all". Uses that are not calls (the target passed as a value), and
how many of the calls are made in tests.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.scope import repo_clause
from eshu_mcp.query.local.api.graph.story.page import COUNT_CEILING, EdgeFilter, count_story_edges

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
            " same-named definitions; the index cannot tell which, so it links none of them;"
            f" read them with search_file_content for '{name}('"
        ),
    }


def value_uses(conn: sqlite3.Connection, edge_filter: EdgeFilter) -> dict[str, Any] | None:
    """
    For a callers story with no call: how often the target is used as a value instead
    (``http.HandlerFunc(mx.routeHTTP)``, ``d.addCallback(self._cb)``), since whatever
    receives it may call it; None when it never is.
    """
    references = EdgeFilter(
        anchors=edge_filter.anchors, types=["REFERENCES"], repo_ids=edge_filter.repo_ids
    )
    count = count_story_edges(conn, references, "incoming", COUNT_CEILING)
    if not count:
        return None
    return {
        "references": count,
        "explanation": (
            f"no call of it is linked, but it is used as a value in {count}"
            f" {'place' if count == 1 else 'places'} (passed, assigned or registered), and"
            ' what receives it may call it; relationship_types ["REFERENCES"] lists them'
        ),
    }


def from_tests(conn: sqlite3.Connection, edge_filter: EdgeFilter) -> int:
    """How many of a callers story's edges are calls made in test files."""
    where, params = edge_filter.where("incoming")
    (count,) = conn.execute(
        "SELECT COUNT(*) FROM (SELECT 1 FROM edges e JOIN files f"
        f" ON f.file_id = e.evidence_file_id WHERE {where} AND f.is_test LIMIT ?)",
        [*params, COUNT_CEILING],
    ).fetchone()
    return int(count)
