"""
Summary lines for repositories, files and entities, freshness and the static catalogs.

File and entity tools put the text itself in the summary (bounded: the first lines
up to a few KB, then which call fetches the rest); repository tools state the
counts; freshness tools state the verdict and the commits it compared.
"""

from collections.abc import Callable

from eshu_mcp.dispatch.summaries.code import listing
from eshu_mcp.dispatch.summaries.graph import edge_line
from eshu_mcp.dispatch.summaries.rows import (
    entity_name,
    excerpt,
    kind_of,
    location,
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
)

__all__ = ["REPOSITORY_FAMILIES"]

Lines = list[str]

EXCERPT_LINES = 80
EXCERPT_BYTES = 3000


def _short(commit: str) -> str:
    return commit[:12]


# Files and entities -----------------------------------------------------------


def _file_text(data: dict, *, whole_file: bool) -> Lines:
    path = first_text(data, "relative_path", "file_path", "path")
    content = data.get("content")
    if not path and not isinstance(content, str):
        return []
    count = first_int(data, "line_count")
    if count is None and isinstance(content, str):
        count = len(content.splitlines())
    head = f"{path}: {plural(count or 0, 'line')}"
    commit = first_text(data, "commit_sha")
    if commit:
        head += f" at {_short(commit)}"
    shown, left = excerpt(content, EXCERPT_LINES, EXCERPT_BYTES)
    lines = [head, *shown]
    more = _more_lines(data, path, len(shown), left, whole_file=whole_file, total=count)
    if more:
        lines.append(more)
    elif not shown:
        lines[0] += " (empty)"
    return lines


def _call_text(call: dict | None) -> str:
    """``tool k=v ...`` for a call the answer itself names (``rest``)."""
    tool = first_text(call, "tool")
    arguments = field_map(call, "arguments") or {}
    pairs = " ".join(
        f"{key}={value}" for key, value in arguments.items() if isinstance(value, str | int)
    )
    return f"{tool} {pairs}".strip() if tool else ""


def _more_lines(
    data: dict, path: str, shown: int, left: int, *, whole_file: bool, total: int | None
) -> str:
    """Which call reads on from where the text (or the answer) stops, if either stopped."""
    content = data.get("content") if isinstance(data.get("content"), str) else ""
    next_start = first_int(data, "next_start_line")
    rest = field_map(data, "rest")
    first_line = 1 if whole_file else None
    if next_start:
        first_line = next_start - content.count("\n")
    if left:
        if not first_line:
            return f"... {plural(left, 'more line')} in the structured content"
        end = first_int(field_map(rest, "arguments"), "end_line")
        if end is None and whole_file:
            end = total
        start = first_line + shown
        # Lines from where the text stops to the end of the range, not just to the answer's end.
        more = max(left, end - start + 1) if end else left
        text = (
            f"... {plural(more, 'more line')}: get_file_lines relative_path={path}"
            f" start_line={start}"
        )
        return text + (f" end_line={end}" if end else "")
    if data.get("content_truncated") is True:
        call = _call_text(rest)
        if call:
            return f"... more: {call}"
        if next_start:
            return f"... more: get_file_lines relative_path={path} start_line={next_start}"
        return "... content truncated"
    return ""


def _file_content(data: dict) -> Lines:
    return _file_text(data, whole_file=True)


def _file_lines(data: dict) -> Lines:
    return _file_text(data, whole_file=False)


def _entity_content(data: dict) -> Lines:
    name = first_text(data, "entity_name", "name")
    if not name and "source_cache" not in data:
        return []
    kind = kind_of(data)
    owner = first_text(field_map(data, "metadata"), "class_context")
    qualified = f"{owner}.{name}" if owner and name and owner != name else name
    where = location(data)
    end = first_int(data, "end_line")
    if where and end:
        where += f"-{end}"
    head = " ".join(part for part in (qualified, f"({kind})" if kind else "", where) if part)
    shown, left = excerpt(data.get("source_cache"), EXCERPT_LINES, EXCERPT_BYTES)
    lines = [clamp_line(head), *shown]
    cut = data.get("source_truncated") is True or data.get("content_truncated") is True
    if cut or left:
        path = first_text(data, "relative_path", "file_path")
        start = first_int(data, "start_line")
        if path and start and end:
            lines.append(
                f"... source continues: get_file_lines relative_path={path}"
                f" start_line={start} end_line={end}"
            )
        else:
            lines.append("... source truncated")
    return lines


