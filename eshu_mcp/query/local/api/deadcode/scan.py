"""
The dead-code candidate scan: every candidate entity in scope (the whole repository, or the
whole index), in one ordered pass.

A candidate with an incoming reaching edge (CALLS, IMPORTS, REFERENCES, INHERITS,
IMPLEMENTS, INSTANTIATES) resolved better than ``repo_unique_name`` is live and dropped at
once; what is left gets its root reasons (:mod:`.roots`, the interface roles of
:mod:`.interfaces`), its classification, and finally the name-level check of
:mod:`.names`. The scan reads the storage tables (integer node numbers) rather
than the text-id views, and reads full metadata and ids only for rows it renders.
"""

from __future__ import annotations

import math
import re
import sqlite3
from heapq import merge
from itertools import islice
from typing import Any

from attrs import define, field

from eshu_mcp.query.local.api.code.common import (
    attach_sources,
    decode_metadata,
    entity_location,
    in_clause,
    in_clauses,
)
from eshu_mcp.query.local.api.code.scope import scope_predicate
from eshu_mcp.query.local.api.deadcode.cache import kept
from eshu_mcp.query.local.api.deadcode.interfaces import member_roots
from eshu_mcp.query.local.api.deadcode.names import (
    PREFIX_REASON,
    TEMPLATE_REASON,
    dispatched_by_prefix,
    dispatched_by_template,
    mentioned_elsewhere,
)
from eshu_mcp.query.local.api.deadcode.names import REASON as NAME_REASON
from eshu_mcp.query.local.api.deadcode.outside import (
    INSTANCE_REASON,
    OUTSIDE_BASE_LANGUAGES,
    OUTSIDE_BASE_REASON,
    constructed_classes,
    outside_bases,
)
from eshu_mcp.query.local.api.deadcode.public import (
    PUBLIC_API_REASON,
    declared_public,
    public_api_modules,
)
from eshu_mcp.query.local.api.deadcode.roots import (
    CANDIDATE_LABELS,
    REACHING_EDGE_TYPES,
    WEAK_METHOD,
    classify,
    has_generated_marker,
    is_generated_path,
    is_test_path,
    root_reasons,
)
from eshu_mcp.query.local.index.parse.registry import LANGUAGES
from eshu_mcp.query.local.index.store.codes import EDGE_TYPES, METHODS

SUPPRESSED_KEPT = 51
"""Suppressed candidates a scan keeps (answers show at most 50, and say when there are more)."""
SCAN_ROW_CAP = 250_000
"""Candidates one scan reads at most; past it the answer says ``candidate_scan_truncated``."""
PAGE_ROWS = 250
"""Rows per scan page in the ``candidate_scan_pages`` accounting."""
_ROOT_KEYS = re.compile(
    '"(?:decorators|dead_code_root_kinds|exactness_blockers|exported|visibility|'
    'enclosing_function)"'
).search
"""Metadata keys the root policy and classification read (others need no decoding)."""
_REACHING_CODES = [EDGE_TYPES[t] for t in REACHING_EDGE_TYPES if t in EDGE_TYPES]
_WEAK_CODES = (METHODS[WEAK_METHOD], WEAK_METHOD)
_SOURCE_LANGUAGES = frozenset(
    language.key
    for language in LANGUAGES
    if language.root_annotations or language.public_api not in (None, "modules", "capitalised")
) | {"jsx"}
"""Languages whose root and public-API rules read a definition's source."""


@define
class Candidate:
    """One scanned candidate with its root reasons and classification."""

    row: dict[str, Any]
    metadata: dict[str, Any]
    roots: list[str]
    classification: str
    reasons: list[str] = field(factory=list)

    def render(self, bucket_reasons: list[str] | None = None) -> dict[str, Any]:
        """Eshu's candidate row (after :func:`hydrate`)."""
        row = self.row
        item = entity_location(row)
        if self.metadata:
            item["metadata"] = self.metadata
        item["classification"] = "excluded" if self.roots else self.classification
        if self.roots:
            item["suppression_reasons"] = self.roots
        elif bucket_reasons or self.reasons:
            item["ambiguity_reasons"] = bucket_reasons or self.reasons
        item["source_handle"] = {
            "repo_id": row["repo_id"],
            "relative_path": row["relative_path"],
            "entity_id": row["entity_id"],
            "start_line": row["start_line"],
            "end_line": row["end_line"],
        }
        return item


