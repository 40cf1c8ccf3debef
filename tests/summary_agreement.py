"""
A reader of a tool result's text block that checks it against the result's structured
content: the counts the headline states, the rows it lists (where, what, in which order),
what it says was left out, and an empty answer said as empty. Used by
``test_dispatch_summaries_agree`` on every tool of the catalog.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

PATH_KEYS = (
    "file_path",
    "relative_path",
    "path",
    "source_file",
    "source_file_path",
    "config_path",
    "target_file",
)
LINE_KEYS = ("start_line", "line_number", "line")
SIDE_LISTS = frozenset(
    {"partial_reasons", "recommended_next_calls", "limitations", "missing_evidence", "matches"}
)
TOTAL_KEYS = ("total", "total_count")
IGNORED_COUNTS = frozenset({"indexed_document_count", "false_canonical_claim_count"})
"""Counts of what was searched, not of what was found."""

TRUTH_PREFIX = re.compile(r"^[a-z_]+/[a-z_]+(?: \((?:[^()]|\([^()]*\))*\))? \u2014 ")
COUNTED = re.compile(r"^(\d+) of (\d+) (\S+)|^(\d+) ([a-zA-Z][\w-]*)")
EMPTY = re.compile(r"^(No \S|Nothing found|0 (?!of )\S|Returned 0 )")
LOCATION = re.compile(r"(?:^|[\s(])([\w@+~.-]*[/.][\w@+~./-]*\w):(\d+)\b")
PATH_ONLY = re.compile(r"^\s*([\w@+~.-]+/[\w@+~./-]*\.\w+|[\w@+~-]+\.\w{1,4})(?=\s|$)")
MORE_ROWS = re.compile(r"^\s*\.\.\. (\d+) more rows? in the structured content$")
NOTE_LINE = re.compile(r"^\(.*\)$")
MORE_HINT = re.compile(r"more: call again with (offset|cursor)=(\S+)")
VERBS = frozenset({"imports", "contains", "calls", "->"})
TRUNCATION_WORDS = ("more:", "truncated", "compact first page", " of ", "cut at", "more row")


def answer_data(structured: Any) -> Any:
    """The answer itself: an envelope's ``data``, or a plain answer as it is."""
    if isinstance(structured, dict) and "truth" in structured and "data" in structured:
        return structured["data"]
    return structured


def headline_of(text: str) -> str:
    """The first line without its truth tag (``derived/fresh — ``)."""
    first = text.split("\n", 1)[0]
    return TRUTH_PREFIX.sub("", first, count=1)


def _first(row: dict, keys: tuple[str, ...]) -> Any:
    for key in keys:
        value = row.get(key)
        if value not in (None, ""):
            return value
    return None


def row_lists(data: Any, depth: int = 0, trail: str = "") -> Iterator[tuple[str, list]]:
    """Every list of objects in the answer (three levels deep), with where it is."""
    if depth > 3:
        return
    if isinstance(data, dict):
        for key, value in data.items():
            if key in SIDE_LISTS:
                continue
            where = f"{trail}.{key}" if trail else key
            if isinstance(value, list) and (not value or isinstance(value[0], dict)):
                yield where, value
                for index, row in enumerate(value[:50]):
                    yield from row_lists(row, depth + 1, f"{where}[{index}]")
            elif isinstance(value, dict):
                yield from row_lists(value, depth + 1, where)


def _is_path_key(key: str) -> bool:
    return (
        key in PATH_KEYS
        or key.endswith(("file_path", "_path", "_file", "_uri"))
        or key
        in (
            "document_id",
            "source_uri",
        )
    )


def _is_line_key(key: str) -> bool:
    """A key whose line a text's ``path:N`` can name: where a row starts or sits, never where
    it ends (a definition ending on the line of a call would claim the call's text line)."""
    if key.endswith("end_line"):
        return False
    return key in LINE_KEYS or key.endswith(("_line", "line_number"))


