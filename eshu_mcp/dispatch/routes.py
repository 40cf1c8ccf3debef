"""
Route resolution: which ``/api/v0`` request a tool call becomes.

Every tool's request is described by the ``route`` record of the packaged tool
contract (method, path template, query and body sources, defaults, fields omitted
when absent, path fallbacks, errors, normalisation). Each record is compiled once,
on first use, into a :class:`_RouteSpec` of small reader functions, so a call only
runs the readers. Code exists here only for the rules the contract describes in
prose: call chains, content-search scope, the closed ``source_tool`` vocabulary,
cross-repository flags and ``max_depth`` parsing.
"""

import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from attrs import frozen

from eshu_mcp.catalog.contract import load_contract
from eshu_mcp.dispatch import args as a
from eshu_mcp.dispatch.args import Args

__all__ = ["Route", "RouteError", "resolve_route"]


@frozen
class Route:
    """One internal HTTP request: ``body`` is the JSON value sent, or None for no body."""

    method: str
    path: str
    query: dict[str, str]
    body: Any


class RouteError(Exception):
    """Dispatch refused a call; ``str()`` is the contract's exact error text."""


_OMIT = object()  # a reader's answer for "leave this field out"
_MISSING = object()  # no default listed for a field

Reader = Callable[[Args, str], Any]  # (args, variant value) -> value or _OMIT
Check = Callable[[Args], None]

# Arguments whose helper is not the one their schema type implies (contract README).
_RAW_ARGS = frozenset({"handles", "subject", "source_response", "source_truth"})
_OBJECT_SLICE_ARGS = frozenset({"changes"})
_STRING_VALUES_ARGS = frozenset({"consumer_repo_ids", "missing_evidence"})
# Booleans sent only as "true", never as "false" (the record's notes say so).
_TRUE_ONLY_FLAGS = frozenset({("list_repository_files", "recursive")})
# Tools whose plain cross_repo flag is also set by scope="cross_repo" (notes).
_SCOPE_SETS_CROSS_REPO = frozenset({"get_code_relationship_story"})
# Arguments checked against their schema enum after trimming and lower-casing.
_CLOSED_VOCABULARIES = {"list_relationship_edges": "source_tool"}

_TRIMMED = re.compile(r"whitespace trimmed from (\w+) for (\w+)")
_KIND_STRIPPED = re.compile(r"any '<kind>:' prefix stripped from (\w+) for path")
_WORKLOAD_ID_SENT = re.compile(r"'workload:'-prefixed (\w+) is additionally sent as query\.(\w+)")
_CONTENT_SCOPE = "repo_ids: a single-element list is sent as body.repo_id instead of body.repo_ids"
# Descriptions of rules the derived_from sources already carry.
_DESCRIBED = re.compile(r"\w+='[^']*' changes body\.\w+(, body\.\w+)*")
_WHEN_MISSING = re.compile(r"(\w+) missing")
_WHEN_NONE_OF = re.compile(r"none of ([\w/]+) given")
_NO_ARGUMENTS = "called with no arguments"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@frozen
class _Rules:
    """What a route record says about its arguments, gathered for the field readers."""

    tool: str
    props: Mapping[str, Any]
    defaults: Mapping[str, Any]
    omitted: frozenset[str]
    trimmed: frozenset[str]
    kind_stripped: frozenset[str]
    workload_ids: tuple[tuple[str, str], ...]
    content_scope: bool
    forced_cross_repo: Mapping[str, bool]
    call_chain_errors: tuple[str, str]

    def arg_type(self, arg: str, field: str) -> str:
        """The schema type of an argument; for unadvertised ones, the type of its default."""
        declared = self.props.get(arg, {}).get("type")
        if declared:
            return declared
        default = self.defaults.get(field)
        return {bool: "boolean", str: "string"}.get(type(default), "array")

    def text(self, args: Args, arg: str) -> str:
        """A string argument, trimmed when the record says so."""
        value = a.string_arg(args, arg)
        return value.strip() if arg in self.trimmed else value


