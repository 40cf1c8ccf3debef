"""
Checking a tool call's arguments against the tool's input schema, before dispatch.

Each tool's advertised ``input_schema`` is compiled once (on first use) into a
``jsonschema`` validator over a bounded copy of it: every string gets a length
limit and every list an item limit unless the contract already states one, so an
oversized input is refused with a clear bound instead of reaching the query API.
Names the schema does not list are refused too (with the nearest known name),
except the route's documented hidden arguments, and so is a value other than the
default for an argument the route documents as having no effect. A JSON ``null``
given for an optional argument means "not given" and is dropped before dispatch.

The checks only refuse calls; they never change what a valid call sends, so
:func:`eshu_mcp.dispatch.resolve_route` and its coercions stay as they are.
"""

import copy
import difflib
import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from attrs import field, frozen
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from eshu_mcp.catalog.contract import load_contract

__all__ = [
    "MAX_LIST_ITEMS",
    "MAX_OBJECT_BYTES",
    "MAX_STRING_CHARS",
    "ArgumentProblem",
    "ToolArguments",
    "check_arguments",
    "tool_arguments",
]

#: Longest string accepted in any argument (a path, a pattern, a query), in characters.
MAX_STRING_CHARS = 4096
#: Integers an argument may hold: a 64-bit signed integer, as Eshu's Go API reads them.
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
#: Most items accepted in any list argument.
MAX_LIST_ITEMS = 500
#: Largest free-form object argument (a prior response, a truth block), serialized.
MAX_OBJECT_BYTES = 512 * 1024
#: Longest unknown argument name quoted back.
MAX_NAME_CHARS = 64
#: Unknown names given a "did you mean" suggestion, per call.
MAX_SUGGESTIONS = 20

# Names an assistant reaches for that mean one of the tool's own arguments.
_SYNONYMS = (
    frozenset({"repo", "repo_id", "repo_name", "repository", "repository_id", "repo_ids"}),
    frozenset({"limit", "max_results", "top_k", "max", "count", "page_size", "size", "n"}),
    frozenset({"file_path", "path", "relative_path", "file", "filename", "file_name"}),
    frozenset({"symbol", "name", "function_name", "symbol_name", "function"}),
    frozenset({"query", "q", "search", "text", "term", "keyword"}),
    frozenset({"offset", "skip", "cursor"}),
)


@frozen
class ArgumentProblem:
    """
    One reason a call's arguments were refused.

    ``kind`` is one of ``unknown``, ``required``, ``null`` (a required one given
    as null), ``type``, ``enum``, ``range``, ``too_long``, ``too_short``,
    ``too_many``, ``too_large``, ``pattern`` or ``invalid``; ``given`` is the
    offending value (absent for ``required``), ``allowed`` what the schema
    accepts, ``suggestion`` a near name or value.
    """

    argument: str
    kind: str
    given: Any = field(default=None, repr=False)
    allowed: Any = None
    suggestion: str | None = None


def _bounded(schema: Any) -> Any:
    """
    A copy of ``schema`` where every string and list without a limit gets the default
    one, and an enum accepts its own documented default.
    """
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    kinds = out.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds}
    if "string" in kinds:
        out.setdefault("maxLength", MAX_STRING_CHARS)
    if "array" in kinds:
        out.setdefault("maxItems", MAX_LIST_ITEMS)
    if "enum" in out and "default" in out and out["default"] not in out["enum"]:
        # The documented default (``""``: no filter) is accepted like a listed value.
        out["enum"] = [*out["enum"], out["default"]]
    if isinstance(out.get("items"), dict):
        out["items"] = _bounded(out["items"])
    if isinstance(out.get("properties"), dict):
        out["properties"] = {name: _bounded(sub) for name, sub in out["properties"].items()}
    if isinstance(out.get("additionalProperties"), dict):
        out["additionalProperties"] = _bounded(out["additionalProperties"])
    return out


def _hidden_schema(default: Any) -> dict:
    """The schema of a hidden route argument, typed by its documented default."""
    if isinstance(default, bool):
        return {"type": "boolean"}
    return {"type": "string"}


def _alternatives(route: dict) -> dict[str, frozenset[str]]:
    """
    For each argument, the other names the route reads in its place.

    A field read from ``["query", "pattern"]`` takes either; a fallback route
    used when ``provider_incident_id`` is absent takes ``incident_id`` instead.
    A required argument is given when any of its alternatives is.
    """
    found: dict[str, set[str]] = {}
    for where in ("body_fields", "query_params", "path_params"):
        for spec in (route.get(where) or {}).values():
            names = spec.get("args", ()) if isinstance(spec, dict) else ()
            for name in names:
                found.setdefault(name, set()).update(n for n in names if n != name)
    for fallback in route.get("fallback_args", ()):
        absent, used = fallback.get("used_when_absent"), fallback.get("arg")
        if absent and used:
            found.setdefault(absent, set()).add(used)
    return {name: frozenset(others) for name, others in found.items()}


