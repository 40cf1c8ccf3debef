"""
Per-family summary bodies: the line a tool family's answer gets after the truth prefix.

Each builder reads only what the answer already holds and returns ``""`` when the
answer lacks what it summarises, so the caller falls back to a generic count line.
"""

from collections.abc import Callable

from eshu_mcp.dispatch.summaries.text import (
    SEPARATOR,
    clamp_field,
    field_int,
    field_length,
    field_map,
    field_rows,
    field_strings,
    field_text,
    field_true,
    go_trim,
    plural,
    with_more,
)

__all__ = ["ENVELOPE_FAMILIES", "PLAIN_FAMILIES"]

Family = Callable[[dict], str]


# Envelope families ----------------------------------------------------------


def _story(data: dict) -> str:
    identity = field_map(data, "service_identity")
    surface = field_map(data, "api_surface")
    limits = field_map(data, "result_limits")
    metadata = field_map(data, "answer_metadata")
    name = field_text(identity, "service_name") or field_text(identity, "service_id") or "service"
    api = f"API surface {field_int(surface, 'endpoint_count')}"
    if field_true(surface, "truncated") or field_true(metadata, "truncated"):
        api += " (truncated)"
    text = "; ".join(
        (
            clamp_field(name),
            api,
            f"deps {field_int(limits, 'upstream_count')}",
            f"consumers {field_int(limits, 'downstream_count')}",
        )
    )
    limitation, count = _top_metadata_limitation(metadata)
    if not limitation:
        identity_limitations = field_strings(identity, "limitations")
        if identity_limitations:
            limitation, count = identity_limitations[0], len(identity_limitations)
    if limitation:
        text += "; top limitation: " + clamp_field(limitation)
        if count > 1:
            text += f" (+{count - 1} more)"
    return text


def _top_metadata_limitation(metadata: dict | None) -> tuple[str, int]:
    rows = field_rows(metadata, "limitations")
    for row in rows:
        for key in ("reason", "kind", "slot"):
            reason = field_text(row, key)
            if reason:
                return reason, len(rows)
    return "", len(rows)


def _investigation(data: dict) -> str:
    name = field_text(data, "service_name") or "service"
    coverage = field_map(data, "coverage_summary")
    text = (
        f"{clamp_field(name)}{SEPARATOR}{field_length(data, 'investigation_findings')} finding(s)"
    )
    if field_true(coverage, "truncated"):
        text += " (truncated)"
    state = field_text(coverage, "state")
    if state:
        text += "; coverage " + state
    calls = data.get("recommended_next_calls")
    if isinstance(calls, list) and calls and isinstance(calls[0], dict):
        next_tool = field_text(calls[0], "tool")
        if next_tool:
            text += "; next: " + clamp_field(next_tool)
    return text


def _incident(data: dict) -> str:
    incident = field_map(data, "incident")
    metadata = field_map(data, "answer_metadata")
    title = (
        field_text(incident, "title") or field_text(incident, "provider_incident_id") or "incident"
    )
    missing = field_length(metadata, "missing_evidence") or field_length(data, "missing_evidence")
    text = (
        f"{clamp_field(title)}{SEPARATOR}{field_length(data, 'related_changes')} related change(s)"
        f"; missing evidence {missing}; ambiguous {field_length(data, 'ambiguous_evidence')}"
    )
    if field_true(data, "truncated") or field_true(metadata, "truncated"):
        text += "; truncated"
    return text


def _citation(data: dict) -> str:
    coverage = field_map(data, "coverage")
    if coverage is None:
        return ""
    text = (
        f"coverage: resolved {field_int(coverage, 'resolved_count')}"
        f"/requested {field_int(coverage, 'input_handle_count')}"
        f"; missing {field_int(coverage, 'missing_count')}"
    )
    # A compact coverage block leaves a flag the answer states at its top level to it.
    if field_true(coverage, "truncated") or field_true(data, "truncated"):
        text += " (truncated)"
    return text


