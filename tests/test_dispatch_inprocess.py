"""In-process dispatch: a tool call driven through a synthesized Request."""

import json

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch import run_read_only_tool
from eshu_mcp.dispatch.budget import DEFAULT_ANSWER_PAGE
from eshu_mcp.dispatch.inprocess import InProcessDispatcher
from tests.support import FRESH_TRUTH, RecordingResource, envelope


def dispatcher(resource, clock=None, **kwargs) -> InProcessDispatcher:
    return InProcessDispatcher(resource, clock or Clock(), **kwargs)


class RequestShapeTests(SynchronousTestCase):
    def test_post_carries_json_body_envelope_accept_and_no_authorization(self):
        resource = RecordingResource(body=envelope({"count": 1}, FRESH_TRUTH))
        self.successResultOf(dispatcher(resource).call("find_code", {"query": "parse_config"}))
        (request,) = resource.requests
        self.assertEqual(request.method, b"POST")
        self.assertEqual(request.path, b"/api/v0/code/search")
        self.assertEqual(
            request.requestHeaders.getRawHeaders(b"accept"), [b"application/eshu.envelope+json"]
        )
        self.assertEqual(
            request.requestHeaders.getRawHeaders(b"content-type"), [b"application/json"]
        )
        self.assertIsNone(request.requestHeaders.getRawHeaders(b"authorization"))
        body = json.loads(resource.bodies[0])
        self.assertEqual(body["query"], "parse_config")
        self.assertEqual(body["limit"], 10)

    def test_every_call_asks_for_the_compact_view_unless_full_detail_is_chosen(self):
        resource = RecordingResource(body=envelope({"count": 1}, FRESH_TRUTH))
        self.successResultOf(dispatcher(resource).call("find_code", {"query": "x"}))
        full = dispatcher(resource, answer_detail="full")
        self.successResultOf(full.call("find_code", {"query": "x"}))
        compact, plain = resource.requests
        self.assertEqual(compact.requestHeaders.getRawHeaders(b"eshu-answer-detail"), [b"compact"])
        self.assertIsNone(plain.requestHeaders.getRawHeaders(b"eshu-answer-detail"))

    def test_an_unknown_answer_detail_is_refused(self):
        with self.assertRaises(ValueError):
            dispatcher(RecordingResource(), answer_detail="lean")

    def test_get_has_sorted_query_with_empty_values_and_no_content_type(self):
        resource = RecordingResource(body=b'{"repositories": []}')
        full = dispatcher(resource, answer_detail="full")
        self.successResultOf(full.call("list_indexed_repositories", {}))
        (request,) = resource.requests
        self.assertEqual(request.method, b"GET")
        self.assertEqual(request.uri, b"/api/v0/repositories?limit=100&offset=0")
        self.assertIsNone(request.requestHeaders.getRawHeaders(b"content-type"))

    def test_authorization_is_forwarded_byte_for_byte(self):
        resource = RecordingResource(body=envelope({}, FRESH_TRUTH))
        call = dispatcher(resource).call("find_code", {"query": "x"}, b"Bearer  abc ")
        self.successResultOf(call)
        self.assertEqual(
            resource.requests[0].requestHeaders.getRawHeaders(b"authorization"), [b"Bearer  abc "]
        )


