"""
A contract test generated from the packaged tool contract, one case per tool.

For every tool it builds calls (no arguments, the required ones, each argument on
top of those in every form its schema type allows, enum values, list and prefixed
forms, and each listed error) and computes the request each should become with a
plain, literal reading of the tool's ``route`` record. The resolver must agree.
"""

import json
from typing import Any
from urllib.parse import quote

import pytest

from eshu_mcp.catalog.contract import load_contract
from eshu_mcp.dispatch.routes import Route, RouteError, resolve_route

TOOLS = load_contract()
SPECIAL_STRINGS = ("workload:x", "svc:y", "a->b", " a -> b ", "cross_repo", "7")
WRONG_TYPES = (None, True, False, -1, 2.5, "x", "", [], [1, "a", None], {"k": 1})
# Contract README: helpers that differ from what the schema type implies.
RAW = {"handles", "subject", "source_response", "source_truth"}
STRING_VALUES = {"consumer_repo_ids", "missing_evidence"}
OBJECT_SLICE = {"changes"}
# The record's notes: "recursive is only sent (as 'true') when true".
TRUE_ONLY = {("list_repository_files", "recursive")}
OMIT = object()


def routes_of(record: dict) -> list[tuple[dict, str]]:
    """(route, query_type) pairs: one per variant value, or the single route."""
    route = record["route"]
    if "route_variants" not in route:
        return [(route, "")]
    arg = route["variant_arg"]
    pairs = [(v, value) for v in route["route_variants"] for value in v["when"][arg]]
    generic = [
        v
        for v in route["route_variants"]
        if v["path_template"] == route["unlisted_value_route"]["path_template"]
    ]
    return [*pairs, (generic[0], "not_a_listed_query_type")]


def arg_schemas(record: dict, route: dict) -> dict[str, dict]:
    """Advertised arguments plus the hidden ones (typed by their default)."""
    schemas = dict(record["input_schema"].get("properties", {}))
    for hidden in route.get("hidden_args", []):
        default = route.get("defaults", {}).get(hidden, "")
        kind = {bool: "boolean", str: "string"}.get(type(default), "array")
        schemas.setdefault(hidden, {"type": kind})
    return schemas


def forms(schema: dict) -> list[Any]:
    """Values to try for one argument, by schema type."""
    kind = schema.get("type")
    if kind == "string":
        return list(schema["enum"]) if "enum" in schema else ["p-value", *SPECIAL_STRINGS]
    if kind == "integer":
        return [7]
    if kind == "number":
        return [0.25, 3.0]
    if kind == "boolean":
        return [True, False]
    if kind == "object":
        return [{"k": "v"}]
    items = schema.get("items", {})
    if items.get("type") == "object":
        return [[{"k": "v"}], []]
    values = items.get("enum", ["a1", "a2"])
    return [list(values[:2]), list(values[:1]), []]


def required_args(record: dict, route: dict, qt: str) -> dict[str, Any]:
    """The smallest argument set the route accepts: required, selectors, checked args."""
    names = list(record["input_schema"].get("required", []))
    for options in route.get("needs_one_of", {}).values():
        names.append(options[0])
    for entry in route.get("errors", []):
        if entry["when"].endswith(" missing"):
            names.append(entry["when"].removesuffix(" missing"))
    schemas = arg_schemas(record, route)
    args = {name: forms(schemas[name])[0] for name in names if name in schemas}
    args = {k: ("p-value" if v in SPECIAL_STRINGS else v) for k, v in args.items()}
    if qt:
        args[route_variant_arg(record)] = qt
    return args


def route_variant_arg(record: dict) -> str:
    return record["route"].get("variant_arg", "")


def expected_error(route: dict, args: dict) -> str | None:
    """The contract error a call should give, if any, in the listed order."""
    if "rejected_values" in route:
        target = args.get("target")
        if isinstance(target, str) and target.strip() and "->" not in target:
            return route["rejected_values"][0]["error"]
        start, end = split_target(args)
        if not (start or args.get("start_entity_id")) or not (end or args.get("end_entity_id")):
            return route["errors"][0]["error"]
        return None
    for entry in route.get("errors", []):
        when = entry["when"]
        if when.endswith(" missing") and when.removesuffix(" missing") not in args:
            return entry["error"]
        if when.startswith("none of "):
            names = when.removeprefix("none of ").removesuffix(" given").split("/")
            if not any(name in args for name in names):
                return entry["error"]
    return None