def _rules(tool: dict, route: dict, variant_arg: str) -> _Rules:
    """Read a record's normalisation notes and variant defaults into :class:`_Rules`."""
    trimmed, stripped, workload_ids, content_scope = set(), set(), [], False
    for rule in route.get("normalisation", ()):
        if match := _TRIMMED.fullmatch(rule):
            trimmed.add(match[1])
        elif match := _KIND_STRIPPED.fullmatch(rule):
            stripped.add(match[1])
        elif match := _WORKLOAD_ID_SENT.fullmatch(rule):
            workload_ids.append((match[1], match[2]))
        elif rule == _CONTENT_SCOPE:
            content_scope = True
        elif not _DESCRIBED.fullmatch(rule):
            raise ValueError(f"{tool['name']}: unknown normalisation {rule!r}")
    for fallback in route.get("fallback_args", ()):
        if fallback["used_when_absent"] in trimmed:
            trimmed.add(fallback["arg"])  # a fallback selector is read like its primary
    by_variant = route.get("defaults_by_query_type", {}) if variant_arg else {}
    rejected, errors = route.get("rejected_values", ()), route.get("errors", ())
    call_chain_errors = (rejected[0]["error"], errors[0]["error"]) if rejected else ("", "")
    return _Rules(
        tool=tool["name"],
        props=tool["input_schema"].get("properties", {}),
        defaults=route.get("defaults", {}),
        omitted=frozenset(route.get("omitted_when_absent", {})),
        trimmed=frozenset(trimmed),
        kind_stripped=frozenset(stripped),
        workload_ids=tuple(workload_ids),
        content_scope=content_scope,
        forced_cross_repo=by_variant.get("cross_repo", {}),
        call_chain_errors=call_chain_errors,
    )


def _text_reader(field: str, arg: str, rules: _Rules) -> Reader:
    """A string: the argument, else a non-empty default, else omitted or ``""``."""
    default = rules.defaults.get(field, "")
    fallback = default if default else (_OMIT if field in rules.omitted else "")

    def read(args: Args, _variant: str) -> Any:
        return rules.text(args, arg) or fallback

    return read


def _query_reader(field: str, arg: str, rules: _Rules) -> Reader:
    kind = rules.arg_type(arg, field)
    default = rules.defaults.get(field, _MISSING)
    omitted = field in rules.omitted
    if kind == "string":
        return _text_reader(field, arg, rules)
    if kind in ("integer", "number"):
        if default in (_MISSING, ""):
            return lambda args, _v: (
                a.optional_int_string(args, arg) or ("" if not omitted else _OMIT)
            )
        return lambda args, _v: a.int_string(args, arg, int(default))
    if kind == "boolean":
        if (rules.tool, field) in _TRUE_ONLY_FLAGS:
            return lambda args, _v: "true" if a.bool_or(args, arg, False) else _OMIT
        if omitted or default is _MISSING:
            return lambda args, _v: a.bool_str(args, arg) or _OMIT
        return lambda args, _v: "true" if a.bool_or(args, arg, default == "true") else "false"
    raise ValueError(f"{rules.tool}: no query helper for {kind} argument {arg}")


def _body_reader(field: str, arg: str, rules: _Rules) -> Reader:
    kind = rules.arg_type(arg, field)
    default = rules.defaults.get(field, _MISSING)
    omitted = field in rules.omitted
    if arg in _RAW_ARGS:
        return lambda args, _v: args.get(arg)
    if kind == "string":
        return _text_reader(field, arg, rules)
    if kind == "integer":
        if omitted:
            return lambda args, _v: a.int_or(args, arg, 0) if arg in args else _OMIT
        fallback = 0 if default is _MISSING else default
        return lambda args, _v: a.int_or(args, arg, fallback)
    if kind == "number":
        absent = _OMIT if omitted or default is _MISSING else default

        def read_number(args: Args, _variant: str) -> Any:
            value, present = a.optional_float(args, arg)
            return value if present else absent

        return read_number
    if kind == "boolean":
        return lambda args, _v: a.bool_or(args, arg, bool(default is True))
    if kind == "object":
        return lambda args, _v: a.map_string_any(args, arg)
    if kind == "array":
        if rules.content_scope and field == "repo_ids":
            return lambda args, _v: _or_omit(a.content_search_scope(args)[1])
        if arg in _STRING_VALUES_ARGS:
            return lambda args, _v: a.string_values(args, arg)
        helper = a.object_slice if arg in _OBJECT_SLICE_ARGS else a.string_slice
        if omitted:
            return lambda args, _v: _or_omit(helper(args, arg))
        return lambda args, _v: helper(args, arg)
    raise ValueError(f"{rules.tool}: no body helper for {kind} argument {arg}")


def _or_omit(value: Any) -> Any:
    return _OMIT if value is None else value


def _first_of_reader(field: str, names: list[str], rules: _Rules) -> Reader:
    """``{"args": [...]}``: the first argument holding a non-empty string wins."""
    trimmed = any(name in rules.trimmed for name in names)
    default = rules.defaults.get(field, _MISSING)
    absent = default if default is not _MISSING else (_OMIT if field in rules.omitted else "")
    return lambda args, _v: a.first_non_empty(args, names, trimmed) or absent


