"""
Summary lines for the call-graph families: callers and callees, importers, class
hierarchies, overrides, call chains and relationship stories.

An edge reads ``path:line caller -> callee`` at its call site (a verb instead of the
arrow for other relationship types); a chain reads ``a -> b -> c``. When a target did
not resolve to one entity the summary lists the candidates with their entity ids,
since that is what the next call needs.
"""

from collections.abc import Callable, Sequence

from eshu_mcp.dispatch.summaries.code import dead_code, headline, listing
from eshu_mcp.dispatch.summaries.rows import (
    ROW_LIMIT,
    budget_cut,
    entity_name,
    location,
    row_line,
    row_lines,
)
from eshu_mcp.dispatch.summaries.text import (
    clamp_field,
    clamp_line,
    field_map,
    field_rows,
    first_int,
    first_text,
    plural,
)

__all__ = ["GRAPH_FAMILIES", "edge_line", "relationships"]

Lines = list[str]

VERBS = {
    "CALLS": "->",
    "IMPORTS": "imports",
    "INHERITS": "inherits",
    "OVERRIDES": "overrides",
    "REFERENCES": "references",
    "TAINT_FLOWS_TO": "taints",
}

# (relationship type, direction) -> what one row is, singular and plural.
NOUNS = {
    ("CALLS", "incoming"): ("caller", "callers"),
    ("CALLS", "outgoing"): ("callee", "callees"),
    ("IMPORTS", "incoming"): ("importer", "importers"),
    ("IMPORTS", "outgoing"): ("import", "imports"),
    ("INHERITS", "incoming"): ("subclass", "subclasses"),
    ("INHERITS", "outgoing"): ("base class", "base classes"),
    ("OVERRIDES", "incoming"): ("override", "overrides"),
    ("OVERRIDES", "outgoing"): ("overridden method", "overridden methods"),
}


EDGE_COUNT_CEILING = 10001
"""The query API's per-direction edge count bound (a count this high is a floor)."""


def edge_line(row: dict, anchor: str, lines: Sequence[int] = ()) -> str:
    """
    One edge at its call site: ``path:line caller -> callee``, with ``(ambiguous)`` when the
    site's receiver type is unknown and the call may run another definition of the name.
    ``lines``: every line where the same caller makes the same call (``path:12,40,41``).
    """
    kind = first_text(row, "type", "relationship_type") or "CALLS"
    direction = first_text(row, "direction")
    # A compact row leaves out its anchor side, which the answer states once.
    source = first_text(row, "source_name") or (anchor if direction != "incoming" else "")
    target = first_text(row, "target_name") or (anchor if direction != "outgoing" else "")
    source_path = first_text(row, "source_file_path", "source_file", "file_path")
    line: int | str | None = first_int(row, "line_number", "line", "source_start_line")
    if len(lines) > 1:
        line = _line_list(lines)
    where = f"{source_path}:{line}" if source_path and line else source_path
    if not where and line:
        # A compact outgoing row: the call site's file is the anchor's, stated once above.
        where = f"{'lines' if len(lines) > 1 else 'line'} {line}:"
    if not source and not target:
        return row_line(row) or "(an edge without names)"
    if source == source_path:
        source = ""
    text = " ".join(part for part in (where, source, VERBS.get(kind, kind.lower()), target) if part)
    if direction == "outgoing":
        target_where = location(
            {
                "file_path": first_text(row, "target_file_path"),
                "start_line": first_int(row, "target_start_line"),
            }
        )
        if target_where and target_where != where:
            text += f" ({target_where})"
    depth = first_int(row, "depth")
    if depth is not None and depth > 1:
        text += f" [depth {depth}]"
    use = PROPERTY_USES.get(first_text(row, "call_kind") or "")
    if use:
        text += f" ({use})"
    if first_text(row, "resolution_method") == AMBIGUOUS:
        text += " (ambiguous)"
    return clamp_line(text)


PROPERTY_USES = {"property_read": "reads the property", "property_write": "sets the property"}
"""How an edge line says that its "call" is an attribute read or assignment."""


LINES_SHOWN = 6
"""Call-site lines one summary line lists for a caller that makes the same call again."""


def _line_list(lines: Sequence[int]) -> str:
    shown = ",".join(str(line) for line in lines[:LINES_SHOWN])
    return shown + (f" (+{len(lines) - LINES_SHOWN} more)" if len(lines) > LINES_SHOWN else "")


