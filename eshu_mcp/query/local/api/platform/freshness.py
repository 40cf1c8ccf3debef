"""
Freshness routes (§2.8): the generation lifecycle and changed-since deltas.

Generations are the indexer's runs; ``fact_versions`` stores each stable fact's versions
as generation-seq intervals, so a delta between two generations is one SQL pass.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime
from typing import Any

from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    int_param,
)
from eshu_mcp.query.local.api.platform.grants import readable
from eshu_mcp.query.local.api.platform.truth import MISSING_CAUSE
from eshu_mcp.query.local.api.platform.writer_state import as_lived, writer_alive

LIFECYCLE = "freshness.generation_lifecycle"
CHANGED_SINCE = "freshness.changed_since"
SCOPE_PREFIX = "git-repository-scope:"
STATUSES = ("pending", "active", "superseded", "completed", "failed")
CLASSES = ("added", "updated", "unchanged", "retired", "superseded")
CATEGORIES = ("files", "content_entities", "facts")
BUILDING_DETAIL = "at least one returned scope has a pending or in-flight generation"


def _scope_error(kind: str, value: str) -> ApiError:
    return ApiError(
        404,
        f'no generation lifecycle records for {kind} "{value}"',
        code="scope_not_found",
        capability=LIFECYCLE,
    )


def _repository_for(ctx: ApiContext, repository: str, scope_id: str, capability: str):
    """The repository a ``repository`` selector or ``scope_id`` names (404 envelope if none)."""
    if scope_id:
        repo_id = scope_id[len(SCOPE_PREFIX) :] if scope_id.startswith(SCOPE_PREFIX) else ""
        row = ctx.conn.execute(
            "SELECT * FROM repositories WHERE repo_id = ?", (repo_id,)
        ).fetchone()
        if row is None or not readable(ctx.principal, row["repo_id"]):
            error = _scope_error("scope", scope_id)
            error.capability = capability
            raise error
        ctx.scope_to(row)
        return row
    try:
        row = ctx.repository(repository, not_found_status=404)
    except ApiError as error:
        if error.status != 404:
            raise
        scoped = _scope_error("repository", repository)
        scoped.capability = capability
        raise scoped from error
    return row


def _queue_status(status: str) -> dict[str, int]:
    pending = int(status == "pending")
    return {
        "total": 1,
        "outstanding": pending,
        "in_flight": pending,
        "retrying": 0,
        "succeeded": int(status in ("active", "superseded", "completed")),
        "failed": int(status == "failed"),
        "dead_letter": 0,
    }


def generation_row(row: sqlite3.Row | dict[str, Any], active_id: str | None) -> dict[str, Any]:
    """One generation in Eshu's lifecycle shape; empty optional fields are omitted."""
    item: dict[str, Any] = {
        "scope_id": row["scope_id"],
        "generation_id": row["generation_id"],
        "scope_kind": row["scope_kind"],
        "source_system": row["source_system"],
        "collector_kind": row["collector_kind"],
    }
    if active_id:
        item["current_active_generation_id"] = active_id
    item["is_active"] = row["status"] == "active"
    item["trigger_kind"] = row["trigger_kind"]
    if row["freshness_hint"]:
        item["freshness_hint"] = row["freshness_hint"]
    item["status"] = row["status"]
    for key in ("observed_at", "ingested_at", "activated_at", "superseded_at"):
        if row[key]:
            item[key] = row[key]
    item["queue_status"] = _queue_status(row["status"])
    if row["status"] == "failed" and row["failure_class"]:
        failure = {"failure_class": row["failure_class"]}
        if row["failure_message"]:
            failure["failure_message"] = row["failure_message"]
        if row["ingested_at"] or row["observed_at"]:
            failure["observed_at"] = row["ingested_at"] or row["observed_at"]
        item["latest_failure"] = failure
    return item


