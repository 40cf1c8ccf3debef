"""
Row details of the compact view that repeat the row itself: handles that spell its own
id or path, suggested next calls whose arguments are the row's own fields, and the
evidence block of a recursive function that spells its ids again.
"""

from typing import Any

__all__ = ["calls_repeat_row", "handle_repeats", "lean_recursion_row"]

# Where rows spell their file's path, and the keys of a handle that name its tool.
_PATH_KEYS = ("file_path", "relative_path", "source_file", "path")
_HANDLE_TOOLS = ("tool", "content_tool")
# A recursive function row's partner fields, the same as its own for a self call.
_PARTNER_KEYS = (
    "partner_id",
    "partner_name",
    "partner_file",
    "partner_start_line",
    "partner_end_line",
)


def handle_repeats(obj: dict, key: str, value: Any) -> bool:
    """
    A handle that only spells one of the row's own ids, or the row's own repository, path,
    span or module (beside the name of the tool that reads it).
    """
    if isinstance(value, str):
        own_id = obj.get(key.replace("_handle", "_id")) if key != "handle" else None
        if own_id is None or key == "entity_handle":
            own_ids = [item for name, item in obj.items() if name.endswith("_id")]
        else:
            own_ids = [own_id]
        return any(value == f"entity:{own}" for own in own_ids if isinstance(own, str))
    if not isinstance(value, dict):
        return False
    path = next((obj[name] for name in _PATH_KEYS if name in obj), None)
    compared = 0
    for name, item in value.items():
        if name in _HANDLE_TOOLS:
            continue
        if name in _PATH_KEYS:
            if item != path:
                return False
        elif obj.get(name) != item:
            return False
        compared += 1
    return compared > 0


def calls_repeat_row(row: dict, calls: Any) -> bool:
    """
    Whether every suggested call in ``calls`` only passes the row's own fields (its
    entity id, its path and span, or those of its ``source_handle``): the row is the
    handle, and the tool to read it is known.
    """
    if not isinstance(calls, list) or not calls:
        return False
    handle = row.get("source_handle") if isinstance(row.get("source_handle"), dict) else {}
    path = next((row[name] for name in _PATH_KEYS if name in row), None)
    for call in calls:
        args = call.get("args") if isinstance(call, dict) else None
        if not isinstance(args, dict) or not args:
            return False
        for name, value in args.items():
            if name in _PATH_KEYS:
                if value != path and value != handle.get(name):
                    return False
            elif row.get(name, handle.get(name)) != value:
                return False
    return True


def lean_recursion_row(row: dict) -> None:
    """
    A recursive function row without what it says twice: a self call's partner fields
    (the function's own), and evidence that spells the cycle's ids and the partner's
    handles again (``recursion_kind`` and the partner fields say it).
    """
    own = row.get("function_id")
    partner = row.get("partner_id")
    evidence = row.get("recursion_evidence")
    if isinstance(evidence, dict):
        kept = dict(evidence)
        if kept.get("cycle_path") in ([own, partner, own], [own, partner]):
            del kept["cycle_path"]
        if kept.get("partner_entity_handle") == f"entity:{partner}":
            del kept["partner_entity_handle"]
        source = kept.get("partner_source_handle")
        if isinstance(source, dict) and source.get("file_path") == row.get("partner_file"):
            del kept["partner_source_handle"]
        if kept:
            row["recursion_evidence"] = kept
        else:
            del row["recursion_evidence"]
    if own is not None and partner == own and row.get("recursion_kind") == "self_call":
        for key in _PARTNER_KEYS:
            row.pop(key, None)