def _entity_context(data: dict) -> Lines:
    story = first_text(data, "story")
    name = entity_name(data)
    if not story and not name:
        return []
    head = story or row_line(data)
    rows = field_rows(data, "relationships")
    return [clamp_line(head), *row_lines(rows, lambda row: edge_line(row, name))]


# Repositories -----------------------------------------------------------------


def _repository_name(data: dict) -> str:
    repo = field_map(data, "repository") or field_map(data, "subject") or {}
    return first_text(repo, "name", "id") or first_text(data, "repo_name", "repo_id")


def _repository_row(row: dict) -> str:
    name = first_text(row, "name")
    ident = first_text(row, "id", "repo_id")
    path = first_text(row, "local_path", "path")
    text = " ".join(part for part in (name, f"id={ident}" if ident else "", path) if part)
    if row.get("missing") is True:
        text += " (directory missing: answers come from its last index)"
    return clamp_line(text or row_line(row))


def _repositories(data: dict) -> Lines:
    _, rows = rows_of(data, "repositories", "results")
    return listing(data, rows, "indexed repository", "indexed repositories", render=_repository_row)


def _join_first(items: list[str], limit: int = 6) -> str:
    text = ", ".join(items[:limit])
    if len(items) > limit:
        text += f" (+{len(items) - limit} more)"
    return text


def _repository_stats(data: dict) -> Lines:
    name = _repository_name(data)
    files, entities = first_int(data, "file_count"), first_int(data, "entity_count")
    if not name and files is None:
        return []
    parts = []
    if files is not None:
        parts.append(plural(files, "file"))
    if entities is not None:
        parts.append(plural(entities, "code entity", "code entities"))
    text = f"{name}: " + ", ".join(parts)
    languages = field_strings(data, "languages")
    if languages:
        text += f"; languages: {_join_first(languages)}"
    types = field_strings(data, "entity_types")
    if types:
        text += f"; entity types: {_join_first(types)}"
    ident = first_text(field_map(data, "repository"), "id")
    lines = [clamp_line(text)]
    if ident:
        lines.append(f"repo_id={ident}")
    return lines


def _counts(mapping: dict | None) -> str:
    if not mapping:
        return ""
    pairs = sorted(
        ((key, value) for key, value in mapping.items() if isinstance(value, int)),
        key=lambda pair: (-pair[1], pair[0]),
    )
    return ", ".join(f"{key} {value}" for key, value in pairs)


def _repository_context(data: dict) -> Lines:
    name = _repository_name(data)
    files = first_int(data, "file_count")
    if not name and files is None:
        return []
    text = f"{name}: {plural(files or 0, 'file')}"
    languages = _counts(field_map(data, "language_breakdown"))
    if languages:
        text += f" ({languages})"
    dependencies = first_int(data, "dependency_count")
    if dependencies is not None:
        text += f"; {plural(dependencies, 'dependency', 'dependencies')}"
    edges = _counts(field_map(field_map(data, "relationship_overview"), "code_edges"))
    lines = [clamp_line(text)]
    if edges:
        lines.append(clamp_line(f"code edges: {edges}"))
    entry_points = field_rows(field_map(data, "api_surface"), "entry_points")
    if entry_points:
        lines.append(f"{plural(len(entry_points), 'entry point')}:")
        lines.extend(row_lines(entry_points, limit=5))
    return lines


