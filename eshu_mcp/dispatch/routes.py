"""
Route resolution: which ``/api/v0`` request a tool call becomes.

Every tool's request is described by the ``route`` record of the packaged tool
contract (method, path template, query and body sources, defaults, fields omitted
when absent, path fallbacks, errors, normalisation). Each record is compiled once,
on first use, into a :class:`_RouteSpec`: the required-argument checks, the path
parameters and the field readers of :mod:`eshu_mcp.dispatch.route_fields`, so a
call only runs them.
"""

import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from attrs import frozen

from eshu_mcp.catalog.contract import load_contract
from eshu_mcp.dispatch import args as a
from eshu_mcp.dispatch.args import Args
from eshu_mcp.dispatch.route_fields import (
    OMIT,
    Reader,
    RouteError,
    Rules,
    call_chain_ends,
    field_readers,
    rules_for,
)

__all__ = ["Route", "RouteError", "resolve_route"]


@frozen
class Route:
    """One internal HTTP request: ``body`` is the JSON value sent, or None for no body."""

    method: str
    path: str
    query: dict[str, str]
    body: Any


Check = Callable[[Args], None]

_WHEN_MISSING = re.compile(r"(\w+) missing")
_WHEN_NONE_OF = re.compile(r"none of ([\w/]+) given")
_NO_ARGUMENTS = "called with no arguments"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _call_chain_check(texts: tuple[str, str]) -> Check:
    """A call chain's errors are checked before anything else is read."""

    def check(args: Args) -> None:
        call_chain_ends(args, texts)

    return check


def _checks(route: dict, rules: Rules) -> tuple[Check, ...]:
    """The required-argument checks listed in ``errors``, in the contract's order."""
    body = route.get("body_fields") or {}
    if any(isinstance(s, dict) and s.get("derived_from") == ["target"] for s in body.values()):
        return (_call_chain_check(rules.call_chain_errors),)
    checks, seen = [], set()
    for entry in route.get("errors", ()):
        when = entry["when"]
        if when == _NO_ARGUMENTS:
            continue
        match = _WHEN_MISSING.fullmatch(when) or _WHEN_NONE_OF.fullmatch(when)
        if match is None:
            raise ValueError(f"{rules.tool}: unknown error condition {when!r}")
        names = tuple(match[1].split("/"))
        if names not in seen:
            seen.add(names)
            checks.append(_required(names, entry["error"], rules))
    return tuple(checks)


def _required(names: tuple[str, ...], error: str, rules: Rules) -> Check:
    """At least one of ``names`` must be given: a non-blank string or a number above 0."""

    def given(args: Args, name: str) -> bool:
        if rules.props.get(name, {}).get("type") in ("integer", "number"):
            return a.int_or(args, name, 0) > 0
        return bool(rules.text(args, name))

    def check(args: Args) -> None:
        if not any(given(args, name) for name in names):
            raise RouteError(error)

    return check


@frozen
class _PathParam:
    """One ``{placeholder}`` of a path template and where its value comes from."""

    placeholder: str
    arg: str
    fallback: str | None
    default: str
    absent: Mapping[str, Any]


@frozen
class _RouteSpec:
    """A compiled route record: everything needed to turn arguments into a Route."""

    method: str
    template: str
    path_params: tuple[_PathParam, ...]
    query: tuple[tuple[str, Reader], ...]
    body: tuple[tuple[str, Reader], ...] | None
    checks: tuple[Check, ...]
    passthrough: bool
    rules: Rules

    def resolve(self, args: Args, variant: str = "") -> Route:
        for check in self.checks:
            check(args)
        method, path, selectors = self._path(args)
        query = _collect(self.query, args, variant)
        for arg, name in self.rules.workload_ids:
            identifier = a.canonical_workload_identifier(selectors.get(arg, ""))
            if identifier:
                query[name] = identifier
        if self.passthrough:
            body = dict(args)
        elif self.body is None:
            body = None
        else:
            body = _collect(self.body, args, variant)
        return Route(method=method, path=path, query=query, body=a.go_json_value(body))

    def _path(self, args: Args) -> tuple[str, str, dict[str, str]]:
        path, selectors = self.template, {}
        for param in self.path_params:
            value = self.rules.text(args, param.arg)
            if not value and param.fallback:
                value = self.rules.text(args, param.fallback)
            value = value or param.default
            selectors[param.arg] = value
            if param.arg in self.rules.kind_stripped:
                value = a.normalize_qualified_identifier(value)
            if not value and "error" in param.absent:
                raise RouteError(param.absent["error"])
            if not value and "path" in param.absent:
                return param.absent["method"], _fill(param.absent["path"], args), selectors
            path = path.replace(f"{{{param.placeholder}}}", a.escape_path_segment(value))
        return self.method, path, selectors


