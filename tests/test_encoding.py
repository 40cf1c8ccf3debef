"""Go-compatible JSON: the bytes Go's encoding/json would write."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.encoding import dumpb, dumps, encoded, go_float, go_map, go_quote


class EscapingTests(SynchronousTestCase):
    def test_html_characters_are_escaped_by_default(self):
        self.assertEqual(
            dumps("<a href='x'>&</a>"), "\"\\u003ca href='x'\\u003e\\u0026\\u003c/a\\u003e\""
        )

    def test_html_escaping_can_be_turned_off_for_stdio(self):
        self.assertEqual(dumps("<&>", escape_html=False), '"<&>"')

    def test_line_and_paragraph_separators_are_always_escaped(self):
        self.assertEqual(dumps("a\u2028b\u2029c"), '"a\\u2028b\\u2029c"')
        self.assertEqual(dumps("a\u2028b", escape_html=False), '"a\\u2028b"')

    def test_short_escapes_and_lowercase_hex_for_control_characters(self):
        self.assertEqual(dumps('"\\\n\r\t\b\f\x01\x1f'), '"\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f"')

    def test_non_ascii_is_raw_utf8(self):
        self.assertEqual(dumpb("é — 😀"), '"é — 😀"'.encode())

    def test_lone_surrogate_becomes_replacement_character(self):
        self.assertEqual(dumps("a\ud800b"), '"a\ufffdb"')

    def test_separators_are_compact(self):
        self.assertEqual(dumps({"a": [1, 2], "b": None}), '{"a":[1,2],"b":null}')


class FloatTests(SynchronousTestCase):
    def test_integral_float_has_no_decimal_point(self):
        self.assertEqual(dumps([1.0, -5.0, 100.0]), "[1,-5,100]")

    def test_small_magnitudes_use_unpadded_negative_exponent(self):
        self.assertEqual(go_float(1e-7), "1e-7")
        self.assertEqual(go_float(-2.5e-8), "-2.5e-8")
        self.assertEqual(go_float(0.000001), "0.000001")

    def test_large_magnitudes_use_exponent_from_1e21(self):
        self.assertEqual(go_float(1e21), "1e+21")
        self.assertEqual(go_float(1e300), "1e+300")
        self.assertEqual(go_float(1e20), "100000000000000000000")

    def test_integral_values_beyond_2_53_print_shortest_digits(self):
        self.assertEqual(go_float(2.0**60), "1152921504606847000")
        self.assertEqual(go_float(12345678901234567890.0), "12345678901234567000")

    def test_negative_zero_keeps_its_sign(self):
        self.assertEqual(go_float(-0.0), "-0")
        self.assertEqual(go_float(0.0), "0")

    def test_fractions_keep_shortest_digits(self):
        self.assertEqual(dumps({"x": 0.1, "y": 12345678.9}), '{"x":0.1,"y":12345678.9}')

    def test_floats_deep_in_a_large_value_are_written_gos_way(self):
        rows = [{"name": f"row-{i}", "note": "file-level e-mail v1.0 1e-5"} for i in range(200)]
        rows.append({"score": 1.0, "tiny": 1e-7, "list": [2.0, 0.5]})
        text = dumps({"rows": rows})
        self.assertTrue(text.endswith('{"score":1,"tiny":1e-7,"list":[2,0.5]}]}'))
        self.assertIn('"note":"file-level e-mail v1.0 1e-5"', text)

    def test_strings_that_look_like_python_floats_are_left_alone(self):
        self.assertEqual(dumps(["1.0", ":1.0,", "2e-07"]), '["1.0",":1.0,","2e-07"]')
        self.assertEqual(dumps({"version": "0.1.0", "n": 3}), '{"version":"0.1.0","n":3}')

    def test_non_finite_floats_are_refused(self):
        self.assertRaises(ValueError, dumps, float("nan"))


class MapOrderTests(SynchronousTestCase):
    def test_go_map_sorts_keys_recursively(self):
        value = go_map({"b": 1, "a": {"d": [{"z": 1, "y": 2}], "c": 3}})
        self.assertEqual(dumps(value), '{"a":{"c":3,"d":[{"y":2,"z":1}]},"b":1}')

    def test_dumps_keeps_insertion_order(self):
        self.assertEqual(
            dumps({"data": 1, "truth": 2, "error": 3}), '{"data":1,"truth":2,"error":3}'
        )


class EncodedOnceTests(SynchronousTestCase):
    """An answer measured once is written inside the JSON-RPC reply with the same bytes."""

    ANSWER = {
        "data": {"score": 1.0, "tiny": 1e-7, "html": "<a>&", "line": "a\u2028b", "n": [1, 2]},
        "truth": {"level": "derived"},
        "error": None,
    }

    def reply(self, structured) -> dict:
        result = {"content": [{"type": "text", "text": "x"}], "structuredContent": structured}
        return {"jsonrpc": "2.0", "id": 7, "result": result}

    def test_a_reply_holding_a_measured_answer_is_written_as_if_encoded_whole(self):
        measured = encoded(self.ANSWER, dumps(self.ANSWER))
        self.assertEqual(measured, self.ANSWER)
        self.assertEqual(dumps(self.reply(measured)), dumps(self.reply(dict(self.ANSWER))))
        self.assertEqual(dumps(measured), dumps(self.ANSWER))

    def test_without_html_escaping_the_answer_is_encoded_again(self):
        measured = encoded(self.ANSWER, dumps(self.ANSWER))
        self.assertEqual(
            dumps(self.reply(measured), escape_html=False),
            dumps(self.reply(dict(self.ANSWER)), escape_html=False),
        )
        self.assertIn("<a>&", dumps(self.reply(measured), escape_html=False))

    def test_values_that_are_not_objects_stay_as_they_are(self):
        self.assertEqual(encoded([1, 2], "[1,2]"), [1, 2])
        self.assertIs(type(encoded([1, 2], "[1,2]")), list)


class QuoteTests(SynchronousTestCase):
    def test_plain_names_are_double_quoted(self):
        self.assertEqual(go_quote("find_code"), '"find_code"')

    def test_quotes_backslashes_and_controls_are_escaped(self):
        self.assertEqual(go_quote('a"b\\c\n\x01\x7f'), '"a\\"b\\\\c\\n\\x01\\x7f"')

    def test_printable_unicode_stays_raw_and_invisible_runes_are_escaped(self):
        self.assertEqual(go_quote("é😀\u00a0\u200b\U000e0001"), '"é😀\\u00a0\\u200b\\U000e0001"')
