"""
Tests for the inheritance kept between builds (eshu_mcp.query.local.index.resolve.
kept_inheritance): in a process that keeps graph inputs, one-file builds re-resolve only the
classes their change can affect, and every build ends with exactly the edges a fresh index
of the same tree has (bases, overrides, interfaces, open classes and the calls resolved
through them), through edits of a base's methods, of a subclass, of a base list and of an
interface, and a file added and deleted.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.resolve import graph, input_cache
from tests.test_index_input_cache import edge_set, make_repository

SHAPES = """\
from zope.interface import Interface, implementer

from pkg.base import Base


class IShape(Interface):
    def area():
        pass


@implementer(IShape)
class Square(Base):
    def area(self):
        return 4

    def step(self):
        return self.area()


class Broken(ValueError):
    def step(self):
        return 0
"""
GRAND = """\
from pkg.child import Child
from pkg.shapes import Square


class GrandChild(Child):
    def step(self):
        return 5

    def run(self):
        return self.step()


class Tile(Square):
    def area(self):
        return 1


def use(shape):
    return Tile().run() + GrandChild().run()
"""

DOTTED = """\
import pkg.base


class Dotted(pkg.base.Other):
    def run(self):
        return 1


class Later(pkg.base.Missing):
    def run(self):
        return 2
"""

LATE = "from pkg.grand import Tile\n\n\nclass Late(Tile):\n"


class KeptInheritanceTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-inherit-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = make_repository(self.tmp)
        (self.repo / "pkg" / "shapes.py").write_text(SHAPES)
        (self.repo / "pkg" / "grand.py").write_text(GRAND)
        (self.repo / "pkg" / "dotted.py").write_text(DOTTED)
        self.db = self.tmp / "index.sqlite"
        input_cache.keep_between_builds(False)  # nothing kept from another test
        input_cache.keep_between_builds()
        self.addCleanup(input_cache.keep_between_builds, False)
        self.patched = 0
        patch = graph._patch_inheritance

        def counted(*args, **kwargs):
            self.patched += 1
            return patch(*args, **kwargs)

        self.patch(graph, "_patch_inheritance", counted)
        report = index_repositories(self.db, [self.repo], workers=1)
        input_cache.warm(self.db, [report.repositories[0].repo_id])  # as the child does
        self.cold = 0

    def edit(self, step: str, path: str, text: str | None) -> None:
        target = self.repo / path
        if text is None:
            target.unlink()
        else:
            target.write_text(text)
        report = index_repositories(
            self.db, [self.repo], workers=1, changed={str(self.repo): [path]}
        )
        self.assertTrue(report.ok)
        self.cold += 1
        cold_db = self.tmp / f"cold-{self.cold}.sqlite"
        index_repositories(cold_db, [self.repo], workers=1)
        ours, cold = edge_set(self.db), edge_set(cold_db)
        self.assertEqual((step, ours - cold, cold - ours), (step, set(), set()))

    def test_one_file_builds_patch_the_hierarchy_and_end_as_a_fresh_index(self) -> None:
        base = (self.repo / "pkg" / "base.py").read_text()
        self.edit("whole pass (kept afterwards)", "pkg/filler_0.py", "def a():\n    return 1\n")
        patched = self.patched
        self.edit("a body", "pkg/filler_1.py", "def b():\n    return 2\n")
        self.assertGreater(self.patched, patched)  # the kept hierarchy was patched
        self.edit(
            "a method the grandchild's base overrides, added to the root",
            "pkg/base.py",
            base + "\n    def area(self):\n        return 0\n",
        )
        self.edit("the root's run renamed", "pkg/base.py", base.replace("def run", "def go"))
        self.edit("and back", "pkg/base.py", base)
        self.edit("the root's step renamed", "pkg/base.py", base.replace("step", "stride"))
        self.edit(
            "a base reached by its module renamed", "pkg/base.py", base.replace("Other", "Else")
        )
        self.edit(
            "a base defined at last",
            "pkg/base.py",
            base + "\n\nclass Missing:\n    def run(self):\n        return 0\n",
        )
        self.edit("and back again", "pkg/base.py", base)
        self.edit(
            "an override removed",
            "pkg/grand.py",
            GRAND.replace("    def run(self)", "    def walk(self)"),
        )
        self.edit(
            "a base list changed",
            "pkg/shapes.py",
            SHAPES.replace("class Square(Base)", "class Square(Other)").replace(
                "import Base", "import Base, Other"
            ),
        )
        self.edit(
            "an interface's method renamed",
            "pkg/shapes.py",
            SHAPES.replace("def area():", "def size():"),
        )
        self.edit(
            "a class open again",
            "pkg/shapes.py",
            SHAPES.replace("Broken(ValueError)", "Broken(Base)"),
        )
        self.edit("back", "pkg/shapes.py", SHAPES)
        self.edit(
            "a subclass in a new file",
            "pkg/late.py",
            LATE + "    def area(self):\n        return 2\n",
        )
        self.edit(
            "then edited",
            "pkg/late.py",
            LATE + "    def run(self):\n        return 2\n",
        )
        self.edit("a middle class's file deleted", "pkg/grand.py", None)
        self.edit("a body after it", "pkg/filler_2.py", "def c():\n    return 3\n")
        self.assertGreater(self.patched, patched + 5)