@ROUTES.route("GET", "/freshness/generations")
def generations(ctx: ApiContext) -> Answer:
    """Generation lifecycle records, newest first, filtered by scope and status."""
    q = ctx.query
    status = q.get("status", "").strip()
    if status and status not in STATUSES:
        raise ApiError(400, "status must be one of " + ", ".join(STATUSES))
    limit = 50
    if "limit" in q:
        try:
            limit = int(q["limit"].strip())
        except ValueError:
            limit = 0
        if not 1 <= limit <= 500:
            raise ApiError(400, "limit must be between 1 and 500")
    where, args = ["1 = 1"], []
    scope_id, repository = q.get("scope_id", "").strip(), q.get("repository", "").strip()
    if scope_id or repository:
        repo = _repository_for(ctx, repository, scope_id, LIFECYCLE)
        where.append("g.repo_id = ?")
        args.append(repo["repo_id"])
    for column in ("collector_kind", "source_system", "generation_id"):
        value = q.get(column, "").strip()
        if value:
            where.append(f"g.{column} = ?")
            args.append(value)
    if status and status not in ("pending", "failed"):  # those two depend on the writer
        where.append("g.status = ?")
        args.append(status)
    rows = ctx.conn.execute(
        "SELECT g.*, r.active_generation_id, r.local_path FROM generations g"
        " JOIN repositories r ON r.repo_id = g.repo_id WHERE " + " AND ".join(where) + ""
        " ORDER BY g.observed_at DESC, g.repo_id, g.seq DESC",
        args,
    ).fetchall()
    rows = [row for row in rows if readable(ctx.principal, row["repo_id"])]
    if any(row["status"] == "pending" for row in rows):
        alive = writer_alive(ctx.conn)
        rows = [as_lived(row, alive) for row in rows]
    if status in ("pending", "failed"):
        rows = [row for row in rows if row["status"] == status]
    generation_id = q.get("generation_id", "").strip()
    if generation_id and not rows:
        raise ApiError(
            404,
            f'no generation lifecycle record for generation "{generation_id}"',
            code="not_found",
            capability=LIFECYCLE,
        )
    page_rows, truncated = rows[:limit], len(rows) > limit
    items = [generation_row(row, row["active_generation_id"]) for row in page_rows]
    building = any(item["queue_status"]["outstanding"] for item in items)
    observed = max((item.get("observed_at", "") for item in items), default="")
    freshness: dict[str, Any] = {"state": "building" if building else "fresh"}
    if observed:
        freshness["observed_at"] = observed
    if building:
        freshness["detail"] = BUILDING_DETAIL
    else:
        missing = sorted({row["local_path"] for row in page_rows} - _present(page_rows))
        if missing:
            freshness["state"] = "stale"
            freshness["cause"] = MISSING_CAUSE
            freshness["detail"] = (
                f"repository directory {', '.join(missing)} is missing; run"
                " `eshu-mcp index --prune` to forget repositories whose directory is gone"
            )
    data = {"generations": items, "count": len(items), "limit": limit, "truncated": truncated}
    truth = ctx.truth(
        LIFECYCLE,
        basis="semantic_facts",
        reason="resolved from the embedded generations table",
        freshness=freshness,
    )
    return Answer(data, truth)


def _present(rows: list[sqlite3.Row]) -> set[str]:
    """The recorded work tree paths among the rows that are still directories."""
    return {path for path in {row["local_path"] for row in rows} if os.path.isdir(path)}


def _parse_rfc3339(text: str) -> str:
    value = text.strip()
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as error:
        raise ApiError(400, "since_observed_at must be an RFC3339 timestamp") from error
    if moment.tzinfo is None or "T" not in value:
        raise ApiError(400, "since_observed_at must be an RFC3339 timestamp")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _category(fact_kind: str) -> str:
    if fact_kind == "file":
        return "files"
    if fact_kind == "content_entity":
        return "content_entities"
    return "facts"