def split_target(args: dict) -> tuple[str, str]:
    target = args.get("target")
    if not isinstance(target, str) or "->" not in target:
        return "", ""
    start, end = target.split("->", 1)
    return start.strip(), end.strip()


def strip_kind(value: str) -> str:
    head, _, tail = value.partition(":")
    return tail if head and tail else value


def expected_path(record: dict, route: dict, args: dict) -> tuple[str, str, dict[str, str]]:
    method, path, extra = route["method"], route["path_template"], {}
    norms = route.get("normalisation", [])
    fallbacks = {f["used_when_absent"]: f["arg"] for f in route.get("fallback_args", [])}
    for placeholder, arg in route["path_params"].items():
        value = args.get(arg, args.get(fallbacks.get(arg, "-")))
        if value is None:
            value = route.get("path_param_defaults", {}).get(placeholder)
        if value is None:
            absent = route["path_arg_absent"][arg]
            if "path" in absent:
                other = absent["path"]
                for name, given in args.items():
                    other = other.replace(f"{{{name}}}", quote(str(given), safe="$&+:=@"))
                return absent["method"], other, extra
            value = ""
        if f"whitespace trimmed from {arg} for path" in norms:
            value = value.strip()
        sends_id = f"'workload:'-prefixed {arg} is additionally sent as query.service_id"
        if sends_id in norms and value.startswith("workload:") and value != "workload:":
            extra["service_id"] = value
        if f"any '<kind>:' prefix stripped from {arg} for path" in norms:
            value = strip_kind(value)
        path = path.replace(f"{{{placeholder}}}", quote(value, safe="$&+:=@"))
    return method, path, extra


def given_value(record: dict, route: dict, field: str, arg: str, value: Any, kind: str) -> Any:
    """What the contract's helper makes of a placeholder value."""
    if f"whitespace trimmed from {arg} for {field}" in route.get("normalisation", []):
        value = value.strip()
    if kind == "query":
        if isinstance(value, bool):
            if (record["name"], field) in TRUE_ONLY and not value:
                return OMIT
            return "true" if value else "false"
        return str(int(value)) if isinstance(value, int | float) else value
    schema_type = arg_schemas(record, route)[arg].get("type")
    if arg in RAW:
        return value
    if arg in STRING_VALUES:
        return [v for v in value if isinstance(v, str) and v]
    if arg in OBJECT_SLICE:
        return [v for v in value if isinstance(v, dict)]
    if schema_type == "integer":
        return int(value)
    if "enum" in arg_schemas(record, route)[arg] and schema_type == "string":
        return value.strip().lower() if record["name"] == "list_relationship_edges" else value
    return value


def absent_value(route: dict, field: str) -> Any:
    return route.get("defaults", {}).get(field, OMIT)


def derived_value(route: dict, field: str, source: dict, args: dict, qt: str) -> Any:
    derived = source["derived_from"]
    if derived == ["scope"]:
        forced = route.get("defaults_by_query_type", {}).get("cross_repo", {}).get(qt, False)
        scope = args.get("scope")
        return forced or args.get("cross_repo") is True or scope == "cross_repo"
    if derived == ["context"]:
        if isinstance(args.get("max_depth"), int | float):
            return int(args["max_depth"])
        context = args.get("context")
        if isinstance(context, str) and context.strip().isdigit():
            return int(context)
        return route["defaults"][field]
    if derived == ["target"]:
        return split_target(args)[0 if field == "start" else 1]
    if derived == ["types"]:
        if args.get("type"):
            return args["type"]
        types = args.get("types") or []
        return types[0] if types else OMIT
    if derived == ["repo_ids"]:
        ids = args.get("repo_ids") or []
        if len(ids) == 1:
            return ids[0]
        return args.get("repo_id", OMIT) if not ids else OMIT
    raise AssertionError(f"no reading for {derived}")


