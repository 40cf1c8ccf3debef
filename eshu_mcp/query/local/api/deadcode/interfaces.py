"""
Python methods that a class's role keeps alive though no call names them: members of zope
``Interface`` classes (and of interfaces extending them), of ``typing.Protocol`` and ABC
classes, and methods a class provides for an interface it declares with ``@implementer``
(itself or through a base class). The framework calls them through the interface, which the
static call graph cannot see.

Interfaces are recognised by the bases and decorators as written in the class header
(``signature``) and metadata; names are matched by their last dotted segment, repository
wide, which errs on the side of keeping a method alive.
"""

from __future__ import annotations

import re
import sqlite3

from eshu_mcp.query.local.api.code.common import in_clauses

ZOPE_MEMBER = "python.interface_member"
PROTOCOL_MEMBER = "python.protocol_member"
ABC_MEMBER = "python.abstract_class_member"
IMPLEMENTATION = "python.interface_implementation"

_HEADER = re.compile(r"\bclass\s+\w+\s*(?:\[[^\]]*\])?\s*\((.*)\)\s*$", re.S)
_IMPLEMENTER = re.compile(r"^(?:[\w.]+\.)?implementer\s*\((.*)\)\s*$", re.S)
_SUBSCRIPT = re.compile(r"\[.*\]$", re.S)
_ROUNDS = 12


def split_top_level(text: str) -> list[str]:
    """Comma-separated items of an argument list, ignoring commas inside brackets."""
    if not any(bracket in text for bracket in "([{"):
        return [item.strip() for item in text.split(",") if item.strip()]
    items, depth, current = [], 0, []
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            items.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    items.append("".join(current).strip())
    return [item for item in items if item]


def written_bases(signature: str) -> list[str]:
    """Bases of a class header as written, subscripts dropped: ``typing.Protocol[T]`` ->
    ``typing.Protocol``; keywords kept as ``metaclass=ABCMeta``."""
    match = _HEADER.search(signature or "")
    if match is None:
        return []
    return [_SUBSCRIPT.sub("", item).strip() for item in split_top_level(match[1])]


def header_decorators(signature: str) -> list[str]:
    """The decorators a class header (``signature``, which starts at its decorators) shows."""
    head = signature.split(" class ", 1)[0] if signature.startswith("@") else ""
    return [part.strip() for part in re.split(r"(?:^|\s)@", head) if part.strip()]


def implemented(decorators: list[str]) -> list[str]:
    """Interface names (last segments) a class declares with ``@implementer(...)``."""
    names = []
    for decorator in decorators:
        match = _IMPLEMENTER.match(decorator.lstrip("@").strip())
        if match is not None:
            names += [item.rsplit(".", 1)[-1] for item in split_top_level(match[1])]
    return names


def _kind(bases: list[str], typing_protocol: bool) -> str | None:
    for base in bases:
        key, _, value = base.partition("=")
        if value:
            if key.strip() == "metaclass" and value.strip().endswith("ABCMeta"):
                return ABC_MEMBER
            continue
        if base in ("Interface", "zope.interface.Interface", "interface.Interface"):
            return ZOPE_MEMBER
        if base in ("typing.Protocol", "typing_extensions.Protocol") or (
            base == "Protocol" and typing_protocol
        ):
            return PROTOCOL_MEMBER
        if base in ("ABC", "abc.ABC"):
            return ABC_MEMBER
    return None


