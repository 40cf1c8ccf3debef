"""Tests for eshu_mcp.query.local.index.build.generation_write: parsing files in the pool."""

import shutil
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build import generation_write


class ParsePoolTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-genwrite-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def items(self, count: int) -> list[tuple[str, str, str]]:
        found = []
        for number in range(count):
            relative = f"pkg/mod_{number}.py"
            path = self.tmp / relative
            path.parent.mkdir(exist_ok=True)
            path.write_text(
                f"class Shape{number}:\n    def area(self):\n        return helper_{number}(1)\n"
            )
            found.append((relative, str(path), "repository:r_test"))
        (self.tmp / "notes.md").write_text("# Notes\n")
        found.append(("notes.md", str(self.tmp / "notes.md"), "repository:r_test"))
        return found

    def test_the_pool_prepares_the_same_rows_as_one_process(self) -> None:
        items = self.items(generation_write.IN_PROCESS_BELOW + 8)
        pooled = list(generation_write.parse_many(items, workers=2))
        alone = list(generation_write.parse_many(items, workers=1))
        self.assertEqual(len(pooled), len(items))
        self.assertEqual([p.parsed.relative_path for p in pooled], [i[0] for i in items])
        self.assertEqual(pooled, alone)
        self.assertEqual(pooled[3].entity_rows[0][1], "Shape3")

    def test_warming_parses_one_empty_file_per_parsed_language(self) -> None:
        parsed: list[str] = []
        real = generation_write.parse_file

        def recording(path, data, byte_size=None):
            parsed.append(path)
            self.assertEqual(data, b"")
            return real(path, data, byte_size)

        self.patch(generation_write, "parse_file", recording)
        generation_write.warm_parsers(
            [
                "a/one.py",
                "b/two.py",
                "web/app.JS",
                "README.md",
                "package.json",
                "Makefile",
                "bin/run",
                ".gitignore",
            ]
        )
        self.assertEqual(sorted(parsed), ["a/one.py", "web/app.JS"])