def _edge_key(row: dict) -> tuple:
    """
    What two edges share when they differ only in their call site's line; ambiguous edges
    of one call to several same-named candidates share their name, not their target.
    """
    ambiguous = first_text(row, "resolution_method") == AMBIGUOUS
    return tuple(
        first_text(row, *keys)
        for keys in (
            ("type", "relationship_type"),
            ("direction",),
            ("source_name",) if ambiguous else ("source_id", "source_name"),
            ("target_name",) if ambiguous else ("target_id", "target_name"),
            ("source_file_path", "source_file", "file_path"),
            ("resolution_method",),
            ("depth",),
            ("call_kind",),
        )
    )


def edge_lines(rows: list[dict], anchor: str) -> Lines:
    """
    The edges as summary lines, one per caller and callee with every line of that call
    (rows stay in the answer's order, by their first row), then what the text left out.
    """
    sites: dict[tuple, tuple[dict, list[int], list[dict]]] = {}
    for row in rows:
        line = first_int(row, "line_number", "line")
        _, lines, merged = sites.setdefault(_edge_key(row), (row, [], []))
        merged.append(row)
        if line is not None and line not in lines:
            lines.append(line)
    shown = list(sites.values())[:ROW_LIMIT]
    text = []
    for row, lines, merged in shown:
        line = edge_line(row, anchor, lines)
        ends = {first_text(r, "target_id", "source_id") for r in merged}
        if len(ends) > 1 and line.endswith(" (ambiguous)"):  # one call, several candidates
            line = f"{line.removesuffix(')')}: {len(ends)} of its candidates shown)"
        text.append(line)
    left = len(rows) - sum(len(merged) for _, _, merged in shown)
    if left > 0:
        text.append(f"... {plural(left, 'more row')} in the structured content")
    return text


def _candidate_line(row: dict) -> str:
    entity_id = first_text(row, "entity_id", "id")
    return row_line(row, f"entity_id={entity_id}" if entity_id else "")


NO_SUCH_DEFINITION = (
    "no function, class or module in scope has that name (attributes and variables are not"
    " definitions); find_symbol with match_mode fuzzy lists the names that contain it"
)


def _unresolved(resolution: dict, data: dict) -> Lines:
    target = first_text(resolution, "target", "name")
    status = first_text(resolution, "status") or "unresolved"
    candidates = field_rows(resolution, "candidates")
    why = first_text(field_map(data, "coverage"), "evidence_explanation")
    if candidates:
        head = (
            f'target "{clamp_field(target)}" is {status}: {plural(len(candidates), "candidate")}'
            "; pass one of their entity_ids as start_entity_id to pick one"
        )
        return [head, *row_lines(candidates, _candidate_line, limit=5)]
    head = f'target "{clamp_field(target)}" was not found ({status})'
    importers = first_text(field_map(data, "scope"), "relationship_type") == "IMPORTS"
    if status == "unresolved" and importers and target.endswith(".go"):
        return [
            clamp_line(
                f"{head}: no indexed file imports its package (Go imports name packages, not"
                " files: the package's import path, e.g. example.com/mod/pkg, names it)"
            )
        ]
    if status == "unresolved" and target and (not why or "pick a candidate" in why):
        # No definition has the name: advice to pick among candidates would mislead.
        return [clamp_line(f"{head}: {NO_SUCH_DEFINITION}")]
    if why:
        head += f": {clamp_field(why)}"
    return [head]


GROUP_LIMIT = 5
"""Definition groups a summary lists (the structured content holds them all)."""


def _definition_groups(data: dict, nouns: str) -> Lines:
    """
    For a name several definitions share: which definitions the rows belong to, largest
    group first, each with the entity id that reads it alone.
    """
    groups = field_rows(data, "definition_groups")
    if not groups:
        return []
    name = first_text(field_map(data, "target_resolution"), "name", "target") or (
        entity_name(groups[0])
    )
    total = max(
        len(groups),
        first_int(field_map(data, "summary"), "definition_count") or 0,
        first_int(field_map(data, "target_resolution"), "candidate_count") or 0,
    )
    listed = f" ({len(groups)} listed)" if total > len(groups) else ""
    lines = [
        clamp_line(
            f'"{clamp_field(name)}" names {plural(total, "definition")}{listed}; {nouns} are'
            " grouped by definition, largest first (pass a group's entity_id as target"
            " for one alone):"
        )
    ]
    for group in groups[:GROUP_LIMIT]:
        count = first_int(group, "edge_count", "rows_available")
        entity_id = first_text(group, "entity_id")
        extra = f"{count} {nouns}" if count is not None else ""
        if entity_id:
            extra += f" entity_id={entity_id}"
        # A compact group leaves its name to the resolution's target, stated once.
        lines.append(row_line({"name": name, **group}, extra.strip()))
    if len(groups) > GROUP_LIMIT:
        lines.append(f"... {plural(len(groups) - GROUP_LIMIT, 'more definition')}")
    return lines