def locations(
    row: Any, depth: int = 0, paths: tuple = (), deep: bool = True
) -> Iterator[tuple[str, int | None]]:
    """Every ``(path, line)`` and ``(path, None)`` a row (or an object in it) names; an
    object with lines and no path takes its parent's paths (a file's matching lines)."""
    if depth > 4:
        return
    if isinstance(row, dict):
        own = tuple(
            value for key, value in row.items() if _is_path_key(key) and isinstance(value, str)
        )
        handle = row.get("source_handle")
        if isinstance(handle, dict):
            own += tuple(v for k, v in handle.items() if _is_path_key(k) and isinstance(v, str))
        lines = [
            value
            for key, value in row.items()
            if _is_line_key(key) and isinstance(value, int) and not isinstance(value, bool)
        ]
        if isinstance(handle, dict):
            lines += [v for k, v in handle.items() if _is_line_key(k) and isinstance(v, int)]
        for path in own or paths:
            yield path, None
            for line in lines:
                yield path, line
        if not deep:
            return
        for value in row.values():
            if isinstance(value, dict | list):
                yield from locations(value, depth + 1, own or paths)
    elif isinstance(row, list):
        for value in row[:50]:
            yield from locations(value, depth + 1, paths)


def _ints(data: Any) -> set[int]:
    """Every integer the answer holds at its top two levels, and every list's length."""
    found: set[int] = set()
    if isinstance(data, dict):
        for value in data.values():
            if isinstance(value, bool):
                continue
            if isinstance(value, int):
                found.add(value)
            elif isinstance(value, list):
                found.add(len(value))
            elif isinstance(value, dict):
                found |= _ints(value)
                counts = [v for v in value.values() if isinstance(v, int)]
                if counts and len(counts) == len(value):  # per-direction counts: their sum
                    found.add(sum(counts))
    elif isinstance(data, list):
        found.add(len(data))
    return found


def _total(data: Any) -> int | None:
    if not isinstance(data, dict):
        return None
    for key in TOTAL_KEYS:
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _paged(data: Any) -> bool:
    """The answer (or its ``summary`` block) says more rows are left than it holds."""
    if not isinstance(data, dict):
        return False
    next_offset = data.get("next_offset")
    summary = data.get("summary")
    return (
        data.get("truncated") is True
        or (isinstance(next_offset, int) and next_offset > 0)
        or bool(data.get("next_cursor"))
        or (isinstance(summary, dict) and _paged(summary))
    )


def _has_content(data: Any) -> bool:
    """Some row, or some count of what was found above zero."""
    if isinstance(data, list):
        return bool(data)
    if not isinstance(data, dict):
        return False
    if any(rows for _, rows in row_lists(data)):
        return True
    for key, value in data.items():
        if isinstance(value, dict) and key not in ("scope", "coverage") and _has_content(value):
            return True
        if key in IGNORED_COUNTS or isinstance(value, bool) or not isinstance(value, int):
            continue
        counted = key in ("count", *TOTAL_KEYS) or key.endswith("_count") or key.startswith("total")
        if counted and value:
            return True
    return False


def _empty(data: Any) -> bool:
    """The answer holds row lists or counts, and all are empty or zero."""
    if isinstance(data, list):
        return not data
    if not isinstance(data, dict) or _has_content(data):
        return False
    return any(True for _ in row_lists(data)) or any(
        key in ("count", *TOTAL_KEYS) or key.endswith("_count") for key in data
    )


def checks_read(text: str, structured: Any) -> set[str]:
    """Which checks found something to read in this answer: ``count`` (a counted headline),
    ``numbers`` (any number in the headline), ``rows`` (a row line matched to a structured
    row), ``more`` (a truncated answer, or a next page offered) and ``empty``."""
    data = answer_data(structured)
    headline = headline_of(text)
    read = set()
    if COUNTED.match(headline):
        read.add("count")
    if HEADLINE_NUMBER.search(re.sub(r'"[^"]*"', "", headline)):
        read.add("numbers")
    lines = text.split("\n")[1:]
    if any(_spot(line) and _spot(line)[0][0] != KEY for line in lines):
        read.add("rows")
    if _paged(data) or MORE_HINT.search(text):
        read.add("more")
    if _empty(data) or EMPTY.match(headline):
        read.add("empty")
    return read


def disagreements(text: str, structured: Any) -> list[str]:
    """Where the text block says something its structured content does not."""
    data = answer_data(structured)
    found: list[str] = []
    headline = headline_of(text)
    lines = text.split("\n")[1:]
    found += _counts(headline, data)
    found += _numbers(headline, structured)
    found += _rows([headline, *lines], data)
    found += _more(text, data)
    found += _emptiness(headline, lines, data)
    return found


