"""Tests for /code/topics/investigate: definitions ranked by what they do, and why."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from tests.test_api_code_common import CodeIndex, call, error_of, scratch_dir

ROUTE = "/code/topics/investigate"
DEFER = """\
class Deferred:
    def addTimeout(self, timeout, clock):
        '''Time out this Deferred by cancelling it after timeout seconds.'''
        return self

    def addCallback(self, callback):
        return self


def succeed(result):
    return Deferred()
"""
WRAP = """\
# Where long lines get folded for the terminal.
def soft_wrap(text, width):
    return text


def render(text):
    return soft_wrap(text, 80)
"""
TEST_DEFER = """\
def test_addTimeout_cancels():
    pass
"""
CHANGELOG = "# Changelog\n\n## 1.2\n\nTimeout handling in Deferred.addTimeout.\n"


def topics_index(case: SynchronousTestCase):
    index = CodeIndex(scratch_dir(case))
    repo = index.repository("lib")
    defer = index.file(repo, "lib/defer.py", DEFER)
    index.entity(defer, "Class", "Deferred", 1, 8)
    index.entity(
        defer,
        "Function",
        "addTimeout",
        2,
        4,
        class_context="Deferred",
        metadata={"docstring": "Time out this Deferred by cancelling it after timeout seconds."},
    )
    index.entity(defer, "Function", "addCallback", 6, 7, class_context="Deferred")
    index.entity(defer, "Function", "succeed", 10, 11)
    wrap = index.file(repo, "lib/text.py", WRAP)
    index.entity(wrap, "Function", "soft_wrap", 2, 3)
    index.entity(wrap, "Function", "render", 6, 7)
    tests = index.file(repo, "lib/test/test_defer.py", TEST_DEFER, is_test=1)
    index.entity(tests, "Function", "test_addTimeout_cancels", 1, 2)
    index.file(repo, "CHANGELOG.md", CHANGELOG, language=None)
    index.writer.commit()
    return index, repo


class TopicInvestigationTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = topics_index(self)
        self.conn = self.index.reader()

    def topic(self, topic, **extra):
        return call(self.conn, ROUTE, {"topic": topic, **extra}).data

    def test_the_definition_that_does_it_comes_first_with_its_own_lines(self):
        data = self.topic("give up on an asynchronous result that takes too long")
        top = data["evidence_groups"][0]
        self.assertEqual(top["source_kind"], "entity")
        self.assertEqual(top["qualified_name"], "Deferred.addTimeout")
        self.assertEqual((top["start_line"], top["end_line"]), (2, 4))
        self.assertEqual(top["source_handle"]["end_line"], 4)
        self.assertIn("timeout", top["matched_fields"]["name"])
        self.assertIn("name: ", top["why"])
        self.assertEqual(top["document_kind"], "definition")
        self.assertIn("timeout", data["searched_terms"])
        self.assertEqual(data["coverage"]["query_shape"], "content_topic_investigation")
        self.assertEqual(data["answer_metadata"]["schema_version"], "answer_metadata.v1")
        self.assertEqual(data["call_graph_handles"][0]["name"], "addTimeout")

    def test_tests_and_changelogs_come_after_code_unless_asked_for(self):
        rows = self.topic("add timeout")["evidence_groups"]
        paths = [row["relative_path"] for row in rows]
        self.assertEqual(paths[0], "lib/defer.py")
        self.assertLess(paths.index("lib/defer.py"), paths.index("lib/test/test_defer.py"))
        self.assertTrue(rows[paths.index("lib/test/test_defer.py")]["side_file"])
        asked = self.topic("tests of add timeout")["evidence_groups"]
        self.assertEqual(asked[0]["entity_name"], "test_addTimeout_cancels")

    def test_snake_case_names_are_found_by_their_words(self):
        data = self.topic("where is soft wrapping done")
        self.assertEqual(data["evidence_groups"][0]["entity_name"], "soft_wrap")
        names = [g.get("entity_name") for g in data["matched_symbols"]]
        self.assertNotIn("Deferred", names)  # a class holding nothing asked is no hit

    def test_a_file_whose_text_alone_holds_the_words_is_a_file_row(self):
        data = self.topic("terminal folded lines")
        files = {g["relative_path"]: g for g in data["matched_files"]}
        self.assertIn("text", files["lib/text.py"]["matched_fields"])
        self.assertEqual(files["lib/text.py"]["source_handle"]["start_line"], 1)

    def test_language_filter_paging_and_required_topic(self):
        self.assertEqual(self.topic("add timeout", language="go")["evidence_groups"], [])
        data = self.topic("add timeout", limit=1)
        self.assertTrue(data["truncated"])
        self.assertEqual(data["next_offset"], 1)
        self.assertEqual(len(data["evidence_groups"]), 1)
        second = self.topic("add timeout", limit=1, offset=1)["evidence_groups"][0]
        self.assertEqual(second["rank"], 2)
        self.assertEqual(error_of(self.conn, ROUTE, {"intent": "x"}).detail, "topic is required")
        self.assertEqual(self.topic("the of and")["evidence_groups"], [])
