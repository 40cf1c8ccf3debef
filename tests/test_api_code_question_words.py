"""Tests for question_words: a plain-words question as search words and concepts."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.code.question_words import fts_query, query_words, stem


class QueryWordsTests(SynchronousTestCase):
    def test_identifiers_split_and_stop_words_drop(self):
        words = query_words("where is addTimeout used for the HTTPServer")
        self.assertEqual(words.asked, ["add", "timeout", "http", "server"])
        self.assertIn("addtimeout", words.extra)  # adjacent words joined
        self.assertFalse(words.wants_side)

    def test_a_known_phrase_stands_for_the_words_code_uses(self):
        words = query_words("give up on a result that takes too long")
        self.assertNotIn("long", words.asked)
        self.assertIn("timeout", words.asked)
        self.assertIn(frozenset(("cancel", "timeout", "abort")), words.concepts)

    def test_synonyms_and_compound_parts_join_their_word_s_concept(self):
        words = query_words("make a flag mandatory for the subcommand")
        mandatory = next(c for c in words.concepts if "mandatory" in c)
        self.assertIn("required", mandatory)
        subcommand = next(c for c in words.concepts if "subcommand" in c)
        self.assertIn("command", subcommand)
        self.assertNotIn("required", words.asked)

    def test_naming_tests_or_examples_asks_for_side_files(self):
        self.assertTrue(query_words("tests of the parser").wants_side)
        self.assertTrue(query_words("an example server").wants_side)

    def test_coverage_counts_concepts_weighted_by_rarity(self):
        words = query_words("parse date header")
        self.assertEqual(words.coverage(["parse", "date"]), 2 / 3)
        words.weights = [1.0, 3.0, 1.0]  # "date" is the rare one
        self.assertEqual(words.coverage(["date"]), 3 / 5)
        self.assertEqual(words.coverage([]), 0.0)

    def test_the_fts_expression_quotes_every_word_and_widens_long_ones(self):
        words = query_words('date "OR" NEAR(x) to')
        expression = fts_query(words)
        self.assertIn('"date"*', expression)
        self.assertIn('"near"*', expression)
        self.assertNotIn("NEAR(", expression)
        self.assertEqual(fts_query(query_words("the of and")), "")

    def test_stems_match_the_forms_of_a_word(self):
        self.assertEqual(stem("wrapping"), stem("wrap"))
        self.assertEqual(stem("connections"), stem("connection"))
        self.assertEqual(stem("café"), "cafe")
