"""
The one-line text summary that leads every tool result (``content[0].text``).

Summaries are for a human or a model skimming the answer; the structured content
stays the source of truth. They are pure, deterministic, read only what the
answer already holds and are bounded: 600 bytes in all, 120 bytes for any one
embedded field (spec §10). Unlike the Go reference, a clamp never splits a UTF-8
character: the cut moves back to a character boundary before ``...``.
"""

import math
from typing import Any

__all__ = ["go_value_text", "summarize_envelope", "summarize_plain"]

MAX_SUMMARY_BYTES = 600
MAX_FIELD_BYTES = 120

COMPLETED = "Eshu query completed."
RETURNED_ERROR = "Eshu query returned an error."
SEPARATOR = " \u2014 "

# The characters Go's strings.TrimSpace removes (unicode.IsSpace); str.strip()
# would also remove U+001C..U+001F, which Go keeps.
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

_STORY_TOOLS = frozenset({"get_service_story", "get_workload_story", "get_repo_story"})
_PLAIN_COUNT_KEYS = (
    "count",
    "total",
    "total_findings",
    "total_reconciliations",
    "total_correlations",
    "total_identities",
    "total_attachments",
)
_INT64_MIN = -(2**63)


# Go value rendering ---------------------------------------------------------


def _go_float_text(number: float) -> str:
    """Go's ``%v`` for a float64: shortest digits, exponent form below 1e-4 and from 1e+06."""
    if number == 0:
        return "-0" if math.copysign(1.0, number) < 0 else "0"
    shortest = repr(number)
    digits = shortest.partition("e")[0].lstrip("-").replace(".", "").strip("0")
    scientific = f"{number:.{max(len(digits), 1) - 1}e}"
    mantissa, _, exponent = scientific.partition("e")
    power = int(exponent)
    if power < -4 or power >= 6:
        return f"{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    return shortest[:-2] if shortest.endswith(".0") else shortest


def go_value_text(value: Any) -> str:
    """Render a decoded JSON value as Go's ``%v`` does (``1e+06``, ``<nil>``, ``map[a:1]``)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        try:
            return _go_float_text(float(value))
        except OverflowError:
            return str(value)
    if isinstance(value, float):
        return _go_float_text(value)
    if isinstance(value, dict):
        pairs = (f"{key}:{go_value_text(value[key])}" for key in sorted(value))
        return "map[" + " ".join(pairs) + "]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(go_value_text(item) for item in value) + "]"
    return str(value)


# Lenient field readers (a missing or mistyped value reads as zero) ----------


def _map(container: Any, key: str) -> dict | None:
    if isinstance(container, dict):
        value = container.get(key)
        if isinstance(value, dict):
            return value
    return None


def _string(container: Any, key: str) -> str:
    """A string field; other present values are rendered with ``%v``."""
    if not isinstance(container, dict):
        return ""
    value = container.get(key)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return go_value_text(value)


def _int(container: Any, key: str) -> int:
    """An integer field, truncated toward zero as Go's ``int(float64)``."""
    if not isinstance(container, dict):
        return 0
    value = container.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if isinstance(value, float) and not -(2.0**63) <= value < 2.0**63:
        return _INT64_MIN
    return int(value)


def _bool(container: Any, key: str) -> bool:
    return isinstance(container, dict) and container.get(key) is True


def _length(container: Any, key: str) -> int:
    if isinstance(container, dict):
        value = container.get(key)
        if isinstance(value, list):
            return len(value)
    return 0


def _strings(container: Any, key: str) -> list[str]:
    """The string elements of a list field; other elements are skipped."""
    if isinstance(container, dict):
        value = container.get(key)
        if isinstance(value, list):
            return [item for item in value if isinstance(item, str)]
    return []


def _rows(container: Any, key: str) -> list[dict]:
    """The object elements of a list field."""
    if isinstance(container, dict):
        value = container.get(key)
        if isinstance(value, list):
            return [item for item in value if isinstance(item, dict)]
    return []


# Clamps and joins -----------------------------------------------------------


def _trim(text: str) -> str:
    return text.strip(_GO_SPACE)


