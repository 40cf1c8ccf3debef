"""Answers that match nothing name what the assistant probably meant."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.code.near import nearest_names, nearest_paths, not_found_hint
from tests.test_api_code_common import CodeIndex, call, error_of, scratch_dir


class NearMissTests(SynchronousTestCase):
    def setUp(self):
        index = CodeIndex(scratch_dir(self))
        self.repo = index.repository("cli")
        core = index.file(self.repo, "click/core.py", "class Command:\n    pass\n")
        index.entity(core, "Class", "Command", 1, 2)
        index.entity(core, "Function", "command", 3, 4)
        index.entity(core, "Function", "Context", 5, 6)
        index.file(self.repo, "click/decorators.py", "x = 1\n")
        index.file(self.repo, "docs/core.rst", "x\n")
        index.writer.commit()
        self.conn = index.reader()
        self.addCleanup(self.conn.close)

    def test_a_misspelt_name_suggests_the_closest_definitions(self):
        self.assertEqual(nearest_names(self.conn, "Comand", self.repo), ["Command", "command"])
        self.assertEqual(nearest_names(self.conn, "zzz", self.repo), [])
        data = call(self.conn, "/code/symbols/search", {"symbol": "Comand"}).data
        self.assertEqual(data["results"], [])
        self.assertEqual(data["did_you_mean"], ["Command", "command"])

    def test_a_path_missing_its_folder_or_misspelt_suggests_indexed_paths(self):
        self.assertEqual(nearest_paths(self.conn, self.repo, "core.py"), ["click/core.py"])
        self.assertEqual(nearest_paths(self.conn, self.repo, "click/cor.py"), ["click/core.py"])
        self.assertEqual(not_found_hint(["a", "b", "c"]), "; did you mean a, b or c?")
        error = error_of(
            self.conn, "/content/files/read", {"repo_id": self.repo, "relative_path": "core.py"}
        )
        self.assertEqual(error.status, 404)
        self.assertEqual(error.detail, "file not found; did you mean click/core.py?")
