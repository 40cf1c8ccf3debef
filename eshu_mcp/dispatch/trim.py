"""
Fitting an answer to the response budget by dropping rows from its end.

An answer over the budget whose data holds a list of rows keeps as many leading rows as
fit; the data then says ``truncated: true``, ``next_offset`` (when the route pages by
offset and the rows are its page) and a ``truncation_note`` sentence telling the reader
how to get the rest. When cutting the largest list alone cannot make room, every list
keeps the same leading share of its rows. An answer with no row list to cut, or whose
other parts alone exceed the budget, is left to the over-budget error.
"""

from collections.abc import Callable
from typing import Any

from attrs import frozen

from eshu_mcp.encoding import dumps

__all__ = ["Trimmed", "trim_rows"]

# Enough for the estimate to settle when rows differ in how their copies escape.
_MAX_ADJUSTMENTS = 64
# Bisection steps for the share of rows every list keeps (1/128 of the rows).
_SHARE_STEPS = 7


@frozen
class Trimmed:
    """An answer cut to fit: the new payload, its size and what the reader is told."""

    payload: Any
    size: int
    note: str


def _row_lists(data: dict) -> list[tuple[tuple[str, ...], list]]:
    """Lists of objects in ``data`` and one level below, with the keys that reach them."""
    found = []
    for key, value in data.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            found.append(((key,), value))
        elif isinstance(value, dict):
            for inner, rows in value.items():
                if isinstance(rows, list) and rows and isinstance(rows[0], dict):
                    found.append(((key, inner), rows))
    return found


def _with_rows(data: dict, path: tuple[str, ...], rows: list, total: int) -> dict:
    """``data`` holding ``rows`` at ``path``, its ``count`` of returned rows kept true."""
    out = dict(data)
    if out.get("count") == total:
        out["count"] = len(rows)
    if len(path) == 1:
        out[path[0]] = rows
    else:
        out[path[0]] = {**data[path[0]], path[1]: rows}
    return out


def _is_page(data: dict, rows: list) -> bool:
    """
    Whether ``rows`` are the page ``offset`` addresses: a relationship story counts its
    page in ``summary.relationship_count``; a list beside it (its ``definition_groups``)
    is not the page, and cutting it moves no offset.
    """
    summary = data.get("summary")
    if isinstance(summary, dict) and isinstance(summary.get("relationship_count"), int):
        return summary["relationship_count"] == len(rows)
    return True


def _mark_cut(cut: dict, path: tuple[str, ...], next_offset: int | None, kept: int) -> None:
    """
    Keep the answer's own paging fields true after a cut: a nested list's
    ``<name>_truncated`` flag, and the summary's ``relationship_count`` and the
    ``next_offset`` of its summary and coverage blocks when the cut list is their page.
    """
    if len(path) == 2 and f"{path[1]}_truncated" in cut[path[0]]:
        cut[path[0]][f"{path[1]}_truncated"] = True
    if next_offset is None:
        return
    for block in ("summary", "coverage"):
        if isinstance(cut.get(block), dict) and "next_offset" in cut[block]:
            cut[block] = {**cut[block], "next_offset": next_offset, "truncated": True}
            if "relationship_count" in cut[block]:
                cut[block]["relationship_count"] = kept
    coverage = cut.get("coverage")
    if isinstance(coverage, dict) and coverage.get("missing_edge_reason") == "complete":
        # "every matching relationship in scope was returned" no longer holds: the page was
        # cut to its rows, like a limit (the answer's truncation_note says where the rest is)
        cut["coverage"] = {
            **coverage,
            "truncated": True,
            "missing_edge_reason": "truncated_by_limit",
            "truncation_state": "count",
            "evidence_explanation": f"the first {kept} rows fit the answer page;"
            f" read the rest from next_offset {next_offset}",
        }


def _note(
    kept: int,
    total: int,
    name: str,
    budget: int,
    next_offset: int | None,
    bound: str,
    beside_page: bool = False,
) -> str:
    head = f"Only the first {kept} of {total} {name} fit the {budget}-byte {bound}"
    if next_offset is not None:
        return f"{head}; call again with offset={next_offset} for the rest."
    if beside_page:  # every page carries this list whole: a shorter page cannot help
        return f"{head}; narrow the question (repo_id, language, a path) for the rest."
    return f"{head}; lower limit or narrow the question (repo_id, language, a path) for the rest."


