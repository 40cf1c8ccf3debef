"""
Repository file routes: tree, content, branches and freshness (local-backend.md §2.3).

File listings and bodies come from the index. Only bodies the index could not keep
(binary or too large) are read from the work tree, and only for paths the index lists,
after checking that the resolved path stays inside the repository.
"""

from __future__ import annotations

import base64
import sqlite3
from typing import Any

from eshu_mcp.query.local.api.code.near import nearest_paths, not_found_hint
from eshu_mcp.query.local.api.content.reads import refuse_withheld
from eshu_mcp.query.local.api.platform.framework import (
    ROUTES,
    Answer,
    ApiContext,
    ApiError,
    bool_param,
    int_param,
    page,
    relative_path,
)
from eshu_mcp.query.local.api.platform.truth import (
    MISSING_CAUSE,
    current_head,
    repository_freshness,
)
from eshu_mcp.query.local.api.platform.truth_heads import read_beneath
from eshu_mcp.query.local.api.platform.writer_state import writer_alive
from eshu_mcp.query.local.api.repository.catalog import CONTEXT, require_repository
from eshu_mcp.query.local.api.repository.rows import language_family, repository_refs

TREE_FILE_CAP = 50_000
CONTENT_CAP = 1 << 20


def check_ref(conn: sqlite3.Connection, repo: sqlite3.Row, ref: str) -> str:
    """The indexed commit when ``ref`` names it; 404/409 as Eshu's ref checks say."""
    indexed = repo["head_commit"] or ""
    ref = ref.strip()
    if (
        not ref
        or ref in (indexed, repo["head_ref"] or "")
        or (len(ref) >= 7 and indexed.startswith(ref))
    ):
        return indexed
    refs = repository_refs(conn, repo["repo_id"])
    if not refs:
        raise ApiError(
            409, "repository branch metadata unavailable; selected ref cannot be verified"
        )
    for known in refs:
        if ref in (known["ref_name"], known["commit_sha"]):
            if known["commit_sha"] == indexed:
                return indexed
            raise ApiError(409, "selected ref is not indexed")
    raise ApiError(404, "ref not found")


@ROUTES.route("GET", "/repositories/{repo_id}/tree")
def repository_tree(ctx: ApiContext) -> Answer:
    """Directory entries under ``path`` as the index knows them (``size`` = lines)."""
    repo = require_repository(ctx)
    ref = check_ref(ctx.conn, repo, ctx.query.get("ref", ""))
    base = relative_path(ctx.query.get("path", "").strip("/"), field="path")
    recursive = bool_param(ctx.query, "recursive")
    language = ctx.query.get("language", "").strip()
    sql = "SELECT relative_path, line_count, language FROM files WHERE repo_id = ?"
    args: list[Any] = [repo["repo_id"]]
    if base:
        sql += " AND (relative_path = ? OR substr(relative_path, 1, ?) = ?)"
        args += [base, len(base) + 1, base + "/"]
    if language:
        family = language_family(language)
        sql += f" AND language IN ({','.join('?' for _ in family)})"
        args += family
    sql += " ORDER BY relative_path LIMIT ?"
    args.append(TREE_FILE_CAP + 1)
    rows, truncated = page(ctx.conn.execute(sql, args).fetchall(), TREE_FILE_CAP)
    if base and not rows:
        raise ApiError(404, "path not found")
    entries = _entries(rows, base, recursive)
    data = {"ref": ref, "path": base, "entries": entries, "truncated": truncated}
    return Answer(
        data,
        ctx.truth(
            CONTEXT,
            reason="reconstructed from bounded content-index file listing;"
            " directory layout reflects indexed paths only",
        ),
    )


def _file_entry(row: sqlite3.Row) -> dict[str, Any]:
    path = row["relative_path"]
    entry: dict[str, Any] = {
        "name": path.rsplit("/", 1)[-1],
        "type": "file",
        "path": path,
        "size": row["line_count"],
    }
    if row["language"]:
        entry["language"] = row["language"]
    return entry


