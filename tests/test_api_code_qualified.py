"""Qualified targets: ``Class.method`` and ``module.name`` name the definitions they mean."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.code.qualified import module_parts, qualified_parts
from tests.test_api_code_common import CodeIndex, call, scratch_dir, shop_index

STORY = "/code/relationships/story"


class QualifiedTargetTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = shop_index(self)
        self.conn = self.index.reader()
        self.addCleanup(self.conn.close)

    def story(self, target, **body):
        return call(self.conn, STORY, {"target": target, "direction": "outgoing", **body}).data

    def test_a_bare_shared_name_is_ambiguous_and_its_class_qualified_name_is_one(self):
        self.assertEqual(self.story("run")["target_resolution"]["status"], "ambiguous")
        for target in ("Child.run", "service.Child.run", "shop.service.Child.run", "Child::run"):
            resolution = self.story(target)["target_resolution"]
            self.assertEqual(resolution["status"], "resolved", target)
            self.assertEqual(resolution["name"], "run")
            self.assertEqual(resolution["entity_id"], self.index.entities["run"], target)

    def test_a_module_qualified_function_resolves_and_its_edges_follow(self):
        data = self.story("api.batch")
        self.assertEqual(data["target_resolution"]["status"], "resolved")
        called = {row["target_name"] for row in data["relationships"]}
        self.assertEqual(called, {"charge", "create_charge"})

    def test_a_name_written_as_a_call_names_the_function(self):
        for target in ("helper()", "service.helper()", " helper() "):
            resolution = self.story(target)["target_resolution"]
            self.assertEqual(resolution["status"], "resolved", target)
            self.assertEqual(resolution["entity_id"], self.index.entities["helper"])
        data = call(self.conn, "/code/symbols/search", {"symbol": "Child.run()"}).data
        self.assertEqual(
            [row["entity_id"] for row in data["results"]], [self.index.entities["run"]]
        )

    def test_a_qualifier_that_names_nothing_stays_unresolved(self):
        for target in ("Other.run", "billing.Child.run", "Child.nope"):
            self.assertEqual(self.story(target)["target_resolution"]["status"], "unresolved")

    def test_segments_and_module_paths(self):
        self.assertEqual(qualified_parts("Deferred.addCallbacks"), ["Deferred", "addCallbacks"])
        self.assertEqual(qualified_parts("Server::run"), ["Server", "run"])
        self.assertEqual(qualified_parts("Ky.#retry"), ["Ky", "#retry"])  # a private JS name
        self.assertEqual(qualified_parts("maybeDeferred"), [])
        self.assertEqual(
            module_parts("twisted/internet/defer.py"), ["twisted", "internet", "defer"]
        )
        self.assertEqual(module_parts("twisted/__init__.py"), ["twisted"])
        self.assertEqual(module_parts("lib/router/index.js"), ["lib", "router"])

    def test_find_symbol_reads_a_qualified_name_when_no_entity_has_it(self):
        data = call(self.conn, "/code/symbols/search", {"symbol": "service.Child.run"}).data
        self.assertEqual(
            [row["entity_id"] for row in data["results"]], [self.index.entities["run"]]
        )
        self.assertEqual(
            call(self.conn, "/code/symbols/search", {"symbol": "Child.nope"}).data["results"], []
        )


class ClassBeforeFileTests(SynchronousTestCase):
    def test_a_class_qualified_method_wins_over_a_same_named_function_of_a_same_named_file(
        self,
    ):
        index = CodeIndex(scratch_dir(self))
        repo = index.repository("web")
        headers = index.file(repo, "lib/Headers.js", "x\n" * 30, language="javascript")
        owner = index.entity(headers, "Class", "Headers", 1, 20)
        method = index.entity(
            headers, "Function", "set", 5, 8, class_context="Headers", parent=owner
        )
        index.entity(headers, "Function", "set", 25, 27)  # an object literal's method
        index.writer.commit()
        conn = index.reader()
        self.addCleanup(conn.close)
        data = call(conn, STORY, {"target": "Headers.set", "direction": "incoming"}).data
        self.assertEqual(data["target_resolution"]["status"], "resolved")
        self.assertEqual(data["target_resolution"]["entity_id"], method)