def _repository_story(data: dict) -> Lines:
    story = first_text(data, "story")
    if not story:
        return []
    lines = [clamp_line(story)]
    for section in field_rows(data, "story_sections"):
        summary = first_text(section, "summary")
        title = first_text(section, "title", "id")
        items = field_rows(section, "items")
        if first_text(section, "id") == "layout" and items:  # one line: the busiest folders
            folders = [
                f"{first_text(item, 'path')} ({first_int(item, 'entity_count')})" for item in items
            ]
            summary = f"{summary}: {_join_first(folders)}" if summary else _join_first(folders)
            items = []
        if summary and summary != story:
            lines.append(clamp_line(f"{title}: {summary}" if title else summary))
        if items:
            lines.extend(clamp_line("  " + line) for line in row_lines(items, limit=3))
    limitations = field_strings(data, "limitations")
    if limitations:
        lines.append(
            clamp_line(f"limitations: {clamp_field(limitations[0])} (+{len(limitations) - 1} more)")
            if len(limitations) > 1
            else clamp_line(f"limitation: {limitations[0]}")
        )
    return lines


def _tree_row(row: dict) -> str:
    path = first_text(row, "path", "name")
    kind = first_text(row, "type")
    children = first_int(row, "child_count")
    if kind == "dir":
        path += "/"
        return clamp_line(f"{path} ({plural(children, 'entry', 'entries')})" if children else path)
    return clamp_line(path)


def _repository_files(data: dict) -> Lines:
    _, rows = rows_of(data, "entries", "files")
    return listing(
        data, rows, "entry", "entries", render=_tree_row, subject=first_text(data, "path")
    )


# Freshness ---------------------------------------------------------------------


def _repository_freshness(data: dict) -> Lines:
    verdict = first_text(data, "verdict")
    if not verdict:
        return []
    name = _repository_name(data)
    text = f"{name}: index is {verdict}" if name else f"index is {verdict}"
    tree, seen = first_text(data, "work_tree_commit"), first_text(data, "observed_commit")
    if tree or seen:
        text += f" (work tree {_short(tree) or '?'}, indexed {_short(seen) or '?'})"
    if verdict == "stale":
        changed = data.get("changed_paths")
        count = plural(changed, "changed path") if isinstance(changed, int) else "changes"
        under_way = (
            "a rebuild is under way" if data.get("rebuilding") is True else "no rebuild runs"
        )
        text += f"; the work tree has {count} not in the index, {under_way}"
    generation = field_map(data, "generation")
    if generation:
        text += (
            f"; generation {_short(first_text(generation, 'id'))}"
            f" {first_text(generation, 'status')}"
        ).rstrip()
    return [clamp_line(text)]


def _sample(row: dict) -> str:
    """A changed file or definition as ``path:line name (Kind)``, else its fact key."""
    if first_text(row, "relative_path"):
        return row_line(row)
    return first_text(row, "stable_fact_key")


def _top_change(categories: list) -> str:
    """The first changed definition (else file) the samples locate, as ``path:line name``."""
    for wanted in ("content_entities", "files"):
        for category in categories:
            if first_text(category, "category") != wanted:
                continue
            for cls, rows in (field_map(category, "samples") or {}).items():
                for row in rows if isinstance(rows, list) else ():
                    if isinstance(row, dict) and first_text(row, "relative_path"):
                        return f"{cls}: {_sample(row)}"
    return ""


def _languages_count(data: dict) -> Lines:
    """``count_repositories_by_language``: how many repositories hold the language."""
    count = first_int(data, "repository_count")
    if count is None:
        return []
    language = first_text(data, "language")
    files = first_int(data, "file_count")
    verb = "holds" if count == 1 else "hold"
    text = f"{plural(count, 'repository', 'repositories')} {verb} {language or 'the language'}"
    return [text + (f" ({plural(files, 'file')})" if files is not None else "")]


def _changed_since(data: dict) -> Lines:
    categories = field_rows(data, "categories")
    if not categories:
        return []
    since = _short(first_text(data, "since_generation_id")) or first_text(data, "since_observed_at")
    current = _short(first_text(data, "current_active_generation_id"))
    lines = [f"changes since generation {since or '?'} (now {current or '?'}):"]
    top = _top_change(categories)
    if top:
        lines[0] = clamp_line(lines[0][:-1] + f"; first {top}")
    if data.get("unavailable") is True:
        reason = first_text(data, "unavailable_reason") or "unavailable"
        lines[0] = f"changes since {since or '?'} are unavailable: {reason}"
        return lines
    for category in categories:
        counts = field_map(category, "counts") or {}
        changed = ", ".join(
            f"{value} {key}"
            for key, value in counts.items()
            if isinstance(value, int) and value and key != "unchanged"
        )
        name = first_text(category, "category")
        lines.append(clamp_line(f"{name}: {changed or 'no changes'}"))
        samples = field_map(category, "samples") or {}
        for cls, rows in samples.items():
            keys = [_sample(row) for row in rows if isinstance(row, dict)]
            if keys:
                lines.append(clamp_line(f"  {cls}: {_join_first(keys, 3)}"))
    if data.get("building") is True:
        lines.append("a newer generation is still building")
    return lines