def field_value(record: dict, route: dict, kind: str, field: str, source: Any, args: dict, qt: str):
    if isinstance(source, str):
        if kind == "body" and field == "repo_ids" and "derived_from" in str(route["body_fields"]):
            ids = args.get("repo_ids") or []
            return ids if len(ids) >= 2 else OMIT
        if source not in args:
            return absent_value(route, field)
        return given_value(record, route, field, source, args[source], kind)
    if "const" in source:
        return source["const"]
    by_variant = source.get(f"const_by_{route_variant_arg(record)}")
    if by_variant is not None:
        return by_variant[qt]
    if "derived_from" in source:
        return derived_value(route, field, source, args, qt)
    for name in source["args"]:
        if name in args:
            return given_value(record, route, field, name, args[name], kind)
    return absent_value(route, field)


def expected_route(record: dict, route: dict, qt: str, args: dict) -> Route | str:
    """The request (or the error text) the record says ``args`` gives."""
    error = expected_error(route, args)
    if error is not None:
        return error
    method, path, extra = expected_path(record, route, args)
    query = {}
    for field, source in route["query_params"].items():
        value = field_value(record, route, "query", field, source, args, qt)
        if value is not OMIT:
            query[field] = value
    query.update(extra)
    body = None
    if route.get("body_passthrough"):
        body = dict(args)
    elif route["body_fields"] is not None:
        body = {}
        for field, source in route["body_fields"].items():
            value = field_value(record, route, "body", field, source, args, qt)
            if value is not OMIT:
                body[field] = value
    return Route(method, path, query, body)


def calls(record: dict) -> list[tuple[str, dict, dict, str]]:
    """(label, args, route, query_type) for every generated call of one tool."""
    generated = []
    for route, qt in routes_of(record):
        base = required_args(record, route, qt)
        variant = route_variant_arg(record)
        generated.append(("no arguments", {variant: qt} if qt else {}, route, qt))
        generated.append(("required arguments", base, route, qt))
        for arg, schema in sorted(arg_schemas(record, route).items()):
            if arg == variant:
                continue
            for value in forms(schema):
                generated.append((f"{arg}={value!r}", {**base, arg: value}, route, qt))
        for entry in route.get("errors", []):
            when = entry["when"]
            missing = when.removesuffix(" missing") if when.endswith(" missing") else ""
            if when.startswith("none of "):
                missing = when.removeprefix("none of ").removesuffix(" given")
            args = {k: v for k, v in base.items() if k not in missing.split("/")}
            if when == "called with no arguments":
                args = {variant: qt} if qt else {}
            generated.append((f"error when {when}", args, route, qt))
        for rejected in route.get("rejected_values", []):
            args = {**base, rejected["arg"]: rejected["value"]}
            generated.append((f"rejected {rejected['value']!r}", args, route, qt))
    return generated


def outcome(tool: str, args: dict) -> Route | str:
    try:
        return resolve_route(tool, args)
    except RouteError as error:
        return str(error)


@pytest.mark.parametrize("record", TOOLS, ids=[t["name"] for t in TOOLS])
def test_route_matches_the_contract_record(record: dict) -> None:
    mismatches = []
    for label, args, route, qt in calls(record):
        want = expected_route(record, route, qt, args)
        got = outcome(record["name"], args)
        if got != want:
            mismatches.append(f"{label}: args={args!r}\n  want {want!r}\n  got  {got!r}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("record", TOOLS, ids=[t["name"] for t in TOOLS])
def test_listed_errors_are_raised_with_their_exact_text(record: dict) -> None:
    for route, qt in routes_of(record):
        listed = {entry["error"] for entry in route.get("errors", [])}
        raised = {
            outcome(record["name"], args)
            for label, args, r, q in calls(record)
            if (r, q) == (route, qt) and label.startswith("error when")
        }
        assert raised == listed


@pytest.mark.parametrize("record", TOOLS, ids=[t["name"] for t in TOOLS])
def test_wrong_json_types_never_raise_anything_but_route_error(record: dict) -> None:
    for route, qt in routes_of(record):
        base = required_args(record, route, qt)
        for arg in arg_schemas(record, route):
            for value in WRONG_TYPES:
                got = outcome(record["name"], {**base, arg: value})
                if isinstance(got, Route):
                    assert all(isinstance(v, str) for v in got.query.values())
                    json.dumps(got.body, allow_nan=False)
                    assert "?" not in got.path


def test_every_contract_tool_resolves_and_nothing_else_does() -> None:
    assert len(TOOLS) == 162
    assert outcome("not_a_tool", {}) == "unknown tool: not_a_tool"
