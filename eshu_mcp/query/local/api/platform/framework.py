"""
The embedded ``/api/v0`` framework: request context, answers, errors and the route table.

Handlers are plain synchronous functions ``handler(ctx) -> Answer`` registered with
``@ROUTES.route(method, pattern)``. They run on a reader thread pool with their own
SQLite connection and never touch HTTP; :mod:`.resource` renders what they return with
Eshu's envelope/plain rules (local-backend.md §1.1, §1.3). Errors live in
:mod:`.errors` and request-field helpers in :mod:`.fields`; both are re-exported here,
the one module route families import.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from typing import Any

from attrs import define, field, frozen

from eshu_mcp.query.local.api.platform import truth as _truth
from eshu_mcp.query.local.api.platform.errors import STATUS_TEXT, ApiError, status_text, unsupported
from eshu_mcp.query.local.api.platform.fields import (
    JsonBody,
    body_object,
    bool_param,
    go_type_name,
    int_param,
    limit_offset,
    next_offset,
    page,
    relative_path,
    str_list_param,
    str_param,
    strict_query_int,
)
from eshu_mcp.query.local.api.platform.keeper_view import KeeperView
from eshu_mcp.query.local.api.platform.work_trees import WORK_TREES

__all__ = [
    "ROUTES",
    "STATUS_TEXT",
    "Answer",
    "ApiContext",
    "ApiError",
    "JsonBody",
    "RouteTable",
    "body_object",
    "bool_param",
    "go_type_name",
    "int_param",
    "limit_offset",
    "next_offset",
    "page",
    "relative_path",
    "status_text",
    "str_list_param",
    "str_param",
    "strict_query_int",
    "unsupported",
]

ENVELOPE_MEDIA_TYPE = "application/eshu.envelope+json"

CANONICAL_REPOSITORY_PREFIXES = ("repo://", "repo-", "repository:")


@frozen
class Answer:
    """A handler's result: ``data`` and its truth block (None for status routes)."""

    data: Any
    truth: dict | None = None
    status: int = 200
    # Set for non-JSON answers (``format=text``); ``data`` is then the text to send.
    content_type: str | None = None


@define
class _Scope:
    repository: sqlite3.Row | None = None


@frozen
class ApiContext:
    """Everything a handler may use: the request's parameters and a read-only connection."""

    conn: sqlite3.Connection
    method: str
    path_args: dict[str, str]
    query: dict[str, str]
    body: Any
    envelope: bool
    principal: Any | None = None
    _scope: _Scope = field(factory=_Scope, alias="_scope")
    home_paths: tuple[str, ...] = ()
    """The daemon's own ``--repo`` paths: un-scoped questions read only their repositories."""
    keeper: KeeperView | None = None
    """What the daemon's index keeper knew when the request was answered (freshness)."""

    def home_repositories(self) -> tuple[str, ...] | None:
        """
        Ids of the repositories under ``home_paths`` (a path may name a repository's root or
        a folder inside it), or None when the daemon serves the whole index.
        """
        if not self.home_paths:
            return None
        homes = [WORK_TREES.real_path(path) for path in self.home_paths]
        found = []
        for repo_id, local_path in self.conn.execute(
            "SELECT repo_id, local_path FROM repositories ORDER BY repo_id"
        ):
            root = WORK_TREES.real_path(local_path or "")
            if any(home == root or home.startswith(root + os.sep) for home in homes):
                found.append(repo_id)
        return tuple(found)

    def repository(self, selector: str, *, not_found_status: int) -> sqlite3.Row | None:
        """
        Resolve a repository selector by Eshu's rules (local-backend.md §1.4).

        Empty selector: None (no repository scope). Canonical ids (``repository:``,
        ``repo-``, ``repo://``) are looked up by id; anything else must equal exactly one
        repository's id, name, path, remote URL or slug. No match raises
        ``not_found_status``; several matches raise 400.
        """
        selector = (selector or "").strip()
        if not selector:
            return None
        if selector.startswith(CANONICAL_REPOSITORY_PREFIXES):
            rows = self.conn.execute(
                "SELECT * FROM repositories WHERE repo_id = ?", (selector,)
            ).fetchall()
        else:
            rows = self.conn.execute(
                "SELECT * FROM repositories WHERE repo_id = ?1 OR name = ?1"
                " OR local_path = ?1 OR remote_url = ?1 OR repo_slug = ?1"
                " ORDER BY repo_id",
                (selector,),
            ).fetchall()
            if not rows and selector in self.home_paths:
                # The server's own --repo path (maybe a folder inside the repository).
                rows = [
                    self.conn.execute(
                        "SELECT * FROM repositories WHERE repo_id = ?", (repo_id,)
                    ).fetchone()
                    for repo_id in self.home_repositories() or ()
                ]
        rows = [row for row in rows if _may_read(self.principal, row["repo_id"])]
        if not rows:
            raise ApiError(
                not_found_status,
                f'repository selector "{selector}" did not match any indexed repository'
                + self._indexed_names(),
            )
        if len(rows) > 1:
            ids = ", ".join(row["repo_id"] for row in rows)
            raise ApiError(
                400, f'repository selector "{selector}" matched multiple repositories: {ids}'
            )
        self._scope.repository = rows[0]
        return rows[0]

    def _indexed_names(self, shown: int = 5) -> str:
        """``; indexed: a, b`` naming what the caller may read, for a selector that missed."""
        names = [
            row["name"]
            for row in self.conn.execute("SELECT repo_id, name FROM repositories ORDER BY name")
            if _may_read(self.principal, row["repo_id"])
        ]
        if not names:
            return "; no repository you may read is indexed"
        more = f" and {len(names) - shown} more" if len(names) > shown else ""
        return f"; indexed: {', '.join(names[:shown])}{more}"

    def scope_to(self, repository: sqlite3.Row) -> None:
        """Label this request's truth freshness with ``repository`` (resolved elsewhere)."""
        self._scope.repository = repository

    def freshness(self) -> dict[str, Any]:
        """Freshness of the resolved repository, or of the whole index when unscoped."""
        if self._scope.repository is not None:
            return _truth.repository_freshness(self.conn, self._scope.repository, self.keeper)
        return _truth.index_freshness(self.conn, self.home_repositories(), self.keeper)

    def truth(
        self,
        capability: str,
        *,
        level: str | None = None,
        basis: str = "content_index",
        reason: str = "",
        freshness: dict | None = None,
    ) -> dict[str, Any]:
        """A ``local_lightweight`` truth block with freshness from the index's generations."""
        return _truth.build_truth(
            capability,
            basis=basis,
            level=level,
            reason=reason,
            freshness=freshness if freshness is not None else self.freshness(),
        )


