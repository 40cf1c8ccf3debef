"""
Content routes: read files, lines and entities; search file and entity text (§2.2).

Bodies come from the index (``files.content`` and the ``entity_source`` view), never
from disk, so a path argument can only name rows the indexer wrote.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.near import nearest_paths, not_found_hint
from eshu_mcp.query.local.api.code.text_scan import ScannedFile, entities_containing
from eshu_mcp.query.local.api.content.patterns import RegexSearch
from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    body_object,
    bool_param,
    int_param,
    limit_offset,
    page,
    relative_path,
    str_list_param,
    str_param,
)
from eshu_mcp.query.local.api.platform.grants import readable_repositories
from eshu_mcp.query.local.index.parse.credentials import credential_reason
from eshu_mcp.query.reasons import EMPTY_RANGE, NO_TEXT_KEPT, NOT_SEARCHED, PAST_THE_END

CAPABILITY = "code_search.content_search"
SEARCH_BACKEND = "sqlite_content_store"
# The read routes report the content store the way Eshu's schema enumerates it.
READ_BACKEND = "hybrid"
MAX_OFFSET = 10_000
SOURCE_CAP = 64 * 1024
VARIABLE_SOURCE_CAP = 4 * 1024


def like_pattern(text: str) -> str:
    """A LIKE pattern matching ``text`` anywhere, with LIKE's wildcards escaped."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def metadata_of(row: sqlite3.Row | dict[str, Any]) -> dict[str, Any]:
    """An entity's metadata JSON as an object (``{}`` when unreadable)."""
    try:
        value = json.loads(row["metadata"] or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def cap_source(entity_type: str, source: str | None) -> tuple[str, dict[str, Any]]:
    """Eshu's source cache caps (64 KiB, Variables 4 KiB) and the metadata they add."""
    text = source or ""
    limit = VARIABLE_SOURCE_CAP if entity_type == "Variable" else SOURCE_CAP
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text, {}
    return raw[:limit].decode("utf-8", "ignore"), {
        "source_cache_truncated": True,
        "source_cache_original_bytes": len(raw),
        "source_cache_limit_bytes": limit,
    }


def file_row(repo_id: str, row: sqlite3.Row, content: str) -> dict[str, Any]:
    """The content-store file shape shared by read, lines and search."""
    item: dict[str, Any] = {
        "repo_id": repo_id,
        "relative_path": row["relative_path"],
        "commit_sha": row["commit_sha"] or "",
        "content": content,
        "content_hash": row["content_hash"],
        "line_count": row["line_count"],
        "language": row["language"] or "",
    }
    if row["artifact_type"]:
        item["artifact_type"] = row["artifact_type"]
    return item


def entity_row(row: sqlite3.Row | dict[str, Any]) -> dict[str, Any]:
    """The content-store entity shape (with its capped source)."""
    source, extra = cap_source(row["entity_type"], row["source_cache"])
    metadata = metadata_of(row)
    metadata.update(extra)
    return {
        "entity_id": row["entity_id"],
        "repo_id": row["repo_id"],
        "relative_path": row["relative_path"],
        "entity_type": row["entity_type"],
        "entity_name": row["entity_name"],
        "start_line": row["start_line"],
        "end_line": row["end_line"],
        "language": row["language"] or "",
        "source_cache": source,
        "metadata": metadata,
    }


ENTITY_SELECT = (
    "SELECT e.entity_id, e.repo_id, e.relative_path, e.entity_type, e.entity_name,"
    " e.start_line, e.end_line, e.language, e.metadata, s.source_cache"
    " FROM entities e JOIN entity_source s ON s.rid = e.rid"
)


def _file_target(ctx: ApiContext) -> tuple[dict[str, Any], str, sqlite3.Row]:
    body = body_object(ctx)
    selector = str_param(body, "repo_id").strip()
    raw_path = str_param(body, "relative_path")
    if not selector:
        raise ApiError(400, "repo_id is required")
    if not raw_path.strip():
        raise ApiError(400, "relative_path is required")
    path = relative_path(raw_path)
    repo = ctx.repository(selector, not_found_status=404)
    assert repo is not None
    row = ctx.conn.execute(
        "SELECT * FROM files WHERE repo_id = ? AND relative_path = ?", (repo["repo_id"], path)
    ).fetchone()
    if row is None:
        folder = ctx.conn.execute(
            "SELECT COUNT(*) FROM files WHERE repo_id = ? AND substr(relative_path, 1, ?) = ?",
            (repo["repo_id"], len(path) + 1, path + "/"),
        ).fetchone()[0]
        if folder:
            raise ApiError(
                404,
                f"file not found: {path} is a folder of {folder} indexed"
                f" file{'s' if folder != 1 else ''} (list them with list_repository_files)",
            )
        near = nearest_paths(ctx.conn, repo["repo_id"], path)
        raise ApiError(404, "file not found" + not_found_hint(near))
    refuse_withheld(row["parse_status"], path)
    return body, repo["repo_id"], row


def refuse_withheld(parse_status: str, path: str) -> None:
    """
    A file indexed for its facts only (Terraform state, credential files) is never served
    as text: 403 with the reason.
    """
    if parse_status != "withheld":
        return
    name = path.rsplit("/", 1)[-1].lower()
    if name.endswith(".tfstate") or name == "terraform.tfstate.backup":
        raise ApiError(
            403,
            f"{path} is not served: Terraform state holds resource attributes, secrets"
            " among them, in clear; the index keeps only its resource addresses and types"
            " (ask get_iac_management_status or find_unmanaged_resources)",
        )
    why = credential_reason(path, b"", is_source=False) or (
        "its content holds a private key or a literal password, secret or token"
    )
    raise ApiError(
        403,
        f"{path} is not served: it is a credential file ({why}); the index keeps only its"
        " facts and redacted secret candidates (ask investigate_hardcoded_secrets). An"
        " operator serves such files on a trusted single-user setup with"
        " --serve-credential-files",
    )


def no_text_reason(row: sqlite3.Row) -> str:
    """
    Why a listed file has no text to serve ('' when its text is kept): a binary or too-large
    file reads as empty, and the reason says it is not.
    """
    size = row["byte_size"]
    if row["parse_status"] == "binary":
        return f"a binary file ({size} bytes): {NO_TEXT_KEPT}"
    if row["parse_status"] == "too_large":
        return f"too large to keep as text ({size} bytes): {NO_TEXT_KEPT}"
    return ""


@ROUTES.route("POST", "/content/files/read")
def read_file(ctx: ApiContext) -> Answer:
    """One indexed file's full text."""
    _, repo_id, row = _file_target(ctx)
    data = file_row(repo_id, row, row["content"])
    data["search_backend"] = READ_BACKEND
    reason = no_text_reason(row) or "resolved from exact file content lookup"
    return Answer(data, ctx.truth(CAPABILITY, reason=reason))


def select_lines(content: str, start: int, end: int) -> tuple[str, int]:
    """Eshu's ``GetFileLines`` slice: 1-based, clamped, empty past the end of the file."""
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    total = len(lines)
    start = max(start, 1)
    if end < 1 or end > total:
        end = total
    if start > total or start > end:
        return "", 0
    chosen = lines[start - 1 : end]
    return "\n".join(chosen), len(chosen)


@ROUTES.route("POST", "/content/files/lines")
def read_file_lines(ctx: ApiContext) -> Answer:
    """A line range of one indexed file."""
    body, repo_id, row = _file_target(ctx)
    start, end = int_param(body, "start_line", 1), int_param(body, "end_line", 0)
    content, count = select_lines(row["content"], start, end)
    if not row["content"]:  # an empty, binary or too-large file has no line to give
        content, count = "", 0
    data = file_row(repo_id, row, content)
    data["line_count"] = count
    data["search_backend"] = READ_BACKEND
    reason = no_text_reason(row) or "resolved from exact file line lookup"
    if not count and row["content"]:
        total = row["content"].count("\n") + (not row["content"].endswith("\n"))
        if start > total:  # Eshu answers an empty slice; the reason says why it is empty
            reason = f"start_line {start} is {PAST_THE_END} ({total} lines)"
        elif 1 <= end < start:
            reason = f"start_line {start} comes after end_line {end}: {EMPTY_RANGE}"
    return Answer(data, ctx.truth(CAPABILITY, reason=reason))


@ROUTES.route("POST", "/content/entities/read")
def read_entity(ctx: ApiContext) -> Answer:
    """One entity's source and metadata."""
    body = body_object(ctx)
    entity_id = str_param(body, "entity_id").strip()
    if not entity_id:
        raise ApiError(400, "entity_id is required")
    row = ctx.conn.execute(ENTITY_SELECT + " WHERE e.entity_id = ?", (entity_id,)).fetchone()
    if row is None or not _readable(ctx, row["repo_id"]):
        raise ApiError(404, "entity not found")
    data = entity_row(row)
    data["search_backend"] = READ_BACKEND
    return Answer(data, ctx.truth(CAPABILITY, reason="resolved from exact entity content lookup"))


def _readable(ctx: ApiContext, repo_id: str) -> bool:
    return any(r["repo_id"] == repo_id for r in readable_repositories(ctx.conn, ctx.principal))


def _search_scope(ctx: ApiContext, body: dict[str, Any]) -> list[str] | None:
    """Repository ids to search (None = every repository the caller may read)."""
    selectors = [s for s in str_list_param(body, "repo_ids") if s.strip()]
    single = str_param(body, "repo_id").strip()
    if single:
        selectors.insert(0, single)
    ids: list[str] = []
    for selector in selectors:
        repo = ctx.repository(selector, not_found_status=404)
        if repo is not None and repo["repo_id"] not in ids:
            ids.append(repo["repo_id"])
    if ids:
        return ids
    home = ctx.home_repositories()
    if ctx.principal is None and home is None:
        return None
    readable = [r["repo_id"] for r in readable_repositories(ctx.conn, ctx.principal)]
    return readable if home is None else [r for r in readable if r in home]


def _search_inputs(ctx: ApiContext) -> tuple[str, list[str] | None, int, int]:
    body = body_object(ctx)
    query = str_param(body, "query") or str_param(body, "pattern")
    limit, offset = limit_offset(body, default=50, maximum=200, max_offset=MAX_OFFSET)
    if not query.strip():
        raise ApiError(400, "query is required")
    return query, _search_scope(ctx, body), limit, offset


def _case_sensitive(ctx: ApiContext) -> bool:
    """Whether the search must match the query's case (``case_sensitive``, default false)."""
    return bool_param(body_object(ctx), "case_sensitive", False)


def _regex(ctx: ApiContext, query: str, exact_case: bool) -> RegexSearch | None:
    """The query as a bounded regular expression when ``regex`` is true, else None."""
    if not bool_param(body_object(ctx), "regex", False):
        return None
    return RegexSearch(query, case_sensitive=exact_case)


def _files_in_scope(ctx: ApiContext, where: str, args: list[Any]):
    """Every file in scope, lazily, in the search's order (a regular expression reads each)."""
    return ctx.conn.execute(
        "SELECT f.* FROM files f WHERE 1 = 1" + where + " ORDER BY f.repo_id, f.relative_path",
        args,
    )


def _scope_sql(column: str, scope: list[str] | None) -> tuple[str, list[Any]]:
    if scope is None:
        return "", []
    return f" AND {column} IN ({','.join('?' for _ in scope)})", list(scope)


def _search_answer(
    ctx: ApiContext,
    results: list,
    limit: int,
    offset: int,
    truncated: bool,
    exact_case: bool,
    pattern: RegexSearch | None = None,
    unsearched: list[str] | None = None,
):
    data = {
        "results": results,
        "matches": results,
        "count": len(results),
        "limit": limit,
        "offset": offset,
        "truncated": truncated,
        "source_backend": SEARCH_BACKEND,
    }
    if exact_case:
        data["case_sensitive"] = True
    if pattern is not None:
        data["regex"] = True
    how = "case-sensitive" if exact_case else "case-insensitive"
    what = "regular-expression" if pattern is not None else "substring"
    reason = f"resolved from {how} {what} search"
    if unsearched:
        reason += f"; {unsearched_clause(unsearched)}"
    return Answer(data, ctx.truth(CAPABILITY, reason=reason))


UNSEARCHED_NAMED = 3
"""Paths of files too large to search that a search's reason names."""


def unsearched_files(ctx: ApiContext, scope: list[str] | None) -> list[str]:
    """Files in scope the index keeps no text for although they are text (too large)."""
    where, args = _scope_sql("repo_id", scope)
    rows = ctx.conn.execute(
        "SELECT relative_path FROM files WHERE parse_status = 'too_large'"
        + where
        + " ORDER BY repo_id, relative_path",
        args,
    )
    return [row["relative_path"] for row in rows]


def unsearched_clause(paths: list[str]) -> str:
    """``2 files too large to keep as text were not searched: a, b``."""
    count = len(paths)
    noun = "file" if count == 1 else "files"
    verb = "was" if count == 1 else "were"
    named = ", ".join(paths[:UNSEARCHED_NAMED])
    if count > UNSEARCHED_NAMED:
        named += f" (+{count - UNSEARCHED_NAMED} more)"
    return f"{count} {noun} too large to keep as text {verb} {NOT_SEARCHED}: {named}"


@ROUTES.route("POST", "/content/files/search")
def search_files(ctx: ApiContext) -> Answer:
    """Files whose text contains the query (case-insensitive unless asked), by repository
    and path."""
    query, scope, limit, offset = _search_inputs(ctx)
    exact_case = _case_sensitive(ctx)
    pattern = _regex(ctx, query, exact_case)
    where, args = _scope_sql("f.repo_id", scope)
    if pattern is None:
        # A scan of files.content: SQLite's LIKE (or instr, which keeps case) over a large
        # repository takes milliseconds.
        match = "instr(f.content, ?) > 0" if exact_case else "f.content LIKE ? ESCAPE '\\'"
        sql = (
            f"SELECT f.* FROM files f WHERE {match}"
            + where
            + " ORDER BY f.repo_id, f.relative_path LIMIT ? OFFSET ?"
        )
        needle = query if exact_case else like_pattern(query)
        rows = ctx.conn.execute(sql, [needle, *args, limit + 1, offset]).fetchall()
    else:
        matching = (
            row for row in _files_in_scope(ctx, where, args) if pattern.search(row["content"] or "")
        )
        rows = list(itertools.islice(matching, offset, offset + limit + 1))
    rows, truncated = page(rows, limit)
    results = []
    for row in rows:
        item = file_row(row["repo_id"], row, "")
        item["matching_lines"] = matching_lines(row["content"] or "", query, exact_case, pattern)
        results.append(item)
    unsearched = unsearched_files(ctx, scope)
    return _search_answer(ctx, results, limit, offset, truncated, exact_case, pattern, unsearched)


MATCHING_LINES = 3
"""Matching lines a file search row shows (Eshu's rows carry none: bodies are left out)."""
MATCHING_LINE_CHARS = 160


#: Lines read for a file's matches before the best few are kept.
MATCHING_LINES_READ = 200
#: How a line that is only a comment begins (it mentions the text rather than using it).
COMMENT_STARTS = ("#", "//", "/*", "*", "--", "<!--", ";", '"""', "'''")


def is_comment(text: str) -> bool:
    """Whether a stripped source line is a comment or docstring line."""
    return text.startswith(COMMENT_STARTS)


def matching_lines(
    content: str, query: str, exact_case: bool = False, pattern: RegexSearch | None = None
) -> list[dict[str, Any]]:
    """
    The lines of ``content`` holding ``query`` (case-insensitive unless ``exact_case``; a
    match of ``pattern`` when given), numbered from 1: lines that use the text first, then
    comments, each in file order.
    """
    found: list[dict[str, Any]] = []
    wanted = query if exact_case else query.lower()
    for number, line in enumerate(content.split("\n"), 1):
        if (
            pattern.search(line)
            if pattern is not None
            else wanted in (line if exact_case else line.lower())
        ):
            text = line.strip()
            found.append({"line_number": number, "text": text[:MATCHING_LINE_CHARS]})
            if len(found) == MATCHING_LINES_READ:
                break
    found.sort(key=lambda row: is_comment(row["text"]))  # stable: file order within each
    return found[:MATCHING_LINES]


# One file's entities in the route's order, with the byte spans the match must fall in.
_FILE_ENTITIES = (
    "SELECT e.entity_id, e.repo_id, e.relative_path, e.entity_type, e.entity_name,"
    " e.start_line, e.end_line, e.language, e.metadata, e.start_byte, e.end_byte"
    " FROM entities e WHERE e.file_id = ? ORDER BY e.start_line, e.rid"
)


@ROUTES.route("POST", "/content/entities/search")
def search_entities(ctx: ApiContext) -> Answer:
    """Entities whose source contains the query (case-insensitive unless asked)."""
    query, scope, limit, offset = _search_inputs(ctx)
    exact_case = _case_sensitive(ctx)
    pattern = _regex(ctx, query, exact_case)
    where, args = _scope_sql("f.repo_id", scope)
    if pattern is not None:
        found = _entities_matching(ctx, pattern, where, args)
    else:
        found = entities_containing(
            ctx.conn,
            query,
            file_where="1 = 1" + where,
            file_params=args,
            entity_sql=_FILE_ENTITIES,
        )
    if exact_case and pattern is None:  # the scan folds case: keep the case as written
        found = (
            (row, scanned)
            for row, scanned in found
            if query in scanned.source(row["start_byte"], row["end_byte"])
        )
    rows = []
    for row, scanned in itertools.islice(found, offset, offset + limit + 1):
        item = dict(row)
        item["source_cache"] = scanned.source(row["start_byte"], row["end_byte"])
        rows.append(item)
    rows, truncated = page(rows, limit)
    results = [entity_row(row) for row in rows]
    return _search_answer(ctx, results, limit, offset, truncated, exact_case, pattern)


def _entities_matching(ctx: ApiContext, pattern: RegexSearch, where: str, args: list[Any]):
    """Entities whose source holds a match of ``pattern``, in file order, lazily."""
    for row in _files_in_scope(ctx, where, args):
        content = row["content"] or ""
        if not pattern.search(content):
            continue
        body = content.encode("utf-8")
        scanned = ScannedFile(row=row, body=body, folded=body)
        for entity in ctx.conn.execute(_FILE_ENTITIES, [row["file_id"]]).fetchall():
            if pattern.search(scanned.source(entity["start_byte"], entity["end_byte"])):
                yield entity, scanned
