"""
Entity anchors of relationship tool calls.

``analyze_code_relationships`` advertises ``start_entity_id``, but the contract's routes
for its one-target query types (callers, callees, importers, hierarchy, overrides, the
generic relationships) send only ``target``, so a call naming its entity by id had the id
dropped and answered whatever its ``target`` name matched. The query API reads an entity
id or ``entity:`` handle in ``target`` as that one entity, so such a call's arguments are
rewritten before its route is resolved: ``start_entity_id`` becomes the ``target``. Call
chains keep both ends as the contract sends them.
"""

from collections.abc import Mapping
from typing import Any

__all__ = ["anchored_arguments"]

_TOOL = "analyze_code_relationships"
_CHAIN_QUERY_TYPES = frozenset({"call_chain", "find_cross_repo_call_chain"})


def anchored_arguments(tool_name: str, args: Any) -> Any:
    """``args`` with ``start_entity_id`` as the target when the call names one entity."""
    if tool_name != _TOOL or not isinstance(args, Mapping):
        return args
    query_type = args.get("query_type")
    entity_id = args.get("start_entity_id")
    if not isinstance(query_type, str) or query_type in _CHAIN_QUERY_TYPES:
        return args
    if not isinstance(entity_id, str) or not entity_id.strip():
        return args
    return {**args, "target": entity_id.strip()}
