"""
Per-field readers of a route record: how each query or body field is read from arguments.

A route record's ``query_params`` and ``body_fields`` map each field to a source
(an argument, a constant, a list of arguments, or a ``derived_from`` rule). Each
source is compiled here, once, into a small reader; :mod:`eshu_mcp.dispatch.routes`
runs them. Code exists only for the rules the contract describes in prose: call
chains, content-search scope, the closed ``source_tool`` vocabulary, cross-repository
flags and ``max_depth`` parsing.
"""

import re
from collections.abc import Callable, Mapping
from typing import Any

from attrs import frozen

from eshu_mcp.dispatch import args as a
from eshu_mcp.dispatch.args import Args

__all__ = [
    "OMIT",
    "Reader",
    "RouteError",
    "Rules",
    "call_chain_ends",
    "field_readers",
    "rules_for",
]


class RouteError(Exception):
    """
    Dispatch refused a call; ``str()`` is the contract's exact error text, ``hint`` (may be
    empty) what the client should change, shown on the line after it.
    """

    def __init__(self, text: str, hint: str = "") -> None:
        super().__init__(text)
        self.hint = hint


OMIT = object()  # a reader's answer for "leave this field out"
_MISSING = object()  # no default listed for a field

Reader = Callable[[Args, str], Any]  # (args, variant value) -> value or OMIT


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


@frozen
class Rules:
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


def rules_for(tool: dict, route: dict, variant_arg: str) -> Rules:
    """Read a record's normalisation notes and variant defaults into :class:`Rules`."""
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
    return Rules(
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


def _text_reader(field: str, arg: str, rules: Rules) -> Reader:
    """A string: the argument, else a non-empty default, else omitted or ``""``."""
    default = rules.defaults.get(field, "")
    fallback = default if default else (OMIT if field in rules.omitted else "")

    def read(args: Args, _variant: str) -> Any:
        return rules.text(args, arg) or fallback

    return read


def _query_reader(field: str, arg: str, rules: Rules) -> Reader:
    kind = rules.arg_type(arg, field)
    default = rules.defaults.get(field, _MISSING)
    omitted = field in rules.omitted
    if kind == "string":
        return _text_reader(field, arg, rules)
    if kind in ("integer", "number"):
        if default in (_MISSING, ""):
            return lambda args, _v: (
                a.optional_int_string(args, arg) or ("" if not omitted else OMIT)
            )
        return lambda args, _v: a.int_string(args, arg, int(default))
    if kind == "boolean":
        if (rules.tool, field) in _TRUE_ONLY_FLAGS:
            return lambda args, _v: "true" if a.bool_or(args, arg, False) else OMIT
        if omitted or default is _MISSING:
            return lambda args, _v: a.bool_str(args, arg) or OMIT
        return lambda args, _v: "true" if a.bool_or(args, arg, default == "true") else "false"
    raise ValueError(f"{rules.tool}: no query helper for {kind} argument {arg}")


def _body_reader(field: str, arg: str, rules: Rules) -> Reader:
    kind = rules.arg_type(arg, field)
    default = rules.defaults.get(field, _MISSING)
    omitted = field in rules.omitted
    if arg in _RAW_ARGS:
        return lambda args, _v: args.get(arg)
    if kind == "string":
        return _text_reader(field, arg, rules)
    if kind == "integer":
        if omitted:
            return lambda args, _v: a.int_or(args, arg, 0) if arg in args else OMIT
        fallback = 0 if default is _MISSING else default
        return lambda args, _v: a.int_or(args, arg, fallback)
    if kind == "number":
        absent = OMIT if omitted or default is _MISSING else default

        def read_number(args: Args, _variant: str) -> Any:
            value, present = a.optional_float(args, arg)
            return value if present else absent

        return read_number
    if kind == "boolean":
        if omitted:
            return lambda args, _v: a.bool_or(args, arg, False) if arg in args else OMIT
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
    return OMIT if value is None else value


def _first_of_reader(field: str, names: list[str], rules: Rules) -> Reader:
    """``{"args": [...]}``: the first argument holding a non-empty string wins."""
    trimmed = any(name in rules.trimmed for name in names)
    default = rules.defaults.get(field, _MISSING)
    absent = default if default is not _MISSING else (OMIT if field in rules.omitted else "")
    return lambda args, _v: a.first_non_empty(args, names, trimmed) or absent


def _derived_reader(field: str, source: dict, rules: Rules) -> Reader:
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
        return lambda args, _v: call_chain_ends(args, rules.call_chain_errors)[half]
    if derived == ("types",):
        names = source.get("args", [])

        def read_type(args: Args, _variant: str) -> Any:
            value = a.first_non_empty(args, names) or a.first_string(a.string_slice(args, "types"))
            return value or (OMIT if field in rules.omitted else "")

        return read_type
    if derived == ("repo_ids",):
        return lambda args, _v: _or_omit(a.content_search_scope(args)[0])
    raise ValueError(f"{rules.tool}: no rule derives {field} from {derived}")


def _field_reader(kind: str, field: str, source: Any, rules: Rules, variant_arg: str) -> Reader:
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


def _vocabulary_reader(field: str, arg: str, rules: Rules) -> Reader:
    """A closed vocabulary: trimmed and lower-cased, then checked against the schema enum."""
    accepted = frozenset(rules.props[arg]["enum"])

    def read(args: Args, _variant: str) -> Any:
        value = a.string_arg(args, arg).strip().lower()
        if not value:
            return OMIT
        if value not in accepted:
            raise RouteError(
                f'unknown {arg} "{value}": must be one of the canonical vocabulary values'
            )
        return value

    return read


def call_chain_ends(args: Args, texts: tuple[str, str]) -> tuple[str, str]:
    """The ``start`` and ``end`` of a call chain, or one of the contract's two errors."""
    start = end = ""
    target = a.string_arg(args, "target").strip()
    if target:
        halves = a.split_call_chain_target(target)
        if halves is None:
            raise RouteError(texts[0], _ids_hint(args, target))
        start, end = halves
    if not (start or a.string_arg(args, "start_entity_id")) or not (
        end or a.string_arg(args, "end_entity_id")
    ):
        raise RouteError(texts[1])
    return start, end


def _ids_hint(args: Args, target: str) -> str:
    """
    Why a target without ``->`` beside ``start_entity_id``/``end_entity_id`` still fails:
    the ids name definitions by id and stand in for the target only without one, so a name
    given as ``end_entity_id`` is no end; ``''`` when neither id is given.
    """
    given = {key: a.string_arg(args, key).strip() for key in ("start_entity_id", "end_entity_id")}
    if not any(given.values()):
        return ""
    hint = (
        f"{target!r} has no '->'; start_entity_id and end_entity_id take entity ids"
        " (content-entity:e_..., as find_symbol gives them), with target left empty"
    )
    end = given["end_entity_id"]
    if end and not end.removeprefix("entity:").startswith("content-entity:"):
        return hint + f"; to name both ends write target='{target}->{end}'"
    return hint + f"; or write target='{target}->END' with the end's name"


def field_readers(
    kind: str, fields: dict, rules: Rules, variant_arg: str
) -> tuple[tuple[str, Reader], ...]:
    """The ``(field, reader)`` pairs of a record's ``query_params`` or ``body_fields``."""
    return tuple(
        (name, _field_reader(kind, name, source, rules, variant_arg))
        for name, source in fields.items()
    )
