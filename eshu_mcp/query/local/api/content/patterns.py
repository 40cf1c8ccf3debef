"""
Regular-expression text search, bounded: a client's pattern never holds a reader thread
past its budget, nor the interpreter lock while it runs.

Python's ``re`` cannot be interrupted, so a pattern that backtracks catastrophically
(``(x+x+)+y``) would hold a reader thread, and the GIL, for as long as it likes. The
``regex`` module takes a timeout and releases the GIL while it matches
(``concurrent=True``); each search gets what is left of the request's budget, and a
search past it answers 400 with a sentence saying so.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import regex

from eshu_mcp.query.local.api.platform.framework import ApiError

#: Seconds one request's regular-expression searches may take in all.
REGEX_BUDGET_SECONDS = 5.0


class RegexSearch:
    """A compiled client pattern with the time it has left."""

    def __init__(
        self,
        pattern: str,
        *,
        case_sensitive: bool,
        budget: float = REGEX_BUDGET_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        try:
            self._compiled = regex.compile(pattern, 0 if case_sensitive else regex.IGNORECASE)
        except (regex.error, OverflowError, RecursionError) as error:
            raise ApiError(400, f"pattern is not a valid regular expression: {error}") from None
        self._budget = budget
        self._clock = clock
        self._deadline = clock() + budget

    def search(self, text: str) -> bool:
        """Whether ``text`` holds a match; 400 once the request's budget is spent."""
        remaining = self._deadline - self._clock()
        if remaining <= 0:
            raise self._too_slow()
        try:
            found = self._compiled.search(text, timeout=remaining, concurrent=True)
        except TimeoutError:
            raise self._too_slow() from None
        return found is not None

    def _too_slow(self) -> ApiError:
        return ApiError(
            400,
            f"the regular expression took more than {self._budget:g} s over the files in"
            " scope; simplify it (nested repetition backtracks) or narrow repo_ids",
        )