def member_roots(
    conn: sqlite3.Connection, repo_ids: list[str], methods: list[tuple[int, int, str]]
) -> dict[int, str]:
    """
    Root kind of each Python method (by rid) that its class's interface role keeps alive;
    ``methods`` are the scope's methods as (rid, class rid, name).
    """
    if not repo_ids:
        return {}
    typing_files: set[int] = set()
    classes: list[tuple[int, int, str, list[str], list[str]]] = []
    for clause, params in in_clauses("f.repo_id", repo_ids):
        typing_files.update(
            file_id
            for (file_id,) in conn.execute(
                "SELECT i.file_id FROM imports i JOIN files f ON f.file_id = i.file_id"
                f" WHERE {clause} AND i.imported_name = 'Protocol'"
                " AND i.module IN ('typing', 'typing_extensions')",
                params,
            )
        )
        for rid, file_id, name, signature in conn.execute(
            "SELECT r.rid, r.file_id, r.entity_name, r.signature FROM entity_rows r"
            f" JOIN files f ON f.file_id = r.file_id WHERE {clause}"
            " AND r.entity_type = 'Class' AND f.language = 'python'",
            params,
        ):
            signature = signature or ""
            bases = written_bases(signature) if "(" in signature else []
            decorators = header_decorators(signature) if "implementer" in signature else []
            classes.append((rid, file_id, name, bases, decorators))
    kinds: dict[int, str] = {}
    for rid, file_id, _, bases, _ in classes:
        kind = _kind(bases, file_id in typing_files)
        if kind is not None:
            kinds[rid] = kind
    _extend_zope_lineage(classes, kinds)
    provided = _provided(classes)
    members: dict[int, list[tuple[int, str]]] = {}
    for rid, parent, name in methods:
        members.setdefault(parent, []).append((rid, name))
    interface_members: dict[str, set[str]] = {}
    for rid, _, name, _, _ in classes:
        if kinds.get(rid) == ZOPE_MEMBER:
            interface_members.setdefault(name, set()).update(n for _, n in members.get(rid, ()))
    _inherit_members(classes, kinds, interface_members)
    roots: dict[int, str] = {}
    for rid, _, name, _, _ in classes:
        kind = kinds.get(rid)
        wanted, unknown = set(), False
        for interface in provided.get(name, ()):
            if interface in interface_members:
                wanted |= interface_members[interface]
            else:
                unknown = True  # declared interface not defined here: keep its public face
        for method_rid, method in members.get(rid, ()):
            if kind is not None:
                roots[method_rid] = kind
            elif method in wanted or (unknown and not method.startswith("_")):
                roots[method_rid] = IMPLEMENTATION
    return roots


def _subclasses(classes: list) -> dict[str, list[tuple[int, str]]]:
    """(rid, name) of the classes naming each base (by its last segment)."""
    children: dict[str, list[tuple[int, str]]] = {}
    for rid, _, name, bases, _ in classes:
        for base in bases:
            children.setdefault(base.rsplit(".", 1)[-1], []).append((rid, name))
    return children


def _extend_zope_lineage(classes: list, kinds: dict[int, str]) -> None:
    """An interface extending an interface is an interface (by base name)."""
    children = _subclasses(classes)
    pending = [name for rid, _, name, _, _ in classes if kinds.get(rid) == ZOPE_MEMBER]
    seen = set(pending)
    while pending:
        for rid, name in children.get(pending.pop(), ()):
            if rid not in kinds:
                kinds[rid] = ZOPE_MEMBER
                if name not in seen:
                    seen.add(name)
                    pending.append(name)


def _inherit_members(classes: list, kinds: dict[int, str], members: dict[str, set[str]]) -> None:
    """An interface's members include those of the interfaces it extends."""
    bases_of = {
        name: [b.rsplit(".", 1)[-1] for b in bases]
        for rid, _, name, bases, _ in classes
        if kinds.get(rid) == ZOPE_MEMBER
    }
    for _ in range(_ROUNDS):
        grown = False
        for name, bases in bases_of.items():
            own = members.setdefault(name, set())
            before = len(own)
            for base in bases:
                own |= members.get(base, set())
            grown |= len(own) != before
        if not grown:
            return


def _provided(classes: list) -> dict[str, set[str]]:
    """Interface names each class provides: its own ``@implementer`` and its bases'."""
    provided: dict[str, set[str]] = {}
    for _, _, name, _, decorators in classes:
        declared = implemented(decorators)
        if declared:
            provided.setdefault(name, set()).update(declared)
    children = _subclasses(classes)
    pending = list(provided)
    while pending:
        base = pending.pop()
        for _, name in children.get(base, ()):
            own = provided.setdefault(name, set())
            if not provided[base] <= own:
                own |= provided[base]
                pending.append(name)
    return provided
