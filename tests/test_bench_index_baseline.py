"""scripts/bench_index_baseline.py: the interval it states for the median CPU ratio."""

import importlib
import sys
from math import comb
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def bench():
    sys.path.insert(0, str(SCRIPTS))
    try:
        return importlib.import_module("bench_index_baseline")
    finally:
        sys.path.remove(str(SCRIPTS))


class MedianIntervalTests(SynchronousTestCase):
    def test_too_few_rounds_give_no_interval(self) -> None:
        self.assertIsNone(bench().median_interval([1.2, 1.1, 1.3, 1.0, 1.4]))

    def test_six_rounds_span_their_extremes(self) -> None:
        self.assertEqual(bench().median_interval([1.3, 1.0, 1.2, 1.5, 1.1, 1.4]), [1.0, 1.5])

    def test_the_interval_covers_the_median_at_least_as_often_as_stated(self) -> None:
        """Over 62 rounds: the 23rd and 40th smallest, which miss the median with
        probability 2 P(Bin(62, 1/2) <= 22) < 0.05, while the 24th and 39th would not."""
        values = [1 + index / 100 for index in range(62)]
        self.assertEqual(bench().median_interval(values), [1.22, 1.39])
        miss = 2 * sum(comb(62, k) for k in range(23)) / 2**62
        self.assertLess(miss, 0.05)
        self.assertGreater(2 * sum(comb(62, k) for k in range(24)) / 2**62, 0.05)
