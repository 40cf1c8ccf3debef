"""
Summary lines for the code families: search, symbols, inventory, dead code, complexity,
quality, imports, secrets and topics.

Each builder takes an answer's ``data`` and returns its lines, the first one the
headline (a count, the subject, what was left out), the rest the top rows as
``path:line name`` lines. An empty list means "nothing to say": the caller then
writes a generic line.
"""

from collections.abc import Callable

from eshu_mcp.dispatch.summaries.rows import (
    ROW_LIMIT,
    entity_name,
    location,
    more_hint,
    row_line,
    row_lines,
    rows_of,
)
from eshu_mcp.dispatch.summaries.text import (
    clamp_field,
    clamp_line,
    field_map,
    field_rows,
    field_strings,
    first_int,
    first_text,
    plural,
    plural_of,
)
from eshu_mcp.query.reasons import NOT_MEASURED

__all__ = ["CODE_FAMILIES", "headline", "listing"]

Lines = list[str]
Family = Callable[[dict], Lines]

SUBJECT_KEYS = ("query", "symbol", "pattern", "topic", "method_name", "class_name", "target")


def headline(
    count: int, noun: str, nouns: str, subject: str = "", notes: tuple = (), total: int = 0
) -> str:
    """``12 matches for "x"; note; note`` (``10 of 31 matches`` when the answer's total is
    more than its page), or ``No matches for "x"`` when there are none."""
    if count and total > count:
        text = f"{count} of {plural(total, noun, nouns)}"
    else:
        text = plural(count, noun, nouns) if count else f"No {nouns or plural_of(noun)} found"
    if subject:
        text += f' for "{clamp_field(subject)}"'
    kept = [note for note in notes if note]
    if kept:
        text += "; " + "; ".join(kept)
    return text


def listing(
    data: dict,
    rows: list,
    noun: str,
    nouns: str = "",
    *,
    render=row_line,
    subject: str | None = None,
    notes: tuple = (),
    total: int = 0,
) -> Lines:
    """The usual answer: a counted headline (``10 of 31`` on a page of a longer answer),
    what was left out, then the top rows."""
    total = total or first_int(data, "total", "total_count") or 0
    # a page's count is its rows (a total is never read as the page: "10 of 120", not "120")
    count = first_int(data, "count") if rows else first_int(data, "count", "total", "total_count")
    if count is None or count < len(rows):
        count = len(rows)
    past_end = not rows and not count and total > 0
    if not rows and (count or data.get("count") not in (None, 0)) and not past_end:
        # A count with no rows to show (a count-only answer): the generic line says it.
        return []
    if subject is None:
        subject = first_text(data, *SUBJECT_KEYS)
    hint = more_hint(data, len(rows)) if rows else _did_you_mean(data)
    if past_end:  # a page after the last row: the rows are there, on an earlier page
        hint = f"offset={first_int(data, 'offset') or 0} is past the last row"
        return [f"0 of {headline(total, noun, nouns, subject, (*notes, hint))}"]
    return [
        headline(count, noun, nouns, subject, (*notes, hint), total),
        *row_lines(rows, render),
    ]


def _did_you_mean(data: dict) -> str:
    """``did you mean Command?`` when an answer with no rows names near misses."""
    near = [name for name in data.get("did_you_mean") or () if isinstance(name, str)]
    if not near:
        return ""
    names = near[0] if len(near) == 1 else f"{', '.join(near[:-1])} or {near[-1]}"
    return clamp_field(f"did you mean {names}?")


def _rows_family(noun: str, nouns: str = "", *keys: str, render=row_line) -> Family:
    keys = keys or ("results", "entities", "matches")

    def build(data: dict) -> Lines:
        _, rows = rows_of(data, *keys)
        return listing(data, rows, noun, nouns, render=render)

    return build


# Search and symbols ---------------------------------------------------------


def _file_match(row: dict) -> str:
    """``path:line matching text``, with the other matching lines' numbers."""
    matches = [m for m in field_rows(row, "matching_lines") if first_int(m, "line_number")]
    path = first_text(row, "relative_path", "file_path", "path")
    if not matches or not path:
        return row_line(row)
    first, *others = matches
    text = f"{path}:{first_int(first, 'line_number')} {first_text(first, 'text')}".rstrip()
    if others:
        text += " (also line " + ", ".join(str(first_int(m, "line_number")) for m in others) + ")"
    return clamp_line(text)


