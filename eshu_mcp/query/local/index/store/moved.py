"""
Definitions an edit only moved keep their node numbers.

An entity's id carries its start line (Eshu's formula), so a line inserted near the top of a
file gives every definition below it a new id. When a re-parsed file keeps definitions that
are the same in everything resolution reads (type, name, enclosing definition, class, arity,
signature, metadata), only their lines and bytes moved: each takes the node number of its
old self, and the node is given its new id. Edges other files hold (stored by node number)
then stay right, and the names of those definitions need not be resolved again anywhere.

Definitions may be added and removed around the kept ones when the tie-breaks a full build
gives stay the same. A full build numbers a file's definitions in the order the parser lists
them, and resolution orders candidates by (file, node number) only among definitions of one
name. So the kept definitions must appear in the same order among the old ones (by node
number) and the new ones (as listed), and no added or removed definition may share its name
with a kept one anywhere in the file: each name's definitions in the file are then all kept
(their node numbers in the old, listed order) or all new (numbered afresh, in listed order).
"""

from __future__ import annotations

import sqlite3
from difflib import SequenceMatcher

from attrs import frozen

from eshu_mcp.query.local.index.store.writer import PARENT, PreparedFile

MOVABLE_LANGUAGES = frozenset({"python"})
"""Languages whose resolution reads lines only to order definitions of one name (Go's
IMPLEMENTS rows carry the struct's line, written by a resolve that may not revisit them)."""

_OLD_ROWS = (
    "SELECT rid, entity_type, entity_name, start_line, start_byte, parent, class_context,"
    " cyclomatic_complexity, arg_count, signature, metadata FROM entity_rows WHERE file_id = ?"
    " ORDER BY rid"
)


@frozen
class Kept:
    """Which definitions of a re-parsed file keep their nodes."""

    nids: list[int | None]  # per new entity row: the old node number it keeps, or None (new)
    removed: list[int]  # old node numbers no new definition keeps


def kept_nodes(conn: sqlite3.Connection, file_id: int, prepared: PreparedFile) -> Kept | None:
    """Each of ``prepared``'s entity rows' old node number when the file's kept definitions
    only moved and additions and removals leave every tie-break as a full build's (see the
    module docstring), else None. Read before the file's rows are cleared."""
    if prepared.parsed.language not in MOVABLE_LANGUAGES:
        return None
    new_rows = prepared.entity_rows
    old_rows = conn.execute(_OLD_ROWS, (file_id,)).fetchall()
    if not old_rows or not new_rows:
        return None
    old_by_rid = {row[0]: row for row in old_rows}

    def old_key(row: tuple) -> tuple:
        parent = old_by_rid.get(row[5]) if row[5] is not None else None
        enclosing = None if row[5] is None else (parent[1], parent[2]) if parent else ()
        return (row[1], row[2], enclosing, *row[6:])

    def new_key(row: tuple) -> tuple:
        parent = None if row[PARENT] is None else new_rows[row[PARENT]]
        return (row[0], row[1], None if parent is None else (parent[0], parent[1]), *row[7:])

    old_keys = [old_key(row) for row in old_rows]
    new_keys = [new_key(row) for row in new_rows]
    if old_keys == new_keys:  # the same definitions in the same order
        pairs = list(zip(range(len(old_rows)), range(len(new_rows)), strict=True))
    else:
        blocks = SequenceMatcher(None, old_keys, new_keys, autojunk=False).get_matching_blocks()
        pairs = [(a + k, b + k) for a, b, size in blocks for k in range(size)]
    if not pairs:
        return None
    nids: list[int | None] = [None] * len(new_rows)
    kept_old: dict[int, int] = {}  # old row place -> new row place
    for old_at, new_at in pairs:
        nids[new_at] = old_rows[old_at][0]
        kept_old[old_at] = new_at
    new_of_rid = {old_rows[o][0]: n for o, n in kept_old.items()}
    for old_at, new_at in kept_old.items():  # each kept one inside its old enclosing one
        old_parent, new_parent = old_rows[old_at][5], new_rows[new_at][PARENT]
        if (old_parent is None) != (new_parent is None):
            return None
        if old_parent is not None and new_of_rid.get(old_parent) != new_parent:
            return None
    kept_names = {old_rows[o][2] for o in kept_old}
    removed = [row for at, row in enumerate(old_rows) if at not in kept_old]
    added = [row for row, nid in zip(new_rows, nids, strict=True) if nid is None]
    if any(row[2] in kept_names for row in removed) or any(row[1] in kept_names for row in added):
        return None
    return Kept(nids, [row[0] for row in removed])


def rename_nodes(conn: sqlite3.Connection, nids: list[int], entity_ids: list[str]) -> None:
    """Give moved nodes their new ids (through a placeholder each: one definition's new id
    can be another's old one)."""
    conn.executemany(
        "UPDATE nodes SET node_id = 'moving:' || nid WHERE nid = ?", [(nid,) for nid in nids]
    )
    conn.executemany(
        "UPDATE nodes SET node_id = ? WHERE nid = ?", list(zip(entity_ids, nids, strict=True))
    )