# One ordered pass over the repository's versions (primary key order, no temporary index):
# per stable key, the version live at since seq :a and the one live at current seq :c. A key
# live only at :c is added; live at both, unchanged or updated by payload hash; live only at
# :a, retired or superseded by the end reason of its last version started by :c (a primary
# key lookup, run only for those keys).
DELTA_SQL = """
SELECT CASE WHEN h_before IS NULL THEN 'added'
            WHEN h_after IS NULL THEN
                CASE WHEN (SELECT v.end_reason FROM fact_versions v
                            WHERE v.repo_id = :repo AND v.stable_fact_key = k
                              AND v.valid_from <= :c
                            ORDER BY v.valid_from DESC LIMIT 1) = 'retired'
                     THEN 'retired' ELSE 'superseded' END
            WHEN h_before = h_after THEN 'unchanged'
            ELSE 'updated' END AS cls,
       k, COALESCE(kind_after, kind_before) AS fact_kind
  FROM (SELECT stable_fact_key AS k,
               max(CASE WHEN live_before THEN payload_hash END) AS h_before,
               max(CASE WHEN live_before THEN fact_kind END) AS kind_before,
               max(CASE WHEN live_after THEN payload_hash END) AS h_after,
               max(CASE WHEN live_after THEN fact_kind END) AS kind_after
          FROM (SELECT stable_fact_key, fact_kind, payload_hash,
                       valid_from <= :a AND (valid_to IS NULL OR valid_to > :a) AS live_before,
                       valid_from <= :c AND (valid_to IS NULL OR valid_to > :c) AS live_after
                  FROM fact_versions WHERE repo_id = :repo)
         WHERE live_before OR live_after
         GROUP BY stable_fact_key)
 ORDER BY k
"""


def fact_delta(
    conn: sqlite3.Connection, repo_id: str, since_seq: int, current_seq: int, sample_limit: int
) -> list[dict[str, Any]]:
    """Exact per-category counts between two generations, with capped key samples."""
    categories = {
        name: {
            "category": name,
            "counts": dict.fromkeys(CLASSES, 0),
            "samples": {},
            "truncated": {},
            "unavailable": False,
        }
        for name in CATEGORIES
    }
    params = {"repo": repo_id, "a": since_seq, "c": current_seq}
    for cls, key, fact_kind in conn.execute(DELTA_SQL, params):
        entry = categories[_category(fact_kind)]
        entry["counts"][cls] += 1
        if cls == "unchanged":
            continue
        samples = entry["samples"].setdefault(cls, [])
        if len(samples) < sample_limit:
            samples.append({"stable_fact_key": key, "fact_kind": fact_kind})
        else:
            entry["truncated"][cls] = True
    _locate_samples(conn, repo_id, [entry["samples"] for entry in categories.values()])
    result = []
    for name in CATEGORIES:
        entry = categories[name]
        ordered: dict[str, Any] = {"category": name, "counts": entry["counts"]}
        if entry["samples"]:
            ordered["samples"] = entry["samples"]
        if entry["truncated"]:
            ordered["truncated"] = entry["truncated"]
        ordered["unavailable"] = False
        result.append(ordered)
    return result


def _locate_samples(
    conn: sqlite3.Connection, repo_id: str, samples: list[dict[str, list[dict[str, Any]]]]
) -> None:
    """
    Name where each sampled file or definition is (its path, and a definition's name, kind
    and line as the current index holds it), so an answer can say ``path:line name``.
    """
    file_prefix = f"file:{repo_id}:"
    entities: dict[str, list[dict[str, Any]]] = {}
    for sample in (row for by_class in samples for rows in by_class.values() for row in rows):
        key = sample["stable_fact_key"]
        if key.startswith(file_prefix):
            sample["relative_path"] = key[len(file_prefix) :]
        elif key.startswith("content_entity:"):
            entities.setdefault(key[len("content_entity:") :], []).append(sample)
    if not entities:
        return
    marks = ",".join("?" for _ in entities)
    for entity_id, path, line, name, kind in conn.execute(
        "SELECT entity_id, relative_path, start_line, entity_name, entity_type FROM entities"
        f" WHERE entity_id IN ({marks})",
        list(entities),
    ):
        for row in entities.get(entity_id, ()):
            row.update(relative_path=path, start_line=line, name=name, entity_type=kind)


def _retention_floor(conn: sqlite3.Connection, repo_id: str) -> int:
    row = conn.execute(
        "SELECT value FROM meta WHERE key = ?", ("fact_retention_min_seq:" + repo_id,)
    ).fetchone()
    try:
        return int(row[0]) if row else 0
    except ValueError:
        return 0