def _entries(rows: list[sqlite3.Row], base: str, recursive: bool) -> list[dict[str, Any]]:
    if len(rows) == 1 and rows[0]["relative_path"] == base:
        return [_file_entry(rows[0])]
    prefix = base + "/" if base else ""
    dirs: dict[str, set[str]] = {}
    files: list[dict[str, Any]] = []
    for row in rows:
        rest = row["relative_path"][len(prefix) :]
        parts = rest.split("/")
        if recursive:
            for depth in range(1, len(parts)):
                directory = "/".join(parts[:depth])
                dirs.setdefault(directory, set()).add(parts[depth])
            files.append(_file_entry(row))
        elif len(parts) == 1:
            files.append(_file_entry(row))
        else:
            dirs.setdefault(parts[0], set()).add(parts[1])
    dir_entries = [
        {
            "name": name.rsplit("/", 1)[-1],
            "type": "dir",
            "path": prefix + name,
            "child_count": len(children),
        }
        for name, children in sorted(dirs.items())
    ]
    if recursive:
        return sorted(dir_entries + files, key=lambda e: (e["path"], e["type"]))
    return dir_entries + sorted(files, key=lambda e: e["name"])


def read_inside(work_tree: str, path: str, limit: int) -> bytes | None:
    """
    Up to ``limit`` + 1 bytes of ``path`` under ``work_tree``, or None when the resolved
    file is not a regular file inside the work tree (symbolic links leaving it, and links
    swapped in since the check, included).
    """
    return read_beneath(work_tree, path, limit + 1)


@ROUTES.route("GET", "/repositories/{repo_id}/content")
def repository_content(ctx: ApiContext) -> Answer:
    """One indexed file's body at the indexed ref (base64 for bodies that are not text)."""
    repo = require_repository(ctx)
    raw_path = ctx.query.get("path", "")
    if not raw_path.strip():
        raise ApiError(400, "path is required")
    path = relative_path(raw_path, field="path")
    ref = check_ref(ctx.conn, repo, ctx.query.get("ref", ""))
    row = ctx.conn.execute(
        "SELECT content, byte_size, language, parse_status FROM files"
        " WHERE repo_id = ? AND relative_path = ?",
        (repo["repo_id"], path),
    ).fetchone()
    if row is None:
        near = nearest_paths(ctx.conn, repo["repo_id"], path)
        raise ApiError(404, "file not found" + not_found_hint(near))
    refuse_withheld(row["parse_status"], path)
    encoding, content, truncated = "utf-8", row["content"], False
    if row["parse_status"] in ("binary", "too_large"):
        raw = read_inside(repo["local_path"], path, CONTENT_CAP)
        if raw is None:
            raise ApiError(404, "file not found")
        truncated = len(raw) > CONTENT_CAP
        raw = raw[:CONTENT_CAP]
        if row["parse_status"] == "binary":
            encoding, content = "base64", base64.b64encode(raw).decode("ascii")
        else:
            content = raw.decode("utf-8", "replace")
    elif len(content.encode("utf-8")) > CONTENT_CAP:
        content = content.encode("utf-8")[:CONTENT_CAP].decode("utf-8", "ignore")
        truncated = True
    data = {
        "path": path,
        "ref": ref,
        "encoding": encoding,
        "content": content,
        "size": row["byte_size"],
        "truncated": truncated,
        "language": row["language"] or "",
    }
    return Answer(data, ctx.truth(CONTEXT, reason="read from the embedded content index"))


