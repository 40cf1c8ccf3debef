"""
``GET /documentation/{facts,findings,findings/count,findings/inventory}`` from the
repositories' Markdown and reST files.

The documentation source is the repository (``source_id``/``scope_id`` = its id), a
document is a file (``document_id`` = its path), a section is a heading
(``section_id`` = ``path#anchor``). Findings check each code-shaped mention against the
index (see ``collected_docs_model``). Evidence packets are not built locally.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from eshu_mcp.query.local.api.code.scope import scope_repository
from eshu_mcp.query.local.api.collected.docs_model import (
    COLLECTOR_NAME,
    DOC_KINDS,
    MENTION,
    MentionResolver,
    finding_for,
    is_code_shaped,
)
from eshu_mcp.query.local.api.collected.facts import (
    CollectedFact,
    aggregate_paging,
    collected_facts,
    collected_files,
    collected_truth,
    grouped_page,
)
from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    strict_query_int,
)

FACT_KIND_ALIASES = {
    "source": "documentation_source",
    "document": "documentation_document",
    "section": "documentation_section",
    "link": "documentation_link",
    "entity_mention": MENTION,
}
FINDING_FILTERS = (
    "scope_id",
    "finding_type",
    "source_id",
    "document_id",
    "status",
    "truth_level",
    "freshness_state",
)
GROUPS = ("status", "truth_level", "freshness_state", "finding_type", "source_id")


def _page(ctx: ApiContext) -> tuple[int, int]:
    limit = strict_query_int(ctx.query, "limit")
    if limit is None:
        limit = 50
    elif limit < 1 or limit > 200:
        raise ApiError(400, "limit must be an integer between 1 and 200", code="invalid_argument")
    offset = strict_query_int(ctx.query, "cursor") or 0
    if offset < 0:
        raise ApiError(400, "cursor must be a non-negative integer offset", code="invalid_argument")
    return limit, offset


def _scope(ctx: ApiContext) -> str:
    """``repo``, else ``scope_id``/``source_id`` (both the repository id locally)."""
    selector = (
        ctx.query.get("repo") or ctx.query.get("scope_id") or ctx.query.get("source_id") or ""
    )
    return scope_repository(ctx, selector, not_found_status=404)


def _doc_facts(ctx: ApiContext, scope: str, kinds, where: list[str], params: list) -> list:
    for name, column in (("generation_id", "generation_id"), ("updated_since", "indexed_at")):
        value = ctx.query.get(name, "").strip()
        if value:
            op = "=" if name == "generation_id" else ">="
            where.append(f"file_id IN (SELECT file_id FROM files WHERE {column} {op} ?)")
            params.append(value)
    facts, _ = collected_facts(ctx, kinds, scope=scope, where=" AND ".join(where), params=params)
    return facts


def _target_matches(ctx: ApiContext, refs: list[dict[str, Any]], fact: CollectedFact) -> bool:
    target = ctx.query.get("target_id", "").strip()
    if not target:
        return True
    return target == fact.name or any(
        target in (ref["id"], ref["display_name"], ref["display_name"].rsplit(".", 1)[-1])
        for ref in refs
    )


def all_findings(ctx: ApiContext) -> tuple[list[dict[str, Any]], int, str]:
    """Every finding in the request's scope and filters, the files read and the scope."""
    if ctx.query.get("service_id", "").strip():
        return [], 0, ""  # no service model in a repository: nothing is about a service
    scope = _scope(ctx)
    where, params = ["json_extract(payload, '$.mention_kind') IS NOT NULL"], []
    if ctx.query.get("document_id", "").strip():
        where.append("relative_path = ?")
        params.append(ctx.query["document_id"].strip())
    mentions = [f for f in _doc_facts(ctx, scope, (MENTION,), where, params) if is_code_shaped(f)]
    resolver = MentionResolver(ctx, mentions)
    freshness = ctx.freshness().get("state", "fresh")
    findings = []
    for fact in mentions:
        status, refs = resolver.resolution(fact)
        if not _target_matches(ctx, refs, fact):
            continue
        finding = finding_for(fact, status, refs, freshness)
        if all(
            not ctx.query.get(name, "").strip()
            or name in ("scope_id", "source_id")  # both select the repository: see _scope
            or str(finding.get(name)) == ctx.query[name].strip()
            for name in FINDING_FILTERS
        ):
            findings.append(finding)
    return findings, collected_files(ctx, ("documentation",), scope=scope), scope


