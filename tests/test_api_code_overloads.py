"""
``@overload`` stubs answer as their implementation: asked by name, the relationship tools
resolve a function declared with overloads to the one definition that runs.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.store.database import open_reader
from tests.test_api_code_common import call
from tests.test_api_code_indexed import indexed_repository

SOURCES = {
    "lib/__init__.py": "",
    "lib/defer.py": """from typing import overload


def _wrap(value):
    return value


@overload
def maybe(f: int) -> int: ...


@overload
def maybe(f: str) -> str: ...


def maybe(f):
    return _wrap(f)


class Chain:
    @overload
    def add(self, f: int) -> int: ...

    @overload
    def add(self, f: str) -> str: ...

    def add(self, f):
        return _wrap(f)


class Other:
    def add(self, f):
        return f
""",
    "lib/use.py": """from lib.defer import Chain, maybe


def first():
    return maybe(1)


def second():
    return maybe("a")


def third():
    return Chain().add(1)
""",
}
STORY = "/code/relationships/story"


class OverloadedTargetTests(SynchronousTestCase):
    def setUp(self):
        db, self.repo = indexed_repository(self, SOURCES, "overloads")
        self.conn = open_reader(db)
        self.addCleanup(self.conn.close)

    def story(self, **body):
        return call(self.conn, STORY, {"repo_id": self.repo, **body}).data

    def test_callers_of_an_overloaded_function_resolve_to_its_implementation(self):
        data = self.story(target="maybe", direction="incoming")
        resolution = data["target_resolution"]
        self.assertEqual(resolution["status"], "resolved")
        self.assertEqual(resolution["name"], "maybe")
        implementation = self.conn.execute(
            "SELECT entity_id FROM entities WHERE entity_name = 'maybe' AND start_line = 16"
        ).fetchone()[0]
        self.assertEqual(resolution["entity_id"], implementation)
        self.assertEqual({r["source_name"] for r in data["relationships"]}, {"first", "second"})

    def test_callees_of_an_overloaded_function_are_those_of_its_implementation(self):
        data = self.story(target="maybe", direction="outgoing")
        self.assertEqual(data["target_resolution"]["status"], "resolved")
        self.assertEqual({r["target_name"] for r in data["relationships"]}, {"_wrap"})

    def test_an_overloaded_method_counts_once_among_the_definitions_of_its_name(self):
        data = self.story(target="add", direction="incoming")
        self.assertEqual(data["target_resolution"]["status"], "ambiguous")
        groups = data["definition_groups"]
        self.assertEqual(
            sorted((g["class_context"], g["start_line"]) for g in groups),
            [("Chain", 27), ("Other", 32)],
        )
        self.assertEqual(groups[0]["class_context"], "Chain")
        self.assertEqual([r["source_name"] for r in data["relationships"]], ["third"])

    def test_the_relationships_route_resolves_an_overloaded_name_too(self):
        data = call(
            self.conn,
            "/code/relationships",
            {"entity_id": "maybe", "direction": "incoming", "relationship_type": "CALLS"},
        ).data
        self.assertEqual(data["name"], "maybe")
        self.assertEqual({r["source_name"] for r in data["incoming"]}, {"first", "second"})