AMBIGUOUS = "ambiguous"
"""The resolution method of an edge to one of several same-named candidates."""


def _is_heuristic(row: dict) -> bool:
    provenance = field_map(row, "provenance") or {}
    return provenance.get("truth_state") == "heuristic" or provenance.get("heuristic") is True


def _heuristic_note(rows: list[dict]) -> str:
    ambiguous = sum(1 for row in rows if first_text(row, "resolution_method") == AMBIGUOUS)
    heuristic = sum(
        1
        for row in rows
        if _is_heuristic(row) and first_text(row, "resolution_method") != AMBIGUOUS
    )
    notes = []
    if ambiguous:
        notes.append(
            f"{ambiguous} shown ambiguous (the receiver's type, or the overload, is unknown:"
            " the call may run another definition of the name; min_confidence=0.5 leaves"
            " them out)"
        )
    if heuristic:
        notes.append(f"{heuristic} heuristic (correlation evidence, not canonical code truth)")
    return "; ".join(notes)


def _relationship_hint(data: dict, shown: int) -> str:
    coverage = field_map(data, "coverage") or {}
    summary = field_map(data, "summary") or {}
    truncated = coverage.get("truncated") is True or summary.get("truncated") is True
    if not truncated or budget_cut(data):
        return ""
    if "next_offset" in summary and summary["next_offset"] is None:
        # a transitive answer is one page (the route refuses an offset): only a wider limit
        return "truncated: raise limit for the rest"
    scope = field_map(data, "scope")
    offset = first_int(scope, "offset") or 0
    limit = first_int(scope, "limit") or shown
    return f"more: call again with offset={offset + max(limit, shown)}"


def relationships(data: dict) -> Lines:
    """A relationship story: the anchor, the edges at their call sites, what was left out."""
    resolution = field_map(data, "target_resolution") or {}
    shared = field_map(data, "relationships_shared")  # what every compact row has in common
    rows = [{**(shared or {}), **row} for row in field_rows(data, "relationships")]
    status = first_text(resolution, "status")
    # Calls of the name the index would not guess at: said, so a short list is not read as all.
    unlinked = first_text(
        field_map(field_map(data, "coverage"), "unlinked_call_sites"), "explanation"
    )
    said = [clamp_line(unlinked)] if unlinked else []
    if not rows and status and status != "resolved":
        head, *candidates = _unresolved(resolution, data)
        return [head, *said, *candidates]
    scope = field_map(data, "scope") or {}
    kind = first_text(scope, "relationship_type") or "CALLS"
    direction = first_text(scope, "direction")
    noun, nouns = NOUNS.get((kind, direction), (f"{kind} relationship", f"{kind} relationships"))
    anchor = first_text(resolution, "name", "target")
    available = field_map(field_map(data, "coverage"), "available_by_direction")
    total = sum(
        value for value in (available or {}).values() if isinstance(value, int) and value >= 0
    )
    count = len(rows)
    if field_rows(data, "definition_groups"):
        # One call site of a shared name may reach several of its definitions: count edges.
        noun, nouns = f"{noun} edge", f"{noun} edges"
    text = plural(count, noun, nouns) if count else f"No {nouns} found"
    # Eshu counts up to 10,001 edges per direction: a count that reached it is a floor
    saturated = any(
        isinstance(value, int) and value >= EDGE_COUNT_CEILING
        for value in (available or {}).values()
    )
    if total > count:
        stated = f"more than {total - 1}" if saturated else str(total)
        text = f"{count} of {stated} {noun if total == 1 and not saturated else nouns}"
        if scope.get("min_confidence"):  # the totals count every edge, the page the floored
            text += " (counted before the min_confidence floor)"
    if anchor:
        where = location(
            {
                "file_path": first_text(resolution, "file_path"),
                "start_line": first_int(resolution, "start_line"),
            }
        )
        text += f" {'of' if count else 'for'} {anchor}" + (f" ({where})" if where else "")
        package_of = first_text(resolution, "package_of")
        if package_of:  # Go imports name packages, never files
            text += f" ({package_of} is in Go package {anchor}; Go imports packages, not files)"
    tests = first_int(field_map(data, "coverage"), "incoming_from_tests")
    if tests and count and saturated:
        text += f" (at least {min(tests, total)} from tests, listed last)"
    elif tests and count:
        text += f" ({min(tests, max(total, count))} of {max(total, count)} from tests, listed last)"
    notes = [_heuristic_note(rows), _relationship_hint(data, count)]
    coverage = field_map(data, "coverage")
    reason = first_text(coverage, "missing_edge_reason")
    if not rows and reason and reason != "complete":
        notes.append(first_text(coverage, "evidence_explanation") or reason)
    kept = [note for note in notes if note]
    if kept:
        text += "; " + "; ".join(kept)
    groups = _definition_groups(data, nouns)
    return [clamp_line(text), *said, *groups, *edge_lines(rows, anchor)]


