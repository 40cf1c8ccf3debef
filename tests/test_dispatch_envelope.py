"""The canonical envelope as the Go server decodes and re-encodes it (spec §8)."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.envelope import body_text, decode_body, parse_canonical_envelope
from eshu_mcp.encoding import dumps


def reencoded(body: bytes) -> str:
    envelope = parse_canonical_envelope(body)
    assert envelope is not None, body
    return dumps(envelope)


FULL_TRUTH = (
    b'{"reason":"r","freshness":{"next_check":{"params":{"b":"2","a":"1"},"reason":"why",'
    b'"route":"GET /api/v0/status","tool":"get_index_status"},"cause":"reducer_backlog",'
    b'"detail":"d","observed_at":"2026-01-01T00:00:00Z","state":"stale"},"backend":"nornicdb",'
    b'"basis":"hybrid","profile":"local_lightweight","capability":"code.search","level":"derived"}'
)
FULL_ERROR = (
    b'{"details":{"z":1,"a":{"y":true,"b":null}},"profiles":{"required":"production",'
    b'"current":"local_lightweight"},"correlation_id":"c-1","capability":"cap",'
    b'"message":"m","code":"not_found"}'
)


class RecognitionTests(SynchronousTestCase):
    def test_object_with_all_three_keys_is_an_envelope(self):
        body = b'{"data":{"repos":["test/repo"]},"truth":null,"error":null}'
        self.assertEqual(
            parse_canonical_envelope(body),
            {"data": {"repos": ["test/repo"]}, "truth": None, "error": None},
        )

    def test_missing_any_one_key_is_not_an_envelope(self):
        for body in (
            b'{"data":1,"truth":null}',
            b'{"data":1,"error":null}',
            b'{"truth":null,"error":null}',
        ):
            self.assertIsNone(parse_canonical_envelope(body), body)

    def test_top_level_keys_must_match_exactly(self):
        self.assertIsNone(parse_canonical_envelope(b'{"Data":1,"truth":null,"error":null}'))

    def test_non_objects_and_non_json_are_not_envelopes(self):
        for body in (b"[1,2]", b"null", b'"data"', b"hello", b"", b"{", b"<html></html>"):
            self.assertIsNone(parse_canonical_envelope(body), body)

    def test_trailing_data_after_the_object_is_not_an_envelope(self):
        self.assertIsNone(parse_canonical_envelope(b'{"data":1,"truth":null,"error":null} x'))

    def test_truth_and_error_must_be_objects_or_null(self):
        for field in (b'"exact"', b"[]", b"1", b"true"):
            self.assertIsNone(
                parse_canonical_envelope(b'{"data":1,"truth":' + field + b',"error":null}')
            )
            self.assertIsNone(
                parse_canonical_envelope(b'{"data":1,"truth":null,"error":' + field + b"}")
            )

    def test_mistyped_struct_fields_are_not_envelopes(self):
        for truth, error in (
            (b'{"level":5}', b"null"),
            (b'{"freshness":"fresh"}', b"null"),
            (b'{"freshness":{"state":1}}', b"null"),
            (b'{"freshness":{"next_check":[]}}', b"null"),
            (b'{"freshness":{"next_check":{"params":{"a":1}}}}', b"null"),
            (b"null", b'{"code":404}'),
            (b"null", b'{"details":[1]}'),
            (b"null", b'{"profiles":"production"}'),
            (b"null", b'{"profiles":{"current":true}}'),
        ):
            body = b'{"data":null,"truth":' + truth + b',"error":' + error + b"}"
            self.assertIsNone(parse_canonical_envelope(body), body)

    def test_numbers_outside_float64_are_not_json(self):
        self.assertIsNone(parse_canonical_envelope(b'{"data":1e400,"truth":null,"error":null}'))
        self.assertIsNone(parse_canonical_envelope(b'{"data":NaN,"truth":null,"error":null}'))


class ReserializationTests(SynchronousTestCase):
    def test_envelope_keys_follow_struct_order(self):
        body = b'{"error":null,"truth":null,"data":1}'
        self.assertEqual(reencoded(body), '{"data":1,"truth":null,"error":null}')

    def test_data_objects_come_out_with_sorted_keys(self):
        body = b'{"data":{"b":{"d":1,"c":2},"a":[{"z":0,"y":1}]},"truth":null,"error":null}'
        self.assertEqual(
            reencoded(body),
            '{"data":{"a":[{"y":1,"z":0}],"b":{"c":2,"d":1}},"truth":null,"error":null}',
        )

    def test_truth_fields_come_out_in_struct_order(self):
        body = b'{"data":null,"truth":' + FULL_TRUTH + b',"error":null}'
        self.assertEqual(
            reencoded(body),
            '{"data":null,"truth":{"level":"derived","capability":"code.search",'
            '"profile":"local_lightweight","basis":"hybrid","backend":"nornicdb",'
            '"freshness":{"state":"stale","observed_at":"2026-01-01T00:00:00Z","detail":"d",'
            '"cause":"reducer_backlog","next_check":{"tool":"get_index_status",'
            '"route":"GET /api/v0/status","reason":"why","params":{"a":"1","b":"2"}}},'
            '"reason":"r"},"error":null}',
        )

    def test_error_fields_come_out_in_struct_order_with_sorted_details(self):
        body = b'{"data":null,"truth":null,"error":' + FULL_ERROR + b"}"
        self.assertEqual(
            reencoded(body),
            '{"data":null,"truth":null,"error":{"code":"not_found","message":"m",'
            '"capability":"cap","correlation_id":"c-1","profiles":{"current":"local_lightweight",'
            '"required":"production"},"details":{"a":{"b":null,"y":true},"z":1}}}',
        )

    def test_unknown_keys_are_dropped_everywhere(self):
        body = (
            b'{"data":1,"extra":2,"truth":{"level":"exact","x":1,"freshness":{"state":"fresh",'
            b'"y":2}},"error":{"code":"c","message":"m","z":3}}'
        )
        self.assertEqual(
            reencoded(body),
            '{"data":1,"truth":{"level":"exact","freshness":{"state":"fresh"}},'
            '"error":{"code":"c","message":"m"}}',
        )

    def test_required_fields_are_always_written_and_empty_optionals_omitted(self):
        body = (
            b'{"data":null,"truth":{"capability":"","freshness":null},'
            b'"error":{"details":{},"code":null,"correlation_id":""}}'
        )
        self.assertEqual(
            reencoded(body),
            '{"data":null,"truth":{"level":"","freshness":{"state":""}},'
            '"error":{"code":"","message":""}}',
        )

    def test_empty_pointer_structs_are_kept(self):
        body = (
            b'{"data":null,"truth":{"freshness":{"next_check":{}}},'
            b'"error":{"code":"c","message":"m","profiles":{}}}'
        )
        self.assertEqual(
            reencoded(body),
            '{"data":null,"truth":{"level":"","freshness":{"state":"","next_check":{}}},'
            '"error":{"code":"c","message":"m","profiles":{}}}',
        )

    def test_null_param_values_become_empty_strings(self):
        body = b'{"data":0,"truth":{"freshness":{"next_check":{"params":{"a":null}}}},"error":null}'
        self.assertIn('"params":{"a":""}', reencoded(body))

    def test_struct_fields_match_case_insensitively(self):
        body = b'{"data":0,"truth":{"LEVEL":"exact","Freshness":{"State":"fresh"}},"error":null}'
        self.assertEqual(
            reencoded(body),
            '{"data":0,"truth":{"level":"exact","freshness":{"state":"fresh"}},"error":null}',
        )

    def test_numbers_pass_through_float64(self):
        body = (
            b'{"data":[1.0,9007199254740993,12345678901234567890,1e-7,1e21,-0,2.50],'
            b'"truth":null,"error":null}'
        )
        self.assertEqual(
            reencoded(body),
            '{"data":[1,9007199254740992,12345678901234567000,1e-7,1e+21,-0,2.5],'
            '"truth":null,"error":null}',
        )

    def test_strings_are_html_escaped_when_reencoded(self):
        body = b'{"data":"<b>&\\u2028","truth":null,"error":null}'
        self.assertEqual(
            reencoded(body), '{"data":"\\u003cb\\u003e\\u0026\\u2028","truth":null,"error":null}'
        )


class DecodeTests(SynchronousTestCase):
    def test_invalid_utf8_in_strings_becomes_one_replacement_per_byte(self):
        self.assertEqual(decode_body(b'"a\xe2\x82b\xff"'), "a\ufffd\ufffdb\ufffd")

    def test_escaped_lone_surrogates_become_replacement_characters(self):
        self.assertEqual(
            decode_body(b'{"\\udc00k":"\\ud800x\\ud83d\\ude00"}'), {"\ufffdk": "\ufffdx😀"}
        )

    def test_nesting_deeper_than_the_interpreter_can_walk_is_refused(self):
        self.assertRaises(ValueError, decode_body, b"[" * 100000 + b"]" * 100000)

    def test_body_text_keeps_valid_utf8_and_replaces_invalid_bytes(self):
        self.assertEqual(body_text("é\n".encode() + b"\xc3"), "é\n\ufffd")