def _symbols(data: dict) -> Lines:
    _, rows = rows_of(data, "results", "matches")
    ambiguity = field_map(data, "ambiguity")
    note = ""
    paged = first_text(data, "total") and data.get("truncated") is True
    if ambiguity is not None and ambiguity.get("ambiguous") is True and not paged:
        # a page of a longer answer says "10 of 31 definitions" and how to read on instead
        note = "ambiguous: " + clamp_field(first_text(ambiguity, "reason") or "several matched")
    return listing(data, rows, "definition", notes=(note,))


INVENTORY_NOUNS = {
    "entity": ("entity", "entities"),
    "top_level": ("top-level entity", "top-level entities"),
    "dataclass": ("dataclass", "dataclasses"),
    "documented": ("documented entity", "documented entities"),
    "documented_function": ("documented function", ""),
    "decorated": ("decorated entity", "decorated entities"),
    "class_with_method": ("class with the method", "classes with the method"),
    "super_call": ("super() call", ""),
    "function_count_by_file": ("file", ""),
}

IMPORT_NOUNS = {
    "imports_by_file": ("import", ""),
    "importers": ("import", ""),
    "module_dependencies": ("module dependency", "module dependencies"),
    "package_imports": ("package import", ""),
    "file_import_cycles": ("import cycle", ""),
    "cross_module_calls": ("cross-module call", ""),
}

QUALITY_NOUNS = {
    "refactoring_candidates": ("refactoring candidate", ""),
    "complexity": ("complex function", ""),
    "function_length": ("long function", ""),
    "argument_count": ("function with many arguments", "functions with many arguments"),
}


def _inventory(data: dict) -> Lines:
    _, rows = rows_of(data, "results", "matches")
    noun, nouns = INVENTORY_NOUNS.get(first_text(data, "inventory_kind"), ("row", ""))
    return listing(data, rows, noun, nouns)


# Dead code -------------------------------------------------------------------


OUTSIDE_BASE = ".may_override_outside_base:"
"""The ambiguity reason (after its language) of a method that may override a base's from
outside the repository."""
PUBLIC_API = ".public_api"
"""The ambiguity reason (after its language; then ``:`` and the name importers use, for
Python) of a public name that code outside the repository may use."""


def _dead_row(row: dict) -> str:
    verdict = first_text(row, "classification")
    reasons = [r for r in row.get("ambiguity_reasons") or () if isinstance(r, str)]
    if reasons:
        reason = reasons[0]
        if OUTSIDE_BASE in reason:
            bases = reason.split(OUTSIDE_BASE, 1)[1]
            reason = f"may override a method of {bases} (outside the repository)"
        elif PUBLIC_API in reason:
            _, _, name = reason.partition(":")
            reason = (
                f"public API{f' as {name}' if name else ''}; code outside the repository may use it"
            )
        verdict += f": {clamp_field(reason)}"
    return row_line(row, verdict)


def _maturity_note(data: dict) -> str:
    analysis = field_map(data, "analysis") or data
    maturity = field_map(analysis, "dead_code_language_maturity") or field_map(
        data, "language_maturity"
    )
    if not maturity:
        return ""
    levels = ", ".join(f"{lang} {level}" for lang, level in sorted(maturity.items()))
    return clamp_field(f"reachability {levels}: read the source before deleting")


_VERDICTS = {
    "unused": "unused (cleanup-ready)",
    "ambiguous": "ambiguous (public API, possible overrides or weak links: read the reason)",
}


def dead_code(data: dict) -> Lines:
    """``find_dead_code`` and the ``dead_code`` query: candidates, least-reached first."""
    _, rows = rows_of(data, "results")
    total = first_int(data, "active_candidates") or 0  # the headline says "1 of 6"
    in_all = ""
    split = field_map(data, "active_by_classification") or {}
    counts = [(name, n) for name, n in split.items() if isinstance(n, int) and n]
    if len(counts) > 1 or (counts and counts[0][0] != "unused"):
        in_all = ("of all: " if total > len(rows) else "") + ", ".join(
            f"{n} {_VERDICTS.get(name, name)}" for name, n in counts
        )
        if len(counts) > 1:
            in_all += "; the rows marked unused are the cleanup-ready ones"
    return listing(
        data,
        rows,
        "dead-code candidate",
        subject="",
        render=_dead_row,
        notes=(in_all, _maturity_note(data)),
        total=total,
    )


