"""
Documentation evidence joined with the code index: which indexed entities and files a
document's mentions name, and the findings that come of it.

A mention is resolved at query time against the repository it was written in: a path
mention against ``files`` (repository-relative, or relative to the document), an identifier
against ``entities`` (last dotted part by name; a dotted or ``::`` prefix must agree with
the qualified name or the file's path). A code-shaped mention (a call ``f()``, a dotted
name, a reST role, a snake_case or CamelCase name, any path) that resolves to nothing is a
``missing_evidence`` finding: documentation naming code the index no longer has. A bare
name that looks like a file (``res.json``) is tried as a file first, then as code. A mention
of what lives outside the repository (a name bound by an import of an external module,
such as ``path.resolve`` after ``require('path')``, or a language builtin such as
``Object.create`` or ``isinstance``) resolves ``external``: the index cannot check it, so
it is not reported missing.
"""

from __future__ import annotations

import builtins
import hashlib
import posixpath
import re
from collections import defaultdict
from typing import Any

from eshu_mcp.query.local.api.code.common import in_clause
from eshu_mcp.query.local.api.collected.facts import CollectedFact
from eshu_mcp.query.local.api.platform.framework import ApiContext

MENTION = "documentation_entity_mention"
DOC_KINDS = (
    "documentation_document",
    "documentation_section",
    "documentation_link",
    MENTION,
)
COLLECTOR_NAME = "documentation collector"
CANDIDATE_CAP = 5
_CAMEL = re.compile(r"[a-z][A-Z]|^[A-Z][a-z]+[A-Z]")
_SPLIT = re.compile(r"\.|::")
_BUILTINS = frozenset(dir(builtins)) | frozenset(
    [
        "Array",
        "ArrayBuffer",
        "BigInt",
        "Boolean",
        "Buffer",
        "DataView",
        "Date",
        "Error",
        "EvalError",
        "Function",
        "Infinity",
        "Intl",
        "JSON",
        "Map",
        "Math",
        "NaN",
        "Number",
        "Object",
        "Promise",
        "Proxy",
        "RangeError",
        "ReferenceError",
        "Reflect",
        "RegExp",
        "Set",
        "String",
        "Symbol",
        "SyntaxError",
        "TypeError",
        "URIError",
        "URL",
        "URLSearchParams",
        "WeakMap",
        "WeakSet",
        "console",
        "decodeURI",
        "decodeURIComponent",
        "document",
        "encodeURI",
        "encodeURIComponent",
        "globalThis",
        "isFinite",
        "isNaN",
        "module",
        "parseFloat",
        "parseInt",
        "process",
        "require",
        "setImmediate",
        "setInterval",
        "setTimeout",
        "undefined",
        "window",
    ]
)
"""Names every program of the indexed languages can use without defining them."""


def mention_target(text: str) -> tuple[str, list[str]]:
    """An identifier mention's entity name and the qualifying parts written before it."""
    text = text.strip().lstrip("~").removesuffix("()")
    parts = [p for p in _SPLIT.split(text) if p]
    return (parts[-1] if parts else text), parts[:-1]


def is_code_shaped(fact: CollectedFact) -> bool:
    """Whether a mention clearly means code (so an unresolved one is worth a finding)."""
    payload = fact.payload
    if payload.get("mention_kind") == "path" or payload.get("written_as") == "role":
        return True
    text = fact.name
    return (
        text.endswith("()")
        or "::" in text
        or "." in text
        or "_" in text.strip("_")
        or bool(_CAMEL.search(text))
    )


def _path_candidates(document: str, text: str) -> list[str]:
    text = text.split("#", 1)[0].strip()
    if text.startswith("/"):
        return [posixpath.normpath(text.lstrip("/"))]  # GitHub renders /x from the root
    found = []
    for base in ("", posixpath.dirname(document)):
        joined = posixpath.normpath(posixpath.join(base, text)) if text else ""
        if joined and not joined.startswith("..") and joined not in found:
            found.append(joined)
    return found


