"""
The embedded ``/api/v0`` framework: request context, answers, errors and the route table.

Handlers are plain synchronous functions ``handler(ctx) -> Answer`` registered with
``@ROUTES.route(method, pattern)``. They run on a reader thread pool with their own
SQLite connection and never touch HTTP; :mod:`.resource` renders what they return with
Eshu's envelope/plain rules (local-backend.md §1.1, §1.3).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from attrs import define, field, frozen

from eshu_mcp.query.local.api import truth as _truth

ENVELOPE_MEDIA_TYPE = "application/eshu.envelope+json"

CANONICAL_REPOSITORY_PREFIXES = ("repo://", "repo-", "repository:")

# Go's net/http StatusText for the statuses the API emits.
STATUS_TEXT = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Request Entity Too Large",
    422: "Unprocessable Entity",
    500: "Internal Server Error",
    501: "Not Implemented",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def status_text(status: int) -> str:
    """The HTTP reason phrase Go writes in plain error bodies."""
    return STATUS_TEXT.get(status, "Error")


class ApiError(Exception):
    """
    An error answer.

    Without ``code`` it is Eshu's plain ``{"error", "detail"}`` body whatever the Accept
    header says. With ``code`` it is a contract error: the envelope ``{"data": null,
    "truth", "error": {code, message, capability?, profiles?, details?}}`` when the
    envelope is accepted, else the plain body (or ``plain`` when given, for the
    semantic-search and ambiguity shapes whose plain form differs).
    """

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        code: str | None = None,
        capability: str = "",
        details: dict | None = None,
        truth: dict | None = None,
        profiles: dict | None = None,
        plain: dict | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.code = code
        self.capability = capability
        self.details = details
        self.truth = truth
        self.profiles = profiles
        self.plain = plain

    def plain_body(self) -> dict[str, Any]:
        """The body sent when the envelope is not accepted (or the error is plain)."""
        if self.plain is not None:
            return self.plain
        return {"error": status_text(self.status), "detail": self.detail}

    def envelope_body(self) -> dict[str, Any]:
        """The canonical envelope for a contract error."""
        error: dict[str, Any] = {"code": self.code, "message": self.detail}
        if self.capability:
            error["capability"] = self.capability
        if self.profiles:
            error["profiles"] = self.profiles
        if self.details:
            error["details"] = self.details
        return {"data": None, "truth": self.truth, "error": error}

    def body(self, envelope: bool) -> dict[str, Any]:
        """The wire body for a request that did or did not accept the envelope."""
        if self.code is not None and envelope:
            return self.envelope_body()
        return self.plain_body()


def unsupported(message: str, capability: str, *, required: str = "local_authoritative"):
    """Eshu's 501 ``unsupported_capability`` contract error."""
    return ApiError(
        501,
        message,
        code="unsupported_capability",
        capability=capability,
        profiles={"current": _truth.PROFILE, "required": required},
    )


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
        rows = [row for row in rows if _may_read(self.principal, row["repo_id"])]
        if not rows:
            raise ApiError(
                not_found_status,
                f'repository selector "{selector}" did not match any indexed repository',
            )
        if len(rows) > 1:
            ids = ", ".join(row["repo_id"] for row in rows)
            raise ApiError(
                400, f'repository selector "{selector}" matched multiple repositories: {ids}'
            )
        self._scope.repository = rows[0]
        return rows[0]

    def scope_to(self, repository: sqlite3.Row) -> None:
        """Label this request's truth freshness with ``repository`` (resolved elsewhere)."""
        self._scope.repository = repository

    def freshness(self) -> dict[str, Any]:
        """Freshness of the resolved repository, or of the whole index when unscoped."""
        if self._scope.repository is not None:
            return _truth.repository_freshness(self.conn, self._scope.repository)
        return _truth.index_freshness(self.conn)

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

    def route(self, method: str, pattern: str, *, plain: bool = False, fallback: bool = False):
        """
        Register the decorated handler for ``method`` and ``pattern``.

        ``plain``: always answer plain JSON (status routes). ``fallback``: a generic
        answer (empty page, 501) used only while no specific handler is registered.
        """

        def register(handler: Handler) -> Handler:
            self.add(method, pattern, handler, plain=plain, fallback=fallback)
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
        self._routes.append(Route(method, pattern, segments, handler, plain, fallback))

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
        for route in self._routes:
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


