"""
Building MCP tool results from what the query Resource answered.

A tool result is ``{"content", "structuredContent"?, "isError"?}``: a one-line
summary, an embedded resource holding the exact JSON, and the same JSON as
structured content (spec §3). ``resource.text`` is always ``dumps`` of
``structuredContent``, so the two copies cannot drift. Every answer passes the
response budget (§9) before it is returned.

That is the full detail (Eshu's bytes). The compact detail sends the JSON once, as
``structuredContent`` beside the summary, and cuts an answer over the budget to the
rows that fit instead of failing it.
"""

from typing import Any

from twisted.logger import Logger

from eshu_mcp.dispatch.api_errors import api_error_result, with_api_error_sentence
from eshu_mcp.dispatch.budget import (
    DEFAULT_RESPONSE_BUDGET,
    DISPATCH_CAPABILITY,
    exceeds_budget,
    measure_one_copy,
    measure_serialized,
    over_budget_envelope,
)
from eshu_mcp.dispatch.envelope import body_text, decode_body, envelope_from_value
from eshu_mcp.dispatch.summaries.result import summarize_envelope, summarize_plain
from eshu_mcp.dispatch.trim import trim_rows
from eshu_mcp.encoding import dumps, encoded, go_quote
from eshu_mcp.query.compact import compact_answer

__all__ = [
    "DISPATCH_ERROR_URI",
    "ENVELOPE_MIME_TYPE",
    "ENVELOPE_URI",
    "PAYLOAD_MIME_TYPE",
    "PAYLOAD_URI",
    "dispatch_context_error_result",
    "envelope_result",
    "error_result",
    "go_duration",
    "plain_result",
    "result_from_response",
    "with_resource_copy",
]

log = Logger()

ENVELOPE_URI = "eshu://tool-result/envelope"
ENVELOPE_MIME_TYPE = "application/eshu.envelope+json"
PAYLOAD_URI = "eshu://tool-result/payload"
PAYLOAD_MIME_TYPE = "application/json"
DISPATCH_ERROR_URI = "eshu://tool-error/dispatch"

DISPATCH_TIMEOUT_CODE = "mcp_dispatch_timeout"
DISPATCH_CANCELED_CODE = "mcp_dispatch_canceled"

_NANOSECONDS = 1_000_000_000


def _text_block(text: str) -> dict:
    block = {"type": "text"}
    if text:
        block["text"] = text
    return block


def _result(content: list, structured: Any = None, is_error: bool = False) -> dict:
    """The result object, keys in wire order; ``isError`` only when true, null content omitted."""
    result: dict[str, Any] = {"content": content}
    if structured is not None:
        result["structuredContent"] = structured
    if is_error:
        result["isError"] = True
    return result


def _with_resource(
    summary: str, uri: str, mime_type: str, structured: Any, compact: str, *, is_error: bool = False
) -> dict:
    resource = {"uri": uri, "mimeType": mime_type, "text": compact}
    content = [_text_block(summary), {"type": "resource", "resource": resource}]
    return _result(content, structured, is_error)


def error_result(text: str) -> dict:
    """A tool error carried as one text block: unknown tool, bad arguments, raw HTTP errors."""
    return _result([_text_block(text)], is_error=True)


def _over_budget_result(tool: str, size: int, budget: int) -> dict:
    log.warn(
        "mcp tool response over budget: {tool} answered {response_bytes} bytes,"
        " budget {budget_bytes}",
        tool=tool,
        response_bytes=size,
        budget_bytes=budget,
    )
    replacement = over_budget_envelope(tool, size, budget)
    return _with_resource(
        summarize_envelope(tool, replacement),
        ENVELOPE_URI,
        ENVELOPE_MIME_TYPE,
        replacement,
        dumps(replacement),
        is_error=True,
    )


