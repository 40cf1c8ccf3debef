"""Tests for the kept copy of the embedding model's word list: read back, or ignored."""

from __future__ import annotations

import os
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.store import word_cache
from tests.test_index_store_parquet import SNAPPY, UNCOMPRESSED, WORDS, parquet_file


class KeptWordsTests(SynchronousTestCase):
    def setUp(self):
        self.root = Path(self.mktemp()).resolve()
        self.root.mkdir()
        self.source = self.root / "words.parquet"
        self.source.write_bytes(parquet_file(WORDS, SNAPPY))
        cache, home = str(self.root / "cache"), str(self.root)
        self.patch(os, "environ", {**os.environ, "XDG_CACHE_HOME": cache, "HOME": home})
        self.kept = self.root / "cache" / "eshu-mcp" / "embedding-words.txt"
        self.decoded = 0
        decode = word_cache.parquet_strings

        def counted(data, limit=None):
            self.decoded += 1
            return decode(data, limit)

        self.patch(word_cache, "parquet_strings", counted)

    def test_the_words_are_decoded_once_then_read_back(self):
        self.assertEqual(word_cache.model_words(self.source, 2000), WORDS[:2000])
        self.assertTrue(self.kept.is_file())
        for _ in range(2):
            self.assertEqual(word_cache.model_words(self.source, 2000), WORDS[:2000])
        self.assertEqual(self.decoded, 1)
        self.assertEqual([p.name for p in self.kept.parent.iterdir()], [self.kept.name])

    def test_a_changed_model_file_or_limit_is_decoded_again(self):
        word_cache.model_words(self.source, 2000)
        self.assertEqual(word_cache.model_words(self.source, 1500), WORDS[:1500])
        other = [word.upper() for word in WORDS]
        self.source.write_bytes(parquet_file(other, UNCOMPRESSED))
        os.utime(self.source, ns=(1, 1))  # another file, whatever the clock's resolution
        self.assertEqual(word_cache.model_words(self.source, 1500), other[:1500])
        self.assertEqual(self.decoded, 3)

    def test_a_damaged_copy_is_ignored_and_replaced(self):
        word_cache.model_words(self.source, 2000)
        sound = self.kept.read_bytes()
        last_word = sound.rindex(b"\n") + 1
        for damaged in (
            b"",
            sound[:-3],  # cut short
            sound[:last_word] + b"X" + sound[last_word + 1 :],  # a changed word
            sound[:last_word] + b"\xff" + sound[last_word + 1 :],  # not UTF-8
            sound.replace(b"\n2000\n", b"\n1999\n", 1),  # the wrong count
            sound.replace(word_cache.FORMAT, b"eshu-mcp embedding words 0", 1),
            b"\n".join(sound.split(b"\n")[:3]),  # no words at all
        ):
            self.kept.write_bytes(damaged)
            self.assertEqual(word_cache.model_words(self.source, 2000), WORDS[:2000])
            self.assertEqual(self.kept.read_bytes(), sound)
        self.assertEqual(self.decoded, 8)

    def test_a_cache_folder_that_cannot_be_used_changes_no_word(self):
        (self.root / "cache").write_bytes(b"a file where the folder should be")
        for _ in range(2):
            self.assertEqual(word_cache.model_words(self.source, 2000), WORDS[:2000])
        self.assertEqual(self.decoded, 2)

    def test_words_holding_a_line_break_are_not_kept(self):
        words = ["one\ntwo", "three", "four\r\nfive"]
        self.source.write_bytes(parquet_file(words, SNAPPY, dictionary_words=1))
        self.assertEqual(word_cache.model_words(self.source, 10), words)
        self.assertFalse(self.kept.exists())

    def test_a_missing_model_file_is_an_error_not_a_cached_answer(self):
        word_cache.model_words(self.source, 2000)
        self.source.unlink()
        with self.assertRaises(OSError):
            word_cache.model_words(self.source, 2000)


class CachePathTests(SynchronousTestCase):
    def test_the_xdg_cache_folder_is_honoured_when_absolute(self):
        self.patch(os, "environ", {"XDG_CACHE_HOME": "/somewhere/cache", "HOME": "/home/u"})
        self.assertEqual(
            word_cache.cache_path(), Path("/somewhere/cache/eshu-mcp/embedding-words.txt")
        )

    def test_a_relative_or_missing_xdg_cache_folder_means_the_home_cache(self):
        for environment in ({"XDG_CACHE_HOME": "relative/cache"}, {}):
            self.patch(os, "environ", {**environment, "HOME": "/home/u"})
            self.assertEqual(
                word_cache.cache_path(), Path("/home/u/.cache/eshu-mcp/embedding-words.txt")
            )