def _is_free_form(schema: dict) -> bool:
    return schema.get("type") == "object" and "properties" not in schema


def _path_text(path) -> str:
    """``changes[0].status`` for the path ``("changes", 0, "status")``."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


def _near(given: str, candidates) -> str | None:
    """The candidate a misspelled or synonymous name most likely meant, or None."""
    candidates = sorted(candidates)
    if not candidates:
        return None
    folded = given.casefold()
    for candidate in candidates:
        if candidate.casefold() == folded:
            return candidate
    for group in _SYNONYMS:
        if folded in group:
            for candidate in candidates:
                if candidate in group:
                    return candidate
    close = difflib.get_close_matches(given, candidates, n=1, cutoff=0.6)
    return close[0] if close else None


def _bounds(schema: dict) -> tuple[Any, Any]:
    """The (lowest, highest) values a numeric schema allows; None where unbounded."""
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    return low, high


def _problem_from_error(error: ValidationError) -> ArgumentProblem:
    """The problem a ``jsonschema`` error describes, in this module's terms."""
    argument = _path_text(error.absolute_path)
    keyword = error.validator
    given = error.instance
    schema = error.schema if isinstance(error.schema, dict) else {}
    if keyword == "type":
        allowed = error.validator_value
        suggestion = None
        if isinstance(given, str) and _parses_as(given.strip(), allowed):
            suggestion = given.strip()
        return ArgumentProblem(argument, "type", given, allowed, suggestion)
    if keyword == "enum":
        values = list(error.validator_value)
        suggestion = None
        if isinstance(given, str):
            suggestion = _near(given, [v for v in values if isinstance(v, str)])
        return ArgumentProblem(argument, "enum", given, values, suggestion)
    if keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return ArgumentProblem(argument, "range", given, _bounds(schema))
    if keyword == "maxLength":
        return ArgumentProblem(argument, "too_long", given, error.validator_value)
    if keyword == "minLength":
        return ArgumentProblem(argument, "too_short", given, error.validator_value)
    if keyword == "maxItems":
        return ArgumentProblem(argument, "too_many", given, error.validator_value)
    if keyword == "pattern":
        return ArgumentProblem(argument, "pattern", given, error.validator_value)
    return ArgumentProblem(argument, "invalid", given, error.message)


def _parses_as(text: str, allowed: Any) -> bool:
    """Whether a string argument is the quoted form of the number or boolean the schema wants."""
    kinds = set(allowed) if isinstance(allowed, list) else {allowed}
    if "integer" in kinds:
        try:
            int(text)
            return True
        except ValueError:
            pass
    if "number" in kinds:
        try:
            float(text)
            return text.lower() not in ("nan", "inf", "-inf", "infinity", "-infinity")
        except ValueError:
            pass
    return "boolean" in kinds and text in ("true", "false")


# When one value breaks several rules, the first of these is the one reported.
_KIND_ORDER = (
    "type",
    "enum",
    "range",
    "too_long",
    "too_many",
    "too_large",
    "too_short",
    "pattern",
)


def _problem_order(problem: ArgumentProblem) -> tuple[str, int]:
    kind = problem.kind
    rank = _KIND_ORDER.index(kind) if kind in _KIND_ORDER else len(_KIND_ORDER)
    return problem.argument, rank


