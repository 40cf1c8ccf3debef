"""
Tests for definitions an edit only moved (eshu_mcp.query.local.index.store.moved): lines
inserted above functions and classes other files call leave an index identical, table by
table, to a full build of the same tree, while the build re-resolves only the edited file;
in a process that keeps graph inputs between builds too.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.resolve import input_cache

LIBRARY = """\
import functools


def helper(value):
    return value + 1


def helper(value):
    return value + 2


def decorate(func):
    @functools.wraps(func)
    def inner(*args):
        return func(*args)

    return inner


class Engine:
    speed: int = 1

    def start(self):
        return self.spin()

    def spin(self):
        return helper(self.speed)


@decorate
def launch(engine: Engine) -> Engine:
    engine.start()
    return engine
"""
USER = """\
from pkg.library import Engine, decorate, helper, launch


class Racer(Engine):
    def spin(self):
        return helper(2)


def drive_{n}():
    racer = Racer()
    launched = launch(racer)
    callback = decorate
    return launched.start(), helper(1), callback
"""

VARYING = {
    "created_at",
    "last_indexed_at",
    "indexed_at",
    "generation_id",
    "active_generation_id",
    "gen_seq",
    "mtime_ns",
}
"""Columns that differ between two builds of the same tree (times, generation numbers)."""
HISTORY = {"generations", "fact_versions", "meta"}
"""Tables of the index's history (an incremental build has two generations, a full one)."""
NODE_COLUMNS = {
    "entity_rows": ("rid", "parent"),
    "call_rows": ("caller",),
    "reference_rows": ("source",),
    "edge_rows": ("src", "dst"),
    "search_docs": ("rid",),
}
"""Columns holding node numbers (compared by the node ids they stand for)."""
ROW_NUMBERS = {
    "nodes": "nid",
    "call_rows": "call_id",
    "imports": "import_id",
    "search_docs": "doc_id",
    "edge_rows": "edge_id",
}
"""Surrogate row numbers a build hands out in its own order (left out)."""

FILE_COLUMNS = {"file_id", "evidence_file_id", "resolved_file_id"}
"""Columns holding file numbers (compared by the paths they stand for)."""


def node_file(node_id: str, path: dict[int, str]) -> str:
    """A file node's id with its path for its number."""
    return "file:" + path[int(node_id[5:])]


def contents(db: Path) -> dict[str, list]:
    """Every table's rows, sorted, node numbers as node ids, row numbers left out."""
    conn = sqlite3.connect(db)
    try:
        path = dict(conn.execute("SELECT file_id, relative_path FROM files"))
        repo = dict(conn.execute("SELECT repo_key, repo_id FROM repositories"))
        node = {
            nid: node_file(node_id, path) if node_id.startswith("file:") else node_id
            for nid, node_id in conn.execute("SELECT nid, node_id FROM nodes")
        }
        calls = {
            row[0]: row[1:]
            for row in conn.execute(
                "SELECT c.call_id, f.relative_path, c.callee_name, c.line_number, c.full_name"
                " FROM call_rows c JOIN files f USING (file_id)"
            )
        }
        documents = {  # a search document by what it is, not its number
            doc_id: (path[file_id], node.get(rid), kind)
            for doc_id, file_id, rid, kind in conn.execute(
                "SELECT doc_id, file_id, rid, kind FROM search_docs"
            )
        }
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE"
                " 'CREATE VIRTUAL%' AND name NOT LIKE '%_fts_%' AND name NOT LIKE 'sqlite_%'"
            )
            if name not in HISTORY
        ]
        result = {}
        for table in tables:
            columns = [
                name
                for (name,) in conn.execute(f"SELECT name FROM pragma_table_info('{table}')")
                if name not in VARYING and name != ROW_NUMBERS.get(table)
            ]
            nodal = NODE_COLUMNS.get(table, ())
            rows = []
            for row in conn.execute(f"SELECT {', '.join(columns)} FROM {table}"):
                values = []
                for column, value in zip(columns, row, strict=True):
                    if column in nodal:
                        value = node.get(value, value)
                    elif column in FILE_COLUMNS:
                        value = path.get(value, value)
                    elif column == "node_id" and value.startswith("file:"):
                        value = node_file(value, path)
                    elif (table, column) in (("edge_rows", "repo"), ("repositories", "repo_key")):
                        value = repo[value]
                    elif table == "unresolved_calls" and column == "call_id":
                        value = calls[value]
                    values.append(value)
                rows.append(tuple(values))
            result[table] = sorted(rows, key=repr)
        for index in ("files_fts", "search_fts"):
            conn.execute(
                f"CREATE VIRTUAL TABLE temp.{index}_words USING fts5vocab('main', '{index}',"
                " 'instance')"
            )
            words = conn.execute(f"SELECT term, doc, col, offset FROM temp.{index}_words")
            document = path if index == "files_fts" else documents
            result[index] = sorted(
                ((term, document[doc], col, offset) for term, doc, col, offset in words), key=repr
            )
        return result
    finally:
        conn.close()


class MovedDefinitionsTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-moved-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = self.tmp / "repo"
        (self.repo / "pkg").mkdir(parents=True)
        (self.repo / "pkg" / "__init__.py").write_text("")
        (self.repo / "pkg" / "library.py").write_text(LIBRARY)
        for n in range(8):
            (self.repo / "pkg" / f"user_{n}.py").write_text(USER.format(n=n))
        self.db = self.tmp / "incremental.sqlite"
        input_cache.keep_between_builds(False)
        self.addCleanup(input_cache.keep_between_builds, False)

    def edit_and_compare(self, *edits, keep: bool = False):
        """Build, then edit the library and build again for each edit; the index equals a
        full build's. Returns the last build's report."""
        if keep:
            input_cache.keep_between_builds()
        first = index_repositories(self.db, [self.repo], workers=1).repositories[0]
        if keep:
            input_cache.warm(self.db, [first.repo_id])
        library = self.repo / "pkg" / "library.py"
        for edit in edits:
            library.write_text(edit(library.read_text()))
            second = index_repositories(self.db, [self.repo], workers=1).repositories[0]
            self.assertEqual(second.modified, ("pkg/library.py",))
        full_db = self.tmp / "full.sqlite"
        index_repositories(full_db, [self.repo], workers=1)
        incremental, full = contents(self.db), contents(full_db)
        self.assertEqual(sorted(incremental), sorted(full))
        for table in sorted(full):
            self.assertEqual(incremental[table], full[table], table)
        return second

    def test_lines_inserted_at_the_top_rebuild_only_the_edited_file(self) -> None:
        second = self.edit_and_compare(lambda text: "# The library.\n\nimport os\n" + text)
        self.assertEqual(second.edges["rebuilt_files"], 1)

    def test_lines_inserted_in_the_middle_with_inputs_kept(self) -> None:
        second = self.edit_and_compare(
            lambda text: text.replace("class Engine:", "# engines\n\n\nclass Engine:"), keep=True
        )
        self.assertEqual(second.edges["rebuilt_files"], 1)

    def test_inserted_at_the_top_with_inputs_kept(self) -> None:
        second = self.edit_and_compare(lambda text: "\n\n\n" + text, keep=True)
        self.assertEqual(second.edges["rebuilt_files"], 1)

    def test_a_moved_definition_with_a_new_signature_is_resolved_again(self) -> None:
        second = self.edit_and_compare(
            lambda text: "\n" + text.replace("-> Engine:", "-> int:"), keep=True
        )
        self.assertGreater(second.edges["rebuilt_files"], 1)

    def test_a_new_function_inserted_at_the_top_rebuilds_only_the_edited_file(self) -> None:
        second = self.edit_and_compare(lambda text: "def early():\n    return 0\n\n\n" + text)
        self.assertEqual(second.edges["rebuilt_files"], 1)

    def test_a_new_function_inserted_in_the_middle_with_inputs_kept(self) -> None:
        second = self.edit_and_compare(
            lambda text: text.replace(
                "@decorate\n", "def tune(engine):\n    return engine.speed\n\n\n@decorate\n"
            ),
            keep=True,
        )
        self.assertEqual(second.edges["rebuilt_files"], 1)

    def test_a_new_method_above_another_with_inputs_kept(self) -> None:
        second = self.edit_and_compare(
            lambda text: text.replace(
                "    def spin(self):\n        return helper",
                "    def brake(self):\n        return 0\n\n"
                "    def spin(self):\n        return helper",
            ),
            keep=True,
        )
        self.assertEqual(second.edges["rebuilt_files"], 1)

    def test_a_removed_function_is_resolved_again_where_it_is_called(self) -> None:
        # launch goes (its callers resolve again), the rest move: eight users and the library
        second = self.edit_and_compare(
            lambda text: "# moved\n" + text[: text.index("@decorate\ndef launch")]
        )
        self.assertEqual(second.edges["rebuilt_files"], 9)

    def test_a_function_inserted_and_another_removed_between_moves_with_inputs_kept(
        self,
    ) -> None:
        second = self.edit_and_compare(
            lambda text: "def early():\n    return helper(0)\n\n\n" + text,
            lambda text: text.replace("def early():\n    return helper(0)\n\n\n", "\n\n"),
            lambda text: text.replace(
                "class Engine:", "def tune(engine):\n    return engine.spin()\n\n\nclass Engine:"
            ),
            lambda text: "# top\n" + text + "\n\ndef late():\n    return tune(Engine())\n",
            keep=True,
        )
        self.assertEqual(second.edges["rebuilt_files"], 1)

    def test_a_new_function_named_as_a_kept_method_takes_the_wide_path(self) -> None:
        # a module-level start numbered after Engine.start would differ from a full build
        second = self.edit_and_compare(lambda text: "def start():\n    return 0\n\n\n" + text)
        self.assertGreater(second.edges["rebuilt_files"], 1)

    def test_a_new_namesake_in_the_middle_with_inputs_kept_takes_the_wide_path(self) -> None:
        second = self.edit_and_compare(
            lambda text: text.replace(
                "class Engine:", "def helper(value):\n    return value\n\n\nclass Engine:"
            ),
            keep=True,
        )
        self.assertGreater(second.edges["rebuilt_files"], 1)

    def test_a_new_namesake_method_above_a_kept_one_takes_the_wide_path(self) -> None:
        # numbered after the kept spin, it would lose the tie a full build gives it (the
        # edges differ from a full build's when this edit keeps the other nodes)
        second = self.edit_and_compare(
            lambda text: text.replace(
                "    def start(self):",
                "    def spin(self):\n        return 0\n\n    def start(self):",
            )
        )
        self.assertGreater(second.edges["rebuilt_files"], 1)

    def test_a_function_resigned_in_place_while_another_is_added(self) -> None:
        # launch's new definition has its old id (same line and name): its node is renewed
        second = self.edit_and_compare(
            lambda text: (
                text.replace("def launch(engine: Engine)", "def launch(engine, again=0)")
                + "\n\ndef late():\n    return 3\n"
            ),
            keep=True,
        )
        self.assertEqual(second.edges["rebuilt_files"], 9)

    def test_a_definition_moving_onto_the_line_of_its_namesake_takes_its_place(self) -> None:
        # the two helpers are four lines apart: the first one's new id is the second's old one
        second = self.edit_and_compare(lambda text: "# one\n# two\n# three\n# four\n" + text)
        self.assertEqual(second.edges["rebuilt_files"], 1)

    def test_lines_removed_above_the_definitions(self) -> None:
        second = self.edit_and_compare(
            lambda text: text.replace("import functools\n\n\n", "import functools\n"), keep=True
        )
        self.assertEqual(second.edges["rebuilt_files"], 1)

    def test_moves_between_other_edits_with_inputs_kept(self) -> None:
        second = self.edit_and_compare(
            lambda text: "\n\n" + text,
            lambda text: text + "\n\ndef late():\n    return helper(3)\n",
            lambda text: text[2:],  # the two lines removed again
            lambda text: "# first\n" + text.replace("return value + 2", "return value * 2"),
            keep=True,
        )
        self.assertEqual(second.edges["rebuilt_files"], 1)
