"""
The compact answer view: Eshu's answer shapes with what a model need not read taken out.

A query Resource applies :func:`compact_answer` to an answer's ``data`` when the request
carries ``Eshu-Answer-Detail: compact`` (MCP dispatch sets it on every tool call; plain
HTTP callers get Eshu's full shape unless they send it). The view keeps every key a
reader needs to act on a row (name, path, line numbers, entity id, repository id) and
takes out:

* entity source in rows (``source_cache``), cut to its header (or the line holding the
  searched text, with ``source_snippet_start_line``) and marked ``source_truncated``;
  ``get_entity_content`` with the row's ``entity_id`` fetches it whole;
* alias arrays (``matches`` repeating ``results``) and per-row copies of what the row or
  the answer already says (``entity_name`` = ``name``, ``relative_path`` = ``file_path``,
  handles spelling the row's own id and span, repository names, per-row backends);
* long metadata strings (docstrings cut to their first paragraph), empty strings and
  objects, and empty lists inside rows;
* in relationship rows, the anchor side (the answer's ``target_resolution`` states it
  once), the other side's end line (and its start line when it is the edge's line), the
  provenance block unless its ``truth_state`` is not the usual ``derived``, and the edge
  fields every row shares (``relationships_shared`` states them once);
* coverage entries the answer's summary or scope already states, ranks that are the
  rows' order, handles that only spell the row's own id or path, and a dead-code
  analysis's static policy lists;
* explicit content reads (``get_file_content``, ``get_file_lines``,
  ``get_entity_content``) past :data:`CONTENT_LINES` lines or :data:`CONTENT_BYTES`
  bytes, marked ``content_truncated`` with the ``get_file_lines`` call for the rest.

Pure functions over decoded JSON values, shared by the local and upstream Resources.
"""

from typing import Any

from eshu_mcp.query.compact_blocks import state_blocks_once
from eshu_mcp.query.compact_rows import calls_repeat_row, handle_repeats, lean_recursion_row

__all__ = [
    "ANSWER_DETAIL_HEADER",
    "COMPACT",
    "CONTENT_BYTES",
    "CONTENT_LINES",
    "FULL",
    "ROW_SOURCE_CHARS",
    "ROW_SOURCE_LINES",
    "compact_answer",
    "wants_compact",
]

ANSWER_DETAIL_HEADER = b"eshu-answer-detail"
COMPACT = "compact"
FULL = "full"
ANSWER_DETAILS = (COMPACT, FULL)

ROW_SOURCE_LINES = 4
ROW_SOURCE_CHARS = 320
ROW_WHOLE_LINES = 2
"""A row's source this short is kept whole; longer ones are cut to the header."""
TEXT_CHARS = 160
CONTENT_LINES = 400
CONTENT_BYTES = 10240

SOURCE_NOTE = "source_truncated: signature or searched lines only; get_entity_content(entity_id)"

# Keys a row repeats from the answer around it, or ranking internals.
_ROW_REPEATS = frozenset({"source_backend", "source_repo_name", "target_repo_name", "centrality"})
# Row keys dropped when they hold the repository or language the answer states once.
_SCOPE_KEYS = {
    "repo_id": "repo",
    "source_repo_id": "repo",
    "target_repo_id": "repo",
    "language": "language",
    "source_language": "language",
    "target_language": "language",
}
# Where an answer states once the repository or language that all of its rows share.
_HOISTED_KEYS = {"repo": "repo_id", "language": "language"}
# How deep the search for row lists goes, and how many rows it reads.
_ROW_SEARCH_DEPTH = 3
_ROW_SEARCH_ROWS = 2000
# Row keys dropped when they hold the value every row has unless it says otherwise.
_ROW_DEFAULTS = {"edge_origin": "direct_code_edge", "call_kind": "call"}
# Lines ending so close a declaration's header (Python, C-family, Go, Rust, Ruby...).
_HEADER_ENDS = (":", "{", "=>", " do")
# Details of a relationship's anchor side that target_resolution states once.
_SIDE_DETAILS = ("file_path", "start_line", "end_line", "language", "type", "repo_id")
# Compares unequal to every value: no answer-level value to match.
_NOTHING = object()
# Echoes of what the read returned that answer nothing.
_CONTENT_ECHOES = ("content_hash", "search_backend")


