"""Tests for the code-only repository context and story."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries.result import summarize_envelope
from tests.test_api_resource import ApiClient, rich_index


class StoryTests(SynchronousTestCase):
    def setUp(self):
        self.ids = rich_index(self.mktemp())
        self.client = ApiClient(self, self.ids["index"].path)

    def test_context_fills_code_sections_and_names_the_gaps(self):
        body = self.client.get("/repositories/payments/context", envelope=True).json()
        data = body["data"]
        self.assertEqual(data["file_count"], 4)
        self.assertEqual(data["language_breakdown"], {"python": 2, "tsx": 1})
        entries = data["api_surface"]["entry_points"]
        self.assertEqual([e["name"] for e in entries], ["create_charge"])
        self.assertEqual(entries[0]["root_kinds"], ["http_handler"])
        self.assertEqual(data["relationship_overview"]["code_edges"], {"CALLS": 2, "CONTAINS": 1})
        self.assertIn("deployment_evidence_unavailable", data["partial_reasons"])
        self.assertEqual(data["consumers"], [])
        self.assertEqual(body["truth"]["level"], "derived")

    def test_story_is_code_only_with_unavailable_platform_overviews(self):
        data = self.client.get("/repositories/payments/story").json()
        self.assertIn("4 indexed files and 4 code entities, mostly python", data["story"])
        self.assertIn("2 call edges", data["story"])
        self.assertEqual(data["deployment_overview"]["state"], "unavailable")
        self.assertEqual(
            [s["id"] for s in data["story_sections"]], ["code_inventory", "entry_points", "layout"]
        )
        self.assertEqual(data["story_sections"][2]["items"][0], {"path": "app", "entity_count": 4})
        self.assertEqual(data["drilldowns"]["stats"]["tool"], "get_repository_stats")

    def test_malformed_metadata_does_not_break_entry_points(self):
        writer = self.ids["index"].writer
        writer.execute("UPDATE entity_rows SET metadata = '{bad' WHERE entity_name = 'charge'")
        writer.commit()
        self.assertEqual(self.client.get("/repositories/payments/context").status, 200)

    def test_entry_points_put_mains_first_and_leave_out_implicitly_called_methods(self):
        index = self.ids["index"]
        cli = index.file(
            self.ids["repo"],
            "app/cli.py",
            "class Box:\n    def __init__(self):\n        pass\n\n\ndef main():\n    Box()\n",
        )
        index.entity(
            cli,
            "Function",
            "__init__",
            2,
            3,
            class_context="Box",
            metadata={"dead_code_root_kinds": ["python.dunder_method"]},
        )
        index.entity(cli, "Function", "main", 6, 7)
        index.writer.commit()
        data = self.client.get("/repositories/payments/context").json()
        entries = data["api_surface"]["entry_points"]
        self.assertEqual([e["name"] for e in entries], ["main", "create_charge"])
        self.assertEqual(entries[0]["root_kinds"], ["python.main_function"])

    def test_exported_javascript_functions_are_the_api_surface_and_the_layout_is_one_line(self):
        index = self.ids["index"]
        util = index.file(
            self.ids["repo"],
            "web/util.js",
            "exports.format = function (x) {\n  return x;\n};\n",
            language="javascript",
        )
        index.entity(util, "Function", "format", 1, 3, metadata={"exported": True})
        index.writer.commit()
        data = self.client.get("/repositories/payments/story").json()
        entries = data["story_sections"][1]["items"]
        self.assertIn(
            ("format", ["javascript.module_export"]),
            [(e["name"], e["root_kinds"]) for e in entries],
        )
        text = summarize_envelope("get_repo_story", {"data": data})
        self.assertIn("Layout: directories holding the most entities: app (4), web (1)", text)

    def test_what_a_python_package_exports_is_its_api_surface(self):
        index = self.ids["index"]
        repo = self.ids["repo"]
        init = index.file(repo, "lib/__init__.py", "from lib.core import Engine, start\n")
        core = index.file(
            repo, "lib/core.py", "class Engine:\n    pass\n\n\ndef start():\n    pass\n"
        )
        index.file(repo, "lib/sub/__init__.py", "from lib.core import start\n")
        engine = index.entity(core, "Class", "Engine", 1, 2)
        start = index.entity(core, "Function", "start", 5, 6)
        index.entity(init, "Function", "version", 3, 4)  # defined by the package itself
        index.entity(init, "Function", "_helper", 6, 7)  # private: not handed to users
        for line, target in enumerate((engine, start), start=1):
            index.edge(repo, "IMPORTS", f"file:{init}", target, line)
        index.writer.commit()
        data = self.client.get("/repositories/payments/story").json()
        section = data["story_sections"][1]
        exported = [
            (e["name"], e["exported_by"])
            for e in section["items"]
            if e["root_kinds"] == ["python.package_export"]
        ]
        self.assertEqual(
            exported,
            [
                ("version", "lib/__init__.py"),
                ("Engine", "lib/__init__.py"),
                ("start", "lib/__init__.py"),
            ],
        )
        self.assertTrue(section["summary"].startswith("4 entry points:"))

    def test_an_example_program_comes_after_the_repository_api(self):
        index = self.ids["index"]
        demo = index.file(self.ids["repo"], "examples/demo.py", "def main():\n    pass\n")
        index.entity(demo, "Function", "main", 1, 2)
        index.writer.commit()
        data = self.client.get("/repositories/payments/context").json()
        entries = data["api_surface"]["entry_points"]
        self.assertEqual(
            [(e["name"], e["relative_path"]) for e in entries],
            [("create_charge", "app/api.py"), ("main", "examples/demo.py")],
        )

    def test_what_a_typescript_index_module_exports_leads_the_api_surface(self):
        index = self.ids["index"]
        repo = self.ids["repo"]
        entry = index.file(
            repo, "src/index.ts", "export { App } from './app'\n", language="typescript"
        )
        app = index.file(repo, "src/app.ts", "export class App {}\n", language="typescript")
        target = index.entity(app, "Class", "App", 1, 1, metadata={"exported": True})
        index.edge(repo, "IMPORTS", f"file:{entry}", target, 1)
        index.writer.commit()
        entries = self.client.get("/repositories/payments/context").json()["api_surface"]
        first = entries["entry_points"][0]
        self.assertEqual(
            (first["name"], first["root_kinds"], first["exported_by"]),
            ("App", ["typescript.package_export"], "src/index.ts"),
        )