def _generation_row(row: dict) -> str:
    ident = _short(first_text(row, "generation_id", "id"))
    status = first_text(row, "status")
    observed = first_text(row, "observed_at")
    return clamp_line(" ".join(part for part in (ident, status, observed) if part))


def _generations(data: dict) -> Lines:
    return listing(data, field_rows(data, "generations"), "generation", render=_generation_row)


# Catalogs ----------------------------------------------------------------------


def _catalog_row(row: dict) -> str:
    ident = first_text(row, "id", "workflow_id", "playbook_id", "capability_id", "capability")
    name = first_text(row, "name", "display_name", "title", "description")
    if ident and name and ident != name:
        return clamp_line(f"{ident}: {name}")
    return row_line(row)


def _catalog(noun: str, *keys: str) -> Callable[[dict], Lines]:
    def build(data: dict) -> Lines:
        _, rows = rows_of(data, *keys)
        return listing(data, rows, noun, render=_catalog_row, subject="")

    return build


def _step_row(row: dict) -> str:
    """``find: find_symbol(symbol=x, limit=25)``: a resolved call and its parameters."""
    params = field_map(row, "params") or {}
    given = ", ".join(f"{key}={value}" for key, value in params.items())
    return clamp_line(f"{first_text(row, 'id')}: {first_text(row, 'tool')}({given})")


def _resolved(noun: str, key: str, step: str) -> Callable[[dict], Lines]:
    """A playbook or workflow bound to the caller's inputs: its calls, in order."""

    def build(data: dict) -> Lines:
        resolved = field_map(data, "resolved")
        if not resolved:
            return []
        rows = field_rows(resolved, key)
        name = first_text(resolved, "name")
        head = f"{noun} {first_text(resolved, 'id')}" + (f" ({clamp_field(name)})" if name else "")
        head += f": {plural(len(rows), step)}"
        unbound = field_rows(resolved, "unbound_calls")
        if unbound:
            head += f"; {len(unbound)} unbound (their inputs are missing)"
        missing = field_strings(resolved, "missing_evidence")
        if missing:
            head += "; missing evidence: " + clamp_field(", ".join(missing))
        return [head, *row_lines(rows, _step_row)]

    return build


REPOSITORY_FAMILIES: dict[str, Callable[[dict], Lines]] = {
    "resolve_query_playbook": _resolved("playbook", "steps", "step"),
    "resolve_investigation_workflow": _resolved("workflow", "calls", "call"),
    "get_file_content": _file_content,
    "get_file_lines": _file_lines,
    "get_entity_content": _entity_content,
    "get_entity_context": _entity_context,
    "list_indexed_repositories": _repositories,
    "get_repo_summary": _repository_stats,
    "get_repository_stats": _repository_stats,
    "get_repo_context": _repository_context,
    "get_repo_story": _repository_story,
    "list_repository_files": _repository_files,
    "get_repository_freshness": _repository_freshness,
    "get_changed_since": _changed_since,
    "count_repositories_by_language": _languages_count,
    "get_generation_lifecycle": _generations,
    "list_query_playbooks": _catalog("playbook", "playbooks"),
    "list_investigation_workflows": _catalog("workflow", "workflows"),
    "get_capability_catalog": _catalog("capability", "capabilities", "results"),
    "get_surface_inventory": _catalog("surface", "surfaces", "results", "entries"),
    "list_fact_schema_versions": _catalog("fact schema", "fact_schema_versions", "versions"),
    "list_collector_extraction_readiness": _catalog("collector family", "families", "results"),
}