def _fill(template: str, args: Args) -> str:
    """An alternative path template whose placeholders are argument names."""
    return _PLACEHOLDER.sub(lambda m: a.escape_path_segment(a.string_arg(args, m[1])), template)


def _collect(readers: tuple[tuple[str, Reader], ...], args: Args, variant: str) -> dict:
    fields = {}
    for name, read in readers:
        value = read(args, variant)
        if value is not OMIT:
            fields[name] = value
    return fields


def _compile(tool: dict, route: dict, variant_arg: str = "") -> _RouteSpec:
    rules = rules_for(tool, route, variant_arg)
    fallbacks = {f["used_when_absent"]: f["arg"] for f in route.get("fallback_args", ())}
    absent = route.get("path_arg_absent", {})
    defaults = route.get("path_param_defaults", {})
    params = tuple(
        _PathParam(
            placeholder=placeholder,
            arg=arg,
            fallback=fallbacks.get(arg),
            default=defaults.get(placeholder, ""),
            absent=absent.get(arg, {}),
        )
        for placeholder, arg in route.get("path_params", {}).items()
    )
    body_fields = route.get("body_fields")
    body = None if body_fields is None else field_readers("body", body_fields, rules, variant_arg)
    return _RouteSpec(
        method=route["method"],
        template=route["path_template"],
        path_params=params,
        query=field_readers("query", route.get("query_params", {}), rules, variant_arg),
        body=body,
        checks=_checks(route, rules),
        passthrough=bool(route.get("body_passthrough")),
        rules=rules,
    )


@frozen
class _VariantRoutes:
    """A tool whose route depends on one argument's value (``analyze_code_relationships``)."""

    arg: str
    by_value: Mapping[str, _RouteSpec]
    unlisted: _RouteSpec

    def resolve(self, args: Args) -> Route:
        value = a.string_arg(args, self.arg)
        return self.by_value.get(value, self.unlisted).resolve(args, value)


def _compile_variants(tool: dict) -> _VariantRoutes:
    route = tool["route"]
    arg = route["variant_arg"]
    by_value, specs = {}, []
    for variant in route["route_variants"]:
        spec = _compile(tool, variant, arg)
        specs.append(spec)
        for value in variant["when"][arg]:
            by_value[value] = spec
    other = route["unlisted_value_route"]
    (unlisted,) = [
        s for s in specs if (s.method, s.template) == (other["method"], other["path_template"])
    ]
    return _VariantRoutes(arg=arg, by_value=by_value, unlisted=unlisted)


@cache
def _resolvers() -> dict[str, _RouteSpec | _VariantRoutes]:
    """Every tool's compiled route, built once from the packaged contract."""
    resolvers: dict[str, _RouteSpec | _VariantRoutes] = {}
    for tool in load_contract():
        if "route_variants" in tool["route"]:
            resolvers[tool["name"]] = _compile_variants(tool)
        else:
            resolvers[tool["name"]] = _compile(tool, tool["route"])
    return resolvers


def resolve_route(tool_name: str, args: Mapping[str, Any] | None) -> Route:
    """
    The HTTP request a call of ``tool_name`` with ``args`` becomes.

    Arguments of the wrong JSON type never raise; they behave as the contract's
    helpers say. Raises :class:`RouteError` for an unknown tool or a call the
    contract refuses (missing selector, malformed call chain, unknown vocabulary).
    """
    resolver = _resolvers().get(tool_name) if isinstance(tool_name, str) else None
    if resolver is None:
        raise RouteError(f"unknown tool: {tool_name}")
    return resolver.resolve(args if isinstance(args, Mapping) else {})
