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

    def test_a_tutorial_program_comes_after_the_repository_api(self):
        index = self.ids["index"]
        lesson = index.file(
            self.ids["repo"], "tutorials/basics/main.go", "func main() {}\n", language="go"
        )
        index.entity(
            lesson, "Function", "main", 1, 1, metadata={"dead_code_root_kinds": ["go.entrypoint"]}
        )
        index.writer.commit()
        entries = self.client.get("/repositories/payments/context").json()["api_surface"]
        self.assertEqual([e["name"] for e in entries["entry_points"]], ["create_charge", "main"])

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

    def _star_import(self, importer: int, source: int, line: int) -> None:
        self.ids["index"].writer.execute(
            "INSERT INTO imports (repo_id, file_id, module, imported_name, import_type,"
            " line_number, resolved_file_id, is_external) VALUES (?, ?, ?, '*', 'from', ?, ?, 0)",
            (self.ids["repo"], importer, f".m{source}", line, source),
        )

    def test_what_a_python_package_star_imports_it_hands_on_as_python_binds_it(self):
        index = self.ids["index"]
        repo = self.ids["repo"]
        init = index.file(repo, "kit/__init__.py", "from .seq import *\nfrom .fn import *\n")
        seq = index.file(
            repo,
            "kit/seq.py",
            "__all__ = ('take', 'drop')\n\ndef drop():\n    pass\n\ndef take():\n    pass\n"
            "\ndef hidden():\n    pass\n",
        )
        fn = index.file(
            repo, "kit/fn.py", "from .core import *\n\ndef pipe():\n    pass\n\ndef _private():\n"
        )
        core = index.file(repo, "kit/core.py", "class Curry:\n    pass\n")
        util = index.file(repo, "kit/util.py", "def compose():\n    pass\n")
        compose = index.entity(util, "Function", "compose", 1, 2)
        index.edge(repo, "IMPORTS", f"file:{fn}", compose, 1)  # fn imports it: handed on
        index.entity(seq, "Function", "drop", 3, 4)
        index.entity(seq, "Function", "take", 6, 7)
        index.entity(seq, "Function", "hidden", 9, 10)  # not in __all__: not bound
        index.entity(fn, "Function", "pipe", 3, 4)
        index.entity(fn, "Function", "_private", 6, 6)  # no __all__: underscore names stay
        index.entity(core, "Class", "Curry", 1, 2)  # fn star-imports core: handed on too
        self._star_import(init, seq, 1)
        self._star_import(init, fn, 2)
        self._star_import(fn, core, 1)
        index.writer.commit()
        data = self.client.get("/repositories/payments/story").json()
        section = data["story_sections"][1]
        exported = [
            (e["name"], e["relative_path"])
            for e in section["items"]
            if e.get("exported_by") == "kit/__init__.py"
        ]
        self.assertEqual(
            exported,
            [
                ("take", "kit/seq.py"),
                ("drop", "kit/seq.py"),
                ("pipe", "kit/fn.py"),
                ("compose", "kit/util.py"),
                ("Curry", "kit/core.py"),
            ],
        )
        self.assertIn("what the packages hand on (kit/__init__.py: 5)", section["summary"])
        text = summarize_envelope("get_repo_story", {"data": data})
        self.assertIn("kit/seq.py:6 take (Function)", text)

    def test_a_go_module_root_package_hands_on_its_most_used_exports_first(self):
        index = self.ids["index"]
        repo = self.ids["repo"]
        index.file(repo, "go.mod", "module example.com/mux\n", language=None)
        index.file(repo, "_examples/hello/go.mod", "module hello\n", language=None)
        mux = index.file(
            repo,
            "mux.go",
            "package mux\n\ntype Mux struct{}\n\nfunc NewMux() *Mux { return nil }\n\n"
            "func Chain() {}\n\nfunc Walk() {}\n\nfunc helper() {}\n\nfunc (m *Mux) Handle() {}\n",
            language="go",
        )
        sub = index.file(
            repo, "middleware/log.go", "package middleware\n\nfunc Logger() {}\n", language="go"
        )
        hello = index.file(
            repo,
            "_examples/hello/main.go",
            "package main\n\nfunc main() {\n\tmux.NewMux()\n\tmux.Walk()\n}\n",
            language="go",
        )
        exported = {"exported": True, "dead_code_root_kinds": ["go.exported_symbol"]}
        mux_type = index.entity(mux, "Struct", "Mux", 3, 3, metadata=exported)
        new_mux = index.entity(mux, "Function", "NewMux", 5, 5, metadata=exported)
        index.entity(mux, "Function", "Chain", 7, 7, metadata=exported)
        walk = index.entity(mux, "Function", "Walk", 9, 9, metadata=exported)
        helper = index.entity(mux, "Function", "helper", 11, 11)
        handle = index.entity(
            mux, "Function", "Handle", 13, 13, metadata=exported, class_context="Mux"
        )
        logger = index.entity(sub, "Function", "Logger", 3, 3, metadata=exported)
        main = index.entity(
            hello, "Function", "main", 3, 6, metadata={"dead_code_root_kinds": ["go.entrypoint"]}
        )
        index.edge(repo, "CALLS", main, new_mux, 4)  # another file uses NewMux and Walk
        index.edge(repo, "CALLS", main, walk, 5)
        index.edge(repo, "CALLS", logger, walk, 3)  # and a second file uses Walk
        index.edge(repo, "CALLS", logger, handle, 3)  # a use of Mux's method uses Mux
        index.edge(repo, "CALLS", helper, mux_type, 11)  # its own file: not a use
        index.writer.commit()
        data = self.client.get("/repositories/payments/story").json()
        section = data["story_sections"][1]
        self.assertEqual(
            [(e["name"], e.get("exported_by")) for e in section["items"][:5]],
            [
                ("Walk", "."),
                ("Mux", "."),  # as used as NewMux, but a type
                ("NewMux", "."),
                ("Chain", "."),
                ("create_charge", None),
            ],
        )
        names = [e["name"] for e in section["items"]]
        self.assertLess(names.index("Logger"), names.index("main"))  # examples last
        self.assertNotIn("helper", names)
        self.assertIn("what the packages hand on (the root package: 4)", section["summary"])