@ROUTES.route("GET", "/documentation/findings")
def list_findings(ctx: ApiContext) -> Answer:
    """Code and path references in the docs, each checked against the index."""
    limit, offset = _page(ctx)
    findings, files_read, _ = all_findings(ctx)
    page = findings[offset : offset + limit]
    more = len(findings) > offset + limit
    target = {
        key: ctx.query[key].strip()
        for key in ("repo", "target_kind", "target_id", "service_id")
        if ctx.query.get(key, "").strip()
    }
    missing = []
    if not files_read:
        missing.append(
            {"reason": "no_documentation_facts", "detail": "no Markdown or reST file is indexed"}
        )
    data = {
        "findings": page,
        "next_cursor": str(offset + limit) if more else None,
        "coverage": {
            "target": {("repository" if k == "repo" else k): v for k, v in target.items()},
            "findings_returned": len(page),
            "target_fact_count": len(findings),
            "target_fact_kinds": {MENTION: len(findings)} if findings else {},
            "truncated": more,
        },
        "related_facts": [],
        "missing_evidence": missing,
    }
    truth = collected_truth_for(ctx, "documentation_findings.list", files_read)
    return Answer(data, truth)


def collected_truth_for(ctx: ApiContext, capability: str, files_read: int) -> dict:
    """The truth block of a documentation answer."""
    return collected_truth(ctx, capability, COLLECTOR_NAME, files_read)


@ROUTES.route("GET", "/documentation/findings/count")
def count_findings(ctx: ApiContext) -> Answer:
    """How many findings, by status, truth level and freshness."""
    findings, files_read, _ = all_findings(ctx)
    data = {
        "total_findings": len(findings),
        "by_status": dict(sorted(Counter(f["status"] for f in findings).items())),
        "by_truth_level": dict(sorted(Counter(f["truth_level"] for f in findings).items())),
        "by_freshness_state": dict(sorted(Counter(f["freshness_state"] for f in findings).items())),
        "scope": _echo(ctx),
    }
    return Answer(data, collected_truth_for(ctx, "documentation_findings.aggregate", files_read))


def _echo(ctx: ApiContext) -> dict[str, str]:
    return {
        name: ctx.query[name].strip() for name in FINDING_FILTERS if ctx.query.get(name, "").strip()
    }


@ROUTES.route("GET", "/documentation/findings/inventory")
def finding_inventory(ctx: ApiContext) -> Answer:
    """Findings grouped along one dimension, largest group first."""
    group_by = ctx.query.get("group_by", "").strip() or "status"
    if group_by not in GROUPS:
        raise ApiError(
            400,
            "group_by must be one of status, truth_level, freshness_state, finding_type, source_id",
        )
    limit, offset = aggregate_paging(ctx)
    findings, files_read, _ = all_findings(ctx)
    values = (str(f[group_by]) for f in findings)
    data = grouped_page(values, group_by, limit, offset, scope=_echo(ctx))
    return Answer(data, collected_truth_for(ctx, "documentation_findings.aggregate", files_read))