class MentionResolver:
    """Resolves the mentions of a batch of facts with a few batched index reads."""

    def __init__(self, ctx: ApiContext, mentions: list[CollectedFact]) -> None:
        self.results: dict[int, tuple[str, list[dict[str, Any]]]] = {}
        by_repo: dict[str, list[CollectedFact]] = defaultdict(list)
        for fact in mentions:
            by_repo[fact.repo_id].append(fact)
        for repo_id, facts in by_repo.items():
            self._resolve_repository(ctx, repo_id, facts)

    def resolution(self, fact: CollectedFact) -> tuple[str, list[dict[str, Any]]]:
        """``(resolution_status, candidate_refs)`` of one mention."""
        return self.results.get(id(fact), ("unresolved", []))

    @staticmethod
    def _basenames(ctx: ApiContext, repo_id: str, names: set[str]) -> dict[str, list[str]]:
        """Bare file names (``setup.py``) -> indexed paths with that base name, shortest first."""
        found: dict[str, list[str]] = defaultdict(list)
        if not names:
            return found
        for (path,) in ctx.conn.execute(
            "SELECT relative_path FROM files WHERE repo_id = ?"
            " ORDER BY length(relative_path), relative_path",
            (repo_id,),
        ):
            base = path.rsplit("/", 1)[-1]
            if base in names and len(found[base]) < CANDIDATE_CAP:
                found[base].append(path)
        return found

    def _resolve_repository(self, ctx: ApiContext, repo_id: str, facts: list) -> None:
        paths = [f for f in facts if f.payload.get("mention_kind") == "path"]
        names = [f for f in facts if f.payload.get("mention_kind") != "path"]
        wanted = {c for f in paths for c in _path_candidates(f.relative_path, f.name)}
        existing = set()
        for chunk in _chunks(sorted(wanted)):
            clause, values = in_clause("relative_path", chunk)
            existing.update(
                row[0]
                for row in ctx.conn.execute(
                    f"SELECT relative_path FROM files WHERE repo_id = ? AND {clause}",
                    [repo_id, *values],
                )
            )
        by_basename = self._basenames(ctx, repo_id, {f.name for f in paths if "/" not in f.name})
        for fact in paths:
            hits = [c for c in _path_candidates(fact.relative_path, fact.name) if c in existing]
            hits = hits[:1] or by_basename.get(fact.name, [])
            if not hits and "/" not in fact.name:
                names.append(fact)  # ``res.json`` may be code rather than a file
                continue
            refs = [
                {"kind": "file", "id": hit, "display_name": hit, "source_uri": hit} for hit in hits
            ]
            status = "unresolved" if not refs else "resolved" if len(refs) == 1 else "ambiguous"
            self.results[id(fact)] = (status, refs)
        outside = _BUILTINS | _external_bindings(ctx, repo_id)
        entities = defaultdict(list)
        targets = sorted({mention_target(f.name)[0] for f in names})
        for chunk in _chunks(targets):
            clause, values = in_clause("entity_name", chunk)
            for row in ctx.conn.execute(
                "SELECT entity_id, entity_name, qualified_name, entity_type, relative_path,"
                f" start_line FROM entities WHERE repo_id = ? AND {clause}"
                " ORDER BY relative_path, start_line",
                [repo_id, *values],
            ):
                entities[row[1]].append(row)
        for fact in names:
            name, qualifiers = mention_target(fact.name)
            named = rows = entities.get(name, [])
            if qualifiers:
                rows = [row for row in rows if _qualified(row, qualifiers)]
                if not rows and (qualifiers[0] not in outside):
                    # ``router.use`` when ``use`` is defined on ``proto``: candidates, not a
                    # confident "nothing"; the index cannot tell what ``router`` holds
                    rows = named
            refs = [
                {
                    "kind": "entity",
                    "id": row[0],
                    "display_name": row[2],
                    "entity_type": row[3],
                    "source_uri": f"{row[4]}:{row[5]}",
                }
                for row in rows[:CANDIDATE_CAP]
            ]
            status = "unresolved" if not rows else "resolved" if len(rows) == 1 else "ambiguous"
            if rows is named and qualifiers and named:
                status = "name_only"
            if not rows and (qualifiers[0] if qualifiers else name) in outside:
                status = "external"
            self.results[id(fact)] = (status, refs)


def _external_bindings(ctx: ApiContext, repo_id: str) -> set[str]:
    """Names a repository's files bind by importing modules from outside it."""
    found: set[str] = set()
    for module, imported, alias in ctx.conn.execute(
        "SELECT DISTINCT module, imported_name, alias FROM imports"
        " WHERE repo_id = ? AND is_external = 1",
        (repo_id,),
    ):
        if alias:
            found.add(alias)
        elif imported and imported not in ("*", "default"):
            found.add(imported)
        elif module:
            found.add(_SPLIT.split(module.strip("./"))[0].split("/")[0])
    return found


def _qualified(row, qualifiers: list[str]) -> bool:
    """A dotted mention agrees with an entity when its owner or module path says the same."""
    qualified, path = row[2], row[4]
    owner = qualifiers[-1]
    if qualified.endswith(f"{owner}.{row[1]}"):
        return True
    module = path.rsplit(".", 1)[0].replace("/", ".")
    return module.endswith(".".join(qualifiers)) or module.split(".")[-1] == owner


def _chunks(values: list[str], size: int = 500):
    for start in range(0, len(values), size):
        yield values[start : start + size]


def finding_for(fact: CollectedFact, status: str, refs: list, freshness: str) -> dict[str, Any]:
    """A documentation finding about one code-shaped mention."""
    kind = fact.payload.get("mention_kind")
    claim_type = "path_reference" if kind == "path" else "code_reference"
    digest = hashlib.sha256(
        f"{fact.repo_id}\n{fact.relative_path}\n{fact.line}\n{fact.name}".encode()
    ).hexdigest()[:16]
    finding_status = {
        "unresolved": "missing_evidence",
        "external": "external_reference",
        "name_only": "unverified",
    }.get(status, "valid")
    if status == "name_only":
        name, qualifiers = mention_target(fact.name)
        others = ", ".join(ref["display_name"] for ref in refs)
        summary = (
            f"{fact.name!r}: nothing named {name} under {'.'.join(qualifiers)} in the index;"
            f" definitions named {name} elsewhere: {others}"
        )
    elif status == "external":
        summary = f"{fact.name!r} names code outside the repository (an import or a builtin)"
    elif finding_status == "valid":
        summary = f"{fact.name!r} names {refs[0]['display_name']}"
        if status == "ambiguous":
            summary += f" and {len(refs) - 1} other candidate(s)"
    else:
        summary = (
            f"{fact.name!r} matches no definition in the index: the code it named is gone, or"
            " it is a property, an option or a name defined at run time"
        )
    return {
        "finding_id": f"docfinding:{digest}",
        "finding_version": "1",
        "finding_type": claim_type,
        "status": finding_status,
        "truth_level": "derived",
        "freshness_state": freshness,
        "source_id": fact.repo_id,
        "document_id": fact.relative_path,
        "section_id": fact.payload.get("section_id", ""),
        "claim_id": f"mention:{digest}",
        "claim_type": claim_type,
        "claim_text": fact.name,
        "summary": summary,
        "line": fact.line,
        "resolution_status": status,
        "candidate_refs": refs,
        "states": {
            "finding_state": finding_status,
            "freshness_state": freshness,
            "permission_decision": "allowed",
        },
    }