def _visualization(data: dict) -> str:
    packet = field_map(data, "visualization_packet")
    if packet is None:
        return ""
    view = go_trim(field_text(packet, "view"))
    if packet.get("supported") is True:
        return (
            f"visualization {view}: {field_length(packet, 'nodes')} node(s), "
            f"{field_length(packet, 'edges')} edge(s)"
        )
    limitations = packet.get("limitations")
    first = ""
    if isinstance(limitations, list) and limitations and isinstance(limitations[0], str):
        first = go_trim(limitations[0])
    if first:
        return f"visualization {view} unsupported: {clamp_field(first)}"
    return f"visualization {view} unsupported"


ENVELOPE_FAMILIES: dict[str, Family] = {
    "get_service_story": _story,
    "get_workload_story": _story,
    "investigate_service": _investigation,
    "get_incident_context": _incident,
    "build_evidence_citation_packet": _citation,
    "derive_visualization_packet": _visualization,
}


# Plain families -------------------------------------------------------------


def _state_line(key: str, label: str, list_key: str) -> Family:
    """``<label>: <state>`` and the first of a list of reasons, for a plain status answer."""

    def summarize(data: dict) -> str:
        state = field_text(data, key)
        if not state:
            return ""
        return with_more(f"{label}: " + clamp_field(state), field_strings(data, list_key))

    return summarize


def _index_status(data: dict) -> str:
    """``index status: <state>``, the repositories and the queue, then the first reason."""
    state = field_text(data, "status")
    if not state:
        return ""
    facts = []
    repositories = data.get("repository_count")
    if isinstance(repositories, int) and not isinstance(repositories, bool):
        activity = field_map(data, "scope_activity") or {}
        changed = activity.get("changed")
        facts.append(
            f"{plural(repositories, 'repository', 'repositories')} indexed"
            + (f", {changed} changed since the last build" if isinstance(changed, int) else "")
        )
    queue = field_map(data, "queue") or {}
    outstanding = queue.get("outstanding")
    if isinstance(outstanding, int) and not isinstance(outstanding, bool):
        age = field_text(queue, "oldest_outstanding_age")
        waiting = f"{plural(outstanding, 'build')} waiting"
        facts.append(f"{waiting} (oldest {age})" if outstanding and age else waiting)
    text = f"index status: {clamp_field(state)}" + (f" ({'; '.join(facts)})" if facts else "")
    return with_more(text, field_strings(data, "reasons"))


def _ingester_status(data: dict) -> str:
    name = field_text(data, "ingester")
    if not name:
        return ""
    health = field_map(data, "health")
    state = field_text(health, "state") or "unknown"
    text = f"ingester {clamp_field(name)}: {clamp_field(state)}"
    return with_more(text, field_strings(health, "reasons"))


def _registered(key: str, noun: str) -> Family:
    """``<N> <noun>(s) registered`` for a plain list answer."""

    def summarize(data: dict) -> str:
        if key not in data:
            return ""
        return f"{field_length(data, key)} {noun}(s) registered"

    return summarize


def _collectors(data: dict) -> str:
    """``<N> collector(s) registered``, then the evidence the first one found."""
    if "collectors" not in data:
        return ""
    text = f"{field_length(data, 'collectors')} collector(s) registered"
    rows = field_rows(data, "collectors")
    sources = [s for s in field_strings(rows[0], "evidence_sources") if s != "git"] if rows else []
    if sources:
        text += f"; local evidence read from the repositories: {', '.join(sources)}"
    elif rows:
        text += "; no local collector found files it reads"
    return text


PLAIN_FAMILIES: dict[str, Family] = {
    "get_index_status": _index_status,
    "get_hosted_readiness": _state_line("state", "hosted readiness", "failure_classes"),
    "get_ingester_status": _ingester_status,
    "list_ingesters": _registered("ingesters", "ingester"),
    "list_collectors": _collectors,
}