@ROUTES.route("GET", "/repositories/{repo_id}/branches")
def repository_branches(ctx: ApiContext) -> Answer:
    """Branches and tags recorded by the indexer, marking the default and indexed ones."""
    repo = require_repository(ctx)
    limit = int_param(ctx.query, "limit", 100)
    limit = 100 if limit <= 0 else min(limit, 500)
    cursor = ctx.query.get("cursor", "")
    refs = repository_refs(ctx.conn, repo["repo_id"])
    indexed = repo["head_commit"] or ""
    default = repo["default_branch"] or ""

    def row(ref: sqlite3.Row) -> dict[str, Any]:
        return {
            "name": ref["ref_name"],
            "kind": ref["ref_kind"],
            "commit_sha": ref["commit_sha"],
            "is_default": ref["ref_kind"] == "branch" and ref["ref_name"] == default,
            "is_head": bool(ref["is_head"]),
            "indexed": bool(indexed) and ref["commit_sha"] == indexed,
        }

    branches = [r for r in refs if r["ref_kind"] != "tag" and r["ref_name"] > cursor]
    tags = [r for r in refs if r["ref_kind"] == "tag"]
    branch_page, truncated = page(branches, limit)
    tag_page, tags_truncated = page(tags, limit)
    data = {
        "default_branch": default,
        "branches": [row(r) for r in branch_page],
        "tags": [row(r) for r in tag_page],
        "truncated": truncated,
        "tags_truncated": tags_truncated,
        "next_cursor": branch_page[-1]["ref_name"] if truncated else None,
    }
    return Answer(
        data,
        ctx.truth(
            CONTEXT, basis="runtime_state", reason="git refs recorded at the active generation"
        ),
    )


def _generation(row: sqlite3.Row | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {
        "id": row["generation_id"],
        "status": row["status"],
        "trigger_kind": row["trigger_kind"],
        "is_delta": bool(row["is_delta"]),
        "activated_at": row["activated_at"],
    }


@ROUTES.route("GET", "/repositories/{repo_id}/freshness")
def repository_freshness_route(ctx: ApiContext) -> Answer:
    """Whether the index reflects the work tree: HEAD (and ``expected_commit``) vs indexed."""
    repo = require_repository(ctx)
    repo_id = repo["repo_id"]
    active = ctx.conn.execute(
        "SELECT * FROM generations WHERE repo_id = ? AND status = 'active'"
        " ORDER BY seq DESC LIMIT 1",
        (repo_id,),
    ).fetchone()
    pending = ctx.conn.execute(
        "SELECT COUNT(*) FROM generations WHERE repo_id = ? AND status = 'pending'", (repo_id,)
    ).fetchone()[0]
    if pending and not writer_alive(ctx.conn):
        pending = 0
    freshness = repository_freshness(ctx.conn, repo, ctx.keeper)
    expected = ctx.query.get("expected_commit", "").strip()
    indexed = repo["head_commit"] or ""
    unobserved = None
    if freshness.get("cause") == MISSING_CAUSE:
        verdict = "missing"
    elif pending:
        verdict = "building"
    elif active is None:
        verdict = "unknown"
    elif expected and not indexed.startswith(expected):
        verdict = "unobserved"
        unobserved = {"ref": repo["head_ref"] or "", "target_sha": expected, "received_at": None}
    elif "rebuilding" in freshness:
        verdict = "stale"  # the work tree holds changes the index does not
    elif freshness["state"] == "stale":
        verdict = "behind"
    else:
        verdict = "current"
    indexed_ok = active is not None
    data = {
        "as_of": freshness.get("observed_at", ""),
        "generation": _generation(active),
        "observed_at": active["observed_at"] if active else None,
        "observed_commit": indexed,
        "outstanding_by_stage": [
            {"stage": "index", "status": "building" if pending else "idle", "count": pending}
        ],
        "repository": {
            "id": repo_id,
            "name": repo["name"],
            "path": repo["local_path"],
            "remote_url": repo["remote_url"] or "",
            "has_remote": bool(repo["has_remote"]),
        },
        "scope_id": "git-repository-scope:" + repo_id,
        "scoped": True,
        "shared_enrichment": {"pending": False, "pending_domains": []},
        "stages": {
            "collected": indexed_ok,
            "reduced": indexed_ok,
            "projected": indexed_ok,
            "materialized": indexed_ok,
        },
        "unobserved_push": unobserved,
        "verdict": verdict,
        "work_tree_commit": current_head(repo["local_path"]) or "",
    }
    if "rebuilding" in freshness:
        data["changed_paths"] = freshness.get("changed_paths")
        data["rebuilding"] = freshness["rebuilding"]
    return Answer(
        data,
        ctx.truth(
            "repository_freshness.status",
            basis="runtime_state",
            reason="compared the work tree (HEAD, tracked changes and untracked files) with"
            " the active generation",
            freshness=freshness,
        ),
    )
