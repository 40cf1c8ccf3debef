"""
The resolved Python class hierarchy of one repository (classes by node number): bases in
declared order, subclasses, ``@implementer`` interfaces, classes with a base outside the
repository; and what it answers: each class's own methods (the last definition of a name
wins, so ``@overload`` stubs lose), its C3 MRO, the method a lookup finds, overrides below
a class and the implementations of an interface.
"""

from __future__ import annotations

from collections import defaultdict

from eshu_mcp.query.local.index.resolve.calls import Catalog, Entity
from eshu_mcp.query.local.index.resolve.typed_receivers import AMBIGUOUS_CAP

EXTERNAL = "external"
DISPATCH_CAP = 24
"""The most overrides a call on a receiver of a known class lists (every one may run);
past it the call is linked to the class's own method, with the count."""
"""What a name resolves to when it is bound to something outside the repository."""


class Hierarchy:
    """Resolved Python bases of each class (by node number), filled before calls resolve."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._members: dict[int, dict[str, Entity]] = {}
        self._mro: dict[int, list[int]] = {}
        self._lookups: dict[tuple, object] = {}
        self._overrides: dict[tuple[int, str], list[Entity]] = {}
        self._descendants: dict[int, list[list[int]]] = {}
        self.bases: dict[int, list[int]] = defaultdict(list)
        self.subclasses: dict[int, list[int]] = defaultdict(list)
        self.open: set[int] = set()  # classes with a base outside the repository (or unknown)
        self.declarations: set[int] = set()  # classes deriving directly from an interface root
        self.implementers: dict[int, list[int]] = defaultdict(list)  # @implementer(interface)
        self._declaration: dict[int, bool] = {}
        self._owners: dict[str, frozenset[int]] = {}
        self._implemented: dict[tuple[int, str], list[Entity]] = {}

    def add(self, child: int, base: int) -> None:
        self.bases[child].append(base)
        self.subclasses[base].append(child)

    def implements(self, child: int, interface: int) -> None:
        self.implementers[interface].append(child)

    def members(self, class_nid: int) -> dict[str, Entity]:
        """A class's own methods by name; the last definition wins (``@overload`` stubs lose)."""
        found = self._members.get(class_nid)
        if found is None:
            found = self._members[class_nid] = {
                e.name: e
                for e in sorted(self.catalog.children.get(class_nid, ()), key=_line)
                if e.entity_type == "Function"
            }
        return found

    def mro(self, class_nid: int) -> list[int]:
        """The class and its resolved ancestors in C3 order (depth-first when C3 fails).

        In a cycle (broken code, or a base misresolved to a subclass) the base that leads
        back is left out, as seen from the class asked about: the answer never depends on
        which class of the cycle was asked first.
        """
        found = self._mro.get(class_nid)
        if found is None:
            found = self._mro[class_nid] = self._linearized(class_nid, ())[0]
        return found

    def _linearized(self, class_nid: int, inside: tuple[int, ...]) -> tuple[list[int], bool]:
        """(MRO, whether it holds whole): ``inside`` are the classes being linearized
        around this one; a result that left one of them out is kept for this answer only."""
        found = self._mro.get(class_nid)
        if found is not None:
            return found, True
        inside = (*inside, class_nid)
        declared = self.bases.get(class_nid, ())
        bases = [b for b in declared if b not in inside]
        whole = len(bases) == len(declared)
        sequences = []
        for base in bases:
            linearized, base_whole = self._linearized(base, inside)
            whole = whole and base_whole
            sequences.append(list(linearized))
        sequences.append(list(bases))
        merged = [class_nid]
        while any(sequences):
            for sequence in sequences:
                head = sequence[0] if sequence else None
                if head is not None and not any(head in s[1:] for s in sequences):
                    break
            else:
                merged += [n for s in sequences for n in s if n not in merged]
                break
            merged.append(head)
            sequences = [s[1:] if s and s[0] == head else s for s in sequences]
        found = list(dict.fromkeys(merged))
        if whole:
            self._mro[class_nid] = found
        return found, whole

    def lookup(self, class_nid: int, name: str, skip_own: bool = False):
        """The method ``name`` as the class's MRO finds it; EXTERNAL when an unresolved base
        may hold it; None when the known hierarchy has no such method."""
        key = (class_nid, name, skip_own)
        found = self._lookups.get(key, False)
        if found is False:
            found = self._lookups[key] = self._lookup(class_nid, name, skip_own)
        return found

    def _lookup(self, class_nid: int, name: str, skip_own: bool):
        order = self.mro(class_nid)
        members, known = self.members, self._members
        for nid in order[1:] if skip_own else order:
            own = known.get(nid)
            method = (members(nid) if own is None else own).get(name)
            if method is not None:
                return method
        if not self.open.isdisjoint(order):
            return EXTERNAL
        return None

    def is_declaration(self, class_nid: int) -> bool:
        """Whether the class is an interface (its methods declare, others implement)."""
        found = self._declaration.get(class_nid)
        if found is None:
            found = self._declaration[class_nid] = not self.declarations.isdisjoint(
                self.mro(class_nid)
            )
        return found

    def owners(self, name: str) -> frozenset[int]:
        """Node numbers of the classes defining a method ``name``."""
        found = self._owners.get(name)
        if found is None:
            found = self._owners[name] = frozenset(
                e.parent for e in self.catalog.methods.by_name.get(name, ()) if e.parent
            )
        return found

    def in_subclasses(self, class_nid: int, name: str) -> list[Entity]:
        """Definitions of ``name`` in the class's descendants (overrides, or a template
        method's hooks), nearest first, a generation at a time until more than
        :data:`DISPATCH_CAP` are found."""
        key = (class_nid, name)
        found = self._overrides.get(key)
        if found is None:
            found = self._overrides[key] = self._in_subclasses(class_nid, name)
        return found

    def _in_subclasses(self, class_nid: int, name: str) -> list[Entity]:
        owners = self.owners(name)
        if not owners or class_nid not in self.subclasses:
            return []
        found: dict[int, Entity] = {}
        for level in self.descendants(class_nid):
            if len(found) > DISPATCH_CAP:
                break
            for child in level:
                if child in owners:
                    method = self.members(child).get(name)
                    if method is not None:
                        found[method.nid] = method
        return list(found.values())

    def descendants(self, class_nid: int) -> list[list[int]]:
        """The class's descendants breadth first, one list per generation (each class once,
        where it is first reached)."""
        found = self._descendants.get(class_nid)
        if found is None:
            found = self._descendants[class_nid] = []
            frontier, seen = [class_nid], {class_nid}
            while frontier:
                following = []
                for nid in frontier:
                    for child in self.subclasses.get(nid, ()):
                        if child not in seen:
                            seen.add(child)
                            following.append(child)
                if following:
                    found.append(following)
                frontier = following
        return found

    def implemented(self, interface: Entity, name: str) -> list[Entity]:
        """The method ``name`` of the classes implementing the interface (or one of its
        sub-interfaces), and of their subclasses; at most one more than AMBIGUOUS_CAP."""
        key = (interface.nid, name)
        found = self._implemented.get(key)
        if found is None:
            found = self._implemented[key] = self._implementers_of(interface, name)
        return found

    def _implementers_of(self, interface: Entity, name: str) -> list[Entity]:
        hierarchy = self
        owners = self.owners(name)
        found: dict[int, Entity] = {}
        frontier, seen = [interface.nid], {interface.nid}
        while frontier and len(found) <= AMBIGUOUS_CAP:
            following = []
            for nid in frontier:
                for child in (
                    *hierarchy.implementers.get(nid, ()),
                    *hierarchy.subclasses.get(nid, ()),
                ):
                    if child in seen:
                        continue
                    seen.add(child)
                    following.append(child)
                    if child in hierarchy.declarations or self.is_declaration(child):
                        continue
                    if owners.isdisjoint(self.mro(child)):
                        continue  # no class it inherits from defines the name
                    method = self.lookup(child, name)
                    if isinstance(method, Entity):
                        found[method.nid] = method
            frontier = following
        return list(found.values())


def _line(entity: Entity) -> int:
    return entity.line