def _counts(headline: str, data: Any) -> list[str]:
    match = COUNTED.match(headline)
    if not match:
        return []
    total = _total(data)
    page = data.get("count") if isinstance(data, dict) else None
    if match.group(1):
        shown, stated = int(match.group(1)), int(match.group(2))
        problems = []
        if stated <= shown:
            problems.append(f"headline {shown} of {stated}: the total is not more than the page")
        if total is not None and stated != total:
            problems.append(f"headline total {stated} but structured total {total}")
        if total is None and stated not in _ints(data):
            problems.append(f"headline total {stated} appears nowhere in the structured content")
        if isinstance(page, int) and shown != page:
            problems.append(f"headline page {shown} but structured count {page}")
        if shown not in _ints(data):
            problems.append(f"headline page {shown} is no list's length")
        return problems
    stated = int(match.group(4))
    if stated not in _ints(data):
        return [f"headline count {stated} appears nowhere in the structured content"]
    if total is not None and total != stated and _paged(data):
        return [f"paged headline says {stated}, not the total {total}"]
    pages = [len(rows) for key, rows in row_lists(data) if "." not in key and rows]
    if isinstance(page, int):
        pages.append(page)
    if total is not None and total == stated and _paged(data) and any(n < total for n in pages):
        return [f"headline states the total {stated} as if it were the page of {min(pages)}"]
    if total is None and _paged(data) and stated in pages:
        return [f"paged headline says {stated}: the structured content gives no total"]
    return []


def _all_numbers(value: Any, depth: int = 0) -> set[int]:
    """Every integer anywhere in the structured content: values, list lengths, sums of
    per-kind counts, and numbers written inside its strings (a truth reason's)."""
    found: set[int] = set()
    if depth > 8:
        return found
    if isinstance(value, bool):
        return found
    if isinstance(value, int):
        found.add(value)
    elif isinstance(value, float) and value.is_integer():
        found.add(int(value))
    elif isinstance(value, str):
        found.update(int(n) for n in re.findall(r"\d+", value)[:20])
    elif isinstance(value, list):
        found.add(len(value))
        for item in value[:200]:
            found |= _all_numbers(item, depth + 1)
    elif isinstance(value, dict):
        found.add(len(value))
        counts = [v for v in value.values() if isinstance(v, int) and not isinstance(v, bool)]
        if counts:
            found.add(sum(counts))
        for item in value.values():
            found |= _all_numbers(item, depth + 1)
    return found


HEADLINE_NUMBER = re.compile(r"(?<![\w.:/=-])(\d+)(?![\w.:/-])")


def _numbers(headline: str, structured: Any) -> list[str]:
    """Every number the headline states is one the structured content holds."""
    text = re.sub(r'"[^"]*"|\'[^\']*\'', "", headline)  # quoted names are the caller's words
    known = _all_numbers(structured)
    return [
        f"headline number {n} appears nowhere in the structured content"
        for n in dict.fromkeys(int(m) for m in HEADLINE_NUMBER.findall(text))
        if n not in known
    ]


KEY = "="
KEYED = re.compile(r"^\s*([^:\s][^:]{0,60}?):\s|^\s*([\w@+~./-]+?)(?: id=| \(|$)")


def _keys(row: Any) -> set[tuple[str, Any]]:
    """A row's identifying strings (name, id, language...), as places a line may start with."""
    if not isinstance(row, dict):
        return set()
    return {(KEY, value) for value in row.values() if isinstance(value, str) and len(value) < 120}


def _spot(line: str) -> tuple[tuple[str, Any], str] | None:
    """Where a text line points (``(path, line)``, ``(path, None)`` or ``(KEY, name)``),
    and the text after it; ``None`` for a line of prose."""
    match = LOCATION.search(line)
    if match:
        return (match.group(1), int(match.group(2))), line[match.end() :]
    match = PATH_ONLY.match(line)
    if match:
        return (match.group(1), None), line[match.end() :]
    match = KEYED.match(line)  # ``python: 16 files``, ``Layout: ...``: a row by its name
    if match:
        return (KEY, match.group(1) or match.group(2)), ""
    return None


