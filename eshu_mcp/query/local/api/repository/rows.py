"""
Repository catalog rows, language families and git ref listings shared by the repository,
status and freshness routes.

Git refs are the ones the indexer recorded (``repository_refs``) at the active generation.
"""

from __future__ import annotations

import sqlite3
from typing import Any

# Repository language routes expand these aliases (local-backend.md §1.5).
LANGUAGE_FAMILIES: dict[str, tuple[str, ...]] = {
    "typescript": ("typescript", "tsx"),
    "ts": ("typescript", "tsx"),
    "javascript": ("javascript", "jsx"),
    "js": ("javascript", "jsx"),
    "terraform": ("terraform", "hcl", "tfvars"),
}


def language_family(language: str) -> list[str]:
    """The stored language keys a requested language stands for."""
    key = language.strip().lower()
    return list(LANGUAGE_FAMILIES.get(key, (key,)))


def _group(row: sqlite3.Row) -> dict[str, str]:
    slug = row["repo_slug"] or ""
    remote = row["remote_url"] or ""
    if "/" in slug and slug.split("/", 1)[0]:
        return {
            "group_key": slug.split("/", 1)[0].title(),
            "group_source": "repo_slug_namespace",
            "group_truth": "derived",
            "group_kind": "source",
            "group_reason": "derived from the first source-backed repository slug namespace",
        }
    owner = _remote_owner(remote)
    if owner:
        return {
            "group_key": owner.title(),
            "group_source": "remote_url_owner",
            "group_truth": "derived",
            "group_kind": "source",
            "group_reason": "derived from the remote URL owner",
        }
    return {
        "group_key": "",
        "group_source": "missing_evidence",
        "group_truth": "unknown",
        "group_kind": "unknown",
        "group_reason": "no repository slug or remote URL owner to group by",
    }


def _remote_owner(remote: str) -> str:
    if "://" in remote:
        remote = remote.split("://", 1)[1]
    elif ":" in remote and "@" in remote.split(":", 1)[0]:
        remote = remote.split(":", 1)[1]
    parts = [p for p in remote.split("/") if p]
    if "://" in remote or len(parts) >= 3:
        return parts[1] if len(parts) >= 3 else ""
    return parts[0] if len(parts) >= 2 else ""


def catalog_row(row: sqlite3.Row) -> dict[str, Any]:
    """Eshu's repository catalog row, with its grouping evidence."""
    item: dict[str, Any] = {
        "id": row["repo_id"],
        "name": row["name"],
        "path": row["local_path"],
        "local_path": row["local_path"],
        "remote_url": row["remote_url"] or "",
        "repo_slug": row["repo_slug"] or "",
        "has_remote": bool(row["has_remote"]),
        "is_dependency": False,
    }
    item.update(_group(row))
    return item


def repository_refs(conn: sqlite3.Connection, repo_id: str) -> list[sqlite3.Row]:
    """Branches and tags recorded at the active generation (git for-each-ref)."""
    return conn.execute(
        "SELECT ref_name, ref_kind, commit_sha, is_head FROM repository_refs"
        " WHERE repo_id = ? ORDER BY ref_kind, ref_name",
        (repo_id,),
    ).fetchall()
