"""
The packaged route map: how the embedded backend answers each of Eshu's 255 operations.

Modes: ``serve-real``, ``serve-real-partial``, ``serve-static-catalog``,
``serve-empty-unavailable`` (200, well-formed empty page, unavailable truth) and
``501-unsupported``. Paths are Eshu's templates, ``/api/v0/...`` (plus ``/health``).
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

from attrs import frozen

API_PREFIX = "/api/v0"

ANSWERED_MODES = frozenset({"serve-real", "serve-real-partial", "serve-static-catalog"})


@frozen
class RouteSpec:
    """One operation of the route map."""

    method: str
    path: str
    mode: str
    capability: str
    truth_basis: str
    note: str
    eshu_capabilities: tuple[str, ...]
    empty_data_template: Any

    @property
    def plain(self) -> bool:
        """Status routes answer plain JSON whatever the Accept header says."""
        return self.capability == "(plain JSON)"

    @property
    def relative_path(self) -> str | None:
        """The template below ``/api/v0`` (None for routes outside the API mount)."""
        if not self.path.startswith(API_PREFIX + "/"):
            return None
        return self.path[len(API_PREFIX) :]

    @property
    def capability_id(self) -> str:
        """The capability id to label answers with, when one is statically known."""
        for candidate in (self.capability, *self.eshu_capabilities):
            if candidate and not any(c in candidate for c in "*|( ") and candidate != "-":
                return candidate
        return ""


@cache
def load_route_map() -> tuple[RouteSpec, ...]:
    """Every operation in the packaged ``route_map.json``."""
    text = files(__package__).joinpath("route_map.json").read_text(encoding="utf-8")
    return tuple(
        RouteSpec(
            method=row["method"],
            path=row["path"],
            mode=row["mode"],
            capability=row.get("capability", ""),
            truth_basis=row.get("truth_basis", ""),
            note=row.get("note", ""),
            eshu_capabilities=tuple(row.get("eshu_capabilities") or ()),
            empty_data_template=row.get("empty_data_template"),
        )
        for row in json.loads(text)["routes"]
    )


@cache
def route_modes() -> dict[tuple[str, str], str]:
    """``(METHOD, path template)`` -> mode."""
    return {(spec.method, spec.path): spec.mode for spec in load_route_map()}


@cache
def load_openapi() -> dict[str, Any]:
    """The packaged OpenAPI skeleton of the code routes, keyed ``"METHOD /api/v0/..."``."""
    text = files(__package__).joinpath("openapi_code_routes.json").read_text(encoding="utf-8")
    return json.loads(text)