def wants_compact(header_value: bytes | str | None) -> bool:
    """Whether an ``Eshu-Answer-Detail`` header value asks for the compact view."""
    if isinstance(header_value, bytes):
        header_value = header_value.decode("latin-1")
    return (header_value or "").strip().lower() == COMPACT


class _View:
    """What the walk needs from the answer as a whole."""

    def __init__(self, data: dict, request: Any) -> None:
        request = request if isinstance(request, dict) else {}
        resolution = data.get("target_resolution")
        anchor = resolution.get("entity_id") if isinstance(resolution, dict) else None
        self.anchor = anchor if isinstance(anchor, str) and anchor else None
        stated = resolution if isinstance(resolution, dict) else data
        self.scope = {
            "repo": _text(stated.get("repo_id")),
            "language": _text(stated.get("language")),
        }
        self.hoisted: dict[str, str] = {}
        for scope, shared in _shared_scope(data).items():
            if self.scope[scope] is None:
                self.scope[scope] = self.hoisted[_HOISTED_KEYS[scope]] = shared
        asked = data.get("scope") if isinstance(data.get("scope"), dict) else {}
        direction = asked.get("direction")
        self.direction = direction if direction in ("incoming", "outgoing") else None
        coverage = data.get("coverage") if isinstance(data.get("coverage"), dict) else {}
        types = asked.get("relationship_types", coverage.get("relationship_types"))
        self.relationship_type = types[0] if isinstance(types, list) and len(types) == 1 else None
        searched = (
            source.get(key) for source in (data, request) for key in ("pattern", "query", "symbol")
        )
        focus = next((value for value in searched if isinstance(value, str) and value), None)
        self.focus = focus.lower() if focus else None
        # What every row's ``match_kind`` says when it repeats how the answer matched.
        self.match_kinds = {
            data[key] for key in ("match_mode", "inventory_kind") if isinstance(data.get(key), str)
        }
        self.searched_terms = data.get("searched_terms", _NOTHING)
        self.request = request
        self.cut_sources = 0


def compact_answer(data: Any, request: dict | None = None) -> Any:
    """
    The compact view of an answer's ``data``; ``request`` is the route's arguments.

    ``data`` is not changed; a value with nothing to compact comes back equal.
    """
    if not isinstance(data, dict):
        return _walk(data, None, in_row=False)
    view = _View(data, request)
    out = _content_read(data, view)
    if out is None:
        out = _object(data, view, in_row=False)
        for key, value in view.hoisted.items():
            out.setdefault(key, value)
        state_blocks_once(out)
    if view.cut_sources:
        out["source_note"] = SOURCE_NOTE
    return out


def _walk(value: Any, view: _View | None, *, in_row: bool) -> Any:
    if isinstance(value, list):
        rows = [_walk(item, view, in_row=True) for item in value]
        if view is not None and _ranked_in_order(rows):
            rows = [{key: item for key, item in row.items() if key != "rank"} for row in rows]
        return rows
    if isinstance(value, dict) and view is not None:
        return _object(value, view, in_row=in_row)
    return value


def _ranked_in_order(rows: list) -> bool:
    """Whether every row's ``rank`` is its place in the list (so the order says it)."""
    if len(rows) < 2 or not all(isinstance(row, dict) for row in rows):
        return False
    ranks = [row.get("rank") for row in rows]
    if not all(isinstance(rank, int) and not isinstance(rank, bool) for rank in ranks):
        return False
    return ranks == list(range(ranks[0], ranks[0] + len(ranks)))


def _alias_of(obj: dict, key: str) -> bool:
    """Whether ``obj[key]`` is a list another key of ``obj`` already holds."""
    value = obj[key]
    if key != "matches" or not isinstance(value, list):
        return False
    return any(
        other is value or (isinstance(other, list) and other == value)
        for name, other in obj.items()
        if name != key
    )


