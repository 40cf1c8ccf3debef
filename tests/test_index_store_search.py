"""Tests for the definition search index: words of names, tiers, and builds keeping it in step."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from unittest import SkipTest

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store import embedding
from eshu_mcp.query.local.index.store.search import (
    CODE,
    DEFINITION,
    SIDE,
    definition_document,
    document_rows,
    headings,
    name_words,
    path_words,
    signature_words,
    split_words,
    summary,
    text_words,
    tier_of,
)
from tests.test_api_code_common import scratch_dir

POOL = '''\
class ConnectionPool:
    """Keep connections open for reuse."""

    def getConnection(self):
        """Hand out an idle connection, opening one when none is idle."""
        return None
'''


class WordsTests(SynchronousTestCase):
    def test_identifiers_split_into_lower_case_words(self):
        self.assertEqual(split_words("addTimeout"), ["add", "timeout"])
        self.assertEqual(split_words("HTTPServer"), ["http", "server"])
        self.assertEqual(split_words("soft_wrap"), ["soft", "wrap"])
        self.assertEqual(split_words("getURLForPath2"), ["get", "url", "for", "path", "2"])
        self.assertEqual(split_words("café_menu"), ["café", "menu"])
        self.assertEqual(name_words("addTimeout"), "add timeout addtimeout")

    def test_snake_case_splits_at_underscores_and_digits_still_apart(self):
        self.assertEqual(split_words("__init__"), ["init"])
        self.assertEqual(split_words("send__email_"), ["send", "email"])
        self.assertEqual(split_words("utf8_name"), ["utf", "8", "name"])
        self.assertEqual(split_words("_"), [])
        self.assertEqual(name_words("__init__"), "init")

    def test_signatures_keep_their_words_but_keywords_and_the_name(self):
        self.assertEqual(
            signature_words("def addTimeout(self, seconds: float) -> None", "addTimeout"),
            "seconds float",
        )
        # The name's words go once each, their first time; a later mention stays.
        self.assertEqual(signature_words("def get_get(get, key) -> get", "get_get"), "get key get")
        self.assertEqual(signature_words("class Type(type)", "type"), "")
        self.assertEqual(signature_words(None, "run"), "")
        self.assertEqual(
            text_words("Return the URLPath, or _ (café)."), "return the url path or café"
        )
        self.assertEqual(name_words("run"), "run")

    def test_words_stay_the_same_when_asked_again_and_changing_them_changes_no_later_answer(
        self,
    ):
        first = split_words("addTimeout")
        first.append("changed by a caller")
        self.assertEqual(split_words("addTimeout"), ["add", "timeout"])
        self.assertEqual(name_words("addTimeout"), name_words("addTimeout"))
        self.assertEqual(name_words("addTimeout"), "add timeout addtimeout")

    def test_a_file_s_definitions_get_the_words_a_stored_definition_is_explained_by(self):
        """The parser workers make a file's documents in one loop; the words a search
        answer explains a match with are rebuilt one definition at a time: the same."""
        entities = [
            (0, "Module", "pool", None, None, "Pools of connections."),
            (1, "Class", "ConnectionPool", None, "class ConnectionPool(Base)", "Keep them."),
            (2, "Function", "getConnection", "ConnectionPool", "def getConnection(self)", None),
            (3, "Variable", "DEFAULT_SIZE", None, None, None),
            (4, "Function", "", None, None, None),
            (5, "Function", "make_pool_v2", None, "def make_pool_v2(size: int) -> Pool", "x" * 900),
        ]
        for path in ("src/db/pool.py", "tests/test_pool.py"):
            tier = tier_of(path, path.startswith("tests/"), False)
            expected = []
            for row, kind, name, context, signature, docstring in entities:
                columns = definition_document(
                    kind, name, context, signature, docstring, path_words(path), tier
                )
                if columns is not None:
                    expected.append((row, DEFINITION, tier, *columns))
            rows = document_rows(path, "python", "", tier == SIDE, False, entities)
            self.assertEqual(rows[:-1], expected)
            self.assertEqual(len(expected), 3)

    def test_paths_lose_extensions_and_noise_folders(self):
        self.assertEqual(path_words("src/twisted/internet/defer.py"), "twisted internet defer")
        self.assertEqual(path_words("Makefile"), "makefile")

    def test_tests_examples_changelogs_and_generated_files_are_side_files(self):
        self.assertEqual(tier_of("pkg/core.py", False, False), CODE)
        self.assertEqual(tier_of("pkg/test_core.py", True, False), SIDE)
        self.assertEqual(tier_of("pkg/core_pb2.py", False, True), SIDE)
        self.assertEqual(tier_of("examples/echo.py", False, False), SIDE)
        self.assertEqual(tier_of("CHANGELOG.md", False, False), SIDE)
        self.assertEqual(tier_of("docs/newsfragments/12.bugfix", False, False), SIDE)

    def test_summaries_and_headings_stay_short(self):
        long = "First paragraph says what.\n\n" + "More detail. " * 100
        kept = summary(long)
        self.assertTrue(kept.startswith("First paragraph says what.\n\nMore detail."))
        self.assertLessEqual(len(kept), 320)
        paragraphs = "A" * 200 + "\n\n" + "B" * 300
        self.assertEqual(summary(paragraphs), "A" * 200)
        self.assertEqual(summary(None), "")
        text = "Title\n=====\n\nbody\n\n## Soft wrapping\n\ntext\n"
        self.assertEqual(headings(text), "Title; Soft wrapping")


class IndexedSearchTests(SynchronousTestCase):
    """A real build writes the documents; a rebuild after edits keeps them in step."""

    def setUp(self):
        root = Path(scratch_dir(self))
        self.tree = root / "tree"
        (self.tree / "pool").mkdir(parents=True)
        (self.tree / "pool" / "pool.py").write_text(POOL)
        (self.tree / "README.md").write_text("# Pool\n\n## Reusing connections\n")
        self.db = str(root / "index.sqlite")
        self.assertTrue(index_repositories(self.db, [str(self.tree)], workers=1).ok)

    def matches(self, word: str) -> list[str]:
        conn = sqlite3.connect(self.db, isolation_level=None)
        self.addCleanup(conn.close)
        rows = conn.execute(
            "SELECT COALESCE(r.entity_name, f.relative_path) FROM search_fts"
            " JOIN search_docs d ON d.doc_id = search_fts.rowid"
            " JOIN files f ON f.file_id = d.file_id"
            " LEFT JOIN entity_rows r ON r.rid = d.rid"
            " WHERE search_fts MATCH ? ORDER BY 1",
            (f'"{word}"',),
        ).fetchall()
        return [row[0] for row in rows]

    def integrity(self) -> None:
        conn = sqlite3.connect(self.db, isolation_level=None)
        self.addCleanup(conn.close)
        conn.execute("INSERT INTO search_fts(search_fts, rank) VALUES ('integrity-check', 0)")
        documents = conn.execute("SELECT COUNT(*) FROM search_docs").fetchone()[0]
        indexed = conn.execute("SELECT COUNT(*) FROM search_fts_docsize").fetchone()[0]
        self.assertEqual(documents, indexed)

    def test_definitions_files_and_documents_are_searchable_by_their_words(self):
        self.assertEqual(self.matches("idle"), ["getConnection"])  # its docstring
        self.assertEqual(self.matches("get"), ["getConnection"])  # its name's words
        self.assertEqual(self.matches("reusing"), ["ConnectionPool", "README.md"])
        self.assertIn("pool/pool.py", self.matches("pool"))
        self.integrity()

    def test_code_definitions_store_their_vectors_and_other_documents_none(self):
        if not embedding.available():
            raise SkipTest(embedding.unavailable_reason())
        conn = sqlite3.connect(self.db, isolation_level=None)
        self.addCleanup(conn.close)
        stored = conn.execute(
            "SELECT kind, typeof(vector), length(vector) FROM search_docs ORDER BY 1, 2"
        ).fetchall()
        # the class and its method (kind 1), pool.py (2) and README.md (3)
        self.assertEqual(
            stored, [(1, "blob", 50), (1, "blob", 50), (2, "null", None), (3, "null", None)]
        )

    def test_an_edited_file_has_its_documents_replaced_and_a_deleted_one_removed(self):
        source = POOL.replace("getConnection", "borrowConnection").replace("idle", "spare")
        (self.tree / "pool" / "pool.py").write_text(source)
        self.assertTrue(index_repositories(self.db, [str(self.tree)], workers=1).ok)
        self.assertEqual(self.matches("idle"), [])
        self.assertEqual(self.matches("spare"), ["borrowConnection"])
        self.integrity()
        (self.tree / "README.md").unlink()
        self.assertTrue(index_repositories(self.db, [str(self.tree)], workers=1).ok)
        self.assertEqual(self.matches("reusing"), ["ConnectionPool"])
        self.integrity()


class NoVectorsTests(SynchronousTestCase):
    def test_documentation_and_tests_alone_build_without_the_embedding_model(self):
        # Only definitions in code get vectors: with none, the model is not even loaded.
        embedded: list[list] = []
        self.patch(embedding, "vectors", lambda documents: embedded.append(documents))
        root = Path(scratch_dir(self))
        tree = root / "tree"
        (tree / "tests").mkdir(parents=True)
        (tree / "tests" / "test_pool.py").write_text(POOL)
        (tree / "README.md").write_text("# Pool\n\n## Reusing connections\n")
        db = str(root / "index.sqlite")
        self.assertTrue(index_repositories(db, [str(tree)], workers=1).ok)
        conn = sqlite3.connect(db)
        self.addCleanup(conn.close)
        documents = conn.execute("SELECT COUNT(*), COUNT(vector) FROM search_docs").fetchone()
        self.assertEqual(documents, (4, 0))  # two files, a class and a method: no vectors
        self.assertEqual(embedded, [])