@frozen
class ToolArguments:
    """The compiled argument checks of one tool."""

    tool: str
    names: tuple[str, ...]
    required: tuple[str, ...]
    schemas: Mapping[str, dict]
    free_form: tuple[str, ...]
    alternatives: Mapping[str, frozenset[str]]
    validator: Draft202012Validator
    # Whether no arguments at all pass the schema (then a call without any skips it).
    empty_valid: bool = True

    @classmethod
    def from_record(cls, record: dict) -> "ToolArguments":
        """Compile the checks of one contract record (schema plus hidden route arguments)."""
        schema = copy.deepcopy(record["input_schema"])
        properties = dict(schema.get("properties") or {})
        route = record.get("route") or {}
        defaults = route.get("defaults") or {}
        for hidden in route.get("hidden_args", ()):
            properties.setdefault(hidden, _hidden_schema(defaults.get(hidden)))
        bounded = _bounded({"type": "object", "properties": properties})
        Draft202012Validator.check_schema(bounded)
        validator = Draft202012Validator(bounded)
        return cls(
            tool=record["name"],
            names=tuple(sorted(schema.get("properties") or {})),
            required=tuple(schema.get("required") or ()),
            schemas=bounded["properties"],
            free_form=tuple(sorted(n for n, s in properties.items() if _is_free_form(s))),
            alternatives=_alternatives(route),
            validator=validator,
            empty_valid=not any(
                error.validator != "required" for error in validator.iter_errors({})
            ),
        )

    def check(self, args: Mapping[str, Any]) -> tuple[dict, list[ArgumentProblem]]:
        """
        The arguments to dispatch and every problem found, in a fixed order.

        Unknown names come first (sorted), then missing required arguments (in
        the schema's order), then one problem per given value (by argument).
        """
        problems: list[ArgumentProblem] = []
        accepted = {}
        refused: set[str] = set()
        for name in sorted(args):
            value = args[name]
            if name not in self.schemas:
                shown = name if len(name) <= MAX_NAME_CHARS else name[:MAX_NAME_CHARS] + "..."
                shown = _printable(shown)
                # Suggestions cost a fuzzy match each; a flood of names gets none past a few.
                suggestion = _near(name, self.names) if len(problems) < MAX_SUGGESTIONS else None
                problems.append(ArgumentProblem(shown, "unknown", value, self.names, suggestion))
            elif _has_lone_surrogate(value):
                problems.append(ArgumentProblem(name, "invalid", None, _SURROGATE))
                refused.add(name)
            elif value is not None:
                accepted[name] = value
        for name in self.required:
            others = self.alternatives.get(name, ())
            if name in refused:
                continue
            if name not in accepted and not any(n in accepted for n in others):
                kind = "null" if name in args else "required"
                problems.append(ArgumentProblem(name, kind, None, self.schemas.get(name)))
        value_problems = (
            [
                _problem_from_error(error)
                for error in self.validator.iter_errors(accepted)
                if error.validator != "required"
            ]
            if accepted or not self.empty_valid
            else []
        )
        for name in self.free_form:
            if name in accepted and isinstance(accepted[name], dict):
                size = _json_size(accepted[name])
                if size > MAX_OBJECT_BYTES:
                    value_problems.append(
                        ArgumentProblem(name, "too_large", size, MAX_OBJECT_BYTES)
                    )
        for name, value in accepted.items():
            if _beyond_int64(value) and not any(p.argument == name for p in value_problems):
                value_problems.append(ArgumentProblem(name, "range", value, (INT64_MIN, INT64_MAX)))
        value_problems.sort(key=_problem_order)
        shown = set()
        for problem in value_problems:
            if problem.argument not in shown:
                shown.add(problem.argument)
                problems.append(problem)
        return accepted, problems


_SURROGATES = re.compile("[\ud800-\udfff]")
_SURROGATE = "it holds an unpaired UTF-16 surrogate (\\ud800-\\udfff), which is not text"


def _has_lone_surrogate(value: Any, depth: int = 0) -> bool:
    """Whether a string anywhere in ``value`` (keys too) holds a lone surrogate."""
    if isinstance(value, str):
        return _printable(value) != value
    if depth > 64:
        return False  # deeper values are refused by their size or type checks
    if isinstance(value, dict):
        return any(
            _has_lone_surrogate(k, depth + 1) or _has_lone_surrogate(v, depth + 1)
            for k, v in value.items()
        )
    if isinstance(value, list):
        return any(_has_lone_surrogate(item, depth + 1) for item in value)
    return False


def _beyond_int64(value: Any) -> bool:
    """Whether ``value`` (or an item of a list) is an integer no 64-bit field can hold."""
    if isinstance(value, list):
        return any(_beyond_int64(item) for item in value)
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and not INT64_MIN <= value <= INT64_MAX
    )


def _printable(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (how Go decodes them)."""
    return _SURROGATES.sub("\ufffd", text)


def _json_size(value: Any) -> int:
    """Bytes of ``value`` as compact JSON; unmeasurable values count as too large."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return MAX_OBJECT_BYTES + 1
    return len(text.encode("utf-8", "surrogatepass"))


@cache
def _compiled() -> dict[str, dict]:
    return {record["name"]: record for record in load_contract()}


@cache
def tool_arguments(tool_name: str) -> ToolArguments | None:
    """The compiled checks of a catalog tool (built once, on first use), or None if unknown."""
    record = _compiled().get(tool_name)
    if record is None:
        return None
    return ToolArguments.from_record(record)


def check_arguments(tool_name: str, args: Mapping[str, Any]) -> tuple[dict, list]:
    """
    Check one call: ``(arguments to dispatch, problems)``.

    A tool the catalog does not hold is passed through unchanged with no
    problems; route resolution reports it.
    """
    checks = tool_arguments(tool_name)
    if checks is None:
        return dict(args), []
    return checks.check(args)
