"""The MCP response budget: both wire copies counted, over-budget answers replaced (spec §9)."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.budget import (
    DEFAULT_RESPONSE_BUDGET,
    OVER_BUDGET_GUIDANCE,
    estimated_tokens,
    exceeds_budget,
    measure,
    measure_serialized,
    over_budget_envelope,
)
from eshu_mcp.encoding import dumps


def string_of_size(size: int) -> str:
    """A string payload whose measured size is exactly ``size`` bytes (size >= 13)."""
    # "y" * n measures 2n + 8; a trailing newline ("\n" then "\\n") adds 5.
    if size % 2 == 0:
        return "y" * ((size - 8) // 2)
    return "y" * ((size - 13) // 2) + "\n"


class MeasureTests(SynchronousTestCase):
    def test_default_budget_is_256_kib(self):
        self.assertEqual(DEFAULT_RESPONSE_BUDGET, 262144)

    def test_size_counts_compact_json_and_its_quoted_copy(self):
        payload = {"a": "b"}
        compact = '{"a":"b"}'
        quoted = '"{\\"a\\":\\"b\\"}"'
        self.assertEqual(measure(payload), len(compact) + len(quoted))

    def test_html_escapes_are_escaped_again_in_the_quoted_copy(self):
        # J is "\u003c" (8 bytes); Q is "\"\\u003c\"" (13 bytes).
        self.assertEqual(measure("<"), 8 + 13)

    def test_size_is_counted_in_utf8_bytes(self):
        # J is "é" (4 bytes); Q is "\"é\"" (8 bytes).
        self.assertEqual(measure("é"), 4 + 8)

    def test_measure_serialized_agrees_with_measure(self):
        payload = {"data": ["<x>", 1.5, None, "\u2028"], "truth": None, "error": None}
        self.assertEqual(measure_serialized(dumps(payload)), measure(payload))

    def test_unserializable_payload_measures_zero(self):
        self.assertEqual(measure(float("nan")), 0)
        self.assertEqual(measure({"x": object()}), 0)

    def test_helper_builds_payloads_of_exact_size(self):
        for size in (13, 14, 1000, 1001, DEFAULT_RESPONSE_BUDGET, DEFAULT_RESPONSE_BUDGET + 1):
            self.assertEqual(measure(string_of_size(size)), size)


class ThresholdTests(SynchronousTestCase):
    def test_exactly_the_budget_passes(self):
        size = measure(string_of_size(DEFAULT_RESPONSE_BUDGET))
        self.assertFalse(exceeds_budget(size, DEFAULT_RESPONSE_BUDGET))

    def test_one_byte_over_the_budget_is_replaced(self):
        size = measure(string_of_size(DEFAULT_RESPONSE_BUDGET + 1))
        self.assertTrue(exceeds_budget(size, DEFAULT_RESPONSE_BUDGET))

    def test_zero_or_negative_budget_disables_the_check(self):
        self.assertFalse(exceeds_budget(10**9, 0))
        self.assertFalse(exceeds_budget(10**9, -1))

    def test_estimated_tokens_round_up(self):
        self.assertEqual(estimated_tokens(600098), 150025)
        self.assertEqual(estimated_tokens(4), 1)
        self.assertEqual(estimated_tokens(5), 2)
        self.assertEqual(estimated_tokens(0), 0)
        self.assertEqual(estimated_tokens(-3), 0)


class ReplacementTests(SynchronousTestCase):
    def test_replacement_envelope_is_exact(self):
        self.assertEqual(
            dumps(over_budget_envelope("big", 600098, 262144)),
            '{"data":null,"truth":null,"error":{"code":"mcp_response_over_budget",'
            '"message":"MCP tool \\"big\\" response of 600098 bytes exceeds the 262144 byte '
            'response budget","capability":"mcp.dispatch","details":{"budget_bytes":262144,'
            '"estimated_tokens":150025,"guidance":"' + OVER_BUDGET_GUIDANCE + '",'
            '"response_bytes":600098,"tool":"big"}}}',
        )

    def test_guidance_is_the_fixed_wire_string(self):
        self.assertEqual(
            OVER_BUDGET_GUIDANCE,
            "response exceeded the MCP response budget; lower limit, add repo_id/scope filters,"
            " request a single relationship_type or direction, set a smaller token_budget where"
            " supported, then drill in via the returned handles instead of fetching the whole"
            " result at once",
        )

    def test_details_have_exactly_the_five_keys(self):
        details = over_budget_envelope("find_code", 300000, 262144)["error"]["details"]
        self.assertEqual(
            list(details),
            ["budget_bytes", "estimated_tokens", "guidance", "response_bytes", "tool"],
        )

    def test_tool_name_is_go_quoted_in_the_message(self):
        message = over_budget_envelope('we"ird\n', 10, 5)["error"]["message"]
        self.assertEqual(
            message,
            'MCP tool "we\\"ird\\n" response of 10 bytes exceeds the 5 byte response budget',
        )

    def test_replacement_itself_measures_at_most_4_kib(self):
        for tool in ("find_code", "analyze_code_relationships", "t" * 200):
            envelope = over_budget_envelope(tool, 10**12, DEFAULT_RESPONSE_BUDGET)
            self.assertLessEqual(measure(envelope), 4096)


class QuotedLengthTests(SynchronousTestCase):
    """The quoted copy is counted without writing it, and counts what writing it gives."""

    PAYLOADS = [
        {"a": "b"},
        {"path": 'C:\\dir\\"quoted"', "n": [1, 2.5, -0.0, 10**20, None, True]},
        {"text": "line\nbreak\ttab\x01control\x7fdel"},
        {"html": "<a href='x'>&amp;</a>"},
        {"unicode": "h\u00e9llo \u4e16\u754c \U0001f600", "sep": "a\u2028b\u2029c"},
        {"surrogate": "lone \ud800 half"},
        'just a string with \\ and "',
        "",
        [],
    ]

    def test_quoted_length_matches_the_written_copy(self):
        from eshu_mcp.dispatch.budget import quoted_length

        for payload in self.PAYLOADS:
            serialized = dumps(payload)
            for text in (serialized, dumps(serialized), str(payload)):
                written = len(dumps(text).encode("utf-8", "surrogatepass"))
                self.assertEqual(quoted_length(text), written, text)
