"""
Repository scope of a code-route request: the selector Eshu's rules resolve, and the
scoped-token grants that limit what an unscoped query may read.
"""

from __future__ import annotations

from typing import Any

from eshu_mcp.query.local.api.code.common import in_clause, language_values
from eshu_mcp.query.local.api.platform.framework import ApiContext, ApiError


class RepositoryGrant(str):
    """
    The scope of a request that named no repository but whose caller may read only some.

    It is the empty string (so responses echo ``repo_id: ""`` as Eshu does) carrying the
    readable repository ids; :func:`repo_clause` turns it into an ``IN`` filter.
    """

    repo_ids: tuple[str, ...]

    def __new__(cls, repo_ids: tuple[str, ...]) -> RepositoryGrant:
        scope = super().__new__(cls, "")
        scope.repo_ids = repo_ids
        return scope


def may_read(ctx: ApiContext, repo_id: str) -> bool:
    """Whether the caller's grants cover a repository (no principal: everything)."""
    check = getattr(ctx.principal, "may_read_repository", None)
    return True if check is None else bool(check(repo_id))


def scope_repository(ctx: ApiContext, selector: str, *, not_found_status: int = 400) -> str:
    """
    Resolve a repository selector to a repository id ("" = no scope).

    Selector errors use 400 on every ``/code/*`` route (local-backend.md §1.4); a
    canonical id that is not indexed is kept verbatim, so the query simply finds
    nothing. Without a selector, a caller whose grants cover only some repositories gets
    a :class:`RepositoryGrant` limited to them, and so does a daemon started with ``--repo``
    (its own repositories: :meth:`ApiContext.home_repositories`).
    """
    selector = selector.strip()
    if not selector:
        home = ctx.home_repositories()
        if home is None and getattr(ctx.principal, "may_read_repository", None) is None:
            return ""
        ids = [r for (r,) in ctx.conn.execute("SELECT repo_id FROM repositories ORDER BY repo_id")]
        readable = tuple(r for r in ids if may_read(ctx, r) and (home is None or r in home))
        return "" if len(readable) == len(ids) else RepositoryGrant(readable)
    try:
        row = ctx.repository(selector, not_found_status=not_found_status)
    except ApiError:
        canonical = selector.startswith(("repo://", "repo-", "repository:"))
        if canonical and may_read(ctx, selector):
            return selector
        raise
    if row is None:
        return selector
    return str(row["repo_id"])


def repo_clause(column: str, scope: str) -> tuple[str, list[Any]]:
    """The SQL filter for a repository scope (one id, a grant, or nothing)."""
    if isinstance(scope, RepositoryGrant):
        if not scope.repo_ids:
            return "0 = 1", []
        return in_clause(column, scope.repo_ids)
    if scope:
        return f"{column} = ?", [scope]
    return "1 = 1", []


def scope_predicate(repo_id: str, language: str, alias: str = "e") -> tuple[str, list[Any]]:
    """``repo_id`` / ``language`` filters shared by the entity queries."""
    clause, params = repo_clause(f"{alias}.repo_id", repo_id)
    clauses = [clause]
    languages = language_values(language)
    if languages:
        clause, values = in_clause(f"{alias}.language", languages)
        clauses.append(clause)
        params.extend(values)
    return " AND ".join(clauses), params
