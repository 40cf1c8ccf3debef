"""The daemon's Site: a resource that fails answers a JSON 500 and logs one line."""

from twisted.internet.defer import fail
from twisted.logger import LogLevel, capturedLogs
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET

from eshu_mcp.transport.site import DaemonSite
from tests.support import HttpExchange, web_site

SECRET = "db password is hunter2 at /srv/private/state.sqlite"


class RaisingResource(Resource):
    """Raises while rendering, the way a bug in a handler would."""

    isLeaf = True

    def render(self, request):
        raise RuntimeError(SECRET)


class FailingLaterResource(Resource):
    """Fails after returning NOT_DONE_YET, the way a failed Deferred chain would."""

    isLeaf = True

    def render(self, request):
        fail(KeyError(SECRET)).addErrback(self.failed, request)
        return NOT_DONE_YET

    def failed(self, failure, request):
        request.processingFailed(failure)


class FailedRequestTests(SynchronousTestCase):
    def fetch(self, site, path=b"/anything"):
        exchange = HttpExchange(site)
        with capturedLogs() as events:
            exchange.request(b"GET", path)
        return exchange.response(), events

    def assert_json_500_and_one_line(self, response, events, error_type):
        self.assertEqual(response.status, 500)
        self.assertEqual(response.header(b"content-type"), b"application/json")
        self.assertEqual(
            response.json(),
            {
                "error": "Internal Server Error",
                "detail": "the server failed to answer this request; the daemon log has the cause",
            },
        )
        self.assertNotIn(b"hunter2", response.body)
        self.assertNotIn(b"<html", response.body)
        failures = [event for event in events if event["log_level"] >= LogLevel.error]
        self.assertEqual(len(failures), 1)
        self.assertNotIn("log_failure", failures[0])
        self.assertEqual(failures[0]["error_type"], error_type)
        self.assertIn("hunter2", failures[0]["error"])

    def test_a_resource_that_raises_answers_json_not_twisted_s_html_page(self):
        response, events = self.fetch(DaemonSite(RaisingResource()))
        self.assert_json_500_and_one_line(response, events, "RuntimeError")

    def test_a_resource_whose_deferred_fails_answers_json_too(self):
        response, events = self.fetch(DaemonSite(FailingLaterResource()))
        self.assert_json_500_and_one_line(response, events, "KeyError")

    def test_a_failing_query_route_behind_the_real_tree_answers_json(self):
        _, app, _ = web_site(RaisingResource())
        response, events = self.fetch(DaemonSite(app.resource()), b"/api/v0/repositories")
        self.assert_json_500_and_one_line(response, events, "RuntimeError")
        self.assertEqual(response.header(b"content-length"), b"%d" % len(response.body))

    def test_the_site_still_answers_the_next_request_after_a_failure(self):
        site = DaemonSite(RaisingResource())
        self.fetch(site)
        response, _ = self.fetch(site)
        self.assertEqual(response.status, 500)