def _cross_repo_dead_code(data: dict) -> Lines:
    """``find_cross_repo_dead_code``: its buckets, dead first (else ``dead_code``'s rows)."""
    if not field_map(data, "candidate_buckets"):
        return dead_code(data)
    return _dead_code_investigation(
        data, ("dead", "live_by_consumer", "unknown", "suppressed"), "cross-repository dead code"
    )


def _dead_code_investigation(
    data: dict,
    names: tuple[str, ...] = ("cleanup_ready", "ambiguous", "suppressed"),
    title: str = "dead-code investigation",
) -> Lines:
    buckets = field_map(data, "candidate_buckets") or {}
    counts = field_map(data, "bucket_counts") or {}
    parts = []
    for name in names:
        count = first_int(counts, name)
        if count is None:
            count = len(field_rows(buckets, name))
        parts.append(f"{count} {name.replace('_', '-')}")
    seen = first_int(field_map(data, "coverage"), "active_candidates_seen")
    head = f"{title}: " + ", ".join(parts)
    if seen is not None:
        head += f" (of {plural(seen, 'active candidate')} seen)"
    notes = [note for note in (_maturity_note(data), more_hint(data, 0)) if note]
    if notes:
        head += "; " + "; ".join(notes)
    lines = [head]
    for name in [n for n in names if n != "suppressed"][:3]:
        rows = field_rows(buckets, name)
        if rows:
            lines.append(f"{name.replace('_', '-')}:")
            lines.extend(row_lines(rows, _dead_row, limit=8 if name == names[0] else 3))
    return lines


# Complexity and quality ----------------------------------------------------


def _complexity_row(row: dict) -> str:
    complexity = first_int(row, "complexity", "cyclomatic_complexity")
    return row_line(row, f"complexity {complexity}" if complexity is not None else "")


def _complexity(data: dict) -> Lines:
    _, rows = rows_of(data, "results", "functions")
    if rows:
        return listing(
            data,
            rows,
            "most complex function",
            render=_complexity_row,
            subject=first_text(data, "repo_name"),
        )
    complexity = first_int(data, "complexity", "cyclomatic_complexity")
    if complexity is None:
        return []
    name = entity_name(data) or "function"
    where = location(data)
    end = first_int(data, "end_line")
    if where and end:
        where += f"-{end}"
    text = f"{name} ({where})" if where else name
    if complexity:
        text += f": cyclomatic complexity {complexity}"
    else:  # every measured function scores at least 1: 0 is the score of one not measured
        text += f": {NOT_MEASURED} {first_text(data, 'language') or 'its language'} functions"
    incoming, outgoing = first_int(data, "incoming_count"), first_int(data, "outgoing_count")
    if incoming is not None and outgoing is not None:
        text += f"; {incoming} incoming, {outgoing} outgoing relationships"
    return [clamp_line(text)]


def _quality_row(row: dict) -> str:
    facts = []
    for key, label in (
        ("complexity", "complexity"),
        ("line_count", "lines"),
        ("argument_count", "args"),
    ):
        value = first_int(row, key)
        if value is not None:
            facts.append(f"{label} {value}")
    reasons = field_strings(row, "reasons")
    if reasons:
        facts.append(", ".join(dict.fromkeys(reasons)))
    return row_line(row, "; ".join(facts))


def _quality(data: dict) -> Lines:
    _, rows = rows_of(data, "results")
    noun, nouns = QUALITY_NOUNS.get(first_text(data, "check"), ("finding", ""))
    return listing(data, rows, noun, nouns, render=_quality_row)


# Imports, secrets, topics ----------------------------------------------------


