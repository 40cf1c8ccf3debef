"""Import cycles say which of their imports run as the modules load, and which later."""

from __future__ import annotations

from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries.result import summarize_envelope
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader
from tests.answer_rows import derived
from tests.test_api_code_common import call, scratch_dir

from .test_index_indexer import git

SOURCES = {
    "app/__init__.py": "",
    "app/models.py": "from app.views import render\n\n\ndef model():\n    return render\n",
    "app/views.py": "from app.models import model\n\n\ndef render():\n    return model\n",
    "app/core.py": (
        "import typing as t\nfrom app.cli import run\n\n\ndef command():\n    return run\n"
    ),
    "app/cli.py": ("def run():\n    from app.core import command\n\n    return command()\n"),
    "app/types.py": (
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from app.util import Helper\n"
    ),
    "app/util.py": "from app.types import helper_type\n\n\ndef helper():\n    return 1\n",
    "app/relative.py": "from .util import helper\n",
    "app/main.py": (
        "from app.tool import tool\n\n"
        'if __name__ == "__main__":\n    from app.entry import main\n\n    main()\n'
    ),
    "app/tool.py": "def tool():\n    return 1\n",
    "app/entry.py": "from app.main import tool\n\n\ndef main():\n    return tool()\n",
}


class ImportTimingTests(SynchronousTestCase):
    def setUp(self) -> None:
        repo = Path(scratch_dir(self)) / "repo"
        for path, text in SOURCES.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", ".")
        db = repo.parent / "index.sqlite"
        report = index_repositories(db, [repo], workers=1)
        self.assertTrue(report.ok)
        self.repo_id = report.repositories[0].repo_id
        self.conn = open_reader(db)
        self.addCleanup(self.conn.close)

    def cycles(self) -> dict:
        body = {"repo_id": self.repo_id, "query_type": "file_import_cycles"}
        return call(self.conn, "/code/imports/investigate", body).data

    def test_cycles_that_close_at_load_come_first_and_each_import_says_when_it_runs(self):
        data = self.cycles()
        found = [
            (
                cycle["runs_at_load"],
                [(e["source_file"], e["line_number"], e["runs"]) for e in cycle["cycle_edges"]],
            )
            for cycle in data["cycles"]
        ]
        self.assertEqual(
            found,
            [
                (True, [("app/models.py", 1, "module_load"), ("app/views.py", 1, "module_load")]),
                (False, [("app/cli.py", 2, "function_call"), ("app/core.py", 2, "module_load")]),
                (False, [("app/entry.py", 1, "module_load"), ("app/main.py", 4, "script_only")]),
                (
                    False,
                    [("app/types.py", 4, "type_checking_only"), ("app/util.py", 1, "module_load")],
                ),
            ],
        )
        by_file = {c["cycle_edges"][0]["source_file"]: c for c in data["cycles"]}
        self.assertEqual(by_file["app/cli.py"]["cycle_edges"][0]["runs_in_function"], "run")

    def test_the_text_gives_each_cycle_as_a_path_with_its_lines(self):
        text = summarize_envelope("investigate_import_dependencies", derived(self.cycles()))
        lines = text.splitlines()
        self.assertIn("1 closes while the modules load", lines[0])
        self.assertEqual(lines[1], "app/models.py:1 -> app/views.py:1 -> app/models.py")
        self.assertIn("app/cli.py:2 (in run()) -> app/core.py:2 -> app/cli.py", lines)
        self.assertIn(
            "app/entry.py:1 -> app/main.py:4 (only when run as a script) -> app/entry.py", lines
        )

    def test_the_headline_counts_every_cycle_and_those_at_load_on_any_page(self):
        body = {"repo_id": self.repo_id, "query_type": "file_import_cycles", "limit": 1}
        data = call(self.conn, "/code/imports/investigate", {**body, "offset": 1}).data
        self.assertEqual((data["count"], data["total"], data["cycles_at_load"]), (1, 4, 1))
        headline = summarize_envelope("investigate_import_dependencies", derived(data))
        self.assertIn("1 of 4 import cycles; 1 closes while the modules load", headline)

    def test_a_module_imported_relatively_and_absolutely_has_all_its_importers(self):
        for target in ("app.util", "app/util.py"):
            body = {
                "target": target,
                "direction": "incoming",
                "relationship_type": "IMPORTS",
                "repo_id": self.repo_id,
            }
            data = call(self.conn, "/code/relationships/story", body).data
            importers = {r["source_name"] for r in data["relationships"]}
            self.assertEqual(importers, {"app/relative.py", "app/types.py"}, target)
