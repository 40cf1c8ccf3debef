"""
A regular-expression search is bounded: a bad pattern is a sentence, a pattern that
backtracks for ever is stopped at the request's budget, and neither holds the reader.
"""

from __future__ import annotations

import pytest

from eshu_mcp.query.local.api.content.patterns import RegexSearch
from eshu_mcp.query.local.api.platform.framework import ApiError


def test_a_pattern_matches_with_or_without_case():
    assert RegexSearch(r"def \w+_charge", case_sensitive=False).search("DEF create_charge(")
    assert not RegexSearch(r"def \w+_charge", case_sensitive=True).search("DEF create_charge(")


def test_a_pattern_that_does_not_compile_is_a_400_sentence():
    with pytest.raises(ApiError) as raised:
        RegexSearch("(unclosed", case_sensitive=False)
    assert raised.value.status == 400
    assert str(raised.value.detail).startswith("pattern is not a valid regular expression")


def test_a_search_past_the_budget_is_refused_not_run():
    now = [0.0]
    search = RegexSearch("x", case_sensitive=True, budget=1.0, clock=lambda: now[0])
    assert search.search("x")
    now[0] = 2.0
    with pytest.raises(ApiError) as raised:
        search.search("x")
    assert "took more than 1 s" in raised.value.detail


def test_catastrophic_backtracking_stops_at_the_budget():
    search = RegexSearch(r"(x+x+)+y", case_sensitive=True, budget=0.05)
    with pytest.raises(ApiError) as raised:
        search.search("x" * 2000)
    assert raised.value.status == 400
