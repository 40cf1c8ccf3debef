"""
Instance attribute types of one extracted file: the types a class body or any method assigns
to ``self.attr`` become the receiver types of ``self.attr.m()`` calls in every method of the
class (and of aliases of it), and are kept on the class for subclasses in other files.
"""

from __future__ import annotations

from eshu_mcp.query.local.index.parse.extractors.core import ALIAS


def type_instance_attributes(
    result,
    attributes: list[tuple[int, str, str]],
    prefix: str,
    labels: frozenset[str],
    implicit: bool = False,
) -> None:
    """Give ``self.attr.m()`` calls the type some method (or the class body) assigned; with
    ``implicit``, untyped ``attr.m()`` calls too (fields named without ``this.``)."""
    entities = result.entities
    owner: dict[int, int | None] = {}

    def class_of(index: int | None) -> int | None:
        if index is None:
            return None
        found = owner.get(index, -1)
        if found != -1:
            return found
        current: int | None = index
        while current is not None and entities[current]["entity_type"] not in labels:
            current = entities[current]["parent"]
        owner[index] = current
        return current

    declared: dict[tuple[int, str], str] = {}
    for index, attribute, type_name in attributes:
        klass = class_of(index)
        if klass is not None and type_name[:1] != ALIAS:
            declared.setdefault((klass, attribute), type_name)
    for index, attribute, type_name in attributes:  # self.x = self.y
        klass = class_of(index)
        if klass is not None and type_name[:1] == ALIAS:
            found = declared.get((klass, type_name[1:]))
            if found is not None:
                declared.setdefault((klass, attribute), found)
    typed: dict[int, dict[str, str]] = {}
    for (klass, attribute), type_name in declared.items():
        typed.setdefault(klass, {})[attribute[len(prefix) :]] = type_name
    for klass, types in typed.items():  # subclasses elsewhere read them at resolution
        entities[klass]["metadata"]["attribute_types"] = types
    calls = result.calls
    for position, call in enumerate(calls):
        inferred = call[4]
        if inferred is None:  # self.x.m(): the type some method gave self.x, if any
            receiver = call[3]
            if receiver is None or not declared:
                continue
            if receiver.startswith(prefix):
                found = declared.get((class_of(call[0]), receiver))
            elif implicit and receiver.isidentifier():
                found = declared.get((class_of(call[0]), prefix + receiver))
            else:
                continue
            if found is not None:
                calls[position] = (*call[:4], found, *call[5:])
        elif inferred[:1] == ALIAS and call[3] is not None:  # p = self.proto; p.m()
            # self.proto's type, or none (a bare ``emit()`` keeps ``@self.emit``: the method)
            found = declared.get((class_of(call[0]), inferred[1:]))
            calls[position] = (*call[:4], found, *call[5:])
