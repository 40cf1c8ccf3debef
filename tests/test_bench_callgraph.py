"""
scripts/callgraph_ast.py and callgraph_runtime.py: the ast ground truth of
scripts/bench_callgraph.py, and how it judges a stored edge against what ran.
"""

import importlib
import sys
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"

BASE = """\
from typing import Generic, TypeVar, overload

T = TypeVar("T")


class Base(Generic[T]):
    def run(self):
        return helper(1)


@overload
def helper(x: int) -> int: ...
@overload
def helper(x: str) -> str: ...
def helper(x):
    return x


def produce():
    yield helper("a")
"""

USER = """\
import sys

from pkg import base
from pkg.base import Base as Renamed


class Child(base.Base[int]):
    def run(self):
        sys.stdout.write("x")
        return (self.other.thing
                .helper(2))


class Other(Renamed):
    handlers = {"on_event": None}


def never_named_again():
    pass


def dump(path):
    f = open(path)
    f.flush()
    g = make()
    g.flush()


class Sink:
    def __init__(self):
        self.out = sys.stderr

    def emit(self):
        self.out.flush()
"""


def _load_script(name: str):
    """Import one of the benchmark's modules (they import their siblings by bare name)."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(SCRIPTS))


def _scan(case: SynchronousTestCase) -> tuple[Path, object]:
    root = Path(case.mktemp())
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "base.py").write_text(BASE)
    (root / "pkg" / "user.py").write_text(USER)
    return root, _load_script("callgraph_ast").scan_tree(root)


class AstGroundTruthTests(SynchronousTestCase):
    def setUp(self):
        self.script = _load_script("callgraph_ast")
        _, self.tree = _scan(self)

    def test_each_call_is_attributed_to_its_enclosing_def(self):
        calls = {(c.path, c.line): c for c in self.tree.calls_named("helper")}
        self.assertEqual(calls[("pkg/base.py", 8)].caller, ("pkg/base.py", 7))
        self.assertEqual(calls[("pkg/base.py", 20)].caller, ("pkg/base.py", 19))
        self.assertIsNone(calls[("pkg/base.py", 8)].receiver)

    def test_a_method_call_split_over_lines_keeps_both_lines(self):
        (call,) = [c for c in self.tree.calls_named("helper") if c.path == "pkg/user.py"]
        self.assertEqual((call.line, call.attr_line, call.receiver), (10, 11, "self.other.thing"))

    def test_calls_on_a_module_from_outside_the_tree_are_external(self):
        (write,) = self.tree.calls_named("write")
        self.assertTrue(write.external)
        self.assertFalse(any(c.external for c in self.tree.calls_named("helper")))

    def test_calls_on_values_only_outside_code_gave_are_external(self):
        # f = open(p) and self.out = sys.stderr hold outside objects; g = make() may not
        external = {c.receiver: c.external for c in self.tree.calls_named("flush")}
        self.assertEqual(external, {"f": True, "g": False, "self.out": True})

    def test_overload_stubs_and_generators_are_marked(self):
        helpers = sorted(
            (d.line, d.is_overload) for d in self.tree.definitions.values() if d.name == "helper"
        )
        self.assertEqual(helpers, [(12, True), (14, True), (15, False)])
        self.assertTrue(self.tree.definitions[("pkg/base.py", 19)].is_generator)
        self.assertFalse(self.tree.definitions[("pkg/base.py", 15)].is_generator)

    def test_subclasses_resolve_dotted_subscripted_and_renamed_bases(self):
        children = self.script.direct_subclasses(self.tree, "pkg.base", "Base")
        self.assertEqual(children, {("pkg/user.py", 7), ("pkg/user.py", 14)})

    def test_references_count_uses_and_string_keys_but_not_definitions(self):
        self.assertEqual(self.script.references(self.tree, "never_named_again"), 0)
        self.assertEqual(self.script.references(self.tree, "on_event"), 1)
        self.assertGreater(self.script.references(self.tree, "helper"), 0)


class RuntimeJudgeTests(SynchronousTestCase):
    """A stored edge against a trace of what ran at its call site."""

    def setUp(self):
        self.runtime = _load_script("callgraph_runtime")
        self.index = _load_script("callgraph_index")
        root, self.tree = _scan(self)
        base, user = str(root / "pkg" / "base.py"), str(root / "pkg" / "user.py")
        trace = {
            "package_dir": str(root / "pkg"),
            "calls": [
                [base, 8, ["py", base, 15, "helper"], False],  # helper(1) ran the implementation
                [user, 11, ["py", base, 15, "helper"], False],  # CPython reports the .helper line
                [user, 9, ["c", "", 0, "write"], False],  # sys.stdout.write is a builtin
            ],
        }
        self.seen = self.runtime.observed_calls(trace, self.tree)

    def judge(self, path: str, line: int, target: tuple[str, int, str]) -> str:
        entity = self.index.Entity("e", target[0], target[1], target[2], "Function", target[2])
        edge = self.index.CallEdge((path, 7), entity, path, line, "call", "same_file", 0.95)
        return self.runtime.judge(edge, self.seen, self.tree)

    def test_an_edge_to_the_definition_that_ran_is_correct(self):
        self.assertEqual(self.judge("pkg/base.py", 8, ("pkg/base.py", 15, "helper")), "correct")

    def test_an_edge_to_an_overload_stub_is_wrong(self):
        self.assertEqual(self.judge("pkg/base.py", 8, ("pkg/base.py", 12, "helper")), "wrong")

    def test_a_method_call_over_two_lines_is_checked_at_its_first_line(self):
        self.assertEqual(self.judge("pkg/user.py", 10, ("pkg/base.py", 15, "helper")), "correct")

    def test_an_edge_where_a_builtin_ran_is_wrong_outside(self):
        verdict = self.judge("pkg/user.py", 9, ("pkg/base.py", 15, "write"))
        self.assertEqual(verdict, "wrong_outside")

    def test_lines_that_never_ran_and_generator_targets_are_not_checked(self):
        self.assertEqual(self.judge("pkg/user.py", 18, ("pkg/base.py", 15, "helper")), "not_run")
        self.assertEqual(self.judge("pkg/base.py", 8, ("pkg/base.py", 19, "produce")), "generator")
