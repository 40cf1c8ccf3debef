"""
Advertised arguments a route does not send: honoured where the embedded API can, named
in the answer otherwise, never refused.

The contract lists, per route, the schema arguments it ignores (``ignored_args``, on a
tool's route or on one of its ``route_variants``). A client that sends one gets its
answer with a line saying the argument was accepted but not used by this route, so
nothing is silently dropped and nothing an assistant was told it may send fails. Some
of them narrow the embedded API's answer (``path`` picks the function in that file for
``calculate_cyclomatic_complexity``), so they are sent in the request body as well.
"""

from collections.abc import Mapping
from functools import cache
from typing import Any

from attrs import evolve

from eshu_mcp.catalog.contract import load_contract
from eshu_mcp.dispatch.args import string_arg
from eshu_mcp.dispatch.routes import Route

__all__ = ["honoured_arguments", "unused_arguments", "unused_arguments_note"]

#: Ignored arguments the embedded API reads from the request body: (tool, argument).
_HONOURED_IN_BODY = frozenset({("calculate_cyclomatic_complexity", "path")})

#: Ignored arguments dispatch itself reads (:mod:`eshu_mcp.dispatch.anchors`).
_READ_BY_DISPATCH = frozenset({("analyze_code_relationships", "start_entity_id")})


@cache
def _ignored() -> dict[str, tuple[str, dict[str, frozenset[str]], frozenset[str], dict]]:
    """
    Per tool: its variant argument, the ignored arguments by variant value, the ignored
    arguments of the tool's own route, and its schema properties.
    """
    found = {}
    for record in load_contract():
        route = record.get("route") or {}
        by_value: dict[str, frozenset[str]] = {}
        arg = route.get("variant_arg", "")
        for variant in route.get("route_variants", ()):
            names = frozenset(variant.get("ignored_args", ()))
            for value in variant.get("when", {}).get(arg, ()):
                by_value[value] = names
        own = frozenset(route.get("ignored_args", ()))
        if own or by_value:
            props = record["input_schema"].get("properties") or {}
            found[record["name"]] = (arg, by_value, own, props)
    return found


def _differs_from_default(value: Any, schema: Mapping[str, Any]) -> bool:
    if value is None or value == "" or value == [] or value == {}:
        return False
    return "default" not in schema or value != schema["default"]


def unused_arguments(tool_name: str, args: Mapping[str, Any]) -> tuple[str, ...]:
    """The arguments given a value that this call's route neither sends nor reads."""
    entry = _ignored().get(tool_name)
    if entry is None or not isinstance(args, Mapping):
        return ()
    arg, by_value, own, props = entry
    ignored = own | by_value.get(string_arg(args, arg), frozenset()) if arg else own
    return tuple(
        name
        for name in sorted(ignored)
        if (tool_name, name) not in _HONOURED_IN_BODY
        and (tool_name, name) not in _READ_BY_DISPATCH
        and name in args
        and _differs_from_default(args[name], props.get(name, {}))
    )


def honoured_arguments(tool_name: str, args: Mapping[str, Any], route: Route) -> Route:
    """``route`` with the ignored arguments the embedded API reads added to its body."""
    if not isinstance(route.body, dict) or not isinstance(args, Mapping):
        return route
    extra = {
        name: string_arg(args, name).strip()
        for tool, name in _HONOURED_IN_BODY
        if tool == tool_name and string_arg(args, name).strip()
    }
    return evolve(route, body={**route.body, **extra}) if extra else route


def unused_arguments_note(names: tuple[str, ...], result: dict) -> dict:
    """``result`` with a line under its text naming the arguments this route did not use."""
    if not names:
        return result
    listed = ", ".join(names)
    verb, pronoun = ("was", "it") if len(names) == 1 else ("were", "them")
    note = (
        f"({listed} {verb} accepted but not used by this route:"
        f" the answer does not depend on {pronoun})"
    )
    content = list(result.get("content", ()))
    for index, block in enumerate(content):
        if block.get("type") == "text":
            text = block.get("text", "")
            content[index] = {**block, "text": f"{text}\n{note}" if text else note}
            break
    else:
        content.append({"type": "text", "text": note})
    return {**result, "content": content}