def _previous_generation(conn: sqlite3.Connection, repo_id: str) -> sqlite3.Row | None:
    """
    What a question naming no "since" means: the generation the active one replaced,
    or the active one itself when it is the first (then nothing changed).
    """
    return conn.execute(
        "SELECT * FROM generations WHERE repo_id = ? AND status IN"
        " ('active', 'superseded', 'completed') AND seq <= COALESCE((SELECT MAX(seq)"
        " FROM generations WHERE repo_id = ? AND status = 'active'), 0)"
        " ORDER BY (status = 'active'), seq DESC LIMIT 1",
        (repo_id, repo_id),
    ).fetchone()


@ROUTES.route("GET", "/freshness/changed-since")
def changed_since(ctx: ApiContext) -> Answer:
    """What changed in one repository since an earlier generation or instant."""
    q = ctx.query
    scope_id, repository = q.get("scope_id", "").strip(), q.get("repository", "").strip()
    if not scope_id and not repository:
        raise ApiError(400, "scope_id or repository is required")
    since_id = q.get("since_generation_id", "").strip()
    since_at_raw = q.get("since_observed_at", "").strip()
    since_at = _parse_rfc3339(since_at_raw) if since_at_raw and not since_id else ""
    sample_limit = int_param(q, "sample_limit", 25)
    if not 1 <= sample_limit <= 200:
        raise ApiError(400, "sample_limit must be between 1 and 200")
    repo = _repository_for(ctx, repository, scope_id, CHANGED_SINCE)
    repo_id = repo["repo_id"]
    if not since_id and not since_at_raw:
        since = _previous_generation(ctx.conn, repo_id)
        if since is not None:
            since_id = since["generation_id"]
    if since_id:
        since = ctx.conn.execute(
            "SELECT * FROM generations WHERE repo_id = ? AND generation_id = ?", (repo_id, since_id)
        ).fetchone()
        missing = f'generation "{since_id}" not found for repository "{repo_id}"'
    else:
        since = ctx.conn.execute(
            "SELECT * FROM generations WHERE repo_id = ? AND observed_at <= ?"
            " AND status IN ('active', 'superseded', 'completed') ORDER BY seq DESC LIMIT 1",
            (repo_id, since_at),
        ).fetchone()
        missing = f'no generation observed at or before "{since_at_raw}" for "{repo_id}"'
    if since is None:
        raise ApiError(404, missing, code="not_found", capability=CHANGED_SINCE)
    current = ctx.conn.execute(
        "SELECT * FROM generations WHERE repo_id = ? AND status = 'active'"
        " ORDER BY seq DESC LIMIT 1",
        (repo_id,),
    ).fetchone()
    building = (
        ctx.conn.execute(
            "SELECT 1 FROM generations WHERE repo_id = ? AND status = 'pending' LIMIT 1",
            (repo_id,),
        ).fetchone()
        is not None
    ) and writer_alive(ctx.conn)
    data: dict[str, Any] = {
        "scope_id": SCOPE_PREFIX + repo_id,
        "scope_kind": "repository",
        "repository": repo_id,
        "since_generation_id": since["generation_id"],
    }
    if since_at_raw and not since_id:
        data["since_observed_at"] = since_at
    data["current_active_generation_id"] = current["generation_id"] if current else ""
    if current is not None:
        data["current_observed_at"] = current["observed_at"]
    data["sample_limit"] = sample_limit
    unavailable_reason = ""
    if current is None:
        unavailable_reason = "no_active_generation"
    elif since["seq"] < _retention_floor(ctx.conn, repo_id):
        unavailable_reason = "retention_expired"
    if unavailable_reason:
        data["categories"] = [
            {"category": name, "counts": dict.fromkeys(CLASSES, 0), "unavailable": True}
            for name in CATEGORIES
        ]
    else:
        data["categories"] = fact_delta(
            ctx.conn, repo_id, since["seq"], current["seq"], sample_limit
        )
    data["building"] = building
    data["unavailable"] = bool(unavailable_reason)
    if unavailable_reason:
        data["unavailable_reason"] = unavailable_reason
    truth = ctx.truth(
        CHANGED_SINCE,
        basis="semantic_facts",
        reason="diffed stable fact keys between two retained generations",
    )
    return Answer(data, truth)
