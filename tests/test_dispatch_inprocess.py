"""In-process dispatch: a tool call driven through a synthesized Request."""

import json

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch import run_read_only_tool
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

    def test_get_has_sorted_query_with_empty_values_and_no_content_type(self):
        resource = RecordingResource(body=b'{"repositories": []}')
        self.successResultOf(dispatcher(resource).call("list_indexed_repositories", {}))
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
    def test_envelope_answer_becomes_summary_resource_and_structured_content(self):
        resource = RecordingResource(body=envelope({"count": 5}, FRESH_TRUTH))
        result = self.successResultOf(dispatcher(resource).call("find_code", {"query": "x"}))
        text, embedded = result["content"]
        self.assertEqual(text["text"], "exact/fresh — Returned 5 result(s).")
        self.assertEqual(embedded["resource"]["uri"], "eshu://tool-result/envelope")
        self.assertEqual(result["structuredContent"]["data"], {"count": 5})
        self.assertNotIn("isError", result)

    def test_route_error_is_a_text_error_result(self):
        result = self.successResultOf(dispatcher(RecordingResource()).call("get_service_story", {}))
        text = "get_service_story requires workload_id or service_name"
        self.assertEqual(result, {"content": [{"type": "text", "text": text}], "isError": True})

    def test_refused_arguments_never_reach_the_resource(self):
        resource = RecordingResource()
        result = self.successResultOf(dispatcher(resource).call("list_repository_files", {}))
        self.assertEqual(
            result["content"][0]["text"], "repo_id is required (a string) but was not given."
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

    def test_over_budget_answer_is_replaced(self):
        rows = [{"blob": "y" * 512} for _ in range(300)]
        resource = RecordingResource(body=envelope({"rows": rows}, FRESH_TRUTH))
        result = self.successResultOf(dispatcher(resource).call("find_code", {"query": "x"}))
        self.assertTrue(result["isError"])
        error = result["structuredContent"]["error"]
        self.assertEqual(error["code"], "mcp_response_over_budget")


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
        self.assertEqual(result["content"][1]["resource"]["uri"], "eshu://tool-result/payload")