@define
class Scan:
    """The outcome of a candidate scan over the whole scope."""

    active: list[Candidate]  # candidates no root reason suppresses, in scan order
    suppressed: list[Candidate]  # the first SUPPRESSED_KEPT suppressed ones, in scan order
    suppressed_total: int
    languages: set[str]  # languages of every non-live candidate seen
    rows: int
    truncated: bool
    files_scanned: int  # files whose candidates the scan read
    scope_files: int  # files in scope holding at least one candidate
    excluded_by_name: int = 0

    @property
    def limit(self) -> int:
        """Raw candidate rows the scan may read (``candidate_scan_limit``)."""
        return SCAN_ROW_CAP

    @property
    def pages(self) -> int:
        """The scan's rows in pages of :data:`PAGE_ROWS` (at least one)."""
        return max(1, math.ceil(self.rows / PAGE_ROWS))


def candidate_labels(language: str, candidate_kind: str = "") -> list[str]:
    """Labels to scan for a language filter (Eshu: SQL only SqlFunction, HCL nothing)."""
    if candidate_kind:
        return [candidate_kind]
    key = language.strip().lower()
    if not key:
        return list(CANDIDATE_LABELS)
    if key == "sql":
        return ["SqlFunction"]
    if key in ("hcl", "terraform"):
        return []
    return [
        label
        for label in CANDIDATE_LABELS
        if label != "SqlFunction" and (label != "Trait" or key == "scala")
    ]


def scan(
    conn: sqlite3.Connection,
    *,
    repo: Any,
    language: str,
    excluded_decorators: list[str],
    candidate_kind: str = "",
    name_check: bool = True,
) -> Scan:
    """
    Scan every candidate of one kind (or every kind) in scope, in path/line order.

    The outcome is kept for the database state it was computed on (file, active
    generations, newest rows), so the following pages of one answer do not scan again.
    """
    grant = getattr(repo, "repo_ids", None)
    request = (str(repo), grant, language, candidate_kind, tuple(excluded_decorators), name_check)
    return kept(
        conn,
        request,
        lambda: _scan(
            conn,
            repo=repo,
            language=language,
            excluded_decorators=excluded_decorators,
            candidate_kind=candidate_kind,
            name_check=name_check,
        ),
    )