def trim_rows(
    payload: Any,
    *,
    in_envelope: bool,
    budget: int,
    measure: Callable[[str], int],
    paging_offset: int | None,
    bound: str = "response budget",
) -> Trimmed | None:
    """
    ``payload`` with its largest row list cut so its size fits ``budget``, or None.

    ``measure`` sizes a serialized payload as the budget counts it; ``paging_offset``
    is the offset the request sent (None when the route does not page by offset);
    ``bound`` names the budget in the note.
    """
    data = payload.get("data") if in_envelope and isinstance(payload, dict) else payload
    if not isinstance(data, dict):
        return None
    lists = _row_lists(data)
    if not lists:
        return None
    path, rows = max(lists, key=lambda item: len(dumps(item[1])))
    empty = measure("")
    costs = [measure(dumps(row) + ",") - empty for row in rows]
    next_of = (
        (lambda kept: paging_offset + kept)
        if paging_offset is not None and len(path) == 1 and _is_page(data, rows)
        else (lambda kept: None)
    )

    def build(kept: int) -> tuple[Any, str]:
        cut = _with_rows(data, path, rows[:kept], len(rows))
        cut["truncated"] = True
        next_offset = next_of(kept)
        if next_offset is not None:
            cut["next_offset"] = next_offset
        _mark_cut(cut, path, next_offset, kept)
        beside_page = len(path) == 1 and not _is_page(data, rows)
        note = _note(kept, len(rows), path[-1], budget, next_offset, bound, beside_page)
        cut["truncation_note"] = note
        return ({**payload, "data": cut} if in_envelope else cut), note

    room = budget - measure(dumps(build(0)[0]))
    kept = 0
    while kept < len(rows) - 1 and room - costs[kept] >= 0:
        room -= costs[kept]
        kept += 1
    for _ in range(_MAX_ADJUSTMENTS):
        if kept < 1:
            break
        candidate, note = build(kept)
        size = measure(dumps(candidate))
        if size <= budget:
            return Trimmed(candidate, size, note)
        kept -= 1
    if len(lists) < 2:
        return None
    return _trim_every_list(
        payload, data, lists, in_envelope, budget, measure, bound, paging_offset
    )


def _trim_every_list(
    payload: Any,
    data: dict,
    lists: list[tuple[tuple[str, ...], list]],
    in_envelope: bool,
    budget: int,
    measure: Callable[[str], int],
    bound: str,
    paging_offset: int | None = None,
) -> Trimmed | None:
    """
    Every row list cut to the same share of its rows (at least one each), the largest
    share that fits: for answers whose rows are spread over several lists (evidence
    groups and symbols, cleanup buckets), none of which alone can make room. When one
    of them is the page ``offset`` addresses, ``next_offset`` follows its cut.
    """

    def build(share: float) -> tuple[Any, str]:
        cut = dict(data)
        kept_of: list[tuple[int, int, str]] = []
        following = None
        for path, rows in lists:
            kept = max(1, int(len(rows) * share))
            cut = _with_rows(cut, path, rows[:kept], len(rows))
            if kept < len(rows):
                _mark_cut(cut, path, None, kept)
                kept_of.append((kept, len(rows), path[-1]))
                paged = paging_offset is not None and len(path) == 1 and _is_page(data, rows)
                next_offset = paging_offset + kept if paged else None
                if next_offset is not None:
                    cut["next_offset"] = following = next_offset
                _mark_cut(cut, path, next_offset, kept)
        cut["truncated"] = True
        cuts = ", ".join(f"{kept} of {total} {name}" for kept, total, name in kept_of)
        rest = (
            f"call again with offset={following} for the rest of the page's rows."
            if following is not None
            else "lower limit or narrow the question (repo_id, language, a path) for the rest."
        )
        note = f"Only the first {cuts} fit the {budget}-byte {bound}; {rest}"
        cut["truncation_note"] = note
        return ({**payload, "data": cut} if in_envelope else cut), note

    low, high, best = 0.0, 1.0, None
    for _ in range(_SHARE_STEPS):
        share = (low + high) / 2
        candidate, note = build(share)
        size = measure(dumps(candidate))
        if size <= budget:
            best, low = Trimmed(candidate, size, note), share
        else:
            high = share
    if best is None:
        candidate, note = build(0.0)
        size = measure(dumps(candidate))
        best = Trimmed(candidate, size, note) if size <= budget else None
    return best