def _names(rows: list[dict]) -> str:
    return ", ".join(entity_name(row) or "?" for row in rows)


def class_hierarchy(data: dict) -> Lines:
    """Ancestors and descendants of one class."""
    tree = field_map(data, "class_hierarchy")
    if tree is None:
        return []
    name = entity_name(tree) or first_text(field_map(data, "target_resolution"), "name")
    ancestors = field_rows(tree, "ancestors")
    descendants = field_rows(tree, "descendants")
    total = first_int(tree, "descendants_count")
    counted = plural(len(descendants), "descendant")
    if total is not None and total > len(descendants):
        direct = first_int(tree, "direct_descendant_count")
        counted = f"{len(descendants)} of {plural(total, 'descendant')}"
        counted += f" ({direct} direct)" if direct is not None else ""
    lines = [f"class hierarchy of {name}: {plural(len(ancestors), 'ancestor')}, {counted}"]
    if ancestors:
        more = " (truncated)" if tree.get("ancestors_truncated") is True else ""
        # An interface a base declares (zope's @implementer) is not a base class.
        implemented = [row for row in ancestors if row.get("relationship_type") == "IMPLEMENTS"]
        inherited = [row for row in ancestors if row.get("relationship_type") != "IMPLEMENTS"]
        said = [
            f"{verb}: {_names(rows)}"
            for verb, rows in (("inherits from", inherited), ("implements", implemented))
            if rows
        ]
        lines.append(clamp_line(f"{name} {'; '.join(said)}{more}"))
    if descendants:
        more = " (truncated)" if tree.get("descendants_truncated") is True else ""
        following = first_int(tree, "descendants_next_offset")
        if following is not None:
            more += f", the next from offset={following}"
        implementing = any(row.get("relationship_type") == "IMPLEMENTS" for row in descendants)
        noun = "subclasses and implementations" if implementing else "subclasses"
        lines.append(f"{noun} of {name}{more}:")
        lines.extend(row_lines(descendants, _descendant_line))
    return lines


def _descendant_line(row: dict) -> str:
    """A subclass, or a class that implements the interface (``@implementer``)."""
    return row_line(row, "implements it" if row.get("relationship_type") == "IMPLEMENTS" else "")


def _overrides(data: dict) -> Lines:
    story = field_map(data, "override_story")
    pairs = field_rows(story, "overrides") + field_rows(story, "overridden_by")
    if not pairs:
        return relationships(data)
    method = first_text(story, "method") or first_text(field_map(data, "target_resolution"), "name")
    lines = [headline(len(pairs), "override pair", "", method)]
    lines += _definition_groups(data, "overrides")
    above, below = field_rows(story, "overrides"), field_rows(story, "overridden_by")
    if above:
        lines.append(f"{method} overrides:")
        lines += row_lines(above, limit=2)
    if below:
        lines.append(f"overridden by {plural(len(below), 'method')}:")
        lines += row_lines(below, limit=ROW_LIMIT - min(len(above), 2))
    return lines


def _chain_node(node: dict) -> str:
    """A chain node's name, with ``?`` when the call into it is ambiguous."""
    name = entity_name(node) or first_text(node, "entity_id") or "?"
    return name + "?" if _ambiguous_hop(node) else name