@ROUTES.route("GET", "/documentation/facts")
def list_facts(ctx: ApiContext) -> Answer:
    """Documents, sections, links and mentions (mentions resolved against the index)."""
    raw_kind = ctx.query.get("fact_kind", "").strip()
    kind = FACT_KIND_ALIASES.get(raw_kind, raw_kind)
    if kind and kind not in (*DOC_KINDS, "documentation_source"):
        raise ApiError(400, "unsupported documentation fact_kind", code="invalid_argument")
    anchors = (
        "scope_id",
        "repo",
        "target_id",
        "service_id",
        "source_id",
        "document_id",
        "section_id",
    )
    if kind != "documentation_source" and not any(ctx.query.get(a, "").strip() for a in anchors):
        raise ApiError(
            400,
            "documentation facts require scope_id, repo, target_id, service_id, source_id,"
            " document_id, or section_id",
            code="invalid_argument",
        )
    limit, offset = _page(ctx)
    if ctx.query.get("service_id", "").strip():
        rows: list[dict[str, Any]] = []
        files_read = 0
    else:
        rows, files_read = _fact_rows(ctx, kind)
    page = rows[offset : offset + limit]
    more = len(rows) > offset + limit
    data: dict[str, Any] = {
        "facts": page,
        "count": len(page),
        "limit": limit,
        "truncated": more,
        "missing_evidence": not page,
        "states": [] if page else ["no_documentation_facts"],
    }
    if more:
        data["next_cursor"] = str(offset + limit)
    return Answer(data, collected_truth_for(ctx, "documentation_facts.list", files_read))


def _fact_rows(ctx: ApiContext, kind: str) -> tuple[list[dict[str, Any]], int]:
    scope = _scope(ctx)
    files_read = collected_files(ctx, ("documentation",), scope=scope)
    if kind == "documentation_source":
        return _source_rows(ctx, scope), files_read
    where, params = ["1 = 1"], []
    for name, expression in (
        ("document_id", "relative_path = ?"),
        ("section_id", "json_extract(payload, '$.section_id') = ?"),
    ):
        if ctx.query.get(name, "").strip():
            where.append(expression)
            params.append(ctx.query[name].strip())
    query = ctx.query.get("q", "").strip().lower()
    if query:
        where.append("(lower(name) LIKE ? OR lower(payload) LIKE ?)")
        params += [f"%{query}%", f"%{query}%"]
    facts = _doc_facts(ctx, scope, (kind,) if kind else DOC_KINDS, where, params)
    resolver = MentionResolver(ctx, [f for f in facts if f.kind == MENTION])
    generations = dict(
        ctx.conn.execute(
            "SELECT repo_id || char(0) || relative_path, generation_id FROM files"
            " WHERE artifact_type = 'documentation'"
        )
    )
    rows = []
    for fact in facts:
        payload = dict(fact.payload)
        refs: list = []
        if fact.kind == MENTION:
            payload["resolution_status"], refs = resolver.resolution(fact)
            payload["candidate_refs"] = refs
            payload["mention_id"] = f"{fact.relative_path}:{fact.line}:{fact.name}"
        if not _target_matches(ctx, refs, fact):
            continue
        rows.append(
            {
                "fact_id": f"{fact.kind}:{fact.repo_id}:{fact.relative_path}:{fact.line}"
                f":{fact.name}",
                "fact_kind": fact.kind,
                "scope_id": fact.repo_id,
                "generation_id": generations.get(f"{fact.repo_id}\0{fact.relative_path}", ""),
                "source_system": "git",
                "source_uri": fact.relative_path,
                "source_record_id": payload.get("section_id") or fact.relative_path,
                "line": fact.line,
                "payload": payload,
            }
        )
    return rows, files_read


def _source_rows(ctx: ApiContext, scope: str) -> list[dict[str, Any]]:
    """One source per repository holding documentation: the repository itself."""
    facts, _ = collected_facts(ctx, ("documentation_document",), scope=scope)
    repos = sorted({f.repo_id for f in facts})
    rows = []
    for repo_id in repos:
        name, remote = ctx.conn.execute(
            "SELECT name, remote_url FROM repositories WHERE repo_id = ?", (repo_id,)
        ).fetchone()
        payload = {
            "source_id": repo_id,
            "source_system": "git",
            "external_id": repo_id,
            "display_name": name,
            "base_uri": remote or "",
            "source_type": "repository",
            "documents": sum(1 for f in facts if f.repo_id == repo_id),
        }
        rows.append(
            {
                "fact_id": f"documentation_source:{repo_id}",
                "fact_kind": "documentation_source",
                "scope_id": repo_id,
                "generation_id": "",
                "source_system": "git",
                "source_uri": remote or "",
                "source_record_id": repo_id,
                "payload": payload,
            }
        )
    return rows