def _scan(
    conn: sqlite3.Connection,
    *,
    repo: Any,
    language: str,
    excluded_decorators: list[str],
    candidate_kind: str,
    name_check: bool,
) -> Scan:
    labels = candidate_labels(language, candidate_kind)
    scope, values = scope_predicate(repo, language, "f")
    files = {
        row[0]: row
        for row in conn.execute(
            "SELECT f.file_id, f.repo_id, f.relative_path, f.language, f.is_test,"
            f" f.is_generated FROM files f WHERE {scope}",
            values,
        )
    }
    if not labels or not files:
        return Scan([], [], 0, set(), 0, False, 0, 0)
    kinds, kind_params = in_clause("r.entity_type", labels)
    reaching, reaching_params = in_clause("e.type", _REACHING_CODES)
    incoming = f"SELECT 1 FROM edge_rows e WHERE e.dst = r.rid AND {reaching} AND e.src <> e.dst"
    # Whether a strong edge reaches each candidate is an index probe; the metadata of one
    # that is reached is not even read.
    # A definition in a test or generated file is suppressed whatever reaches it (as Eshu's
    # policy says): neither probed nor decoded.
    rows = conn.execute(
        "SELECT q.rid, q.file_id, q.entity_type, q.entity_name, q.start_line, q.end_line,"
        " q.start_byte, q.end_byte, q.class_context,"
        " CASE WHEN q.live OR q.root_file THEN NULL ELSE q.metadata END, q.parent, q.live,"
        " q.root_file"
        " FROM (SELECT r.*, f.is_test OR f.is_generated AS root_file,"
        f" CASE WHEN f.is_test OR f.is_generated THEN 0 ELSE EXISTS ({incoming}"
        " AND (e.method IS NULL OR e.method NOT IN (?, ?))) END AS live"
        f" FROM entity_rows r JOIN files f ON f.file_id = r.file_id WHERE {kinds} AND {scope}) q",
        [*reaching_params, *_WEAK_CODES, *kind_params, *values],
    ).fetchall()
    rows.sort(key=lambda r: (files[r[1]][1], files[r[1]][2], r[4], r[0]))
    holding = len({r[1] for r in rows})
    truncated = len(rows) > SCAN_ROW_CAP
    rows = rows[:SCAN_ROW_CAP]
    repo_ids = sorted({files[r[1]][1] for r in rows})
    weak, overriding = _weak_and_overriding(conn)
    interface_roots = {}
    if language in ("", "python"):
        methods = [(r[0], r[10], r[3]) for r in rows if r[8] is not None and r[2] == "Function"]
        interface_roots = member_roots(conn, repo_ids, methods)
    kinds_of = {r[0]: r[2] for r in rows}  # a parent's label, when it is a candidate too
    # Rows of test and generated files stay raw tuples: only the few shown are ever built.
    in_root_files = [(index, r) for index, r in enumerate(rows) if r[12]]
    pending = [
        (index, _row(r, files[r[1]], kinds_of))
        for index, r in enumerate(rows)
        if not r[11] and not r[12]
    ]
    generated = _generated_files(conn, {row["file_id"] for _, row in pending})
    attach_sources(conn, [row for _, row in pending if row["language"] in _SOURCE_LANGUAGES])
    candidates: list[Candidate] = []
    positions: list[int] = []
    default_root = ["default_root_policy"]
    for index, row in pending:
        positions.append(index)
        text = row.pop("metadata_text") or ""
        if row["file_id"] in generated:
            row["is_generated"] = 1
        if _ROOT_KEYS(text) is None:
            metadata = {}
            if (
                row["language"] == "python"
                and _python_file_root(row)
                and not row["entity_name"].startswith("__")
                and row["entity_name"] != "main"
            ):  # a plain test or generated definition: suppressed by the default policy
                candidates.append(Candidate(row, metadata, default_root, "unused"))
                continue
        else:
            metadata = decode_metadata(text)
        roots = root_reasons(
            row,
            metadata,
            excluded_decorators=excluded_decorators,
            overrides_base=row["rid"] in overriding,
            extra_kinds=[interface_roots[row["rid"]]] if row["rid"] in interface_roots else [],
        )
        incoming = {WEAK_METHOD} if row["rid"] in weak else set()
        classification, reasons = classify(row, metadata, incoming)
        candidates.append(Candidate(row, metadata, roots, classification, reasons))
    prefixed = dispatched_by_prefix(conn, [c.row for c in candidates if not c.roots])
    for candidate in candidates:
        if candidate.row["rid"] in prefixed:
            candidate.roots = [f"modeled_root:{PREFIX_REASON}"]
    templated = dispatched_by_template(conn, [c.row for c in candidates if not c.roots])
    for candidate in candidates:
        if candidate.row["rid"] in templated:
            candidate.roots = [f"modeled_root:{TEMPLATE_REASON}"]
    if language in ("", *OUTSIDE_BASE_LANGUAGES):
        _mark_outside_overrides(conn, repo_ids, candidates)
    named = 0
    if name_check:
        active = [c.row for c in candidates if not c.roots]
        used = mentioned_elsewhere(conn, active)
        for candidate in candidates:
            if not candidate.roots and candidate.row["rid"] in used:
                candidate.roots = [NAME_REASON]
                named += 1
    _mark_public_api(conn, candidates)
    active = [c for c in candidates if not c.roots]
    suppressed = [(i, c) for i, c in zip(positions, candidates, strict=True) if c.roots]
    first = [
        candidate or Candidate(_row(raw, files[raw[1]], kinds_of), {}, default_root, "unused")
        for _, candidate, raw in islice(
            merge(
                ((i, c, None) for i, c in suppressed),
                ((i, None, r) for i, r in in_root_files),
                key=_position,
            ),
            SUPPRESSED_KEPT,
        )
    ]
    languages = {c.row["language"] or "" for c in candidates}
    languages |= {files[r[1]][3] or "" for _, r in in_root_files}
    return Scan(
        active,
        first,
        len(suppressed) + len(in_root_files),
        languages,
        len(rows),
        truncated,
        len({r[1] for r in rows}),
        holding,
        named,
    )


def _mark_outside_overrides(
    conn: sqlite3.Connection, repo_ids: list[str], candidates: list[Candidate]
) -> None:
    """A method of a class with a base from outside the repository may override one of
    that base's methods, and a public method of a class the repository constructs may be
    called by the outside code its instance is handed to: ambiguous, never cleanup-ready
    (see :mod:`.outside`)."""
    methods = [
        c
        for c in candidates
        if not c.roots
        and c.classification == "unused"
        and c.row["language"] in OUTSIDE_BASE_LANGUAGES
        and c.row["class_context"]
        and not _private(c.row["entity_name"], c.row["language"])
    ]
    if not methods:
        return
    outside = outside_bases(conn, repo_ids)
    public = [
        c
        for c in methods
        if c.row["parent"] not in outside and not c.row["entity_name"].startswith(("_", "#"))
    ]
    constructed = constructed_classes(conn, [c.row["parent"] for c in public])
    for candidate in methods:
        bases = outside.get(candidate.row["parent"])
        language = candidate.row["language"]
        if bases:
            candidate.classification = "ambiguous"
            reason = f"{language}.{OUTSIDE_BASE_REASON}:{', '.join(bases)}"
            candidate.reasons = [*candidate.reasons, reason]
    for candidate in public:
        if candidate.row["parent"] in constructed:
            candidate.classification = "ambiguous"
            candidate.reasons = [
                *candidate.reasons,
                f"{candidate.row['language']}.{INSTANCE_REASON}",
            ]


