"""
The class hierarchy and inheritance edges kept between builds (by the indexer child), so a
one-file build resolves the bases of only the classes its change can affect.

A whole build resolves every base row (about 150,000 at 26k files), matches every class's
methods against its bases' for OVERRIDES, then compares every inheritance edge with the
stored ones: seconds of a one-file build. Kept here, from the last build: the resolved
hierarchy (bases, subclasses, interfaces, open classes), each class's inheritance rows, and
which classes each file, base name and base file concern. A build with the same layout
re-resolves the classes whose base rows are in the rebuilt files, name a touched name, or
resolved to a class in a changed file, patches the hierarchy in place (subclasses kept in
the order a whole build gives), and writes only the rows that changed. Every class's rows
are its own (sources are the class or its methods), so replacing a class's rows leaves the
others' as a whole build makes them.
"""

from __future__ import annotations

from collections import defaultdict

from attrs import define, field

from eshu_mcp.query.local.index.resolve.calls import Catalog
from eshu_mcp.query.local.index.resolve.pyclasses import Hierarchy
from eshu_mcp.query.local.index.store.codes import EDGE_TYPES

OVERRIDES = EDGE_TYPES["OVERRIDES"]
STRUCTURE = ("bases", "subclasses", "open", "declarations", "implementers")
"""The hierarchy's resolved parts (the rest of a :class:`Hierarchy` is caches)."""


def base_words(base_name: str) -> tuple[str, str]:
    """The names whose definitions, appearing or vanishing, can change what a base means."""
    return base_name, base_name.rsplit(".", 1)[-1]


@define
class KeptInheritance:
    """The resolved inheritance of one repository as its last committed build left it."""

    hierarchy: Hierarchy
    rows_of: dict[int, list[tuple]]  # class nid -> its inheritance edge rows
    order: dict[int, str]  # class nid -> entity id (the order bases are declared in)
    by_file: dict[int, set[int]] = field(factory=lambda: defaultdict(set))
    by_word: dict[str, set[int]] = field(factory=lambda: defaultdict(set))
    by_base_file: dict[int, set[int]] = field(factory=lambda: defaultdict(set))
    concerns: dict[int, tuple] = field(factory=dict)  # nid -> (file, words, base files)
    outcomes: dict = field(factory=dict)  # how each Python base row resolved (graph.py)
    method_sets: bool = False  # some interface is implemented by method sets (Go): not kept

    @classmethod
    def of_build(cls, hierarchy: Hierarchy, rows: list[tuple], bases, catalog: Catalog, order):
        """What a whole build resolved: its hierarchy, inheritance rows and base rows."""
        kept = cls(hierarchy, defaultdict(list), dict(order))
        for row in rows:
            owner = row[2]
            if row[1] == OVERRIDES:
                member = catalog.by_id.get(owner)
                owner = member.parent if member is not None else owner
            kept.rows_of[owner].append(row)
        grouped: dict[int, list[tuple]] = defaultdict(list)
        for base in bases:
            grouped[base[0]].append(base)
        for nid, its_bases in grouped.items():
            kept.note(nid, its_bases, kept.rows_of.get(nid, ()), catalog)
        return kept

    def note(self, nid: int, bases: list[tuple], rows, catalog: Catalog) -> None:
        """Record what one class's resolution depended on."""
        file_id = bases[0][3]
        words = {word for base in bases for word in base_words(base[1])}
        base_files = set()
        for row in rows:
            if row[1] != OVERRIDES:
                target = catalog.by_id.get(row[3])
                if target is not None:
                    base_files.add(target.file_id)
        self.concerns[nid] = (file_id, frozenset(words), frozenset(base_files))
        self.by_file[file_id].add(nid)
        for word in words:
            self.by_word[word].add(nid)
        for base_file in base_files:
            self.by_base_file[base_file].add(nid)

    def affected(self, files: set[int], touched, changed: set[int]) -> set[int]:
        """Classes to resolve again: of the rebuilt ``files``, naming a ``touched`` name,
        or based on a class of a ``changed`` file."""
        found: set[int] = set()
        for file_id in files:
            found |= self.by_file.get(file_id, set())
        for word in touched:
            found |= self.by_word.get(word, set())
        for file_id in changed:
            found |= self.by_base_file.get(file_id, set())
        return found

    def forget(self, nid: int) -> list[tuple]:
        """Take one class out (hierarchy and indexes); returns the rows it had."""
        concerns = self.concerns.pop(nid, None)
        if concerns is not None:
            file_id, words, base_files = concerns
            self.by_file[file_id].discard(nid)
            for word in words:
                self.by_word[word].discard(nid)
            for base_file in base_files:
                self.by_base_file[base_file].discard(nid)
        hierarchy = self.hierarchy
        for base in hierarchy.bases.pop(nid, ()):
            members = hierarchy.subclasses.get(base)
            if members is not None:
                members[:] = [m for m in members if m != nid]
        for rows in self.rows_of.get(nid, ()):
            if rows[1] == EDGE_TYPES["IMPLEMENTS"]:
                members = hierarchy.implementers.get(rows[3])
                if members is not None:
                    members[:] = [m for m in members if m != nid]
        hierarchy.open.discard(nid)
        hierarchy.declarations.discard(nid)
        self.order.pop(nid, None)
        return self.rows_of.pop(nid, [])

    def fresh_hierarchy(self, catalog: Catalog) -> Hierarchy:
        """A hierarchy (empty caches) over the kept structure, which it patches in place."""
        hierarchy = Hierarchy(catalog)
        for name in STRUCTURE:
            setattr(hierarchy, name, getattr(self.hierarchy, name))
        self.hierarchy = hierarchy
        return hierarchy

    def reorder(self, nids: set[int]) -> None:
        """Put the subclasses and implementers of the re-resolved classes' bases back in
        declared order (a whole build appends them as it meets the base rows)."""
        hierarchy = self.hierarchy
        order = self.order
        for nid in nids:
            for base in hierarchy.bases.get(nid, ()):
                hierarchy.subclasses[base].sort(key=lambda m: order.get(m, ""))
        interfaces = {
            row[3]
            for nid in nids
            for row in self.rows_of.get(nid, ())
            if row[1] == EDGE_TYPES["IMPLEMENTS"]
        }
        for interface in interfaces:
            members = hierarchy.implementers.get(interface)
            if members is not None:
                members.sort(key=lambda m: order.get(m, ""))
