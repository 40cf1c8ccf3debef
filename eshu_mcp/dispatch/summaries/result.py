"""
The text block that leads every tool result (``content[0].text``): the answer itself.

A client that shows the model only this text must not lose the answer, so the
summary leads with it: a headline (the count, the subject, what was left out and
which call fetches more), then the top rows as ``path:line name`` lines, a call
chain as ``a -> b -> c``, the lines themselves for file tools. The truth tag
(``<level>/<state>``, with a note when not fresh) starts the headline. Summaries are
pure, deterministic, read only what the answer holds, never raise on any row shape,
and are bounded: 600 bytes for the headline, 240 for any other line, 4 KiB in all,
never splitting a UTF-8 character. The structured content stays the source of truth.
"""

from typing import Any

from twisted.logger import Logger

from eshu_mcp.dispatch.summaries.code import CODE_FAMILIES, listing
from eshu_mcp.dispatch.summaries.collected import COLLECTED_FAMILIES
from eshu_mcp.dispatch.summaries.families import ENVELOPE_FAMILIES, PLAIN_FAMILIES
from eshu_mcp.dispatch.summaries.graph import GRAPH_FAMILIES
from eshu_mcp.dispatch.summaries.packages import PACKAGE_FAMILIES
from eshu_mcp.dispatch.summaries.repositories import REPOSITORY_FAMILIES
from eshu_mcp.dispatch.summaries.text import (
    COMPLETED,
    MAX_SUMMARY_BYTES,
    SEPARATOR,
    clamp_field,
    clamp_headline,
    field_map,
    field_text,
    go_trim,
    go_value_text,
)
from eshu_mcp.query.reasons import (
    EMPTY_RANGE,
    NO_LOCAL_EVIDENCE,
    NO_TEXT_KEPT,
    NOT_MEASURED,
    NOT_SEARCHED,
    PAST_THE_END,
)

__all__ = ["go_value_text", "summarize_envelope", "summarize_plain"]

log = Logger()

RETURNED_ERROR = "Eshu query returned an error."
CUT_NOTE = "... (summary cut at 4 KiB; the structured content holds the whole answer)"
NOT_ABSENCE = "empty is not evidence of absence"

# Tool name -> the builder of its answer's lines (first line the headline).
ANSWER_FAMILIES = {
    **ENVELOPE_FAMILIES,
    **CODE_FAMILIES,
    **GRAPH_FAMILIES,
    **REPOSITORY_FAMILIES,
    **PACKAGE_FAMILIES,
    **COLLECTED_FAMILIES,
}

# An empty list is named in "No <key> found" only when its key names what was asked for.
_ANSWER_WORDS = frozenset(
    [
        "advisories",
        "artifacts",
        "attachments",
        "buckets",
        "bundles",
        "callees",
        "callers",
        "candidates",
        "capabilities",
        "chains",
        "citations",
        "components",
        "consumers",
        "correlations",
        "decisions",
        "definitions",
        "dependencies",
        "edges",
        "entities",
        "entries",
        "evidence",
        "facts",
        "findings",
        "generations",
        "hints",
        "identities",
        "items",
        "matches",
        "observations",
        "packages",
        "paths",
        "reconciliations",
        "relationships",
        "repositories",
        "resources",
        "results",
        "sections",
        "versions",
    ]
)

# Lists a generic summary never lists: aliases of another list, or bookkeeping.
_SIDE_LISTS = frozenset(
    {"matches", "partial_reasons", "recommended_next_calls", "limitations", "missing_evidence"}
)

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


def _bounded(headline: str, lines: list[str]) -> str:
    """The headline (600 bytes at most) and as many whole lines as fit in 4 KiB."""
    text = clamp_headline(headline)
    used = len(text.encode("utf-8"))
    room = MAX_SUMMARY_BYTES - len(CUT_NOTE) - 1
    for index, line in enumerate(lines):
        size = len(line.encode("utf-8")) + 1
        if (used + size > room and index < len(lines) - 1) or used + size > MAX_SUMMARY_BYTES:
            return text + "\n" + CUT_NOTE
        text += "\n" + line
        used += size
    return text


def _family_lines(tool: str, data: Any, families: dict) -> list[str]:
    """The family's lines for this answer, or none when it has nothing to say."""
    family = families.get(tool)
    if family is None or not isinstance(data, dict):
        return []
    try:
        lines = family(data)
    except Exception:
        # A summary must never cost the caller the answer: fall back to the generic text.
        log.failure("summary of a {tool} answer failed; using the generic text", tool=tool)
        return []
    if isinstance(lines, str):
        lines = [lines] if lines else []
    return [line for line in lines if isinstance(line, str)]


def _singular(key: str) -> str:
    words = key.replace("_", " ")
    if words.endswith("ies"):
        return words[:-3] + "y"
    if words.endswith("s") and not words.endswith("ss"):
        return words[:-1]
    return words


