"""Tests for definition_search: how documents are re-ranked and explained."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.code import definition_search
from eshu_mcp.query.local.api.code.definition_search import attach_rows, search
from eshu_mcp.query.local.api.code.question_words import query_words
from eshu_mcp.query.local.index.store.search import CODE_FILE, DEFINITION, DOCUMENT
from tests.test_api_code_common import CodeIndex, scratch_dir

HANDLERS = "".join(
    f"class Handler{i}:\n    def lineReceived(self, line):\n        return line\n\n\n"
    for i in range(4)
)
LINES = """\
class LineReceiver:
    def lineReceived(self, line):
        return line


def undocumented_line_splitter(data):
    return data


def documented_line_splitter(data):
    return data
"""


def ranking_index(case: SynchronousTestCase):
    index = CodeIndex(scratch_dir(case))
    repo = index.repository("proto")
    handlers = index.file(repo, "proto/handlers.py", HANDLERS)
    for i in range(4):
        index.entity(handlers, "Class", f"Handler{i}", 1 + 5 * i, 3 + 5 * i)
        index.entity(
            handlers, "Function", "lineReceived", 2 + 5 * i, 3 + 5 * i, class_context=f"Handler{i}"
        )
    lines = index.file(repo, "proto/basic.py", LINES)
    index.entity(lines, "Class", "LineReceiver", 1, 3, metadata={"docstring": "Receive lines."})
    index.entity(lines, "Function", "undocumented_line_splitter", 6, 7)
    index.entity(
        lines,
        "Function",
        "documented_line_splitter",
        10,
        11,
        metadata={"docstring": "Split data."},
    )
    index.file(repo, "proto/notes.txt", "Notes about line splitting.\n", language=None)
    index.writer.commit()
    return index.reader()


class RankingTests(SynchronousTestCase):
    def setUp(self):
        self.conn = ranking_index(self)

    def ranked(self, question, **kwargs):
        hits = search(self.conn, query_words(question), "", **kwargs)
        attach_rows(self.conn, hits)
        return hits

    def test_repeats_of_one_name_past_the_second_are_demoted(self):
        hits = self.ranked("line received")
        names = [(hit.row.get("class_context"), hit.row.get("entity_name")) for hit in hits]
        self.assertLess(names.index((None, "LineReceiver")), 3)
        repeats = [i for i, (_, name) in enumerate(names) if name == "lineReceived"]
        self.assertEqual(len(repeats), 4)
        self.assertGreater(repeats[2], names.index((None, "LineReceiver")))

    def test_a_documented_definition_ranks_above_an_undocumented_twin(self):
        names = [hit.row.get("entity_name") for hit in self.ranked("line splitter")]
        self.assertLess(
            names.index("documented_line_splitter"), names.index("undocumented_line_splitter")
        )

    def test_definitions_come_before_files_and_say_where_they_matched(self):
        hits = self.ranked("line splitting")
        kinds = [hit.kind for hit in hits]
        self.assertEqual(kinds[0], DEFINITION)
        self.assertEqual(sorted(kinds), kinds)
        first = hits[0]
        self.assertIn("line", first.matched["name"])
        self.assertTrue(first.why().startswith("name: line"))
        self.assertEqual(self.ranked("notes about splitting", kinds=(CODE_FILE,)), [])
        pages = self.ranked("notes about splitting", kinds=(DOCUMENT,))
        self.assertEqual([hit.row["relative_path"] for hit in pages], ["proto/notes.txt"])

    def test_a_language_filter_and_a_limit_apply(self):
        self.assertEqual(self.ranked("line", languages=["go"]), [])
        self.assertEqual(len(self.ranked("line", limit=2)), 2)


def two_repository_index(case: SynchronousTestCase):
    """
    ``busy`` with many short definitions named ``timeout`` (bm25's best matches) and a
    text file about retries; ``quiet`` with one long-named timeout definition and a Go
    file whose text speaks of retries.
    """
    index = CodeIndex(scratch_dir(case))
    busy = index.repository("busy")
    source = "".join(f"def timeout():\n    return {i}\n\n\n" for i in range(12))
    timeouts = index.file(busy, "t.py", source)
    for i in range(12):
        index.entity(timeouts, "Function", "timeout", 1 + 4 * i, 2 + 4 * i)
    index.file(busy, "notes.py", "# retry the slow reply later\n")
    quiet = index.repository("quiet")
    slow = "def wait_for_the_timeout_of_a_slow_remote_peer_reply():\n    return None\n"
    peers = index.file(quiet, "peers/remote/slow.py", slow)
    index.entity(peers, "Function", "wait_for_the_timeout_of_a_slow_remote_peer_reply", 1, 2)
    index.file(quiet, "retry.go", "// retry the slow reply later\npackage retry\n", "go")
    index.writer.commit()
    return index.reader(), busy, quiet


class ScopeTests(SynchronousTestCase):
    """Candidates come from the repositories and languages asked for, however many others."""

    def setUp(self):
        self.conn, self.busy, self.quiet = two_repository_index(self)
        # a word index whose first rows another repository fills
        self.patch(definition_search, "CANDIDATES", 3)
        self.patch(definition_search, "BEST_FIRST", 4)

    def paths(self, question, repo, **kwargs):
        hits = search(self.conn, query_words(question), repo, **kwargs)
        attach_rows(self.conn, hits)
        return [(hit.row["relative_path"], hit.row.get("entity_name")) for hit in hits]

    def test_a_repository_is_searched_when_another_fills_the_best_matches(self):
        everywhere = self.paths("timeout", "", kinds=(DEFINITION,))
        self.assertEqual(everywhere, [("t.py", "timeout")] * 3)
        self.assertEqual(
            self.paths("timeout", self.quiet, kinds=(DEFINITION,)),
            [("peers/remote/slow.py", "wait_for_the_timeout_of_a_slow_remote_peer_reply")],
        )

    def test_file_text_matches_keep_to_the_repository_and_language_asked(self):
        quiet = [path for path, _ in self.paths("retry slow reply", self.quiet)]
        self.assertIn("retry.go", quiet)
        self.assertNotIn("notes.py", quiet)
        busy = [path for path, _ in self.paths("retry slow reply", self.busy)]
        self.assertIn("notes.py", busy)
        self.assertNotIn("retry.go", busy)
        python = [path for path, _ in self.paths("retry", self.quiet, languages=["python"])]
        self.assertNotIn("retry.go", python)


def common_word_index(case: SynchronousTestCase):
    """Twenty definitions named ``handler`` and one ``retry_handler``."""
    index = CodeIndex(scratch_dir(case))
    repo = index.repository("words")
    source = "".join(f"def handler():\n    return {i}\n\n\n" for i in range(20))
    handlers = index.file(repo, "handlers.py", source)
    for i in range(20):
        index.entity(handlers, "Function", "handler", 1 + 4 * i, 2 + 4 * i)
    retry = index.file(repo, "retry.py", "def retry_handler():\n    return None\n")
    index.entity(retry, "Function", "retry_handler", 1, 2)
    index.writer.commit()
    return index.reader(), repo


class CommonWordTests(SynchronousTestCase):
    """Past the budget, bm25 ranks only documents holding the question's rarer terms."""

    def setUp(self):
        self.conn, self.repo = common_word_index(self)
        self.patch(definition_search, "SELECTIVE_FLOOR", 5)
        self.patch(definition_search, "SELECTIVE_SHARE", 0.0)
        self.patch(definition_search, "BEST_FIRST", 2)
        self.patch(definition_search, "CANDIDATES", 2)

    def test_the_rarer_terms_are_kept_and_the_answer_still_found(self):
        words = query_words("retry the handler")
        selective = definition_search._selective(self.conn, words, 100)
        self.assertIn('"retry"*', selective.split(" OR "))
        self.assertNotIn('"handler"*', selective.split(" OR "))
        hits = search(self.conn, words, self.repo, kinds=(DEFINITION,))
        attach_rows(self.conn, hits)
        self.assertEqual(hits[0].row["entity_name"], "retry_handler")
        self.assertEqual(hits[0].matched["name"][:2], ["retry", "handler"])

    def test_a_question_of_few_matches_ranks_every_match(self):
        self.patch(definition_search, "SELECTIVE_FLOOR", 1000)
        self.assertIsNone(definition_search._selective(self.conn, query_words("handler"), 100))
