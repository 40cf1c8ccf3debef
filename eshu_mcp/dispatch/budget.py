"""
The MCP response budget: how big a tool result may be before it is replaced.

A tool result carries its payload twice, once as ``structuredContent`` and once
JSON-quoted inside ``resource.text``, so the size that counts is both copies. A
result over the budget is replaced by a small error envelope that tells the
model how to ask for less (spec §9).
"""

import re
from typing import Any

from eshu_mcp.encoding import dumps, go_quote

__all__ = [
    "DEFAULT_RESPONSE_BUDGET",
    "DISPATCH_CAPABILITY",
    "OVER_BUDGET_CODE",
    "OVER_BUDGET_GUIDANCE",
    "estimated_tokens",
    "exceeds_budget",
    "measure",
    "measure_one_copy",
    "measure_serialized",
    "over_budget_envelope",
]

# 256 KiB: about 64k tokens at 4 bytes per token.
DEFAULT_RESPONSE_BUDGET = 262144
DEFAULT_ANSWER_PAGE = 12288
"""Compact answers longer than this (one copy) keep the rows that fit and say how to page
on: about 3k tokens of rows per answer, so one question never floods a context window."""

OVER_BUDGET_CODE = "mcp_response_over_budget"
DISPATCH_CAPABILITY = "mcp.dispatch"
OVER_BUDGET_GUIDANCE = (
    "response exceeded the MCP response budget; lower limit, add repo_id/scope filters, "
    "request a single relationship_type or direction, set a smaller token_budget where "
    "supported, then drill in via the returned handles instead of fetching the whole "
    "result at once"
)


def _utf8_length(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


# Characters ``dumps`` writes as more than themselves, beyond ``"`` and ``\\``.
_LONG_ESCAPES = re.compile("[\x00-\x1f<>&\u2028\u2029\ud800-\udfff]")


def quoted_length(text: str) -> int:
    """
    UTF-8 length of ``dumps(text)``, counted without writing it when ``text`` holds only
    characters written as themselves, ``"`` and ``\\`` (as serialized JSON does).
    """
    if _LONG_ESCAPES.search(text) is not None:
        return _utf8_length(dumps(text))
    return _utf8_length(text) + 2 + text.count('"') + text.count("\\")


def measure_serialized(compact: str) -> int:
    """Size of a payload already serialized by ``dumps``: its bytes plus its quoted bytes."""
    return _utf8_length(compact) + quoted_length(compact)


def measure_one_copy(compact: str) -> int:
    """Size of one wire copy of a serialized payload: its quoted bytes (the larger copy)."""
    return quoted_length(compact)


def measure(payload: Any) -> int:
    """
    Bytes ``payload`` costs in a tool result: ``len(J) + len(Q)``.

    ``J`` is the compact Go-style JSON of the payload, ``Q`` is ``J`` written as a
    JSON string literal (HTML escaping applies again). A payload that cannot be
    serialized measures 0, so the budget fails open.
    """
    try:
        compact = dumps(payload)
    except (TypeError, ValueError, RecursionError):
        return 0
    return measure_serialized(compact)


def exceeds_budget(size: int, budget: int) -> bool:
    """Whether ``size`` bytes must be replaced; a budget of 0 or less disables the check."""
    return budget > 0 and size > budget


def estimated_tokens(size: int) -> int:
    """Tokens a response of ``size`` bytes would cost at 4 bytes per token, rounded up."""
    if size <= 0:
        return 0
    return (size + 3) // 4


def over_budget_envelope(tool: str, size: int, budget: int) -> dict:
    """
    The canonical envelope that replaces a result of ``size`` bytes over ``budget``.

    Error fields are in Go struct order, ``details`` keys sorted (a Go map).
    """
    message = (
        f"MCP tool {go_quote(tool)} response of {size} bytes exceeds the "
        f"{budget} byte response budget"
    )
    return {
        "data": None,
        "truth": None,
        "error": {
            "code": OVER_BUDGET_CODE,
            "message": message,
            "capability": DISPATCH_CAPABILITY,
            "details": {
                "budget_bytes": budget,
                "estimated_tokens": estimated_tokens(size),
                "guidance": OVER_BUDGET_GUIDANCE,
                "response_bytes": size,
                "tool": tool,
            },
        },
    }