class ResultTests(SynchronousTestCase):
    def test_full_detail_envelope_becomes_summary_resource_and_structured_content(self):
        resource = RecordingResource(body=envelope({"count": 5}, FRESH_TRUTH))
        call = dispatcher(resource, answer_detail="full").call("find_code", {"query": "x"})
        result = self.successResultOf(call)
        text, embedded = result["content"]
        self.assertEqual(text["text"], "exact/fresh — Returned 5 result(s).")
        self.assertEqual(embedded["resource"]["uri"], "eshu://tool-result/envelope")
        self.assertEqual(result["structuredContent"]["data"], {"count": 5})
        self.assertNotIn("isError", result)

    def test_compact_envelope_is_sent_once_as_structured_content(self):
        resource = RecordingResource(body=envelope({"count": 5}, FRESH_TRUTH))
        result = self.successResultOf(dispatcher(resource).call("find_code", {"query": "x"}))
        self.assertEqual(
            result["content"], [{"type": "text", "text": "exact/fresh — Returned 5 result(s)."}]
        )
        self.assertEqual(result["structuredContent"]["data"], {"count": 5})

    def test_route_error_is_a_text_error_result(self):
        result = self.successResultOf(dispatcher(RecordingResource()).call("get_service_story", {}))
        text = "get_service_story requires workload_id or service_name"
        self.assertEqual(result, {"content": [{"type": "text", "text": text}], "isError": True})

    def test_a_route_error_hint_follows_the_contract_text_on_its_own_line(self):
        args = {"query_type": "call_chain", "target": "Console.print", "end_entity_id": "S.crop"}
        call = dispatcher(RecordingResource()).call("analyze_code_relationships", args)
        [content] = self.successResultOf(call)["content"]
        first, hint = content["text"].split("\n")
        self.assertEqual(first, "call_chain target must use start->end format")
        self.assertIn("end_entity_id take entity ids", hint)
        self.assertIn("target='Console.print->S.crop'", hint)

    def test_refused_arguments_never_reach_the_resource(self):
        resource = RecordingResource()
        result = self.successResultOf(dispatcher(resource).call("list_repository_files", {}))
        self.assertEqual(
            result["content"][0]["text"],
            "repo_id is required (a string) but was not given (list_indexed_repositories"
            " names the indexed repositories and their ids).",
        )
        self.assertEqual(result["structuredContent"]["error"]["code"], "invalid_argument")
        self.assertTrue(result["isError"])
        self.assertEqual(resource.requests, [])

    def test_null_for_an_optional_argument_is_not_sent(self):
        resource = RecordingResource()
        self.successResultOf(
            dispatcher(resource).call("find_code", {"query": "x", "limit": None, "language": None})
        )
        self.assertEqual(
            json.loads(resource.bodies[0]),
            {"exact": False, "language": "", "limit": 10, "query": "x", "repo_id": ""},
        )

    def test_unknown_tool_is_a_text_error_result(self):
        result = self.successResultOf(dispatcher(RecordingResource()).call("nope", {}))
        self.assertEqual(result["content"][0]["text"], "unknown tool: nope")
        self.assertTrue(result["isError"])

    def test_http_error_without_envelope_reads_as_a_sentence(self):
        resource = RecordingResource(status=404, body=b"404 page not found\n")
        result = self.successResultOf(dispatcher(resource).call("find_code", {"query": "x"}))
        self.assertEqual(
            result["content"][0]["text"],
            'The query API answered HTTP 404: 404 page not found (looked for query "x").',
        )
        self.assertEqual(result["structuredContent"]["error"]["code"], "not_found")
        self.assertTrue(result["isError"])

    def test_full_detail_over_budget_answer_is_replaced(self):
        rows = [{"blob": "y" * 512} for _ in range(300)]
        resource = RecordingResource(body=envelope({"rows": rows}, FRESH_TRUTH))
        call = dispatcher(resource, answer_detail="full").call("find_code", {"query": "x"})
        result = self.successResultOf(call)
        self.assertTrue(result["isError"])
        error = result["structuredContent"]["error"]
        self.assertEqual(error["code"], "mcp_response_over_budget")