def _place(node: dict) -> str:
    """``path:line name``: which of a shared name's definitions a chain end is."""
    where = first_text(node, "file_path")
    line = first_int(node, "start_line")
    if line:
        where += f":{line}"
    return f"{where} {entity_name(node)}".strip()


def _ambiguous_hop(node: dict) -> bool:
    return first_text(node, "resolution_method") == "ambiguous"


def _chain_hop(node: dict) -> str:
    """A chain node's location, and the line and certainty of the call into it."""
    line = first_int(node, "called_at_line")
    method = first_text(node, "resolution_method")
    extra = f"called at line {line}" if line is not None else ""
    if method and line is not None:
        extra += f" ({method})"
    return row_line(node, extra)


def call_chains(data: dict) -> Lines:
    """Call chains as ``a -> b -> c``, the first one with each hop's location."""
    chains = [row for row in field_rows(data, "chains") if field_rows(row, "chain")]
    start = first_text(data, "start", "start_entity_id")
    end = first_text(data, "end", "end_entity_id")
    subject = f"{start} -> {end}" if start and end else start or end
    if not chains:
        why = first_text(data, "reason", "message")
        text = f"No call chain found from {start or '?'} to {end or '?'}"
        depth = first_int(data, "max_depth")
        if depth and not why:  # a reason says what it needs to
            text += f" within depth {depth}"
        return [clamp_line(text + (f": {why}" if why else ""))]
    head = headline(len(chains), "call chain", "", subject)
    ambiguity = first_text(field_map(data, "ambiguity"), "note")
    if ambiguity:  # first: it says how to read every line below
        head += f"; {ambiguity}"
    if any(_ambiguous_hop(node) for row in chains[:5] for node in field_rows(row, "chain")):
        head += (
            "; ? marks an ambiguous call (the receiver's class is unknown: it may run another"
            " definition of that name)"
        )
    lines = [clamp_line(head)]
    for row in chains[:5]:
        nodes = field_rows(row, "chain")
        chain = " -> ".join(_chain_node(node) for node in nodes)
        if ambiguity:  # which definitions this chain joins
            chain = f"{_place(nodes[0])} -> {_place(nodes[-1])}: {chain}"
        lines.append(clamp_line(chain))
    for node in field_rows(chains[0], "chain"):
        lines.append(clamp_line("  " + _chain_hop(node)))
    if len(chains) > 5:
        lines.append(f"... {plural(len(chains) - 5, 'more chain')} in the structured content")
    return lines


def analyze_code_relationships(data: dict) -> Lines:
    """The multi-purpose relationships tool: the answer's shape says which question it was."""
    if "chains" in data:
        return call_chains(data)
    if "class_hierarchy" in data:
        return class_hierarchy(data)
    if "override_story" in data:
        return _overrides(data)
    if "relationships" in data or "target_resolution" in data:
        return relationships(data)
    if "analysis" in data or "candidate_scan_limit" in data:
        return dead_code(data)
    if "results" in data:
        return listing(data, field_rows(data, "results"), "result")
    return []


def _metrics(data: dict) -> Lines:
    rows = field_rows(data, "results") or field_rows(data, "functions")
    metric = first_text(data, "metric_type").replace("_", " ")

    def render(row: dict) -> str:
        facts = [
            f"{label} {value}"
            for label, value in (
                ("fan-in", first_int(row, "incoming_calls", "fan_in", "incoming_count")),
                ("fan-out", first_int(row, "outgoing_calls", "fan_out", "outgoing_count")),
            )
            if value is not None
        ]
        kind, partner = first_text(row, "recursion_kind"), first_text(row, "partner_name")
        if kind == "self_call":
            facts.append("calls itself")
        elif partner:
            facts.append(f"calls {partner}, which calls it back")
        return row_line({**row, "name": first_text(row, "function_name", "name")}, ", ".join(facts))

    return listing(data, rows, metric.rstrip("s") if metric else "function", render=render)


GRAPH_FAMILIES: dict[str, Callable[[dict], Lines]] = {
    "analyze_code_relationships": analyze_code_relationships,
    "get_code_relationship_story": analyze_code_relationships,
    "find_function_call_chain": call_chains,
    "inspect_call_graph_metrics": _metrics,
}