def _fitted(
    tool: str,
    payload: Any,
    *,
    in_envelope: bool,
    is_error: bool,
    budget: int,
    compact: bool,
    paging_offset: int | None,
    page_budget: int = 0,
) -> tuple[Any, str, str] | dict:
    """
    ``(payload, serialized, note)`` within the budget, or the over-budget result.

    A compact answer counts one wire copy and, when over ``page_budget`` (if set) or the
    budget, drops rows from its end (``note`` then says how to get the rest); a full
    answer keeps Eshu's rule.
    """
    serialized = dumps(payload, splice=False)  # a decoded answer holds no Encoded parts
    size = measure_one_copy(serialized) if compact else measure_serialized(serialized)
    paged = compact and not is_error and 0 < page_budget < budget and size > page_budget
    if not paged and not exceeds_budget(size, budget):
        return encoded(payload, serialized), serialized, ""
    trimmed = None
    if paged:
        trimmed = trim_rows(
            payload,
            in_envelope=in_envelope,
            budget=page_budget,
            measure=measure_one_copy,
            paging_offset=paging_offset,
            bound="answer page",
        )
        if trimmed is None and not exceeds_budget(size, budget):
            # Nothing to page: within the hard budget.
            return encoded(payload, serialized), serialized, ""
    if trimmed is None and compact and not is_error:
        trimmed = trim_rows(
            payload,
            in_envelope=in_envelope,
            budget=budget,
            measure=measure_one_copy,
            paging_offset=paging_offset,
        )
    if trimmed is None:
        return _over_budget_result(tool, size, budget)
    log.info(
        "mcp tool response trimmed to budget: {tool} answered {response_bytes} bytes,"
        " sent {sent_bytes}",
        tool=tool,
        response_bytes=size,
        sent_bytes=trimmed.size,
    )
    serialized = dumps(trimmed.payload)
    return encoded(trimmed.payload, serialized), serialized, trimmed.note


def _with_note(summary: str, note: str) -> str:
    return f"{summary}\n{note}" if note else summary


def _fitted_result(
    tool: str,
    fitted: tuple[Any, str, str] | dict,
    *,
    in_envelope: bool,
    is_error: bool,
    compact: bool,
) -> dict:
    """
    The result for what ``_fitted`` returned: the over-budget result as it is, else the
    summary (with the trim note) beside the payload, and in full detail its resource copy.
    """
    if isinstance(fitted, dict):
        return fitted
    payload, serialized, note = fitted
    summarize, uri, mime_type = (
        (summarize_envelope, ENVELOPE_URI, ENVELOPE_MIME_TYPE)
        if in_envelope
        else (summarize_plain, PAYLOAD_URI, PAYLOAD_MIME_TYPE)
    )
    summary = _with_note(summarize(tool, payload), note)
    if compact:
        return _result([_text_block(summary)], payload, is_error)
    return _with_resource(summary, uri, mime_type, payload, serialized, is_error=is_error)


def envelope_result(
    tool: str,
    envelope: dict,
    *,
    is_error: bool,
    budget: int = DEFAULT_RESPONSE_BUDGET,
    compact: bool = False,
    paging_offset: int | None = None,
    page_budget: int = 0,
) -> dict:
    """
    The result for a re-serialized canonical envelope, or its over-budget replacement.

    ``compact`` sends the envelope once, as ``structuredContent`` (the protocol layer
    moves it into a resource block for clients that cannot read structured content).
    """
    fitted = _fitted(
        tool,
        envelope,
        in_envelope=True,
        is_error=is_error,
        budget=budget,
        compact=compact,
        paging_offset=paging_offset,
        page_budget=page_budget,
    )
    return _fitted_result(tool, fitted, in_envelope=True, is_error=is_error, compact=compact)


def plain_result(
    tool: str,
    value: Any,
    *,
    budget: int = DEFAULT_RESPONSE_BUDGET,
    compact: bool = False,
    paging_offset: int | None = None,
    page_budget: int = 0,
) -> dict:
    """The result for a plain JSON value or raw body string; ``isError`` only if over budget."""
    fitted = _fitted(
        tool,
        value,
        in_envelope=False,
        is_error=False,
        budget=budget,
        compact=compact,
        paging_offset=paging_offset,
        page_budget=page_budget,
    )
    return _fitted_result(tool, fitted, in_envelope=False, is_error=False, compact=compact)


def with_resource_copy(result: dict) -> dict:
    """
    ``result`` without ``structuredContent``, its JSON in a resource block instead.

    For clients that cannot read structured content; a result that already carries
    the resource copy (full detail) only loses the structured one.
    """
    out = {key: value for key, value in result.items() if key != "structuredContent"}
    if "structuredContent" not in result or any(
        block.get("type") == "resource" for block in result.get("content", ())
    ):
        return out
    structured = result["structuredContent"]
    envelope = isinstance(structured, dict) and structured.keys() >= {"data", "truth", "error"}
    uri, mime_type = (
        (ENVELOPE_URI, ENVELOPE_MIME_TYPE) if envelope else (PAYLOAD_URI, PAYLOAD_MIME_TYPE)
    )
    resource = {"uri": uri, "mimeType": mime_type, "text": dumps(structured)}
    out["content"] = [*result.get("content", ()), {"type": "resource", "resource": resource}]
    return out