def _private(name: str, language: str) -> bool:
    """Whether no subclass method can override ``name``: a name-mangled ``__x`` (Python)
    or a ``#x`` (JavaScript/TypeScript)."""
    if language == "python":
        return name.startswith("__") and not name.endswith("__")
    return name.startswith("#")


def _mark_public_api(conn: sqlite3.Connection, candidates: list[Candidate]) -> None:
    """A public name of an importable module, or a definition declared ``public``, may be
    used by code outside the repository: ambiguous, never cleanup-ready (see
    :mod:`.public`)."""
    active = [c for c in candidates if not c.roots and c.classification == "unused"]
    public = public_api_modules(conn, [c.row for c in active])
    for candidate in active:
        module = public.get(candidate.row["rid"])
        if module is not None:
            candidate.classification = "ambiguous"
            candidate.reasons = [*candidate.reasons, f"{PUBLIC_API_REASON}:{module}"]
        elif declared_public(candidate.row, candidate.metadata):
            candidate.classification = "ambiguous"
            candidate.reasons = [*candidate.reasons, f"{candidate.row['language']}.public_api"]


def _position(item: tuple) -> int:
    return item[0]


def _python_file_root(row: dict[str, Any]) -> bool:
    """Whether a row's file alone makes it a root (tests, generated code)."""
    path = row["relative_path"]
    return bool(
        row["file_is_test"]
        or row["file_is_generated"]
        or row.get("is_generated")
        or is_test_path(path)
        or is_generated_path(path)
    )


def _row(raw: tuple, file: tuple, kinds_of: dict[int, str]) -> dict[str, Any]:
    rid, file_id, entity_type, name, start, end, start_byte, end_byte, context, meta, parent = raw[
        :11
    ]
    return {
        "rid": rid,
        "file_id": file_id,
        "entity_type": entity_type,
        "entity_name": name,
        "start_line": start,
        "end_line": end,
        "start_byte": start_byte,
        "end_byte": end_byte,
        "class_context": context,
        "metadata_text": meta,
        "parent": parent,
        "parent_type": kinds_of.get(parent) if parent else None,
        "repo_id": file[1],
        "relative_path": file[2],
        "language": file[3],
        "file_is_test": file[4],
        "file_is_generated": file[5],
    }


def _weak_and_overriding(conn: sqlite3.Connection) -> tuple[set[int], set[int]]:
    """Nodes reached by a weak (``repo_unique_name``) reaching edge, and nodes overriding a
    base method: one pass over the few edges that are either."""
    weak: set[int] = set()
    overriding: set[int] = set()
    reaching = set(_REACHING_CODES)
    overrides = EDGE_TYPES["OVERRIDES"]
    for source, target, kind in conn.execute(
        "SELECT src, dst, type FROM edge_rows WHERE type = ? OR method IN (?, ?)",
        (overrides, *_WEAK_CODES),
    ):
        if kind == overrides:
            overriding.add(source)
        elif kind in reaching and source != target:
            weak.add(target)
    return weak, overriding


def _generated_files(conn: sqlite3.Connection, file_ids: set[int]) -> set[int]:
    """Files whose header carries a generated-code marker."""
    found: set[int] = set()
    for clause, params in in_clauses("file_id", sorted(file_ids)):
        found.update(
            file_id
            for file_id, head in conn.execute(
                f"SELECT file_id, substr(content, 1, 2048) FROM files WHERE {clause}", params
            )
            if has_generated_marker(head or "")
        )
    return found


def hydrate(conn: sqlite3.Connection, candidates: list[Candidate]) -> list[Candidate]:
    """Fill what rendering needs (entity id, repository name, full metadata) on a page."""
    missing = [c for c in candidates if "entity_id" not in c.row]
    rids = [c.row["rid"] for c in missing]
    ids: dict[int, tuple[str, str]] = {}
    for clause, params in in_clauses("r.rid", rids):
        for rid, node_id, metadata in conn.execute(
            "SELECT r.rid, n.node_id, r.metadata FROM entity_rows r"
            f" JOIN nodes n ON n.nid = r.rid WHERE {clause}",
            params,
        ):
            ids[rid] = (node_id, metadata)
    names = dict(conn.execute("SELECT repo_id, name FROM repositories").fetchall())
    for candidate in missing:
        row = candidate.row
        node_id, metadata = ids.get(row["rid"], ("", "{}"))
        row["entity_id"] = node_id
        row["repo_name"] = names.get(row["repo_id"], "")
        candidate.metadata = decode_metadata(metadata)
    return candidates
