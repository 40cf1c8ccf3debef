"""
Query API error answers as tool results an assistant can read: a sentence, and the detail.

The query API answers errors in three shapes (a plain ``{"error", "detail"}``
body, the canonical envelope, the semantic-search body; local-backend.md §1.3).
Whatever the shape, the tool result's text is the API's message as a sentence
(``limit must be between 1 and 200.``), with the few phrasings that read like Go
internals rewritten, and ``structuredContent`` keeps the error: the envelope as
answered, or an envelope built from the plain body with its HTTP status.
"""

import json
import re
from typing import Any

from eshu_mcp.dispatch.envelope import body_text

__all__ = [
    "api_error_result",
    "api_error_sentence",
    "with_api_error_sentence",
    "with_selectors_not_found",
]

_NOT_IMPLEMENTED = 501

#: Longest API message quoted in a result's text, in characters.
MAX_MESSAGE_CHARS = 600
#: Longest closing clause (``...; pass start_entity_id to pick one``) kept past a cut.
MAX_ADVICE_CHARS = 160
#: String arguments named after a "not found" message, and the longest value quoted.
MAX_SELECTORS_NAMED = 4
MAX_SELECTOR_CHARS = 80
_NOT_FOUND_CODES = frozenset({"not_found", "scope_not_found", "service_not_found"})

# Error codes of the query layer's closed set, by the HTTP status that carries them.
_CODES_BY_STATUS = {
    400: "invalid_argument",
    401: "unauthenticated",
    403: "permission_denied",
    404: "not_found",
    409: "ambiguous",
    422: "invalid_argument",
    500: "internal_error",
    501: "unsupported_capability",
    503: "backend_unavailable",
    504: "backend_timeout",
}

_GO_TYPES = {
    "int": "an integer",
    "int32": "an integer",
    "int64": "an integer",
    "float64": "a number",
    "string": "a string",
    "bool": "true or false",
    "object": "an object",
    "[]string": "an array of strings",
}
_JSON_KINDS = {
    "string": "a string",
    "number": "a number",
    "bool": "a boolean",
    "array": "an array",
    "object": "an object",
}

_INTEGER_IN = re.compile(r"(\w+) must be an integer in \[(-?\d+), (-?\d+)\]")
_AT_MOST = re.compile(r"(\w+) must be <= (-?\d+)")
_AT_LEAST = re.compile(r"(\w+) must be >= (-?\d+)")
_GO_UNMARSHAL = re.compile(
    r"invalid JSON: json: cannot unmarshal (\w+)(?: \S+)?"
    r" into Go struct field \.(\w+) of type (\S+)"
)


def _readable(message: str) -> str:
    """The message with Go-flavoured phrasings rewritten in words."""
    message = _INTEGER_IN.sub(r"\1 must be an integer between \2 and \3", message)
    message = _AT_MOST.sub(r"\1 must be at most \2", message)
    message = _AT_LEAST.sub(r"\1 must be at least \2", message)
    unmarshal = _GO_UNMARSHAL.fullmatch(message)
    if unmarshal is not None:
        given, name, wanted = unmarshal.groups()
        wanted_text = _GO_TYPES.get(wanted, wanted)
        message = f"{name} must be {wanted_text}, but {_JSON_KINDS.get(given, given)} was given"
    return message


def api_error_sentence(message: str, status: int) -> str:
    """One sentence for an API error message: readable, bounded, ending with a period."""
    text = _readable(" ".join(message.split()))
    if len(text) > MAX_MESSAGE_CHARS:
        text = _shortened(text)
    if not text:
        text = f"The query API answered HTTP {status} with no message"
    if status >= 500 and status != _NOT_IMPLEMENTED:
        text = f"The query API failed (HTTP {status}): {text}"
    if text[-1] not in ".!?":
        text += "."
    return text


def _shortened(text: str) -> str:
    """
    ``text`` cut to :data:`MAX_MESSAGE_CHARS`, keeping its closing clause when that is
    short: a long list of candidates loses its last whole items, not the advice on what
    to pass.
    """
    head, _, advice = text.rpartition("; ")
    if head and 0 < len(advice) <= MAX_ADVICE_CHARS:
        room = MAX_MESSAGE_CHARS - len(advice) - 6
        kept = text[:room]
        comma = kept.rfind(", ")  # end on a whole list item
        if comma > room // 2:
            kept = kept[:comma]
        return kept.rstrip(" ,;") + ", ...; " + advice
    return text[: MAX_MESSAGE_CHARS - 3].rstrip() + "..."


def _plain_error(status: int, value: Any, body: bytes) -> tuple[str, str, dict]:
    """``(code, message, details)`` of a non-envelope error body."""
    details: dict[str, Any] = {"http_status": status}
    if isinstance(value, dict):
        message = value.get("detail")
        if not isinstance(message, str):
            message = value.get("message")
        code = value.get("error_code")
        for key, item in value.items():
            if key not in ("detail", "message", "error_code"):
                details[key] = item
        if isinstance(message, str):
            return (code if isinstance(code, str) else _code_for(status)), message, details
    text = body_text(body).strip()
    return _code_for(status), f"The query API answered HTTP {status}: {text}", details


def _code_for(status: int) -> str:
    if status in _CODES_BY_STATUS:
        return _CODES_BY_STATUS[status]
    return "internal_error" if status >= 500 else "invalid_argument"


def api_error_result(status: int, body: bytes, value: Any = None) -> dict:
    """
    The ``isError`` tool result for a non-envelope error answer.

    ``value`` is the decoded body, or None when it is not JSON. The text is the
    API's message as a sentence; ``structuredContent`` is an error envelope
    whose details keep the status and the body's other fields.
    """
    code, message, details = _plain_error(status, value, body)
    text = api_error_sentence(message, status)
    structured = {
        "data": None,
        "error": {"code": code, "details": details, "message": message},
        "truth": None,
    }
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured,
        "isError": True,
    }


def with_api_error_sentence(result: dict, envelope: dict, status: int) -> dict:
    """``result`` (built for an error envelope) with its text block replaced by the sentence."""
    error = envelope.get("error")
    content = result.get("content") or []
    structured = result.get("structuredContent")
    if not isinstance(error, dict) or not content or not isinstance(structured, dict):
        return result
    if structured.get("error") != error:
        return result
    message = error.get("message")
    if not isinstance(message, str) or not message.strip():
        message = str(error.get("code") or "")
    text = api_error_sentence(message, status)
    return {**result, "content": [{"type": "text", "text": text}, *content[1:]]}


def with_selectors_not_found(result: dict, args: dict) -> dict:
    """
    A "not found" error result whose sentence also says what was looked for.

    ``entity not found.`` becomes ``entity not found (looked for function_name
    "nope").``: the call's string arguments, sorted and bounded. Any other
    result is returned unchanged.
    """
    structured = result.get("structuredContent")
    if not result.get("isError") or not isinstance(structured, dict):
        return result
    error = structured.get("error")
    if not isinstance(error, dict) or error.get("code") not in _NOT_FOUND_CODES:
        return result
    named = [
        f"{name} {json.dumps(value[:MAX_SELECTOR_CHARS], ensure_ascii=False)}"
        for name, value in sorted(args.items())
        if isinstance(value, str) and value
    ][:MAX_SELECTORS_NAMED]
    content = result.get("content") or []
    if not named or not content or not isinstance(content[0].get("text"), str):
        return result
    text = content[0]["text"].rstrip(".")
    text += " (looked for " + ", ".join(named) + ")."
    return {**result, "content": [{**content[0], "text": text}, *content[1:]]}