def _generic_lines(data: Any) -> list[str]:
    """Any answer: the first list of rows it holds, counted and listed, or its count."""
    if isinstance(data, list):
        rows = [row for row in data if isinstance(row, dict)]
        if rows:
            return listing({}, rows, "result", subject="")
        return [f"Returned {len(data)} result(s)."]
    if not isinstance(data, dict):
        return [COMPLETED]
    empty_key = ""
    for key, value in data.items():
        if key in _SIDE_LISTS or not isinstance(value, list):
            continue
        rows = [row for row in value if isinstance(row, dict)]
        if rows:
            noun = _singular(key)
            return listing(data, rows, noun, key.replace("_", " "))
        if not value and not empty_key and key.rsplit("_", 1)[-1] in _ANSWER_WORDS:
            empty_key = key
    if "count" in data:
        if empty_key and data["count"] in (0, None):
            return [f"No {empty_key.replace('_', ' ')} found"]
        return [f"Returned {go_value_text(data['count'])} result(s)."]
    if "affected_count" in data:
        return [f"Found {go_value_text(data['affected_count'])} affected result(s)."]
    if empty_key:
        return [f"No {empty_key.replace('_', ' ')} found"]
    return [COMPLETED]


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
        if state != "fresh" or field_text(freshness, "detail"):
            # a fresh answer's detail says how it was kept fresh; a cause only comes with stale
            note = (
                _freshness_note(freshness)
                if state != "fresh"
                else go_trim(field_text(freshness, "detail"))
            )
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


def _unavailable(truth: Any) -> bool:
    return field_text(field_map(truth, "freshness"), "state") == "unavailable"


def summarize_envelope(tool: str, envelope: dict | None) -> str:
    """
    The summary of a canonical-envelope answer.

    An error envelope reads ``error <code>: <message>`` with no truth prefix;
    otherwise ``<level>/<state>`` (plus a freshness note when not fresh) leads the
    headline of the tool family's lines, or of the generic lines for any answer.
    An empty answer whose source is unavailable says that empty is not absence.
    """
    if not isinstance(envelope, dict):
        return COMPLETED
    error = envelope.get("error")
    if error is not None:
        return clamp_headline(_error_text(error if isinstance(error, dict) else {}))
    data = envelope.get("data")
    truth = envelope.get("truth")
    lines = _family_lines(tool, data, ANSWER_FAMILIES) or _generic_lines(data)
    headline = lines[0]
    if _unavailable(truth):
        if headline == COMPLETED or headline.startswith(("Returned 0 ", "Found 0 ")):
            headline = "Nothing found"
        if headline.startswith(("No ", "Nothing found")):
            headline += f"; {NOT_ABSENCE}"
    elif headline.startswith(("No ", "Nothing found")):
        reason = field_text(truth, "reason") if isinstance(truth, dict) else ""
        if NO_LOCAL_EVIDENCE in reason:  # a local collector that read no file says so
            headline += f": {reason.split(';', 1)[0]}"
    elif headline.endswith("(empty)"):
        reason = field_text(truth, "reason") if isinstance(truth, dict) else ""
        # a line range after the last line or backwards, or a file without text, says so
        if any(marker in reason for marker in (PAST_THE_END, EMPTY_RANGE, NO_TEXT_KEPT)):
            headline = f"{headline.removesuffix(' (empty)')}: {reason}"
    reason = field_text(truth, "reason") if isinstance(truth, dict) else ""
    if NOT_SEARCHED in reason:  # a search that could not read every file in scope says so
        headline += "; " + reason.split("; ", 1)[-1]
    unmeasured = [part for part in reason.split("; ") if NOT_MEASURED in part]
    if unmeasured and NOT_MEASURED not in headline:  # functions left out of a complexity answer
        headline += "; " + unmeasured[0]
    return _bounded(_join(_truth_prefix(truth), headline), lines[1:])


# Plain path -----------------------------------------------------------------


def _generic_plain(value: Any) -> list[str]:
    if isinstance(value, list):
        return [f"Returned {len(value)} result(s)."]
    if isinstance(value, dict):
        for key in _PLAIN_COUNT_KEYS:
            if key in value:
                return [f"Returned {go_value_text(value[key])} result(s)."]
        lines = _generic_lines(value)
        if lines != [COMPLETED] and not lines[0].startswith("No "):
            return lines
        for key in ("state", "status"):
            state = value.get(key)
            if isinstance(state, str) and state:
                reason = value.get("reason") or value.get("detail")
                text = f"{key}: {state}"
                return [text + SEPARATOR + reason if isinstance(reason, str) and reason else text]
    return [COMPLETED]


def summarize_plain(tool: str, value: Any) -> str:
    """The summary of a plain-JSON answer (status routes): the family's line, or a count."""
    lines = _family_lines(tool, value, PLAIN_FAMILIES) or _generic_plain(value)
    return _bounded(lines[0], lines[1:])
