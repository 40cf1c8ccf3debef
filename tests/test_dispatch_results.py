"""MCP tool results built from query responses (spec §3, §7.3, §9)."""

from twisted.logger import LogLevel, capturedLogs
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.budget import DEFAULT_RESPONSE_BUDGET, measure
from eshu_mcp.dispatch.results import (
    dispatch_context_error_result,
    error_result,
    go_duration,
    result_from_response,
)
from eshu_mcp.encoding import dumpb, dumps

ENVELOPE_URI = "eshu://tool-result/envelope"
ENVELOPE_MIME = "application/eshu.envelope+json"
PAYLOAD_URI = "eshu://tool-result/payload"

TRUTH = {"level": "exact", "freshness": {"state": "fresh"}}


def envelope_body(data, truth=None, error=None) -> bytes:
    return dumpb({"data": data, "truth": truth, "error": error})


def resource_of(result: dict) -> dict:
    return result["content"][1]["resource"]


def envelope_of_size(size: int) -> bytes:
    """An envelope body whose re-serialized form measures exactly ``size`` bytes."""
    empty = measure({"data": "", "truth": None, "error": None})
    # Each "y" costs 2 bytes (one per copy); a "\n" costs 5 ("\n" then "\\n").
    if (size - empty) % 2 == 0:
        return envelope_body("y" * ((size - empty) // 2))
    return envelope_body("y" * ((size - empty - 5) // 2) + "\n")


class EnvelopePathTests(SynchronousTestCase):
    def test_envelope_gives_text_then_resource(self):
        result = result_from_response("find_code", 200, envelope_body({"count": 5}, TRUTH))
        self.assertEqual([block["type"] for block in result["content"]], ["text", "resource"])
        self.assertEqual(result["content"][0]["text"], "exact/fresh — Returned 5 result(s).")
        self.assertEqual(list(result), ["content", "structuredContent"])

    def test_envelope_resource_uri_and_mime_type(self):
        resource = resource_of(result_from_response("find_code", 200, envelope_body(1)))
        self.assertEqual(resource["uri"], ENVELOPE_URI)
        self.assertEqual(resource["mimeType"], ENVELOPE_MIME)

    def test_resource_text_is_the_compact_structured_content(self):
        body = b'{"error":null,"data":{"b":"<x>","a":1.0,"extra":[1e21]},"x":1,"truth":null}'
        result = result_from_response("find_code", 200, body)
        self.assertEqual(resource_of(result)["text"], dumps(result["structuredContent"]))
        self.assertEqual(
            resource_of(result)["text"],
            '{"data":{"a":1,"b":"\\u003cx\\u003e","extra":[1e+21]},"truth":null,"error":null}',
        )

    def test_structured_content_is_the_envelope_object(self):
        result = result_from_response("find_code", 200, envelope_body([1], TRUTH))
        self.assertEqual(result["structuredContent"], {"data": [1], "truth": TRUTH, "error": None})
        self.assertEqual(list(result["structuredContent"]), ["data", "truth", "error"])

    def test_envelope_with_http_501_is_an_error(self):
        error = {"code": "unsupported_capability", "message": "needs a graph backend"}
        result = result_from_response("find_dead_code", 501, envelope_body(None, None, error))
        self.assertIs(result["isError"], True)
        self.assertEqual(len(result["content"]), 2)
        self.assertIn('"unsupported_capability"', resource_of(result)["text"])
        self.assertIsInstance(result["structuredContent"]["error"], dict)
        self.assertEqual(result["content"][0]["text"], "needs a graph backend.")

    def test_error_envelope_with_http_200_is_not_an_error(self):
        error = {"code": "not_found", "message": "no such repo"}
        result = result_from_response("find_code", 200, envelope_body(None, None, error))
        self.assertNotIn("isError", result)

    def test_partial_envelope_takes_the_plain_path(self):
        result = result_from_response("find_code", 200, b'{"data":1,"truth":null}')
        self.assertEqual(resource_of(result)["uri"], PAYLOAD_URI)
        self.assertEqual(result["structuredContent"], {"data": 1, "truth": None})


class PlainPathTests(SynchronousTestCase):
    def test_json_object_is_a_payload_result(self):
        result = result_from_response("list_indexed_repositories", 200, b'{"repos":["test/repo"]}')
        resource = resource_of(result)
        self.assertEqual(resource["uri"], PAYLOAD_URI)
        self.assertEqual(resource["mimeType"], "application/json")
        self.assertEqual(result["structuredContent"], {"repos": ["test/repo"]})
        self.assertIn('"test/repo"', resource["text"])
        self.assertEqual(result["content"][0]["text"], "Eshu query completed.")

    def test_plain_objects_come_out_with_sorted_keys(self):
        result = result_from_response("t", 200, b'{"b":1,"a":{"d":2,"c":3}}')
        self.assertEqual(resource_of(result)["text"], '{"a":{"c":3,"d":2},"b":1}')
        self.assertEqual(list(result["structuredContent"]), ["a", "b"])

    def test_non_json_body_is_a_quoted_string(self):
        result = result_from_response("t", 200, b"hello")
        self.assertEqual(result["structuredContent"], "hello")
        self.assertEqual(resource_of(result)["text"], '"hello"')
        self.assertNotIn("isError", result)

    def test_empty_body_is_an_empty_string(self):
        result = result_from_response("t", 200, b"")
        self.assertEqual(result["structuredContent"], "")
        self.assertEqual(resource_of(result)["text"], '""')

    def test_json_null_omits_structured_content(self):
        result = result_from_response("t", 200, b"null")
        self.assertEqual(list(result), ["content"])
        self.assertEqual(resource_of(result)["text"], "null")

    def test_arrays_and_scalars_are_structured_content_too(self):
        self.assertEqual(result_from_response("t", 200, b"[1,2,3]")["structuredContent"], [1, 2, 3])
        self.assertEqual(result_from_response("t", 200, b"7")["structuredContent"], 7)
        self.assertIs(result_from_response("t", 200, b"false")["structuredContent"], False)

    def test_plain_status_summary(self):
        body = b'{"status":"degraded","reasons":["queue backlog growing","stale projections"]}'
        result = result_from_response("get_index_status", 200, body)
        self.assertEqual(
            result["content"][0]["text"], "index status: degraded — queue backlog growing (+1 more)"
        )

    def test_http_error_without_json_names_the_status_and_body(self):
        result = result_from_response("t", 404, b"404 page not found\n")
        self.assertEqual(
            result["content"],
            [{"type": "text", "text": "The query API answered HTTP 404: 404 page not found."}],
        )
        self.assertIs(result["isError"], True)

    def test_plain_error_body_becomes_its_message_as_a_sentence(self):
        body = b'{"detail":"limit must be an integer in [1, 200]","error":"Bad Request"}'
        result = result_from_response("t", 400, body)
        self.assertEqual(
            result["content"],
            [{"type": "text", "text": "limit must be an integer between 1 and 200."}],
        )
        self.assertEqual(
            result["structuredContent"]["error"],
            {
                "code": "invalid_argument",
                "details": {"error": "Bad Request", "http_status": 400},
                "message": "limit must be an integer in [1, 200]",
            },
        )

    def test_server_failure_says_the_api_failed(self):
        result = result_from_response("t", 500, b'{"detail":"boom"}')
        self.assertEqual(
            result["content"], [{"type": "text", "text": "The query API failed (HTTP 500): boom."}]
        )
        self.assertEqual(result["structuredContent"]["error"]["code"], "internal_error")

    def test_successful_results_never_carry_is_error_false(self):
        for body in (b"hello", b"[]", envelope_body(1)):
            self.assertNotIn("isError", result_from_response("t", 200, body))

    def test_deeply_nested_json_is_answered_as_text(self):
        body = b"[" * 5000 + b"]" * 5000
        result = result_from_response("t", 200, body)
        self.assertEqual(result["structuredContent"], body.decode())


class BudgetTests(SynchronousTestCase):
    def test_exactly_the_budget_passes_and_one_more_byte_is_replaced(self):
        budget = 1000
        passing = result_from_response("t", 200, envelope_of_size(budget), budget=budget)
        self.assertEqual(measure(passing["structuredContent"]), budget)
        self.assertNotIn("isError", passing)
        replaced = result_from_response("t", 200, envelope_of_size(budget + 1), budget=budget)
        self.assertIs(replaced["isError"], True)
        self.assertEqual(replaced["structuredContent"]["error"]["details"]["response_bytes"], 1001)

    def test_default_budget_boundary(self):
        passing = result_from_response("t", 200, envelope_of_size(DEFAULT_RESPONSE_BUDGET))
        self.assertNotIn("isError", passing)
        self.assertEqual(measure(passing["structuredContent"]), DEFAULT_RESPONSE_BUDGET)
        over = result_from_response("t", 200, envelope_of_size(DEFAULT_RESPONSE_BUDGET + 1))
        self.assertIs(over["isError"], True)
        self.assertEqual(
            over["structuredContent"]["error"]["details"]["response_bytes"],
            DEFAULT_RESPONSE_BUDGET + 1,
        )

    def test_over_budget_envelope_replaces_the_payload(self):
        body = envelope_body({"x": "y" * 300000})
        result = result_from_response("big", 200, body)
        self.assertIs(result["isError"], True)
        self.assertEqual(result["structuredContent"]["data"], None)
        self.assertEqual(result["structuredContent"]["truth"], None)
        error = result["structuredContent"]["error"]
        self.assertEqual(error["code"], "mcp_response_over_budget")
        self.assertEqual(error["capability"], "mcp.dispatch")
        self.assertEqual(
            error["message"],
            'MCP tool "big" response of 600098 bytes exceeds the 262144 byte response budget',
        )
        self.assertEqual(error["details"]["estimated_tokens"], 150025)
        self.assertEqual(
            result["content"][0]["text"],
            'error mcp_response_over_budget: MCP tool "big" response of 600098 bytes exceeds '
            "the 262144 byte response budget",
        )
        self.assertEqual(resource_of(result)["text"], dumps(result["structuredContent"]))

    def test_over_budget_plain_json_is_reported_on_the_envelope_path(self):
        result = result_from_response("t", 200, dumpb({"blob": "z" * 200000}))
        resource = resource_of(result)
        self.assertEqual(resource["uri"], ENVELOPE_URI)
        self.assertEqual(resource["mimeType"], ENVELOPE_MIME)
        self.assertIs(result["isError"], True)

    def test_300_rows_of_512_bytes_trip_the_budget(self):
        rows = [{"blob": "r" * 512} for _ in range(300)]
        body = envelope_body({"rows": rows}, TRUTH)
        self.assertLess(len(body), DEFAULT_RESPONSE_BUDGET)
        result = result_from_response("find_code", 200, body)
        self.assertEqual(result["structuredContent"]["error"]["code"], "mcp_response_over_budget")

    def test_2_rows_of_16_bytes_pass_with_truth_preserved(self):
        rows = [{"blob": "r" * 16} for _ in range(2)]
        result = result_from_response("find_code", 200, envelope_body({"rows": rows}, TRUTH))
        self.assertNotIn("isError", result)
        self.assertEqual(result["structuredContent"]["truth"], TRUTH)
        self.assertEqual(result["structuredContent"]["data"]["rows"], rows)

    def test_replacement_result_measures_at_most_4_kib(self):
        result = result_from_response("find_code", 200, dumpb("q" * 300000))
        self.assertLessEqual(measure(result["structuredContent"]), 4096)

    def test_error_envelopes_are_budgeted_too(self):
        error = {"code": "internal_error", "message": "m", "details": {"trace": "t" * 200000}}
        result = result_from_response("t", 500, envelope_body(None, None, error))
        self.assertEqual(result["structuredContent"]["error"]["code"], "mcp_response_over_budget")

    def test_disabled_budget_passes_everything(self):
        result = result_from_response("t", 200, dumpb("q" * 300000), budget=0)
        self.assertEqual(result["structuredContent"], "q" * 300000)

    def test_over_budget_is_logged_as_a_warning_with_sizes(self):
        with capturedLogs() as events:
            result_from_response("big", 200, envelope_body({"x": "y" * 300000}))
        [event] = [e for e in events if e.get("tool") == "big"]
        self.assertEqual(event["log_level"], LogLevel.warn)
        self.assertEqual(event["response_bytes"], 600098)
        self.assertEqual(event["budget_bytes"], 262144)
        self.assertTrue(event["log_format"].startswith("mcp tool response over budget"))


class ErrorResultTests(SynchronousTestCase):
    def test_error_result_is_one_text_block(self):
        self.assertEqual(
            error_result("unknown tool: nope"),
            {"content": [{"type": "text", "text": "unknown tool: nope"}], "isError": True},
        )

    def test_empty_text_is_omitted_from_the_block(self):
        self.assertEqual(error_result(""), {"content": [{"type": "text"}], "isError": True})


class DispatchContextErrorTests(SynchronousTestCase):
    def test_timeout_result(self):
        result = dispatch_context_error_result("find_code", timed_out=True, configured_timeout=0.02)
        message = 'MCP tool "find_code" dispatch deadline exceeded: context deadline exceeded'
        self.assertEqual(result["content"][0], {"type": "text", "text": message})
        self.assertIs(result["isError"], True)
        resource = resource_of(result)
        self.assertEqual(resource["uri"], "eshu://tool-error/dispatch")
        self.assertEqual(resource["mimeType"], "application/json")
        self.assertEqual(
            resource["text"],
            '{"data":null,"error":{"capability":"mcp.dispatch","code":"mcp_dispatch_timeout",'
            '"details":{"configured_timeout":"20ms","tool":"find_code"},'
            '"message":"MCP tool \\"find_code\\" dispatch deadline exceeded: context deadline '
            'exceeded"},"truth":null}',
        )
        self.assertEqual(resource["text"], dumps(result["structuredContent"]))

    def test_cancel_result(self):
        result = dispatch_context_error_result("find_code", timed_out=False, configured_timeout=30)
        error = result["structuredContent"]["error"]
        self.assertEqual(error["code"], "mcp_dispatch_canceled")
        self.assertEqual(
            error["message"], 'MCP tool "find_code" dispatch canceled: context canceled'
        )
        self.assertEqual(error["details"], {"configured_timeout": "30s", "tool": "find_code"})
        self.assertEqual(result["content"][0]["text"], error["message"])

    def test_go_durations(self):
        cases = {
            30: "30s",
            0.02: "20ms",
            90: "1m30s",
            1.5: "1.5s",
            3600: "1h0m0s",
            0: "0s",
            0.0000015: "1.5\u00b5s",
            1e-7: "100ns",
            3725.25: "1h2m5.25s",
            -2: "-2s",
        }
        for seconds, text in cases.items():
            self.assertEqual(go_duration(seconds), text)
