"""
``GET /codeowners/ownership``: a repository's CODEOWNERS rules, read from the file GitHub
would use (the first of ``.github/CODEOWNERS``, ``CODEOWNERS``, ``docs/CODEOWNERS``).

One row per rule and owner in file order (Eshu's keyset: ``order_index``, ``pattern``,
``owner_ref``), each with how many indexed files it owns after GitHub's last-match-wins
precedence. ``effective_owner`` is the repository-wide owner: the last rule matching every
path. An extra ``path`` parameter asks who owns one path instead. There is no service
catalog in a repository, so the catalog side of Eshu's precedence never applies.
"""

from __future__ import annotations

from typing import Any

from eshu_mcp.query.local.api.collected.facts import collected_facts, collected_truth
from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    relative_path,
    strict_query_int,
)
from eshu_mcp.query.local.index.parse.collectors.codeowners import (
    CODEOWNERS_LOCATIONS,
    codeowners_rank,
    compile_pattern,
    owners_for,
)

CAPABILITY = "codeowners.ownership.list"
COLLECTOR_NAME = "CODEOWNERS collector"
_CATCH_ALL = ("*", "**", "/**", "/")
MATCH_BUDGET = 4_000_000
"""Files times rules past which ``owned_files`` is not counted (a second or so of matching)."""


def _limit(ctx: ApiContext) -> int:
    limit = strict_query_int(ctx.query, "limit")
    if limit is None:
        return 50
    if limit <= 0 or limit > 200:
        raise ApiError(400, "limit must be between 1 and 200")
    return limit


def _cursor(ctx: ApiContext) -> tuple[int, str, str] | None:
    raw_index = (ctx.query.get("after_order_index") or "").strip()
    pattern = ctx.query.get("after_pattern", "")
    ref = ctx.query.get("after_ref", "")
    present = sum(1 for value in (raw_index, pattern, ref) if value)
    if present == 0:
        return None
    if present != 3:
        raise ApiError(
            400, "after_order_index, after_pattern, and after_ref must be provided together"
        )
    index = strict_query_int(ctx.query, "after_order_index")
    if index is None or index < 0:
        raise ApiError(400, "after_order_index must be a non-negative integer")
    return index, pattern, ref


def active_rules(ctx: ApiContext, repo_id: str) -> tuple[str, list, int]:
    """The CODEOWNERS file GitHub uses, its rules in order, and how many files were read."""
    facts, _ = collected_facts(ctx, ("owner_rule",), scope=repo_id)
    files = sorted({f.relative_path for f in facts if f.relative_path in CODEOWNERS_LOCATIONS})
    if not files:
        return "", [], 0
    active = min(files, key=codeowners_rank)
    rules = [f for f in facts if f.relative_path == active]
    rules.sort(key=lambda f: f.payload.get("order_index", 0))
    return active, rules, len(files)


@ROUTES.route("GET", "/codeowners/ownership")
def list_ownership(ctx: ApiContext) -> Answer:
    """The rules of a repository's CODEOWNERS file, owner by owner, with their reach."""
    selector = ctx.query.get("repository_id", "").strip()
    if not selector:
        raise ApiError(400, "repository_id is required")
    limit = _limit(ctx)
    cursor = _cursor(ctx)
    path = relative_path(ctx.query.get("path", ""), field="path") if ctx.query.get("path") else ""
    repository = ctx.repository(selector, not_found_status=404)
    repo_id = str(repository["repo_id"])
    active, rules, files_read = active_rules(ctx, repo_id)
    compiled = [(compile_pattern(rule.name), rule) for rule in rules]
    owned = _owned_files(ctx, repo_id, compiled)
    rows: list[dict[str, Any]] = []
    for rule in rules:
        order_index = rule.payload["order_index"]
        for owner in rule.payload.get("owners") or ():
            rows.append(
                {
                    "pattern": rule.name,
                    "source_path": active,
                    "order_index": order_index,
                    "owner_ref": owner,
                    "line": rule.line,
                    "owned_files": None if owned is None else owned.get(order_index, 0),
                }
            )
    rows.sort(key=lambda r: (r["order_index"], r["pattern"], r["owner_ref"]))
    if cursor is not None:
        rows = [r for r in rows if (r["order_index"], r["pattern"], r["owner_ref"]) > cursor]
    page, truncated = rows[:limit], len(rows) > limit
    data: dict[str, Any] = {
        "ownership": page,
        "repository_id": repo_id,
        "count": len(page),
        "limit": limit,
        "truncated": truncated,
        "effective_owner": _effective_owner(compiled, path),
    }
    if truncated:
        last = page[-1]
        data["next_cursor"] = {
            "after_order_index": last["order_index"],
            "after_pattern": last["pattern"],
            "after_ref": last["owner_ref"],
        }
    if active:
        data["codeowners_file"] = active
    truth = collected_truth(ctx, CAPABILITY, COLLECTOR_NAME, files_read)
    if files_read > 1:
        truth["reason"] += f"; GitHub uses {active} and ignores the others"
    rejected, _ = collected_facts(
        ctx,
        ("owner_rule_error", "collect_error"),
        scope=repo_id,
        where="relative_path = ?",
        params=[active],
    )
    if rejected:
        lines = ", ".join(f"line {f.line}: {f.payload.get('error', '')}" for f in rejected[:3])
        truth["reason"] += f"; {len(rejected)} line(s) GitHub would reject ({lines})"
    if owned is None:
        truth["reason"] += "; owned_files not counted (too many files times rules)"
    return Answer(data, truth)


def _owned_files(ctx: ApiContext, repo_id: str, compiled: list) -> dict[int, int] | None:
    """Indexed files per rule after last-match-wins, or None past the matching budget."""
    if not compiled:
        return {}
    (files,) = ctx.conn.execute(
        "SELECT COUNT(*) FROM files WHERE repo_id = ?", (repo_id,)
    ).fetchone()
    if files * len(compiled) > MATCH_BUDGET:
        return None
    owned: dict[int, int] = {}
    for (file_path,) in ctx.conn.execute(
        "SELECT relative_path FROM files WHERE repo_id = ?", (repo_id,)
    ):
        winner = owners_for(compiled, file_path)
        if winner is not None:
            key = winner.payload["order_index"]
            owned[key] = owned.get(key, 0) + 1
    return owned


def _effective_owner(compiled: list, path: str) -> dict[str, Any]:
    """Who owns ``path`` (last matching rule), or the repository (last catch-all rule)."""
    if path:
        rule = owners_for(compiled, path)
    else:
        rule = next((r for _, r in reversed(compiled) if r.name in _CATCH_ALL), None)
    if rule is None or not rule.payload.get("owners"):
        return {}
    owners = rule.payload["owners"]
    return {
        "owner_ref": owners[0],
        "source": "codeowners",
        "owners": owners,
        "pattern": rule.name,
        "line": rule.line,
    }