def _import_row(row: dict) -> str:
    module = first_text(row, "target_module", "module", "target_file")
    name = first_text(row, "imported_name")
    if module and name and name != module:  # ``from . import cells`` reads ``.cells``
        target = f"{module}{name}" if module.endswith(".") else f"{module}.{name}"
    else:
        target = module or name
    alias = first_text(row, "alias")
    if alias:
        target += f" as {alias}"
    resolved = first_text(row, "target_file")
    if module.startswith(".") and resolved:  # a relative import: which file it names
        target += f" ({resolved})"
    where = location(row, ("source_file", "file_path", "relative_path", "path"))
    if target:
        return clamp_line(f"{where} imports {target}" if where else f"imports {target}")
    return row_line(row)


NAMES_SHOWN = 8
"""Imported names one summary line lists for a file importing several from one module."""


def _import_lines(rows: list[dict]) -> Lines:
    """
    One line per importing place and module: ``a.py:19 imports twisted.internet.defer:
    Deferred, fail, succeed`` for the rows of one ``from ... import`` statement.
    """
    statements: dict[tuple, list[dict]] = {}
    for index, row in enumerate(rows):
        where = location(row, ("source_file", "file_path", "relative_path", "path"))
        module = first_text(row, "target_module", "module", "target_file")
        named = bool(first_text(row, "imported_name")) and not first_text(row, "alias")
        key = (where, module) if named and where and module else (index,)
        statements.setdefault(key, []).append(row)
    lines = []
    for key, group in list(statements.items())[:ROW_LIMIT]:
        if len(key) == 1 or len(group) == 1:
            lines.append(_import_row(group[0]))
            continue
        names = [first_text(row, "imported_name") for row in group]
        more = f" (+{len(names) - NAMES_SHOWN} more)" if len(names) > NAMES_SHOWN else ""
        lines.append(
            clamp_line(f"{key[0]} imports {key[1]}: {', '.join(names[:NAMES_SHOWN])}{more}")
        )
    shown = sum(len(group) for group in list(statements.values())[:ROW_LIMIT])
    if len(rows) > shown:
        lines.append(f"... {plural(len(rows) - shown, 'more row')} in the structured content")
    return lines


def _imports(data: dict) -> Lines:
    _, rows = rows_of(data, "dependencies", "results", "cycles", "modules")
    noun, nouns = IMPORT_NOUNS.get(first_text(data, "query_type"), ("row", ""))
    subject = first_text(
        field_map(data, "scope"), "source_file", "source_module", "target_file", "target_module"
    )
    cycles = [row for row in rows if field_rows(row, "cycle_edges")]
    if cycles:
        at_load = first_int(data, "cycles_at_load")
        if at_load is None:
            at_load = sum(1 for row in cycles if row.get("runs_at_load"))
        note = (
            f"{at_load} {'closes' if at_load == 1 else 'close'} while the modules load;"
            " in the others one import runs"
            " inside a function, for type checkers only or only when run as a script"
            if any("runs_at_load" in row for row in cycles)
            else ""
        )
        lines = listing(data, rows, noun, nouns, render=_cycle_row, subject=subject, notes=(note,))
        return lines
    files = first_int(data, "files_total")
    note = f"in {plural(files, 'file')}" if files and noun == "import" else ""
    lines = listing(data, rows, noun, nouns, render=_import_row, subject=subject, notes=(note,))
    return lines[:1] + _import_lines(rows) if lines else lines


_RUNS = {
    "function_call": "in {function}()",
    "type_checking_only": "for type checkers only",
    "script_only": "only when run as a script",
}


def _cycle_row(row: dict) -> str:
    """``a.py:26 -> b.py:14 (for type checkers only) -> a.py``: each import's line, and when
    it runs when that is not as the module loads."""
    edges = field_rows(row, "cycle_edges")
    hops = []
    for edge in edges:
        hop = f"{first_text(edge, 'source_file')}:{first_int(edge, 'line_number')}"
        runs = _RUNS.get(first_text(edge, "runs"))
        if runs:
            hop += f" ({runs.format(function=first_text(edge, 'runs_in_function') or '?')})"
        hops.append(hop)
    if not hops:
        return row_line(row)
    return clamp_line(" -> ".join([*hops, first_text(edges[0], "source_file")]))