class BudgetTrimTests(SynchronousTestCase):
    """A compact answer over the budget keeps the rows that fit and says how to get the rest."""

    def call(self, tool, args, data, budget=20_000, answer_page=0):
        resource = RecordingResource(body=envelope(data, FRESH_TRUTH))
        answers = dispatcher(resource, budget=budget, answer_page=answer_page)
        return self.successResultOf(answers.call(tool, args))

    def test_rows_are_cut_from_the_end_with_the_next_offset(self):
        rows = [{"name": f"row{i}", "blob": "y" * 500} for i in range(200)]
        args = {"symbol": "x", "limit": 200, "offset": 40}
        result = self.call("find_symbol", args, {"results": rows, "offset": 40})
        self.assertNotIn("isError", result)
        data = result["structuredContent"]["data"]
        kept = len(data["results"])
        self.assertTrue(20 < kept < 200)
        self.assertEqual(data["results"], rows[:kept])
        self.assertTrue(data["truncated"])
        self.assertEqual(data["next_offset"], 40 + kept)
        self.assertIn(f"offset={40 + kept}", data["truncation_note"])
        self.assertIn(f"offset={40 + kept}", result["content"][0]["text"])
        self.assertLessEqual(len(json.dumps(json.dumps(result["structuredContent"]))), 20_000)

    def test_a_route_without_offset_paging_says_to_narrow_instead(self):
        rows = [{"name": f"row{i}", "blob": "y" * 500} for i in range(200)]
        answer = {"results": rows, "count": 200}
        result = self.call("find_code", {"query": "x", "limit": 200}, answer)
        data = result["structuredContent"]["data"]
        self.assertNotIn("next_offset", data)
        self.assertEqual(data["count"], len(data["results"]))
        self.assertIn(f"{data['count']} matches", result["content"][0]["text"])
        self.assertTrue(data["truncated"])
        self.assertIn("lower limit", result["content"][0]["text"])

    def test_an_answer_with_no_rows_to_cut_still_fails_over_budget(self):
        result = self.call("find_code", {"query": "x"}, {"blob": "y" * 30_000})
        self.assertTrue(result["isError"])
        self.assertEqual(result["structuredContent"]["error"]["code"], "mcp_response_over_budget")

    def test_compact_budget_counts_the_one_copy_sent(self):
        rows = [{"blob": "y" * 512} for _ in range(300)]
        result = self.call("find_code", {"query": "x"}, {"rows": rows}, budget=262144)
        self.assertNotIn("isError", result)
        self.assertEqual(len(result["structuredContent"]["data"]["rows"]), 300)

    def test_a_compact_answer_longer_than_a_page_keeps_a_page_of_rows_and_the_offset(self):
        rows = [{"name": f"row{i}", "blob": "y" * 500} for i in range(100)]
        args = {"symbol": "x", "limit": 100}
        result = self.call("find_symbol", args, {"results": rows}, budget=262144, answer_page=8192)
        data = result["structuredContent"]["data"]
        kept = len(data["results"])
        self.assertTrue(5 < kept < 16)
        self.assertEqual(data["next_offset"], kept)
        self.assertIn("8192-byte answer page", result["content"][0]["text"])
        self.assertLessEqual(len(json.dumps(result["structuredContent"])), 8192)

    def test_an_answer_without_rows_is_not_paged_within_the_budget(self):
        result = self.call("find_code", {"query": "x"}, {"blob": "y" * 30_000}, 262144, 8192)
        self.assertNotIn("isError", result)
        self.assertEqual(len(result["structuredContent"]["data"]["blob"]), 30_000)

    def test_the_default_page_bounds_compact_answers(self):
        rows = [{"name": f"row{i}", "blob": "y" * 500} for i in range(100)]
        resource = RecordingResource(body=envelope({"results": rows}, FRESH_TRUTH))
        result = self.successResultOf(
            dispatcher(resource).call("find_symbol", {"symbol": "x", "limit": 100})
        )
        self.assertLessEqual(len(json.dumps(result["structuredContent"])), DEFAULT_ANSWER_PAGE)
        self.assertTrue(result["structuredContent"]["data"]["truncated"])


class DeadlineAndCancellationTests(SynchronousTestCase):
    def test_deadline_ends_the_call_and_reaches_the_resource(self):
        clock = Clock()
        resource = RecordingResource(hold=True)
        call = dispatcher(resource, clock, timeout=0.02).call("find_code", {"query": "x"})
        self.assertNoResult(call)
        clock.advance(0.02)
        result = self.successResultOf(call)
        self.assertTrue(result["isError"])
        self.assertEqual(
            result["content"][0]["text"],
            'MCP tool "find_code" dispatch deadline exceeded: context deadline exceeded',
        )
        error = result["structuredContent"]["error"]
        self.assertEqual(error["code"], "mcp_dispatch_timeout")
        self.assertEqual(error["details"], {"configured_timeout": "20ms", "tool": "find_code"})
        self.assertEqual(len(resource.disconnected), 1)
        self.assertEqual(clock.getDelayedCalls(), [])

    def test_cancelling_the_call_reaches_the_resource(self):
        clock = Clock()
        resource = RecordingResource(hold=True)
        call = dispatcher(resource, clock).call("find_code", {"query": "x"})
        call.cancel()
        result = self.successResultOf(call)
        self.assertEqual(result["structuredContent"]["error"]["code"], "mcp_dispatch_canceled")
        self.assertEqual(
            result["content"][0]["text"],
            'MCP tool "find_code" dispatch canceled: context canceled',
        )
        self.assertEqual(len(resource.disconnected), 1)
        self.assertEqual(clock.getDelayedCalls(), [])

    def test_answer_before_deadline_cancels_the_timer(self):
        clock = Clock()
        resource = RecordingResource(body=envelope({}, FRESH_TRUTH))
        self.successResultOf(dispatcher(resource, clock).call("find_code", {"query": "x"}))
        self.assertEqual(clock.getDelayedCalls(), [])


class RunReadOnlyToolTests(SynchronousTestCase):
    def test_seam_runs_one_tool_against_a_resource(self):
        resource = RecordingResource(body=b'{"repos": ["test/repo"]}')
        result = self.successResultOf(
            run_read_only_tool(resource, "list_indexed_repositories", {}, clock=Clock())
        )
        self.assertEqual(result["structuredContent"], {"repos": ["test/repo"]})
        self.assertEqual(len(result["content"]), 1)