def result_from_response(
    tool: str,
    status: int,
    body: bytes,
    *,
    budget: int = DEFAULT_RESPONSE_BUDGET,
    compact: bool = False,
    paging_offset: int | None = None,
    compact_here: bool = False,
    request_args: dict | None = None,
    page_budget: int = 0,
) -> dict:
    """
    Classify what the query Resource answered and build the tool result (spec §7.3).

    In order: a canonical envelope (``isError`` iff status >= 400, its error
    message as the text); any other status >= 400 as the API's message in a
    sentence (:mod:`eshu_mcp.dispatch.api_errors`); a JSON body as a plain value;
    anything else as the raw body string. Envelopes and plain values pass
    the response budget. ``compact`` sends one copy and trims rows to the budget
    (``paging_offset`` is the offset the request sent, for the next page's offset).
    ``compact_here`` applies the compact view to an answer whose Resource did not
    (an upstream Eshu API); ``request_args`` are the arguments the request sent;
    ``page_budget`` pages compact answers by size (0: only the budget bounds them).
    """
    # A body nested deeper than this interpreter can walk is treated as non-JSON
    # text (Go accepts up to 10000 levels; real answers are far shallower).
    try:
        value = decode_body(body)
        parsed = True
        envelope = envelope_from_value(value)
        if compact_here and status < 400:
            if envelope is not None:
                envelope["data"] = compact_answer(envelope["data"], request_args)
            else:
                value = compact_answer(value, request_args)
        if envelope is not None:
            result = envelope_result(
                tool,
                envelope,
                is_error=status >= 400,
                budget=budget,
                compact=compact,
                paging_offset=paging_offset,
                page_budget=page_budget,
            )
            if status >= 400:
                return with_api_error_sentence(result, envelope, status)
            return result
    except (ValueError, RecursionError):
        parsed = False
    if status >= 400:
        return api_error_result(status, body, value if parsed else None)
    if parsed:
        try:
            return plain_result(
                tool,
                value,
                budget=budget,
                compact=compact,
                paging_offset=paging_offset,
                page_budget=page_budget,
            )
        except RecursionError:
            pass
    return plain_result(tool, body_text(body), budget=budget, compact=compact)


def go_duration(seconds: float) -> str:
    """Write a duration as Go's ``Duration.String()``: ``30s``, ``20ms``, ``1m30s``, ``1h0m0s``."""
    nanoseconds = round(seconds * _NANOSECONDS)
    sign = "-" if nanoseconds < 0 else ""
    amount = abs(nanoseconds)
    if amount == 0:
        return "0s"
    if amount < 1_000:
        return f"{sign}{amount}ns"
    if amount < 1_000_000:
        return f"{sign}{_decimal(amount, 1_000)}\u00b5s"
    if amount < _NANOSECONDS:
        return f"{sign}{_decimal(amount, 1_000_000)}ms"
    whole_seconds, fraction = divmod(amount, _NANOSECONDS)
    minutes, secs = divmod(whole_seconds, 60)
    hours, minutes = divmod(minutes, 60)
    text = _decimal(secs * _NANOSECONDS + fraction, _NANOSECONDS) + "s"
    if minutes or hours:
        text = f"{minutes}m{text}"
    if hours:
        text = f"{hours}h{text}"
    return sign + text


def _decimal(amount: int, unit: int) -> str:
    """``amount / unit`` in decimal with no trailing zeros (``1.5``, ``20``)."""
    whole, fraction = divmod(amount, unit)
    width = len(str(unit)) - 1
    digits = str(fraction).rjust(width, "0").rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)


def dispatch_context_error_result(tool: str, *, timed_out: bool, configured_timeout: float) -> dict:
    """
    The tool error for a call whose deadline passed or whose caller went away (spec §3.1).

    ``configured_timeout`` (seconds) is reported as the configured dispatch
    timeout even when an earlier deadline fired, as the reference server does.
    """
    if timed_out:
        code = DISPATCH_TIMEOUT_CODE
        message = f"MCP tool {go_quote(tool)} dispatch deadline exceeded: context deadline exceeded"
    else:
        code = DISPATCH_CANCELED_CODE
        message = f"MCP tool {go_quote(tool)} dispatch canceled: context canceled"
    # Built as a Go map, so every object's keys are sorted.
    structured = {
        "data": None,
        "error": {
            "capability": DISPATCH_CAPABILITY,
            "code": code,
            "details": {"configured_timeout": go_duration(configured_timeout), "tool": tool},
            "message": message,
        },
        "truth": None,
    }
    return _with_resource(
        message,
        DISPATCH_ERROR_URI,
        PAYLOAD_MIME_TYPE,
        structured,
        dumps(structured),
        is_error=True,
    )
