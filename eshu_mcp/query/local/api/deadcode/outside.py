"""
Classes with a base from outside the repository, whose methods dead code cannot judge.

``class _ToStan(handler.ContentHandler)`` defines ``startDocument``: nothing in the
repository calls it, yet the SAX parser does, because it overrides the outside base's
method; ``class AxiosTransformStream extends stream.Transform`` defines ``_read``, which
Node's stream machinery calls. The index cannot see the outside class's methods, so an
unreferenced method of such a class, or of a class deriving from one in the repository
(any but a name-mangled ``__private`` one in Python, any but ``#private`` ones in JavaScript
and TypeScript) is *ambiguous* (it may override one), never cleanup-ready. This holds for
the languages whose overrides are unmarked (Python, JavaScript, TypeScript, Ruby, PHP, Perl);
Java, Kotlin, Scala, C# and Swift say ``override`` and those methods are roots already.

The same holds without a base: ``_CaptureChannel`` defines ``writeHeaders`` and is
constructed here, then handed to twisted.web's ``Request``, which calls it. An unreferenced
public method of a class the repository constructs is *ambiguous* too.
"""

from __future__ import annotations

import re
import sqlite3
from collections import defaultdict
from collections.abc import Sequence

from eshu_mcp.query.local.api.code.common import in_clause, in_clauses
from eshu_mcp.query.local.index.parse.registry import keys_with
from eshu_mcp.query.local.index.store.codes import EDGE_TYPES

OUTSIDE_BASE_REASON = "may_override_outside_base"
INSTANCE_REASON = "instance_may_be_used_outside"
"""The ambiguity reason of a public method of a class the repository constructs: an
instance handed to outside code (``Request(channel)``) has its methods called there."""
"""The ambiguity reason, after the language: ``python.may_override_outside_base:<bases>``."""
OUTSIDE_BASE_LANGUAGES = tuple(sorted(keys_with(unmarked_overrides=True)))
"""Languages whose overrides are unmarked (the registry's ``unmarked_overrides``)."""
INHERITANCE_DEPTH = 8
"""Classes below one with an outside base, followed at most this deep."""

# Bases with no methods a subclass overrides by name: typing markers, object, exceptions.
_INERT_BASES = frozenset(
    {"object", "Generic", "Protocol", "ABC", "NamedTuple", "TypedDict", "Interface"}
)
_EXCEPTION = re.compile(r"(Error|Exception|Warning|Exit|Interrupt)$")


def _bare(base: str) -> str:
    """``handler.ContentHandler`` -> ``ContentHandler``; ``Deferred[T]`` -> ``Deferred``."""
    return base.split("[", 1)[0].strip().rsplit(".", 1)[-1]


def outside_bases(conn: sqlite3.Connection, repo_ids: Sequence[str]) -> dict[int, list[str]]:
    """Classes (by row id) of :data:`OUTSIDE_BASE_LANGUAGES` with a base or mixin (Ruby's
    ``include``, PHP's ``use``) that resolved to no class of the repository."""
    if not repo_ids:
        return {}
    scope, params = in_clause("e.repo_id", list(repo_ids))
    languages, language_params = in_clause("e.language", list(OUTSIDE_BASE_LANGUAGES))
    declared: dict[int, list[str]] = defaultdict(list)
    for rid, base in conn.execute(
        "SELECT e.rid, b.base_name FROM bases b JOIN entities e ON e.entity_id = b.entity_id"
        f" WHERE b.kind IN ('extends', 'includes') AND {languages} AND {scope}",
        [*language_params, *params],
    ):
        name = _bare(base)
        if name and name not in _INERT_BASES and not _EXCEPTION.search(name):
            declared[rid].append(base)
    if not declared:
        return {}
    resolved: dict[int, set[str]] = defaultdict(set)
    below: dict[int, list[int]] = defaultdict(list)  # class -> classes deriving from it
    for source, parent, target in conn.execute(
        "SELECT x.src, x.dst, t.entity_name FROM edge_rows x JOIN entity_rows t"
        " ON t.rid = x.dst WHERE x.type = ?",
        (EDGE_TYPES["INHERITS"],),
    ):
        below[parent].append(source)
        if source in declared:
            resolved[source].add(target)
    outside: dict[int, list[str]] = {}
    for rid, bases in declared.items():
        missing = [base for base in bases if _bare(base) not in resolved[rid]]
        if missing:
            outside[rid] = missing
    # a class deriving (at any depth) from such a class inherits what it may override
    frontier = list(outside)
    for _ in range(INHERITANCE_DEPTH):
        following = []
        for parent in frontier:
            for child in below.get(parent, ()):
                if child not in outside:
                    outside[child] = outside[parent]
                    following.append(child)
        if not following:
            break
        frontier = following
    return outside


def constructed_classes(conn: sqlite3.Connection, class_rids: Sequence[int]) -> set[int]:
    """Of these classes (row ids), those the repository constructs (a CALLS edge into them)."""
    found: set[int] = set()
    for clause, params in in_clauses("x.dst", sorted(set(class_rids))):
        found.update(
            row[0]
            for row in conn.execute(
                f"SELECT DISTINCT x.dst FROM edge_rows x WHERE x.type = ? AND {clause}",
                [EDGE_TYPES["CALLS"], *params],
            )
        )
    return found
