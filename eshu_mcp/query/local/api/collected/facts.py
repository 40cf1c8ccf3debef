"""
Reading the local collectors' facts (``artifact_facts``, see index/collectors) for the
collector-fed routes: rows in a stable order with exact paging, and a truth block that says
the evidence is the repository's own files as of the indexed generation.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from attrs import frozen

from eshu_mcp.query.local.api.code.common import in_clause
from eshu_mcp.query.local.api.code.scope import repo_clause
from eshu_mcp.query.local.api.platform.framework import ApiContext, ApiError, strict_query_int
from eshu_mcp.query.reasons import NO_LOCAL_EVIDENCE

LOCAL_COLLECTOR_BASIS = "content_index"
"""Facts parsed from files in the index: derived evidence, never runtime state."""


@frozen
class CollectedFact:
    """One stored fact, decoded."""

    repo_id: str
    relative_path: str
    artifact_type: str
    kind: str
    name: str
    line: int
    payload: dict[str, Any]

    def source(self) -> dict[str, Any]:
        """Where the fact was read, as Eshu's evidence handles name a file span."""
        return {
            "repo_id": self.repo_id,
            "relative_path": self.relative_path,
            "start_line": self.line,
            "end_line": self.line,
        }


def collected_facts(
    ctx: ApiContext,
    kinds: Sequence[str],
    *,
    scope: str = "",
    names: Sequence[str] = (),
    name_prefix: str = "",
    where: str = "",
    params: Sequence[Any] = (),
    limit: int | None = None,
    offset: int = 0,
) -> tuple[list[CollectedFact], bool]:
    """
    Facts of ``kinds`` in a repository scope (see ``code.scope.repo_clause``), ordered by
    repository, path, line, kind and name; with ``limit``, one page and whether more exist.

    ``where``/``params`` add a raw SQL condition over ``artifact_facts`` columns (payload
    fields through ``json_extract(payload, '$.field')``).
    """
    clause, values = repo_clause("repo_id", scope)
    conditions = [clause]
    kind_clause, kind_values = in_clause("fact_kind", list(kinds))
    conditions.append(kind_clause)
    values += kind_values
    if names:
        name_clause, name_values = in_clause("name", list(names))
        conditions.append(name_clause)
        values += name_values
    if name_prefix:
        conditions.append("name >= ? AND name < ?")
        values += [name_prefix, name_prefix + "\U0010ffff"]
    if where:
        conditions.append(f"({where})")
        values += list(params)
    sql = (
        "SELECT repo_id, relative_path, artifact_type, fact_kind, name, line_number, payload"
        f" FROM artifact_facts WHERE {' AND '.join(conditions)}"
        " ORDER BY repo_id, relative_path, line_number, fact_kind, name, rowid"
    )
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        values += [limit + 1, offset]
    rows = ctx.conn.execute(sql, values).fetchall()
    facts = [
        CollectedFact(row[0], row[1], row[2], row[3], row[4], row[5], json.loads(row[6] or "{}"))
        for row in rows
    ]
    if limit is None:
        return facts, False
    return facts[:limit], len(facts) > limit


def collected_files(ctx: ApiContext, artifact_types: Sequence[str], *, scope: str = "") -> int:
    """How many indexed files in scope the collectors of ``artifact_types`` read."""
    clause, values = repo_clause("repo_id", scope)
    type_clause, type_values = in_clause("artifact_type", list(artifact_types))
    return int(
        ctx.conn.execute(
            f"SELECT COUNT(*) FROM files WHERE {clause} AND {type_clause}",
            [*values, *type_values],
        ).fetchone()[0]
    )


def collected_truth(ctx: ApiContext, capability: str, collector: str, files_read: int) -> dict:
    """
    The truth block of a collector-fed answer: derived from the repository's own files;
    the reason says which collector read how many files (none read is not absence).
    """
    if files_read:
        reason = f"read by the local {collector} from {files_read} indexed file(s)"
    else:
        reason = (
            f"the local {collector} {NO_LOCAL_EVIDENCE} in scope; an empty answer means"
            " the repository holds no such evidence, not that none exists elsewhere"
        )
    return ctx.truth(capability, basis=LOCAL_COLLECTOR_BASIS, reason=reason)


def aggregate_paging(ctx: ApiContext, maximum: int = 500) -> tuple[int, int]:
    """The aggregate routes' ``limit`` (default 100) and ``offset`` (at most 10000)."""
    limit = strict_query_int(ctx.query, "limit")
    if limit is None:
        limit = 100
    elif limit < 1:
        raise ApiError(400, "limit must be a positive integer")
    elif limit > maximum:
        raise ApiError(400, "limit exceeds maximum")
    offset = strict_query_int(ctx.query, "offset") or 0
    if offset < 0:
        raise ApiError(400, "offset must be a non-negative integer")
    if offset > 10_000:
        raise ApiError(400, "offset exceeds maximum")
    return limit, offset


def next_aggregate_offset(offset: int, limit: int, truncated: bool) -> int | None:
    """The next page's offset, when there is one within the 10000 bound."""
    if not truncated or offset + limit > 10_000:
        return None
    return offset + limit


def grouped_page(
    values: Iterable[str], group_by: str, limit: int, offset: int, **extra: Any
) -> dict[str, Any]:
    """
    An aggregate route's page: ``values`` counted into buckets of ``group_by``, largest
    first (then by value), with Eshu's paging fields and the ``extra`` keys (``scope``).
    """
    counts = Counter(values)
    buckets = [
        {"dimension": group_by, "value": value, "count": count}
        for value, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    page = buckets[offset : offset + limit]
    truncated = len(buckets) > offset + limit
    return {
        "buckets": page,
        "count": len(page),
        "limit": limit,
        "offset": offset,
        "group_by": group_by,
        "truncated": truncated,
        "next_offset": next_aggregate_offset(offset, limit, truncated),
        **extra,
    }
