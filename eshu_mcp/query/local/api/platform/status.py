"""
Status routes (§2.9): always plain JSON, never enveloped.

The only collector and ingester of the embedded backend is its local git indexer; its
"queue" is the generations table (pending = in flight, active/superseded = succeeded).
"""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime
from typing import Any

from attrs import frozen

import eshu_mcp
from eshu_mcp.query.local.api.platform.framework import ROUTES, Answer, ApiContext, ApiError
from eshu_mcp.query.local.api.platform.writer_state import INTERRUPTED, writer_alive

VERSION = f"embedded-{eshu_mcp.__version__}"
INGESTER = "repository"
INGESTER_ALIASES = ["repository", "bootstrap-index", "repo-sync", "workspace-index"]
# A generation pending longer than this is reported as stalled (the indexer died).
STALLED_AFTER_SECONDS = 3600


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


@frozen
class IndexHealth:
    """The local indexer's state, derived from the generations table."""

    state: str
    reasons: list[str]
    repository_count: int
    queue: dict[str, Any]
    updated_at: str
    observation_count: int
    active_repositories: int
    failed_repositories: int
    missing_repositories: int = 0

    @property
    def serving(self) -> bool:
        """True unless a failed or stalled build needs attention (missing directories don't)."""
        if self.state in ("healthy", "progressing"):
            return True
        return self.state == "degraded" and not self.failed_repositories


def index_health(conn: sqlite3.Connection, now: datetime | None = None) -> IndexHealth:
    """Summarise generations into Eshu's health vocabulary and queue counters."""
    now = now or datetime.now(UTC)
    counts = {
        row["status"]: row["n"]
        for row in conn.execute("SELECT status, COUNT(*) AS n FROM generations GROUP BY status")
    }
    alive = not counts.get("pending") or writer_alive(conn)
    if not alive:  # left by a run that died: failed (interrupted), not in flight
        counts["failed"] = counts.get("failed", 0) + counts.pop("pending")
    # A repository's latest generation, an interrupted run aside (the one before it serves).
    repos = conn.execute(
        "SELECT r.repo_id, r.local_path, r.active_generation_id,"
        " (SELECT g.status FROM generations g WHERE g.repo_id = r.repo_id"
        "   AND COALESCE(g.failure_class, '') != ? AND (g.status != 'pending' OR ?)"
        "   ORDER BY g.seq DESC LIMIT 1) AS latest"
        " FROM repositories r",
        (INTERRUPTED, int(alive)),
    ).fetchall()
    oldest = conn.execute(
        "SELECT MIN(observed_at) FROM generations WHERE status = 'pending' AND ?", (int(alive),)
    ).fetchone()[0]
    updated = conn.execute(
        "SELECT MAX(COALESCE(activated_at, ingested_at, observed_at)) FROM generations"
    ).fetchone()[0]
    pending = counts.get("pending", 0)
    failed_repos = sum(1 for r in repos if r["latest"] == "failed")
    missing = [r["local_path"] for r in repos if not os.path.isdir(r["local_path"])]
    age = 0.0
    oldest_time = _parse_time(oldest)
    if oldest_time is not None:
        age = max((now - oldest_time).total_seconds(), 0.0)
    reasons: list[str] = []
    if not repos:
        state = "progressing"
        reasons.append("no repository has been indexed yet")
    elif pending and age > STALLED_AFTER_SECONDS:
        state = "stalled"
        reasons.append(f"a generation has been pending for {int(age)}s")
    elif missing:
        state = "degraded"
        reasons.append(
            f"{len(missing)} repositories' directories are missing ({', '.join(missing[:3])});"
            " run `eshu-mcp index --prune` to forget them"
        )
    elif failed_repos:
        state = "degraded"
        reasons.append(f"{failed_repos} repositories' latest generation failed")
    elif pending:
        state = "progressing"
        reasons.append(f"{pending} generations are being indexed")
    else:
        state = "healthy"
    succeeded = sum(counts.get(s, 0) for s in ("active", "superseded", "completed"))
    queue = {
        "total": sum(counts.values()),
        "outstanding": pending,
        "pending": 0,
        "in_flight": pending,
        "retrying": 0,
        "succeeded": succeeded,
        "dead_letter": 0,
        "failed": counts.get("failed", 0),
        "oldest_outstanding_age": f"{int(age)}s",
        "oldest_outstanding_age_ms": int(age * 1000),
        "overdue_claims": 0,
    }
    return IndexHealth(
        state=state,
        reasons=reasons,
        repository_count=len(repos),
        queue=queue,
        updated_at=updated or "",
        observation_count=sum(counts.values()),
        active_repositories=sum(1 for r in repos if r["active_generation_id"]),
        failed_repositories=failed_repos,
        missing_repositories=len(missing),
    )


