"""The HTTP tree's front door: requests no route can take get a JSON error, never HTML."""

from twisted.logger import globalLogPublisher
from twisted.trial.unittest import SynchronousTestCase

from tests.support import HttpExchange, web_site


class MalformedRequestTests(SynchronousTestCase):
    def setUp(self):
        self.site, self.app, self.clock = web_site()
        self.logged: list[dict] = []
        globalLogPublisher.addObserver(self.logged.append)
        self.addCleanup(globalLogPublisher.removeObserver, self.logged.append)

    def ask(self, method: bytes, path: bytes):
        exchange = HttpExchange(self.site)
        exchange.request(method, path)
        return exchange.response()

    def test_an_undecodable_path_is_a_json_400_without_a_traceback(self):
        for path in (b"/%ff", b"/api/v0/%ff", b"/mcp/%c3%28", b"/health%ff"):
            with self.subTest(path=path):
                response = self.ask(b"GET", path)
                self.assertEqual(response.status, 400)
                self.assertEqual(response.header(b"content-type"), b"application/json")
                self.assertIn("not valid UTF-8", response.json()["detail"])
        self.assertEqual([e for e in self.logged if e.get("log_failure")], [])

    def test_a_lowercase_method_is_a_json_405_naming_the_method_meant(self):
        for method, path in ((b"post", b"/mcp"), (b"get", b"/health"), (b"get", b"/sse")):
            with self.subTest(method=method):
                response = self.ask(method, path)
                self.assertEqual(response.status, 405)
                self.assertEqual(response.header(b"content-type"), b"application/json")
                self.assertIn(repr(method.decode().upper()), response.json()["detail"])
                self.assertNotIn(b"<html", response.body)

    def test_well_formed_requests_still_pass(self):
        self.assertEqual(self.ask(b"GET", b"/health").status, 200)
        self.assertEqual(self.ask(b"GET", b"/api/v0/repositories?q=%ff").status, 200)
