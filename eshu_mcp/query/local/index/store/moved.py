"""
Definitions an edit only moved keep their node numbers.

An entity's id carries its start line (Eshu's formula), so a line inserted near the top of a
file gives every definition below it a new id. When a re-parsed file has the same definitions
as before, in the same order and the same in everything resolution reads (type, name,
enclosing definition, class, arity, signature, metadata), only their lines and bytes moved:
each new definition takes the node number of the old one in its place, and the node is given
its new id. Edges other files hold (stored by node number) then stay right, and the names of
those definitions need not be resolved again anywhere.
"""

from __future__ import annotations

import sqlite3

from eshu_mcp.query.local.index.store.writer import PARENT, PreparedFile

MOVABLE_LANGUAGES = frozenset({"python"})
"""Languages whose resolution reads lines only to order definitions of one file (Go's
IMPLEMENTS rows carry the struct's line, written by a resolve that may not revisit them)."""

_OLD_ROWS = (
    "SELECT rid, entity_type, entity_name, start_line, start_byte, parent, class_context,"
    " cyclomatic_complexity, arg_count, signature, metadata FROM entity_rows WHERE file_id = ?"
)


def moved_nids(conn: sqlite3.Connection, file_id: int, prepared: PreparedFile) -> list[int] | None:
    """The old node number of each of ``prepared``'s entity rows when the file's definitions
    only moved (see the module docstring), else None. Read before the file's rows are
    cleared."""
    if prepared.parsed.language not in MOVABLE_LANGUAGES:
        return None
    new_rows = prepared.entity_rows
    old_rows = conn.execute(_OLD_ROWS, (file_id,)).fetchall()
    if not old_rows or len(old_rows) != len(new_rows):
        return None
    old_rows.sort(key=lambda r: (r[3], r[4] if r[4] is not None else -1, r[0]))
    old_place = {row[0]: at for at, row in enumerate(old_rows)}
    order = sorted(
        range(len(new_rows)),
        key=lambda i: (new_rows[i][2], new_rows[i][4] if new_rows[i][4] is not None else -1, i),
    )
    new_place = {row: at for at, row in enumerate(order)}
    nids: list[int | None] = [None] * len(new_rows)
    for at, row_index in enumerate(order):
        old, new = old_rows[at], new_rows[row_index]
        old_parent = None if old[5] is None else old_place.get(old[5], -1)
        new_parent = None if new[PARENT] is None else new_place[new[PARENT]]
        if (old[1], old[2], old_parent, *old[6:]) != (new[0], new[1], new_parent, *new[7:]):
            return None
        nids[row_index] = old[0]
    return nids  # type: ignore[return-value]


def rename_nodes(conn: sqlite3.Connection, nids: list[int], entity_ids: list[str]) -> None:
    """Give moved nodes their new ids (through a placeholder each: one definition's new id
    can be another's old one)."""
    conn.executemany(
        "UPDATE nodes SET node_id = 'moving:' || nid WHERE nid = ?", [(nid,) for nid in nids]
    )
    conn.executemany(
        "UPDATE nodes SET node_id = ? WHERE nid = ?", list(zip(entity_ids, nids, strict=True))
    )