def _coordinator() -> dict[str, Any]:
    return {"mode": "embedded", "registered": False, "detail": "no workflow coordinator"}


def _scope_activity(conn: sqlite3.Connection) -> dict[str, int]:
    active = conn.execute(
        "SELECT COUNT(*) FROM repositories WHERE active_generation_id IS NOT NULL"
    ).fetchone()[0]
    changed = conn.execute(
        "SELECT COUNT(DISTINCT repo_id) FROM generations WHERE status = 'pending'"
    ).fetchone()[0]
    if changed and not writer_alive(conn):
        changed = 0
    return {"active": active, "changed": changed, "unchanged": max(active - changed, 0)}


@ROUTES.route("GET", "/status/collectors", plain=True)
@ROUTES.route("GET", "/collectors", plain=True)
def collectors(ctx: ApiContext) -> Answer:
    """One row: the embedded git indexer, with the local collectors that found files."""
    health = index_health(ctx.conn)
    last_observed = ctx.conn.execute("SELECT MAX(observed_at) FROM generations").fetchone()[0]
    collected = [
        kind
        for (kind,) in ctx.conn.execute(
            "SELECT DISTINCT artifact_type FROM files WHERE artifact_type IS NOT NULL"
            " ORDER BY artifact_type"
        )
    ]
    row = {
        "collector_kind": "git",
        "runtime_mode": "embedded",
        "status_category": "direct_mode",
        "health": health.state,
        "collector_count": 1,
        "coordinator_registered_count": 0,
        "enabled_count": 1,
        "bootstrap_count": 0,
        "claims_enabled_count": 0,
        "evidence_sources": ["git", *collected],
        "observation_count": health.observation_count,
        "last_observed_at": last_observed or "",
        "updated_at": health.updated_at,
    }
    return Answer(
        {
            "version": VERSION,
            "collectors": [row],
            "count": 1,
            "classification_basis": "embedded local indexer; no workflow coordinator",
            "updated_at": health.updated_at,
        }
    )


@ROUTES.route("GET", "/status/ingesters", plain=True)
@ROUTES.route("GET", "/ingesters", plain=True)
def ingesters(ctx: ApiContext) -> Answer:
    """The fixed ``repository`` ingester with the local indexer's health."""
    health = index_health(ctx.conn)
    row = {
        "name": INGESTER,
        "runtime_family": "ingester",
        "aliases": INGESTER_ALIASES,
        "health": health.state,
        "queue_outstanding": health.queue["outstanding"],
        "collector_instances": 1,
    }
    return Answer({"version": VERSION, "ingesters": [row], "count": 1})


@ROUTES.route("GET", "/status/ingesters/{ingester}", plain=True)
@ROUTES.route("GET", "/ingesters/{ingester}", plain=True)
def ingester_status(ctx: ApiContext) -> Answer:
    """Detail of the ``repository`` ingester (or one of its aliases)."""
    name = ctx.path_args.get("ingester", "")
    if name not in INGESTER_ALIASES:
        raise ApiError(404, f"unknown ingester: {name}")
    health = index_health(ctx.conn)
    stages = [
        {
            "stage": "index",
            "status": health.state,
            "outstanding": health.queue["outstanding"],
            "succeeded": health.queue["succeeded"],
            "failed": health.queue["failed"],
        }
    ]
    return Answer(
        {
            "version": VERSION,
            "ingester": INGESTER,
            "runtime_family": "ingester",
            "health": {"state": health.state, "reasons": health.reasons},
            "queue": health.queue,
            "coordinator": _coordinator(),
            "scope_activity": _scope_activity(ctx.conn),
            "stage_summaries": stages,
            "domain_backlogs": [],
        }
    )


