"""
Eshu's identifier formulas (local-backend §3.1), so ids match Eshu's and stay stable across
re-indexes: repositories, content entities, generations and ingestion scopes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable

_SCP_REMOTE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>[^/].*)$")


def normalize_remote_url(url: str) -> str | None:
    """
    ``https://<host lower>/<path lower, no .git, no empty segments>``, or None if unusable.

    Accepts https/http/ssh/git URLs (credentials and ports dropped) and scp-like
    ``git@host:owner/repo.git``.
    """
    raw = url.strip()
    if not raw:
        return None
    if "://" in raw:
        rest = raw.split("://", 1)[1]
        host_part, _, path = rest.partition("/")
        host = host_part.rsplit("@", 1)[-1].split(":", 1)[0]
    else:
        match = _SCP_REMOTE.match(raw)
        if match is None:
            return None
        host, path = match.group("host"), match.group("path")
    segments = [s for s in path.strip().split("/") if s]
    if not host or not segments:
        return None
    if segments[-1].lower().endswith(".git"):
        segments[-1] = segments[-1][:-4]
    segments = [s for s in segments if s]
    if not segments:
        return None
    return f"https://{host.lower()}/{'/'.join(segments).lower()}"


def repository_id(identity: str) -> str:
    """``repository:r_`` + sha1(identity)[:8]; identity = normalized remote or absolute path."""
    return "repository:r_" + hashlib.sha1(identity.encode("utf-8")).hexdigest()[:8]


def entity_id(
    repo_id: str, relative_path: str, entity_type: str, entity_name: str, start_line: int
) -> str:
    """Eshu's content-entity id: blake2s-256 over the trimmed, newline-joined fields."""
    fields = (
        repo_id.strip(),
        relative_path.strip(),
        entity_type.strip().lower(),
        entity_name.strip(),
        str(start_line).strip(),
    )
    digest = hashlib.blake2s("\n".join(fields).encode("utf-8")).hexdigest()
    return "content-entity:e_" + digest[:12]


def entity_ids_in(repo_id: str, relative_path: str) -> Callable[[str, str, int], str]:
    """
    :func:`entity_id` for one file's entities: ``(entity_type, entity_name, start_line)``
    -> id, with the repository and path part of the hashed text built once.
    """
    prefix = f"{repo_id.strip()}\n{relative_path.strip()}\n"
    blake2s = hashlib.blake2s

    def entity_id_of(entity_type: str, entity_name: str, start_line: int) -> str:
        text = f"{prefix}{entity_type.strip().lower()}\n{entity_name.strip()}\n{start_line}"
        return "content-entity:e_" + blake2s(text.encode("utf-8")).hexdigest()[:12]

    return entity_id_of


def scope_id(repo_id: str) -> str:
    """The ingestion scope of a repository: ``git-repository-scope:<repo_id>``."""
    return "git-repository-scope:" + repo_id


def go_json(value: object) -> str:
    """JSON as Go's ``json.Marshal`` writes it: sorted keys, no spaces, HTML-safe escapes."""
    encoded = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return (
        encoded.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def generation_id(repo_path: str, source_run_id: str) -> str:
    """sha256 of Eshu's GitRepositorySnapshot fact identity for one indexing run."""
    payload = {
        "fact_type": "GitRepositorySnapshot",
        "identity": {"repo_path": repo_path, "source_run_id": source_run_id},
    }
    return hashlib.sha256(go_json(payload).encode("utf-8")).hexdigest()


def repository_slug(remote_url: str | None) -> str | None:
    """``owner/repo`` (the path) of a normalized remote URL."""
    if not remote_url:
        return None
    return remote_url.split("://", 1)[-1].split("/", 1)[-1]