ROUTES = RouteTable()


# ------------------------------------------------------------------ request helpers


class JsonBody(dict):
    """A decoded JSON request body: its fields are typed, unlike query strings."""


def body_object(ctx: ApiContext) -> dict[str, Any]:
    """The POST body as a JSON object (a :class:`JsonBody`), or Go's ``invalid JSON`` 400."""
    body = ctx.body
    if body is None:
        raise ApiError(400, "invalid JSON: EOF")
    if not isinstance(body, dict):
        raise ApiError(
            400,
            f"invalid JSON: json: cannot unmarshal {go_type_name(body)} into Go value"
            " of type request",
        )
    return body if isinstance(body, JsonBody) else JsonBody(body)


def go_type_name(value: Any) -> str:
    """The JSON type word Go's decoder uses in unmarshal errors."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _type_error(name: str, value: Any, go_type: str) -> ApiError:
    return ApiError(
        400,
        f"invalid JSON: json: cannot unmarshal {go_type_name(value)} into Go struct field"
        f" .{name} of type {go_type}",
    )


def int_param(source: dict[str, Any], name: str, default: int) -> int:
    """
    An integer from a JSON body (wrong type -> 400) or a query dict (non-integer text
    silently falls back to ``default``, as Eshu's ``QueryParamInt`` does).
    """
    value = source.get(name)
    if value is None:
        return default
    if isinstance(value, str) and not isinstance(source, JsonBody):
        try:
            return int(value.strip())
        except ValueError:
            return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _type_error(name, value, "int")
    if isinstance(value, float) and not value.is_integer():
        raise _type_error(name, value, "int")
    return int(value)


def str_param(source: dict[str, Any], name: str, default: str = "") -> str:
    """A string field; non-strings in a JSON body are Go's 400."""
    value = source.get(name)
    if value is None:
        return default
    if not isinstance(value, str):
        raise _type_error(name, value, "string")
    return value


def bool_param(source: dict[str, Any], name: str, default: bool = False) -> bool:
    """A boolean from a body (bool) or a query (``true``/``1``/``false``/``0``)."""
    value = source.get(name)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and not isinstance(source, JsonBody):
        text = value.strip().lower()
        if text in ("1", "t", "true", "yes"):
            return True
        if text in ("0", "f", "false", "no"):
            return False
        return default
    raise _type_error(name, value, "bool")


def str_list_param(source: dict[str, Any], name: str) -> list[str]:
    """A list of strings from a body (or a comma-separated query value)."""
    value = source.get(name)
    if value is None:
        return []
    if isinstance(value, str) and not isinstance(source, JsonBody):
        return [item.strip() for item in value.split(",") if item.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _type_error(name, value, "[]string")
    return list(value)


def limit_offset(
    source: dict[str, Any],
    *,
    default: int,
    maximum: int,
    max_offset: int | None = None,
) -> tuple[int, int]:
    """
    Eshu's paging inputs: ``limit`` <= 0 means ``default``, clamped to ``maximum``;
    negative ``offset`` is 0; past ``max_offset`` is 400 ``offset exceeds maximum of N``.
    """
    limit = int_param(source, "limit", default)
    if limit <= 0:
        limit = default
    limit = min(limit, maximum)
    offset = max(int_param(source, "offset", 0), 0)
    if max_offset is not None and offset > max_offset:
        raise ApiError(400, f"offset exceeds maximum of {max_offset}")
    return limit, offset


def page(rows: list, limit: int) -> tuple[list, bool]:
    """The ``limit+1`` probe: drop the extra row and report whether it was there."""
    return rows[:limit], len(rows) > limit


def next_offset(offset: int, count: int, truncated: bool) -> int | None:
    """``offset+count`` when truncated, else None."""
    return offset + count if truncated else None


def relative_path(value: str, *, field: str = "relative_path") -> str:
    """
    A repository-relative path, normalised to forward slashes.

    Absolute paths, ``..`` segments and NUL bytes are refused with 400, so no handler can
    be steered outside an indexed repository whatever a client sends.
    """
    if "\x00" in value:
        raise ApiError(400, f"{field} must not contain NUL bytes")
    text = value.replace("\\", "/").strip()
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise ApiError(400, f"{field} must be relative to the repository root")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ApiError(400, f"{field} must not leave the repository")
    return "/".join(parts)