def _semantic_extraction() -> dict[str, Any]:
    return {
        "state": "unavailable",
        "provider_configured": False,
        "code_hints_enabled": False,
        "documentation_observations_enabled": False,
        "deterministic_documentation_unblocked": True,
        "deterministic_paths_affected": False,
        "reason": "no semantic extraction provider is configured in the embedded backend",
        "detail": "embedded backend: semantic providers not configured",
        "supported_states": [
            "unavailable",
            "available",
            "available_but_disabled_for_scope",
            "disabled_by_policy",
            "provider_unhealthy",
        ],
    }


@ROUTES.route("GET", "/index-status", plain=True)
@ROUTES.route("GET", "/status/index", plain=True)
def index_status(ctx: ApiContext) -> Answer:
    """The local indexer's generation queue in Eshu's index-status shape."""
    health = index_health(ctx.conn)
    empty_domain = {
        "outstanding": 0,
        "pending": 0,
        "in_flight": 0,
        "retrying": 0,
        "failed": 0,
        "dead_letter": 0,
        "blocked": 0,
        "domains": [],
    }
    return Answer(
        {
            "version": VERSION,
            "status": health.state,
            "reasons": health.reasons,
            "repository_count": health.repository_count,
            "queue": health.queue,
            "queue_blockages": [],
            "coordinator": _coordinator(),
            "scope_activity": _scope_activity(ctx.conn),
            "aws_materialization": empty_domain,
            "semantic_extraction": _semantic_extraction(),
            "terraform_state": {"recent_warnings": [], "state": "not_configured"},
        }
    )


@ROUTES.route("GET", "/status/pipeline", plain=True)
def pipeline_status(ctx: ApiContext) -> Answer:
    """The local pipeline: one index stage; collectors and reducers are not configured."""
    health = index_health(ctx.conn)
    return Answer(
        {
            "version": VERSION,
            "status": health.state,
            "reasons": health.reasons,
            "stages": [
                {"name": "collect", "state": "embedded", "detail": "git work trees"},
                {"name": "index", "state": health.state, "queue": health.queue},
                {"name": "reduce", "state": "not_configured", "detail": "no reducer domains"},
            ],
            "queue": health.queue,
            "partial_reasons": ["embedded_pipeline_only"],
        }
    )


@ROUTES.route("GET", "/status/hosted-readiness", plain=True)
def hosted_readiness(ctx: ApiContext) -> Answer:
    """Readiness from local checks; hosted-only checks report ``fail`` with their reason."""
    health = index_health(ctx.conn)
    indexed = health.active_repositories > 0
    checks = [
        {
            "name": "index_reachable",
            "state": "pass",
            "detail": "the embedded index answered",
        },
        {
            "name": "repositories_indexed",
            "state": "pass" if indexed else "fail",
            "detail": f"{health.active_repositories} repositories have an active generation",
        },
        {
            "name": "indexer_healthy",
            "state": "pass" if health.serving else "fail",
            "detail": "; ".join(health.reasons) or "no failed or stalled generations",
        },
        {
            "name": "hosted_collectors",
            "state": "fail",
            "failure_class": "not_applicable",
            "detail": "the embedded backend runs no hosted collectors",
        },
    ]
    if not indexed:
        checks[1].update(
            failure_class="index_empty",
            next_diagnostic="run `eshu-mcp index PATH` for a repository",
        )
    ready = indexed and health.serving
    failure_classes = sorted(
        {c["failure_class"] for c in checks if c["state"] == "fail" and "failure_class" in c}
        - {"not_applicable"}
    )
    summary = "embedded index ready" if ready else "embedded index not ready"
    data = {
        "version": VERSION,
        "state": "ready" if ready else "not_ready",
        "ready": ready,
        "summary": summary,
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "failure_classes": failure_classes,
        "repository_count": health.repository_count,
        "queue": health.queue,
        "coordinator": _coordinator(),
        "checks": checks,
        "diagnostic_paths": [
            {"name": "index_status", "path": "/api/v0/status/index"},
            {"name": "collectors", "path": "/api/v0/status/collectors"},
        ],
    }
    if ctx.query.get("format") == "text":
        lines = [f"state: {data['state']}", f"summary: {summary}"]
        lines += [f"check {c['name']}: {c['state']} - {c['detail']}" for c in checks]
        return Answer("\n".join(lines) + "\n", content_type="text/plain; charset=utf-8")
    return Answer(data)
