"""
The edges a file declares by itself, written with its rows: CONTAINS (file or enclosing
entity -> entity) and IMPORTS file -> module. They need no other file, so they are built as
each file arrives; the resolver (``resolve.py``) owns every edge that does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring_ascii as _json_string

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
    # module -> [first line, the first (name, alias), whether every import of it is that]
    folded: dict[str, list] = {}
    for module, imported_name, alias, _kind, line in import_rows:
        if not module:  # '': a file renaming its own export (``export {A as B}``), no import
            continue
        group = folded.get(module)
        if group is None:
            folded[module] = [line, (imported_name, alias), True]
            continue
        if line < group[0]:
            group[0] = line
        if group[2] and group[1] != (imported_name, alias):
            group[2] = False
    for module, (line, (name, alias), single) in folded.items():
        reason = _imported_reason(name, alias) if single else None
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
                line,
                file_id,
            )
        )
    return rows


def _imported_reason(name: str | None, alias: str | None) -> str:
    """``json.dumps({"imported_name": name, "alias": alias})``, made directly for strings."""
    if (name is None or name.__class__ is str) and (alias is None or alias.__class__ is str):
        return (
            '{"imported_name": '
            + ("null" if name is None else _json_string(name))
            + ', "alias": '
            + ("null" if alias is None else _json_string(alias))
            + "}"
        )
    return json.dumps({"imported_name": name, "alias": alias})
