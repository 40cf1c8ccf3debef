"""scripts/callgraph_ast.py: the ast ground truth of scripts/bench_callgraph.py."""

import importlib.util
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "callgraph_ast.py"

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
"""


def _load_script():
    spec = importlib.util.spec_from_file_location("callgraph_ast", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class AstGroundTruthTests(SynchronousTestCase):
    def setUp(self):
        self.script = _load_script()
        root = Path(self.mktemp())
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "__init__.py").write_text("")
        (root / "pkg" / "base.py").write_text(BASE)
        (root / "pkg" / "user.py").write_text(USER)
        self.tree = self.script.scan_tree(root)

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
