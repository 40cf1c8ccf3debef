"""
The edges a file declares by itself, written with its rows: CONTAINS (file or enclosing
entity -> entity) and IMPORTS file -> module. They need no other file, so they are built as
each file arrives; the resolver (``resolve.py``) owns every edge that does.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from eshu_mcp.query.local.index.store.codes import CONFIDENCE, EDGE_TYPES, METHODS
from eshu_mcp.query.local.index.store.writer import PARENT

CONTAINS = EDGE_TYPES["CONTAINS"]
IMPORTS = EDGE_TYPES["IMPORTS"]
DECLARED = METHODS["declared"]
DECLARED_CONFIDENCE = CONFIDENCE["declared"]


def declared_edges(
    repo_key: int,
    file_id: int,
    file_nid: int,
    entity_rows: list[tuple],
    nids: list[int],
    import_rows: list[tuple],
    module_nid: Callable[[str], int],
) -> list[tuple]:
    """edge_rows tuples (after edge_id) for one file's CONTAINS and module IMPORTS edges."""
    rows = []
    for nid, row in zip(nids, entity_rows, strict=True):
        parent = row[PARENT]
        source = file_nid if parent is None else nids[parent]
        rows.append(
            (
                repo_key,
                CONTAINS,
                source,
                nid,
                None,
                None,
                DECLARED,
                DECLARED_CONFIDENCE,
                None,
                file_id,
            )
        )
    folded: dict[str, list[tuple]] = {}
    for module, imported_name, alias, _kind, line in import_rows:
        if module:  # '': a file renaming its own export (``export {A as B}``), no import
            folded.setdefault(module, []).append((imported_name, alias, line))
    for module, group in folded.items():
        names = {(name, alias) for name, alias, _ in group}
        reason = None
        if len(names) == 1:
            name, alias = next(iter(names))
            reason = json.dumps({"imported_name": name, "alias": alias})
        rows.append(
            (
                repo_key,
                IMPORTS,
                file_nid,
                module_nid(module),
                None,
                reason,
                DECLARED,
                DECLARED_CONFIDENCE,
                min(line for _, _, line in group),
                file_id,
            )
        )
    return rows