def _clamp(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` UTF-8 bytes, ending in ``...``, never inside a character."""
    encoded = text.encode("utf-8", "replace")
    if len(encoded) <= limit:
        return text
    return encoded[: limit - 3].decode("utf-8", "ignore") + "..."


def _clamp_summary(text: str) -> str:
    return _clamp(text, MAX_SUMMARY_BYTES)


def _clamp_field(text: str) -> str:
    return _clamp(_trim(text.replace("\n", " ")), MAX_FIELD_BYTES)


def _join(prefix: str, body: str) -> str:
    prefix = _trim(prefix)
    body = _trim(body)
    if not prefix and not body:
        return COMPLETED
    if not prefix:
        return body
    if not body:
        return prefix
    return prefix + SEPARATOR + body


def _with_more(text: str, first: str, count: int) -> str:
    """Append `` — <first>`` and `` (+N more)`` for a list led by ``first``."""
    text += SEPARATOR + _clamp_field(first)
    if count > 1:
        text += f" (+{count - 1} more)"
    return text


# Envelope path --------------------------------------------------------------


def _error_text(error: dict) -> str:
    code = _trim(_string(error, "code"))
    message = _trim(_string(error, "message"))
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
    freshness = _map(truth, "freshness")
    level = _trim(_string(truth, "level"))
    state = _trim(_string(freshness, "state"))
    if level and state:
        prefix = f"{level}/{state}"
        if state != "fresh":
            note = _freshness_note(freshness)
            if note:
                prefix += " (" + _clamp_field(note) + ")"
        return prefix
    return level or state


def _freshness_note(freshness: dict | None) -> str:
    cause = _trim(_string(freshness, "cause"))
    detail = _trim(_string(freshness, "detail"))
    if cause and detail:
        return f"cause: {cause}; {detail}"
    if cause:
        return f"cause: {cause}"
    return detail


def _story(data: dict) -> str:
    identity = _map(data, "service_identity")
    surface = _map(data, "api_surface")
    limits = _map(data, "result_limits")
    metadata = _map(data, "answer_metadata")
    name = _string(identity, "service_name") or _string(identity, "service_id") or "service"
    api = f"API surface {_int(surface, 'endpoint_count')}"
    if _bool(surface, "truncated") or _bool(metadata, "truncated"):
        api += " (truncated)"
    text = "; ".join(
        (
            _clamp_field(name),
            api,
            f"deps {_int(limits, 'upstream_count')}",
            f"consumers {_int(limits, 'downstream_count')}",
        )
    )
    limitation, count = _top_metadata_limitation(metadata)
    if not limitation:
        identity_limitations = _strings(identity, "limitations")
        if identity_limitations:
            limitation, count = identity_limitations[0], len(identity_limitations)
    if limitation:
        text += "; top limitation: " + _clamp_field(limitation)
        if count > 1:
            text += f" (+{count - 1} more)"
    return text


def _top_metadata_limitation(metadata: dict | None) -> tuple[str, int]:
    rows = _rows(metadata, "limitations")
    for row in rows:
        for key in ("reason", "kind", "slot"):
            reason = _string(row, key)
            if reason:
                return reason, len(rows)
    return "", len(rows)


def _investigation(data: dict) -> str:
    name = _string(data, "service_name") or "service"
    coverage = _map(data, "coverage_summary")
    text = f"{_clamp_field(name)}{SEPARATOR}{_length(data, 'investigation_findings')} finding(s)"
    if _bool(coverage, "truncated"):
        text += " (truncated)"
    state = _string(coverage, "state")
    if state:
        text += "; coverage " + state
    calls = data.get("recommended_next_calls")
    if isinstance(calls, list) and calls and isinstance(calls[0], dict):
        next_tool = _string(calls[0], "tool")
        if next_tool:
            text += "; next: " + _clamp_field(next_tool)
    return text


def _incident(data: dict) -> str:
    incident = _map(data, "incident")
    metadata = _map(data, "answer_metadata")
    title = _string(incident, "title") or _string(incident, "provider_incident_id") or "incident"
    missing = _length(metadata, "missing_evidence") or _length(data, "missing_evidence")
    text = (
        f"{_clamp_field(title)}{SEPARATOR}{_length(data, 'related_changes')} related change(s)"
        f"; missing evidence {missing}; ambiguous {_length(data, 'ambiguous_evidence')}"
    )
    if _bool(data, "truncated") or _bool(metadata, "truncated"):
        text += "; truncated"
    return text


def _citation(data: dict) -> str:
    coverage = _map(data, "coverage")
    if coverage is None:
        return ""
    text = (
        f"coverage: resolved {_int(coverage, 'resolved_count')}"
        f"/requested {_int(coverage, 'input_handle_count')}"
        f"; missing {_int(coverage, 'missing_count')}"
    )
    if _bool(coverage, "truncated"):
        text += " (truncated)"
    return text


def _visualization(data: dict) -> str:
    packet = _map(data, "visualization_packet")
    if packet is None:
        return ""
    view = _trim(_string(packet, "view"))
    if packet.get("supported") is True:
        return (
            f"visualization {view}: {_length(packet, 'nodes')} node(s), "
            f"{_length(packet, 'edges')} edge(s)"
        )
    limitations = packet.get("limitations")
    first = ""
    if isinstance(limitations, list) and limitations and isinstance(limitations[0], str):
        first = _trim(limitations[0])
    if first:
        return f"visualization {view} unsupported: {_clamp_field(first)}"
    return f"visualization {view} unsupported"


def _code_relationships(data: dict) -> str:
    relationships = data.get("relationships")
    if not isinstance(relationships, list):
        return ""
    derived = heuristic = unsupported = 0
    for row in relationships:
        state = _string(_map(row, "provenance"), "truth_state")
        if state == "derived":
            derived += 1
        elif state == "heuristic":
            heuristic += 1
        else:
            unsupported += 1
    parts = [
        f"{len(relationships)} relationship(s): {derived} derived, "
        f"{heuristic} heuristic/ambiguous, {unsupported} unsupported"
    ]
    if heuristic:
        parts.append("heuristic edges are correlation evidence, not canonical code truth")
    if unsupported:
        parts.append("unsupported edges carry no recorded confidence")
    coverage = _map(data, "coverage")
    explanation = _string(coverage, "evidence_explanation")
    if explanation:
        reason = _string(coverage, "missing_edge_reason")
        if reason and reason != "complete":
            parts.append(f"{reason}: {explanation}")
    return "; ".join(parts)


_ENVELOPE_FAMILIES = {
    "investigate_service": _investigation,
    "get_incident_context": _incident,
    "build_evidence_citation_packet": _citation,
    "derive_visualization_packet": _visualization,
    "analyze_code_relationships": _code_relationships,
}


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
        return _clamp_summary(_error_text(error if isinstance(error, dict) else {}))
    data = envelope.get("data")
    body = ""
    if isinstance(data, dict):
        family = _story if tool in _STORY_TOOLS else _ENVELOPE_FAMILIES.get(tool)
        if family is not None:
            body = family(data)
    prefix = _truth_prefix(envelope.get("truth"))
    return _clamp_summary(_join(prefix, body or _generic_envelope(data)))


# Plain path -----------------------------------------------------------------


def _index_status(data: dict) -> str:
    status = _string(data, "status")
    if not status:
        return ""
    text = "index status: " + _clamp_field(status)
    reasons = _strings(data, "reasons")
    return _with_more(text, reasons[0], len(reasons)) if reasons else text


def _hosted_readiness(data: dict) -> str:
    state = _string(data, "state")
    if not state:
        return ""
    text = "hosted readiness: " + _clamp_field(state)
    failures = _strings(data, "failure_classes")
    return _with_more(text, failures[0], len(failures)) if failures else text


def _ingester_status(data: dict) -> str:
    name = _string(data, "ingester")
    if not name:
        return ""
    health = _map(data, "health")
    state = _string(health, "state") or "unknown"
    text = f"ingester {_clamp_field(name)}: {_clamp_field(state)}"
    reasons = _strings(health, "reasons")
    return _with_more(text, reasons[0], len(reasons)) if reasons else text


def _registered(key: str, noun: str):
    def summarize(data: dict) -> str:
        if key not in data:
            return ""
        return f"{_length(data, key)} {noun}(s) registered"

    return summarize


_PLAIN_FAMILIES = {
    "get_index_status": _index_status,
    "get_hosted_readiness": _hosted_readiness,
    "get_ingester_status": _ingester_status,
    "list_ingesters": _registered("ingesters", "ingester"),
    "list_collectors": _registered("collectors", "collector"),
}


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
    family = _PLAIN_FAMILIES.get(tool)
    if family is not None and isinstance(value, dict):
        body = family(value)
    return _clamp_summary(body or _generic_plain(value))
