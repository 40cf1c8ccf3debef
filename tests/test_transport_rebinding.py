"""One Host/Origin guard for every HTTP surface, and /metrics behind the credential."""

from twisted.trial.unittest import SynchronousTestCase

from tests.support import HttpExchange, web_site

SURFACES = (
    (b"GET", b"/api/v0/repositories"),
    (b"POST", b"/api/v0/content/files/read"),
    (b"GET", b"/metrics"),
    (b"GET", b"/health"),
    (b"GET", b"/sse"),
    (b"POST", b"/mcp"),
    (b"POST", b"/mcp/message"),
)


def fetch(site, method, path, **headers):
    exchange = HttpExchange(site)
    extra = {name.replace("_", "-").encode(): value for name, value in headers.items()}
    exchange.request(method, path, headers=extra, body=b"{}" if method == b"POST" else None)
    return exchange.response()


class RebindingTests(SynchronousTestCase):
    def setUp(self):
        self.site, _app, _clock = web_site()

    def test_a_foreign_host_is_421_on_every_surface(self):
        for method, path in SURFACES:
            with self.subTest(path=path):
                reply = fetch(self.site, method, path, host=b"evil.example.com")
                self.assertEqual(reply.status, 421)
                self.assertEqual(reply.json()["error"], "Misdirected Request")

    def test_a_foreign_browser_origin_is_403_on_every_surface(self):
        for method, path in SURFACES:
            with self.subTest(path=path):
                reply = fetch(self.site, method, path, origin=b"http://evil.example.com")
                self.assertEqual(reply.status, 403)
                self.assertIn("evil.example.com", reply.json()["detail"])

    def test_the_query_api_and_metrics_still_answer_loopback_callers(self):
        api = fetch(self.site, b"GET", b"/api/v0/repositories", origin=b"http://localhost:6274")
        self.assertEqual(api.status, 200)
        metrics = fetch(self.site, b"GET", b"/metrics")
        self.assertEqual(metrics.status, 200)
        self.assertIn(b"eshu_mcp_tool_calls_total", metrics.body)

    def test_a_public_listener_admits_any_host(self):
        site, _app, _clock = web_site(loopback_only=False)
        reply = fetch(site, b"GET", b"/api/v0/repositories", host=b"eshu.example.com")
        self.assertEqual(reply.status, 200)


class MetricsCredentialTests(SynchronousTestCase):
    environ = {"ESHU_API_KEY": "s3cret"}

    def test_metrics_need_the_credential_when_one_is_configured(self):
        site, _app, _clock = web_site(environ=self.environ)
        refused = fetch(site, b"GET", b"/metrics")
        self.assertEqual(refused.status, 401)
        self.assertNotIn(b"tool_calls", refused.body)
        admitted = fetch(site, b"GET", b"/metrics", authorization=b"Bearer s3cret")
        self.assertEqual(admitted.status, 200)
        self.assertIn(b"eshu_mcp_tool_calls_total", admitted.body)

    def test_public_metrics_serves_them_without_a_credential(self):
        site, _app, _clock = web_site(environ=self.environ, public_metrics=True)
        reply = fetch(site, b"GET", b"/metrics")
        self.assertEqual(reply.status, 200)
        self.assertIn(b"eshu_mcp_tool_calls_total", reply.body)

    def test_metrics_are_public_when_no_credential_is_configured(self):
        site, _app, _clock = web_site()
        self.assertEqual(fetch(site, b"GET", b"/metrics").status, 200)