Handler = Callable[[ApiContext], Answer]


def _may_read(principal: Any, repo_id: str) -> bool:
    """Scoped callers see only the repositories their grants name."""
    if principal is None:
        return True
    check = getattr(principal, "may_read_repository", None)
    return bool(check(repo_id)) if check is not None else True


@frozen
class Route:
    """One registered operation."""

    method: str
    pattern: str
    segments: tuple[str, ...]
    handler: Handler
    plain: bool = False
    fallback: bool = False
    # A tighter read budget than the Resource's (Eshu's repository stats: 2 s, then 504).
    deadline: float | None = None

    def match(self, parts: list[str]) -> dict[str, str] | None:
        """The path arguments when ``parts`` fits this route's pattern."""
        if len(parts) != len(self.segments):
            return None
        args: dict[str, str] = {}
        for want, got in zip(self.segments, parts, strict=True):
            if want.startswith("{") and want.endswith("}"):
                if not got:
                    return None
                args[want[1:-1]] = got
            elif want != got:
                return None
        return args

    @property
    def literal_count(self) -> int:
        return sum(1 for s in self.segments if not s.startswith("{"))


@frozen
class RouteMatch:
    """The outcome of looking a path up: a route, or the methods the path allows."""

    route: Route | None
    path_args: dict[str, str]
    allowed: tuple[str, ...]


class RouteTable:
    """Method + path patterns relative to ``/api/v0`` mapped to handlers."""

    def __init__(self) -> None:
        self._routes: list[Route] = []
        # Routes bucketed by (segment count, first segment or None for a parameter).
        self._shapes: dict[tuple[int, str | None], list[Route]] | None = None

    def route(
        self,
        method: str,
        pattern: str,
        *,
        plain: bool = False,
        fallback: bool = False,
        deadline: float | None = None,
    ):
        """
        Register the decorated handler for ``method`` and ``pattern``.

        ``plain``: always answer plain JSON (status routes). ``fallback``: a generic
        answer (empty page, 501) used only while no specific handler is registered.
        ``deadline``: seconds before the query is interrupted and answered 504.
        """

        def register(handler: Handler) -> Handler:
            self.add(method, pattern, handler, plain=plain, fallback=fallback, deadline=deadline)
            return handler

        return register

    def add(
        self,
        method: str,
        pattern: str,
        handler: Handler,
        *,
        plain: bool = False,
        fallback: bool = False,
        deadline: float | None = None,
    ) -> None:
        """Register ``handler``; a second specific handler for one operation is a bug."""
        method = method.upper()
        if not pattern.startswith("/"):
            raise ValueError(f"route pattern must start with '/': {pattern!r}")
        segments = tuple(pattern.strip("/").split("/"))
        for existing in self._routes:
            same = existing.method == method and existing.segments == segments
            if same and existing.fallback == fallback:
                raise ValueError(f"route registered twice: {method} {pattern}")
        self._routes.append(Route(method, pattern, segments, handler, plain, fallback, deadline))
        self._shapes = None

    def routes(self) -> list[Route]:
        """Every registered route (specific and fallback)."""
        return list(self._routes)

    def find(self, method: str, pattern: str) -> Route | None:
        """The route that answers ``method pattern`` (specific before fallback)."""
        segments = tuple(pattern.strip("/").split("/"))
        found = [r for r in self._routes if r.method == method.upper() and r.segments == segments]
        found.sort(key=lambda r: r.fallback)
        return found[0] if found else None

    def resolve(self, method: str, parts: list[str]) -> RouteMatch:
        """Match decoded path segments; literal segments beat parameters."""
        candidates: list[tuple[Route, dict[str, str]]] = []
        for route in self._candidates(parts):
            args = route.match(parts)
            if args is not None:
                candidates.append((route, args))
        if not candidates:
            return RouteMatch(None, {}, ())
        best = max(r.literal_count for r, _ in candidates)
        candidates = [(r, a) for r, a in candidates if r.literal_count == best]
        allowed = tuple(sorted({r.method for r, _ in candidates}))
        chosen = [(r, a) for r, a in candidates if r.method == method.upper()]
        if not chosen:
            return RouteMatch(None, {}, allowed)
        chosen.sort(key=lambda item: item[0].fallback)
        route, args = chosen[0]
        return RouteMatch(route, args, allowed)

    def _candidates(self, parts: list[str]) -> list[Route]:
        if self._shapes is None:
            shapes: dict[tuple[int, str | None], list[Route]] = {}
            for route in self._routes:
                first = route.segments[0]
                key = (len(route.segments), None if first.startswith("{") else first)
                shapes.setdefault(key, []).append(route)
            self._shapes = shapes
        first = parts[0] if parts else ""
        return [
            *self._shapes.get((len(parts), first), ()),
            *self._shapes.get((len(parts), None), ()),
        ]


ROUTES = RouteTable()