def _secret_row(row: dict) -> str:
    kind = first_text(row, "finding_kind", "kind")
    severity = first_text(row, "severity")
    excerpt = first_text(row, "redacted_excerpt")
    text = location(row)
    if kind:
        text += f" {kind}"
    if severity:
        text += f" ({severity})"
    if excerpt:
        text += f": {excerpt}"
    return clamp_line(text.strip())


def _secrets(data: dict) -> Lines:
    _, rows = rows_of(data, "findings", "results")
    coverage = field_map(data, "coverage")
    suppressed = first_int(coverage, "suppressed_count")
    note = f"{suppressed} suppressed" if suppressed else ""
    return listing(
        data,
        rows,
        "possible hardcoded secret",
        subject="",
        render=_secret_row,
        notes=("values redacted", note),
    )


def _matched_row(row: dict, name: str, kind: str, why: str, extra: str = "") -> str:
    """``path:line Name (Kind) matched name: add, timeout; doc: cancel``."""
    text = " ".join(part for part in (location(row), name) if part)
    if kind and kind != name:
        text += f" ({kind})"
    if extra:
        text += f" {extra}"
    if why:
        text += f" matched {why}"
    return clamp_line(text or row_line(row))


def _topic_row(row: dict) -> str:
    name = first_text(row, "qualified_name") or entity_name(row)
    kind = first_text(row, "entity_type")
    if first_text(row, "source_kind") == "file":
        kind = first_text(row, "document_kind") or "file"
    return _matched_row(row, name, kind, first_text(row, "why"))


def _topic(data: dict) -> Lines:
    _, rows = rows_of(data, "evidence_groups", "matched_symbols", "matched_files", "results")
    # A compact answer counts the kinds its ranked evidence_groups already list.
    files, symbols = (
        len(field_rows(data, kind)) or first_int(data, f"{kind[:-1]}_count") or 0
        for kind in ("matched_files", "matched_symbols")
    )
    note = f"{plural(symbols, 'definition')}, {plural(files, 'file')}" if files or symbols else ""
    return listing(data, rows, "match", "matches", render=_topic_row, notes=(note,))


def _semantic_row(row: dict) -> str:
    document = field_map(row, "document")
    line = first_int(document, "start_line")
    path = first_text(document, "path")
    where = {"path": path, "start_line": line} if path else {}
    name = first_text(document, "qualified_name") or first_text(document, "title")
    if first_text(document, "source_kind") == "repository_file":
        name = ""
    kind = ""
    for label in field_strings(document, "labels"):
        if label.startswith("kind:"):
            kind = label[5:]
    return _matched_row(where, name, kind, first_text(row, "why"))


SEMANTIC_STATES = {
    "semantic_unavailable": "semantic ranking unavailable, keyword shown",
    "hybrid_degraded": "keyword ranking only",
}


def _semantic(data: dict) -> Lines:
    _, rows = rows_of(data, "results")
    method = first_text(data, "search_mode")
    note = SEMANTIC_STATES.get(first_text(data, "retrieval_state"), "")
    reason = first_text(data, "semantic_unavailable_reason")
    lines = listing(
        data,
        rows,
        "result",
        notes=(f"{method} ranking" if method and not note else "", note),
        render=_semantic_row,
    )
    if lines and reason:
        lines.append(clamp_line(reason))
    return lines


CODE_FAMILIES: dict[str, Family] = {
    "find_code": _rows_family("match", "matches"),
    "find_symbol": _symbols,
    "resolve_entity": _rows_family("entity", "entities"),
    "search_entity_content": _rows_family("matching entity", "matching entities"),
    "search_file_content": _rows_family("matching file", render=_file_match),
    "execute_language_query": _rows_family("result"),
    "inspect_code_inventory": _inventory,
    "find_dead_code": dead_code,
    "find_cross_repo_dead_code": _cross_repo_dead_code,
    "investigate_dead_code": _dead_code_investigation,
    "find_most_complex_functions": _complexity,
    "calculate_cyclomatic_complexity": _complexity,
    "inspect_code_quality": _quality,
    "investigate_import_dependencies": _imports,
    "investigate_hardcoded_secrets": _secrets,
    "investigate_code_topic": _topic,
    "search_semantic_context": _semantic,
}