def _object(obj: dict, view: _View, *, in_row: bool) -> dict:
    out: dict[str, Any] = {}
    for key, value in obj.items():
        empty = value == "" or value == {} or (in_row and value == [])
        if empty or _redundant(obj, key, value, in_row, view):
            continue
        if key == "source_cache" and in_row and isinstance(value, str):
            _row_source(out, obj, value, view)
        elif key == "metadata" and isinstance(value, dict):
            out[key] = _metadata(value, obj if in_row else None)
            if not out[key]:
                del out[key]
        elif key == "provenance" and in_row and isinstance(value, dict):
            # Only a row whose truth differs from the answer's (a heuristic edge) says so.
            if value.get("truth_state") not in (None, "derived"):
                out[key] = {"truth_state": value["truth_state"]}
        elif key == "docstring" and isinstance(value, str):
            out[key] = _first_paragraph(value)
        else:
            out[key] = _walk(value, view, in_row=in_row)
    if in_row and "recursion_kind" in obj:
        lean_recursion_row(out)
    if in_row:
        # A row grouped under one of a shared name's definitions has that group's id as
        # its anchor; ``definition_groups`` states each definition once.
        anchor = view.anchor or _text(obj.get("definition_entity_id"))
        if anchor:
            _drop_anchor_side(out, anchor, obj.get("direction", view.direction))
    return out


def _redundant(obj: dict, key: str, value: Any, in_row: bool, view: _View) -> bool:
    """Whether ``obj[key]`` repeats something the row or the answer already says."""
    if key == "matches":
        return _alias_of(obj, key)
    if not in_row:
        return False
    if key in _ROW_REPEATS or key in _CONTENT_ECHOES:
        return True
    if key in _SCOPE_KEYS:
        stated = view.scope[_SCOPE_KEYS[key]]
        return stated is not None and value == stated
    if _ROW_DEFAULTS.get(key) == value:
        return True
    if key == "direction" and "source_id" in obj:
        return value == view.direction
    if (key == "type" and "source_id" in obj) or key == "relationship_type":
        return value == view.relationship_type
    if key == "labels":
        return value == [obj.get("entity_type")]
    if key == "match_kind":
        return value in view.match_kinds
    if key in ("source_start_line", "target_start_line"):  # a declaration's own line
        return value == obj.get("line_number")
    if key == "name" and obj.get("type") in ("file", "dir"):  # a tree entry's last path part
        return isinstance(obj.get("path"), str) and obj["path"].rsplit("/", 1)[-1] == value
    if key == "edge_count_by_direction":  # one direction: the edge count says it
        return isinstance(value, dict) and len(value) == 1 and "edge_count" in obj
    if key == "rows_available":
        return value == obj.get("edge_count")
    if key == "definition_kind":
        return value == obj.get("entity_type")
    if key == "repo_name":
        return "repo_id" in obj
    if key == "entity_name":
        return value == obj.get("name")
    if key == "relative_path":
        return value == obj.get("file_path")
    if key == "reason":
        return value == obj.get("resolution_method")
    if key.endswith("_handle") or key == "handle":
        return handle_repeats(obj, key, value)
    if key == "recommended_next_calls":
        return calls_repeat_row(obj, value)
    if key == "matched_terms":
        return value == view.searched_terms
    return False


def _shared_scope(data: dict) -> dict[str, str]:
    """
    The repository and language every row of the answer shares (two rows or more), so
    each row can leave them out: an unscoped search in one repository repeats its id in
    every row otherwise.
    """
    seen: dict[str, set] = {"repo": set(), "language": set()}
    counted: set[int] = set()  # an alias list (``matches``) holds the same row objects
    pending: list[tuple[Any, int]] = [(data, 0)]
    while pending and len(counted) < _ROW_SEARCH_ROWS:
        value, depth = pending.pop()
        children = value.values() if isinstance(value, dict) else value
        for child in children:
            if isinstance(child, list) and depth < _ROW_SEARCH_DEPTH:
                for row in child:
                    if not isinstance(row, dict) or id(row) in counted:
                        continue
                    counted.add(id(row))
                    for key, scope in _SCOPE_KEYS.items():
                        if key in row:
                            seen[scope].add(row[key] if isinstance(row[key], str) else None)
                    pending.append((row, depth + 1))
            elif isinstance(child, dict) and depth < _ROW_SEARCH_DEPTH:
                pending.append((child, depth + 1))
    if len(counted) < 2 or pending:
        return {}
    return {
        scope: next(iter(values))
        for scope, values in seen.items()
        if len(values) == 1 and _text(next(iter(values)))
    }


