"""
The tool result for a call whose arguments were refused: one sentence, and the detail.

The text names each argument, what was given and what the tool accepts, in one
sentence an assistant can act on (``limit must be between 1 and 200, but -5 was
given.``). Given values are quoted only when short, so a 1 MB pattern is never
echoed back. ``structuredContent`` carries the same problems as an
``invalid_argument`` error envelope.
"""

import json
from collections.abc import Sequence
from typing import Any

from eshu_mcp.dispatch.validation import ArgumentProblem

__all__ = ["INVALID_ARGUMENT_CODE", "argument_error_result", "argument_error_text"]

INVALID_ARGUMENT_CODE = "invalid_argument"
#: Problems spelled out in one sentence; the rest are counted.
MAX_PROBLEMS_STATED = 5
#: Problems listed in ``structuredContent``.
MAX_PROBLEMS_DETAILED = 50
_QUOTED_CHARS = 60
_SHOWN_PREFIX_CHARS = 40

_TYPE_NAMES = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "true or false",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)


def given_text(value: Any) -> str:
    """A short description of a given value: ``the string "1"``, ``an array of 3 items``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "the boolean " + ("true" if value else "false")
    if isinstance(value, int | float):
        return "the number " + _number(value)
    if isinstance(value, str):
        if len(value) <= _QUOTED_CHARS:
            return "the string " + _quote(value)
        return f"a string of {len(value)} characters starting {_quote(value[:_SHOWN_PREFIX_CHARS])}"
    if isinstance(value, list):
        if not value:
            return "an empty array"
        return f"an array of {len(value)} item" + ("" if len(value) == 1 else "s")
    return "an object"


def _type_text(allowed: Any) -> str:
    kinds = allowed if isinstance(allowed, list) else [allowed]
    return " or ".join(_TYPE_NAMES.get(kind, str(kind)) for kind in kinds)


def _choices(values: Sequence[Any]) -> str:
    return ", ".join(v if isinstance(v, str) and v else json.dumps(v) for v in values)


def _range(low: Any, high: Any) -> str:
    if low is not None and high is not None:
        return f"between {_number(low)} and {_number(high)}"
    if low is not None:
        return f"at least {_number(low)}"
    return f"at most {_number(high)}"


def _expected(schema: Any) -> str:
    """What a schema accepts in a few words: ``a string``, ``one of a, b``."""
    if not isinstance(schema, dict):
        return "a value"
    if "enum" in schema:
        return "one of " + _choices(schema["enum"])
    text = _type_text(schema.get("type", "value"))
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None or high is not None:
        text += " " + _range(low, high)
    return text


_WHERE_TO_FIND = {
    "repo_id": "list_indexed_repositories names the indexed repositories and their ids",
    "entity_id": "find_symbol gives a definition's entity_id",
}
"""Where an assistant finds the value of a required identifier it did not send."""


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _clause(tool: str, problem: ArgumentProblem, *, list_arguments: bool = True) -> str:
    """One problem as a clause (no final period); an unknown name lists the tool's arguments."""
    name, kind, given, allowed = problem.argument, problem.kind, problem.given, problem.allowed
    if kind == "unknown":
        text = f"{name} is not an argument of {tool}"
        if problem.suggestion:
            text += f" (did you mean {problem.suggestion}?)"
        if not list_arguments:
            return text
        takes = ", ".join(allowed) if allowed else "no arguments"
        return f"{text}, which takes {takes}"
    if kind == "required":
        text = f"{name} is required ({_expected(allowed)}) but was not given"
        where = _WHERE_TO_FIND.get(name)
        return f"{text} ({where})" if where else text
    if kind == "null":
        return f"{name} is required ({_expected(allowed)}) but null was given"
    if kind == "type":
        text = f"{name} must be {_type_text(allowed)}, but {given_text(given)} was given"
        if problem.suggestion is not None:
            text += f" (write {problem.suggestion} without quotes)"
        return text
    if kind == "enum":
        text = f"{name} must be one of {_choices(allowed)}, but {given_text(given)} was given"
        if problem.suggestion:
            text += f" (did you mean {problem.suggestion}?)"
        return text
    if kind == "range":
        return f"{name} must be {_range(*allowed)}, but {_number(given)} was given"
    if kind == "too_long":
        return (
            f"{name} is {_plural(len(given), 'character')} long, but at most"
            f" {_plural(allowed, 'character')} are allowed"
        )
    if kind == "too_short":
        if allowed == 1:
            return f"{name} must not be empty, but {given_text(given)} was given"
        shortest = _plural(allowed, "character")
        return f"{name} must be at least {shortest} long, but {given_text(given)} was given"
    if kind == "too_many":
        return (
            f"{name} has {_plural(len(given), 'item')}, but at most"
            f" {_plural(allowed, 'item')} are allowed"
        )
    if kind == "too_large":
        return f"{name} is {given} bytes as JSON, but at most {allowed} bytes are allowed"
    if kind == "pattern":
        if allowed == r"\S":
            return f"{name} must contain a non-space character, but {given_text(given)} was given"
        return f"{name} must match the pattern {allowed}, but {given_text(given)} was given"
    return f"{name} is invalid: {allowed}"


def argument_error_text(tool: str, problems: Sequence[ArgumentProblem]) -> str:
    """One sentence stating every problem (the first few spelled out, the rest counted)."""
    clauses, listed = [], False
    for problem in problems[:MAX_PROBLEMS_STATED]:
        clauses.append(_clause(tool, problem, list_arguments=not listed))
        listed = listed or problem.kind == "unknown"
    if len(problems) == 1:
        return clauses[0] + "."
    rest = len(problems) - len(clauses)
    if rest:
        clauses.append(f"and {_plural(rest, 'more problem')}")
    return f"{tool} was called with {len(problems)} argument problems: " + "; ".join(clauses) + "."


def _problem_details(tool: str, problem: ArgumentProblem) -> dict:
    details: dict[str, Any] = {
        "argument": problem.argument,
        "problem": problem.kind,
        "text": _clause(tool, problem),
    }
    if problem.suggestion is not None:
        details["suggestion"] = problem.suggestion
    return details


def argument_error_result(tool: str, problems: Sequence[ArgumentProblem]) -> dict:
    """The ``isError`` tool result for refused arguments: the sentence and an error envelope."""
    text = argument_error_text(tool, problems)
    structured = {
        "data": None,
        "error": {
            "code": INVALID_ARGUMENT_CODE,
            "details": {
                "problems": [
                    _problem_details(tool, problem) for problem in problems[:MAX_PROBLEMS_DETAILED]
                ],
                "problem_count": len(problems),
                "tool": tool,
            },
            "message": text,
        },
        "truth": None,
    }
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured,
        "isError": True,
    }
