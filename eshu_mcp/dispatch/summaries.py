"""
The one-line text summary that leads every tool result (``content[0].text``).

Summaries are for a human or a model skimming the answer; the structured content
stays the source of truth. They are pure, deterministic, read only what the
answer already holds and are bounded: 600 bytes in all, 120 bytes for any one
embedded field (spec §10). Unlike the Go reference, a clamp never splits a UTF-8
character: the cut moves back to a character boundary before ``...``.
"""

from typing import Any

from eshu_mcp.dispatch.summary_families import ENVELOPE_FAMILIES, PLAIN_FAMILIES
from eshu_mcp.dispatch.summary_text import (
    COMPLETED,
    SEPARATOR,
    clamp_field,
    clamp_summary,
    field_map,
    field_text,
    go_trim,
    go_value_text,
)

__all__ = ["go_value_text", "summarize_envelope", "summarize_plain"]

RETURNED_ERROR = "Eshu query returned an error."

_PLAIN_COUNT_KEYS = (
    "count",
    "total",
    "total_findings",
    "total_reconciliations",
    "total_correlations",
    "total_identities",
    "total_attachments",
)


def _join(prefix: str, body: str) -> str:
    prefix = go_trim(prefix)
    body = go_trim(body)
    if not prefix and not body:
        return COMPLETED
    if not prefix:
        return body
    if not body:
        return prefix
    return prefix + SEPARATOR + body


# Envelope path --------------------------------------------------------------


def _error_text(error: dict) -> str:
    code = go_trim(field_text(error, "code"))
    message = go_trim(field_text(error, "message"))
    if code and message:
        return f"error {code}: {message}"
    if code:
        return f"error {code}"
    if message:
        return message
    return RETURNED_ERROR


def _truth_prefix(truth: Any) -> str:
    if not isinstance(truth, dict):
        return ""
    freshness = field_map(truth, "freshness")
    level = go_trim(field_text(truth, "level"))
    state = go_trim(field_text(freshness, "state"))
    if level and state:
        prefix = f"{level}/{state}"
        if state != "fresh":
            note = _freshness_note(freshness)
            if note:
                prefix += " (" + clamp_field(note) + ")"
        return prefix
    return level or state


def _freshness_note(freshness: dict | None) -> str:
    cause = go_trim(field_text(freshness, "cause"))
    detail = go_trim(field_text(freshness, "detail"))
    if cause and detail:
        return f"cause: {cause}; {detail}"
    if cause:
        return f"cause: {cause}"
    return detail


def _generic_envelope(data: Any) -> str:
    if isinstance(data, dict):
        if "count" in data:
            return f"Returned {go_value_text(data['count'])} result(s)."
        if "affected_count" in data:
            return f"Found {go_value_text(data['affected_count'])} affected result(s)."
    return COMPLETED


def summarize_envelope(tool: str, envelope: dict | None) -> str:
    """
    The summary of a canonical-envelope answer (spec §10.2).

    An error envelope reads ``error <code>: <message>`` with no truth prefix;
    otherwise ``<level>/<state>`` (plus a freshness note when not fresh) leads the
    tool family's text, or a generic count line.
    """
    if not isinstance(envelope, dict):
        return COMPLETED
    error = envelope.get("error")
    if error is not None:
        return clamp_summary(_error_text(error if isinstance(error, dict) else {}))
    data = envelope.get("data")
    body = ""
    if isinstance(data, dict):
        family = ENVELOPE_FAMILIES.get(tool)
        if family is not None:
            body = family(data)
    prefix = _truth_prefix(envelope.get("truth"))
    return clamp_summary(_join(prefix, body or _generic_envelope(data)))


# Plain path -----------------------------------------------------------------


def _generic_plain(value: Any) -> str:
    if isinstance(value, list):
        return f"Returned {len(value)} result(s)."
    if isinstance(value, dict):
        for key in _PLAIN_COUNT_KEYS:
            if key in value:
                return f"Returned {go_value_text(value[key])} result(s)."
    return COMPLETED


def summarize_plain(tool: str, value: Any) -> str:
    """The summary of a plain-JSON answer (spec §10.3); status tools get their own line."""
    body = ""
    family = PLAIN_FAMILIES.get(tool)
    if family is not None and isinstance(value, dict):
        body = family(value)
    return clamp_summary(body or _generic_plain(value))