def _drop_anchor_side(row: dict, anchor: str, direction: Any) -> None:
    """
    In a relationship row, drop the side that is the anchor (``target_resolution`` states
    it once) and the other side's end line (its start and the call's line place it). A
    call of the anchor by itself keeps the side the direction asks about: the caller of an
    incoming row, the callee of an outgoing one.
    """
    sides = (("source", "target"), ("target", "source"))
    for side, other in sides if direction == "outgoing" else sides[::-1]:
        if row.get(f"{side}_id") == anchor:
            for detail in (*_SIDE_DETAILS, "id", "name"):
                row.pop(f"{side}_{detail}", None)
            row.pop(f"{other}_end_line", None)
            return


def _first_paragraph(text: str) -> str:
    paragraph = text.strip().split("\n\n", 1)[0]
    paragraph = " ".join(paragraph.split())
    if len(paragraph) > TEXT_CHARS:
        paragraph = paragraph[: TEXT_CHARS - 1].rstrip() + "\u2026"
    return paragraph


def _metadata(metadata: dict, row: dict | None = None) -> dict:
    """
    Metadata with long strings cut and empty ones dropped. In a row it also loses what
    the row says elsewhere: argument names its source's signature shows, the class its
    ``class_name`` names, and inferred attribute types (a class's own source tells them).
    """
    signed = row is not None and "source_cache" in row
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if value == "" or (signed and key == "args"):
            continue
        if row is not None and (
            key == "attribute_types" or (key == "class_context" and row.get("class_name") == value)
        ):
            continue
        if isinstance(value, str) and (key == "docstring" or len(value) > TEXT_CHARS):
            value = _first_paragraph(value)
        out[key] = value
    return out


def _row_source(out: dict, row: dict, source: str, view: _View) -> None:
    """Put a bounded snippet of a row's source in ``out``, marked when it was cut."""
    lines = source.split("\n")
    if len(lines) <= ROW_WHOLE_LINES and len(source) <= ROW_SOURCE_CHARS // 2:
        out["source_cache"] = source
        return
    first, count = 0, _header_lines(lines)
    if view.focus:
        hit = next((i for i, line in enumerate(lines) if view.focus in line.lower()), 0)
        if hit >= count:
            first, count = hit, 1
    snippet = "\n".join(lines[first : first + count])[:ROW_SOURCE_CHARS]
    if first:  # the searched line alone: its own line number places it
        snippet = snippet.strip()
    out["source_cache"] = snippet
    out["source_truncated"] = True
    start = row.get("start_line")
    if first and isinstance(start, int):
        out["source_snippet_start_line"] = start + first
    view.cut_sources += 1


def _header_lines(lines: list[str]) -> int:
    """How many leading lines hold a declaration's header (decorators and signature)."""
    for index, line in enumerate(lines[:ROW_SOURCE_LINES]):
        if line.rstrip().endswith(_HEADER_ENDS):
            return index + 1
    return ROW_SOURCE_LINES


def _content_read(data: dict, view: _View) -> dict | None:
    """The compact view of an explicit file or entity read, or None for other answers."""
    if isinstance(data.get("content"), str) and "relative_path" in data:
        key, first_line = "content", _int(view.request.get("start_line"), 1)
        last_line = _int(view.request.get("end_line"), 0)
    elif isinstance(data.get("source_cache"), str) and "entity_id" in data:
        key, first_line = "source_cache", _int(data.get("start_line"), 1)
        last_line = _int(data.get("end_line"), 0)
    else:
        return None
    out = _object({k: v for k, v in data.items() if k not in _CONTENT_ECHOES}, view, in_row=False)
    text = data[key]
    out[key] = text
    kept = _bounded_lines(text)
    if kept < len(text):
        out[key] = text[:kept]
        next_line = first_line + text[:kept].count("\n")
        out["content_truncated"] = True
        out["next_start_line"] = next_line
        out["rest"] = {
            "tool": "get_file_lines",
            "arguments": {
                "repo_id": data.get("repo_id", ""),
                "relative_path": data.get("relative_path", ""),
                "start_line": next_line,
                "end_line": max(last_line, first_line + len(text.splitlines()) - 1),
            },
        }
    return out


def _bounded_lines(text: str) -> int:
    """How many characters of ``text`` hold whole lines within the content bounds."""
    size = 0
    end = 0
    for count, line in enumerate(text.splitlines(keepends=True)):
        size += len(line.encode("utf-8"))
        if count >= CONTENT_LINES or size > CONTENT_BYTES:
            return end or min(len(text), CONTENT_BYTES)
        end += len(line)
    return len(text)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any, default: int) -> int:
    return (
        value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default
    )
