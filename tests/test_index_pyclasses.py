"""The Python class hierarchy answers alike whatever was asked of it before."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.resolve.calls import Catalog
from eshu_mcp.query.local.index.resolve.pyclasses import Hierarchy

# A base misresolved to a subclass closes a cycle: T(S), S(A), A(T); H(T) is outside it.
T, S, A, H, HELPER = 1, 2, 3, 4, 5


def cyclic_hierarchy() -> Hierarchy:
    catalog = Catalog([], {}, indexed=True)
    for nid, name in ((T, "T"), (S, "S"), (A, "A"), (H, "H")):
        catalog.add((nid, 1, "Class", name, None, None, "python", nid))
    catalog.add((HELPER, 1, "Function", "helper", "A", A, "python", 10))
    hierarchy = Hierarchy(catalog)
    for child, base in ((T, S), (S, A), (A, T), (H, T)):
        hierarchy.add(child, base)
    return hierarchy


class CyclicBasesTests(SynchronousTestCase):
    def test_a_class_outside_the_cycle_sees_every_class_of_it(self) -> None:
        self.assertEqual(cyclic_hierarchy().mro(H), [H, T, S, A])
        self.assertEqual(cyclic_hierarchy().lookup(H, "helper").nid, HELPER)

    def test_asking_a_class_of_the_cycle_first_changes_no_later_answer(self) -> None:
        for first in (T, S, A):
            hierarchy = cyclic_hierarchy()
            hierarchy.mro(first)
            self.assertEqual(hierarchy.mro(H), [H, T, S, A], first)
            self.assertEqual(hierarchy.lookup(H, "helper").nid, HELPER, first)

    def test_each_class_of_the_cycle_leaves_out_the_base_that_leads_back(self) -> None:
        hierarchy = cyclic_hierarchy()
        self.assertEqual(hierarchy.mro(S), [S, A, T])
        self.assertEqual(hierarchy.mro(T), [T, S, A])
        self.assertEqual(hierarchy.mro(A), [A, T, S])