def _derived_reader(field: str, source: dict, rules: _Rules) -> Reader:
    """Sources the contract marks ``derived_from``: one rule each, named by the README."""
    derived = tuple(source["derived_from"])
    if derived == ("scope",):
        forced = rules.forced_cross_repo
        return lambda args, variant: a.cross_repo_requested(args, forced.get(variant, False))
    if derived == ("context",):
        fallback = rules.defaults.get(field, 5)
        return lambda args, _v: a.parse_max_depth(args, fallback)
    if derived == ("target",) and field in ("start", "end"):
        half = 0 if field == "start" else 1
        return lambda args, _v: _call_chain_ends(args, rules.call_chain_errors)[half]
    if derived == ("types",):
        names = source.get("args", [])

        def read_type(args: Args, _variant: str) -> Any:
            value = a.first_non_empty(args, names) or a.first_string(a.string_slice(args, "types"))
            return value or (_OMIT if field in rules.omitted else "")

        return read_type
    if derived == ("repo_ids",):
        return lambda args, _v: _or_omit(a.content_search_scope(args)[0])
    raise ValueError(f"{rules.tool}: no rule derives {field} from {derived}")


def _field_reader(kind: str, field: str, source: Any, rules: _Rules, variant_arg: str) -> Reader:
    if isinstance(source, str):
        if kind == "body" and field == "cross_repo" and rules.tool in _SCOPE_SETS_CROSS_REPO:
            return lambda args, _v: a.cross_repo_requested(args)
        vocabulary = _CLOSED_VOCABULARIES.get(rules.tool)
        if vocabulary == source:
            return _vocabulary_reader(field, source, rules)
        build = _query_reader if kind == "query" else _body_reader
        return build(field, source, rules)
    if "const" in source:
        constant = source["const"]
        return lambda _args, _v: constant
    by_variant = source.get(f"const_by_{variant_arg}")
    if by_variant is not None:
        return lambda _args, variant: by_variant[variant]
    if "derived_from" in source:
        return _derived_reader(field, source, rules)
    if "args" in source:
        return _first_of_reader(field, source["args"], rules)
    raise ValueError(f"{rules.tool}: unknown source for {field}: {source!r}")


def _vocabulary_reader(field: str, arg: str, rules: _Rules) -> Reader:
    """A closed vocabulary: trimmed and lower-cased, then checked against the schema enum."""
    accepted = frozenset(rules.props[arg]["enum"])

    def read(args: Args, _variant: str) -> Any:
        value = a.string_arg(args, arg).strip().lower()
        if not value:
            return _OMIT
        if value not in accepted:
            raise RouteError(
                f'unknown {arg} "{value}": must be one of the canonical vocabulary values'
            )
        return value

    return read


def _call_chain_ends(args: Args, texts: tuple[str, str]) -> tuple[str, str]:
    """The ``start`` and ``end`` of a call chain, or one of the contract's two errors."""
    start = end = ""
    target = a.string_arg(args, "target").strip()
    if target:
        halves = a.split_call_chain_target(target)
        if halves is None:
            raise RouteError(texts[0])
        start, end = halves
    if not (start or a.string_arg(args, "start_entity_id")) or not (
        end or a.string_arg(args, "end_entity_id")
    ):
        raise RouteError(texts[1])
    return start, end


def _call_chain_check(texts: tuple[str, str]) -> Check:
    """A call chain's errors are checked before anything else is read."""

    def check(args: Args) -> None:
        _call_chain_ends(args, texts)

    return check


def _checks(route: dict, rules: _Rules) -> tuple[Check, ...]:
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


def _required(names: tuple[str, ...], error: str, rules: _Rules) -> Check:
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
    rules: _Rules

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
        if value is not _OMIT:
            fields[name] = value
    return fields


def _readers(kind: str, fields: dict, rules: _Rules, variant_arg: str) -> tuple:
    return tuple(
        (name, _field_reader(kind, name, source, rules, variant_arg))
        for name, source in fields.items()
    )


def _compile(tool: dict, route: dict, variant_arg: str = "") -> _RouteSpec:
    rules = _rules(tool, route, variant_arg)
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
    return _RouteSpec(
        method=route["method"],
        template=route["path_template"],
        path_params=params,
        query=_readers("query", route.get("query_params", {}), rules, variant_arg),
        body=None if body_fields is None else _readers("body", body_fields, rules, variant_arg),
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