def _rows(lines: list[str], data: Any) -> list[str]:
    """Each ``path:line`` row the text shows is a structured row, in order, none dropped."""
    problems: list[str] = []
    lists = [(where, rows) for where, rows in row_lists(data) if rows]
    if isinstance(data, list):
        lists.append(("", [row for row in data if isinstance(row, dict)]))
    # A row's own places first (so a nested list's rows are matched there), then the
    # places of what it holds (a file's matching lines).
    indexed = [
        (where, [set(locations(row, deep=False)) | _keys(row) for row in rows], rows)
        for where, rows in lists
    ] + [(where, [set(locations(row)) for row in rows], rows) for where, rows in lists]
    shown: dict[str, set[int]] = {}
    homes: dict[str, int] = {}
    lines_of: dict[str, int] = {}
    last: dict[str, int] = {}
    mores = []
    for number, line in enumerate(lines):
        more = MORE_ROWS.match(line)
        if more:
            mores.append(int(more.group(1)))
            continue
        if NOTE_LINE.match(line):
            continue
        if number == 0:  # the headline: a row only when it is a row's text (a story's first)
            spot, after_spot = (KEY, line), ""
        else:
            read = _spot(line)
            if read is None:
                continue
            spot, after_spot = read
        home = None
        for where, places, rows in indexed:
            hits = [index for index, place in enumerate(places) if spot in place]
            if hits:
                after = [index for index in hits if index >= last.get(where, -1)]
                home = (where, (after or hits)[0], rows, places)
                break
        if home is None:
            if spot[0] != KEY:  # a keyed line may be prose; a located line must be a row
                problems.append(f"row {spot} is in no structured row")
            continue
        where, index, rows, places = home
        if index < last.get(where, -1):
            problems.append(f"row {spot} out of the order of {where}")
        last[where] = index
        shown.setdefault(where, set()).update(i for i, place in enumerate(places) if spot in place)
        lines_of[where] = lines_of.get(where, 0) + 1
        homes[where] = len(rows)
        if spot[0] == KEY:
            continue
        words = after_spot.split()
        if words and words[0] in VERBS:  # ``a.py:3 imports ledger.rules``: the module
            words = words[1:]
        name = words[0].rstrip(":,") if words else ""
        bare = name.split(".")[-1].strip("()")
        # the row names it, or (a definition group, a call's anchor) the answer does
        held = bare in repr(rows[index]) or bare in repr(data)
        if bare and bare.isidentifier() and not held:
            problems.append(f"row {spot} names {name}, which the answer does not hold")
    for where, indices in shown.items():
        total = homes[where]
        # a line may stand for every row at its place (one import statement's names) or
        # for one of them (an edge of a file holding several)
        left = total - len(indices)
        if left > 0 and left not in mores and total - lines_of[where] not in mores:
            problems.append(f"{where}: {len(indices)} of {total} rows shown, no '... {left} more'")
    return problems


def _more(text: str, data: Any) -> list[str]:
    if not isinstance(data, dict):
        return []
    hint = MORE_HINT.search(text)
    paged = _paged(data)
    says_more = any(word in text for word in TRUNCATION_WORDS)
    if paged and not says_more:
        return ["structured content is truncated, the text does not say so"]
    if hint and hint.group(1) == "offset":
        summary = data.get("summary") if isinstance(data.get("summary"), dict) else {}
        holder = data if "next_offset" in data else summary
        next_offset = holder.get("next_offset", "absent")
        if isinstance(next_offset, int) and str(next_offset) != hint.group(2):
            return [f"text offers offset={hint.group(2)}, structured next_offset={next_offset}"]
        if next_offset is None:  # the route says no next page can be asked for
            return [f"text offers offset={hint.group(2)}, structured next_offset is null"]
    if hint and not paged and not data.get("display_truncated"):
        return [f"text offers {hint.group(0)} but the answer is complete"]
    return []


def _emptiness(headline: str, lines: list[str], data: Any) -> list[str]:
    numbers = [int(n) for n in re.findall(r"\b\d+\b", headline)]
    says_empty = (
        bool(EMPTY.match(headline))
        or headline.startswith("0 of ")
        or "empty is not evidence of absence" in headline
        or (bool(numbers) and not any(numbers))
    )
    if says_empty and _has_content(data) and not headline.startswith("0 of "):
        return ["headline says empty, the structured content has rows or counts"]
    if _empty(data) and any(LOCATION.match(line) for line in lines):
        return ["structured content is empty, the text lists rows"]
    if _empty(data) and not says_empty:
        return ["structured content is empty, the headline does not say so"]
    return []
