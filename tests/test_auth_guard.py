"""The guard around transport and query Resources: refusals, pass-through and metrics."""

import io
import json
import re

from prometheus_client import CollectorRegistry
from treq import collect
from treq.testing import StubTreq
from twisted.cred.checkers import ICredentialsChecker
from twisted.cred.error import UnauthorizedLogin
from twisted.internet.defer import Deferred, fail
from twisted.internet.error import ConnectionDone
from twisted.python.failure import Failure
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Request
from twisted.web.test.requesthelper import DummyChannel
from zope.interface import implementer

from eshu_mcp.auth.credentials import IBearerToken
from eshu_mcp.auth.discovery import build_discovery
from eshu_mcp.auth.guard import guard, principal_of
from eshu_mcp.auth.peek import peek_mcp_method
from eshu_mcp.auth.policy import CredentialPolicy
from eshu_mcp.auth.principal import Principal
from eshu_mcp.auth.scoped import ScopedToken, ScopedTokenChecker, token_sha256
from eshu_mcp.metrics import Metrics

KEY = "shared-key"
SCOPED = "scoped-token"
SCOPED_PRINCIPAL = Principal(
    mode="scoped", tenant_id="tenant-a", workspace_id="ws-a", subject_id_hash="sub-a"
)
FORBIDDEN_IN_DENIALS = (
    b"eshu-mcp-server",
    b"tools",
    b"serverInfo",
    b"protocolVersion",
    b"find_code",
    b"list_indexed_repositories",
    b"endpoint",
    b"sess_",
)
URL = "http://127.0.0.1:8080"


class CatalogAnswer(Resource):
    """Stands in for /mcp/message: answers with server and catalog details."""

    isLeaf = True

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[Principal | None, bytes, list[bytes], list[bytes]]] = []

    def render(self, request) -> bytes:
        self.seen.append(
            (principal_of(request), request.content.read(), request.prepath, request.postpath)
        )
        request.setHeader(b"content-type", b"application/json")
        return json.dumps(
            {"result": {"serverInfo": {"name": "eshu-mcp-server"}, "tools": ["find_code"]}}
        ).encode()


class EventStream(Resource):
    """Stands in for GET /sse: writes an endpoint event and stays open."""

    isLeaf = True

    def __init__(self) -> None:
        super().__init__()
        self.open: list = []

    def render_GET(self, request) -> object:
        request.setHeader(b"content-type", b"text/event-stream")
        request.write(b"event: endpoint\ndata: /mcp/message?sessionId=sess_1\n\n")
        self.open.append(request)
        return NOT_DONE_YET


@implementer(ICredentialsChecker)
class SlowChecker:
    """A resolver whose answer arrives later (like a first JWKS fetch)."""

    credentialInterfaces = (IBearerToken,)

    def __init__(self) -> None:
        self.pending: list[Deferred] = []
        self.cancelled = 0

    def requestAvatarId(self, credentials) -> Deferred:
        if credentials.token != "slow":
            return fail(UnauthorizedLogin())

        def cancel(_: Deferred) -> None:
            self.cancelled += 1

        self.pending.append(Deferred(cancel))
        return self.pending[-1]


def _scoped_checker() -> ScopedTokenChecker:
    return ScopedTokenChecker((ScopedToken(token_sha256(SCOPED), SCOPED_PRINCIPAL),))


def _denials(metrics: Metrics, method: str, reason: str = "unauthenticated") -> float:
    value = metrics.registry.get_sample_value(
        "eshu_dp_mcp_transport_auth_denied_total", {"mcp_method": method, "reason": reason}
    )
    return value or 0.0


def _message(method: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method}).encode()


class _Harness:
    def mount(self, policy: CredentialPolicy, inner: Resource | None = None, **kwargs):
        self.metrics = Metrics(CollectorRegistry())
        self.inner = inner or CatalogAnswer()
        mcp = Resource()
        mcp.putChild(
            b"message",
            guard(self.inner, policy, metrics=self.metrics, method_label=peek_mcp_method, **kwargs),
        )
        root = Resource()
        root.putChild(b"mcp", mcp)
        self.stub = StubTreq(root)
        return self.stub

    def post(
        self, method: str = "tools/list", headers: dict | None = None, body: bytes | None = None
    ):
        response = self.successResultOf(  # type: ignore[attr-defined]
            self.stub.post(
                URL + "/mcp/message",
                data=_message(method) if body is None else body,
                headers=headers or {},
            )
        )
        return response, self.successResultOf(response.content())  # type: ignore[attr-defined]


class RefusalTests(_Harness, SynchronousTestCase):
    def setUp(self) -> None:
        self.mount(CredentialPolicy(shared_key=KEY, checkers=(_scoped_checker(),)))

    def test_headerless_calls_get_401_without_catalog_or_server_details(self) -> None:
        for method in ("initialize", "tools/list", "ping"):
            response, body = self.post(method)
            self.assertEqual(response.code, 401)
            for forbidden in FORBIDDEN_IN_DENIALS:
                self.assertNotIn(forbidden, body)
        self.assertEqual(self.inner.seen, [])

    def test_denial_body_has_sorted_keys_and_a_trailing_newline(self) -> None:
        response, body = self.post(headers={"X-Correlation-ID": "corr-1"})
        self.assertEqual(
            body,
            b'{"correlation_id":"corr-1","error_code":"unauthenticated",'
            b'"message":"authentication is required"}\n',
        )
        self.assertEqual(
            response.headers.getRawHeaders("content-type"), ["application/json; charset=utf-8"]
        )
        self.assertEqual(response.headers.getRawHeaders("www-authenticate"), ["Bearer"])

    def test_envelope_clients_get_the_envelope_shape(self) -> None:
        _, body = self.post(
            headers={"Accept": "application/eshu.envelope+json", "X-Request-ID": "req-9"}
        )
        self.assertEqual(
            body,
            b'{"data":null,"truth":null,"error":{"code":"unauthenticated",'
            b'"message":"authentication is required","correlation_id":"req-9"}}\n',
        )

    def test_correlation_id_prefers_correlation_header_then_random_hex(self) -> None:
        _, body = self.post(headers={"X-Correlation-ID": "c", "X-Request-ID": "r"})
        self.assertEqual(json.loads(body)["correlation_id"], "c")
        _, body = self.post()
        self.assertRegex(json.loads(body)["correlation_id"], re.compile(r"^[0-9a-f]{32}$"))

    def test_correlation_id_is_not_html_escaped(self) -> None:
        _, body = self.post(headers={"X-Correlation-ID": "<a&b>"})
        self.assertIn(b'"<a&b>"', body)

    def test_unauthenticated_tools_list_counts_exactly_once(self) -> None:
        self.post("tools/list")
        self.assertEqual(_denials(self.metrics, "tools/list"), 1.0)
        self.assertEqual(_denials(self.metrics, "unknown"), 0.0)
        self.assertEqual(_denials(self.metrics, "mcp_message", "session_principal_mismatch"), 0.0)

    def test_denials_are_labelled_by_the_peeked_method(self) -> None:
        self.post("resources/list")
        self.post(body=b"{broken")
        self.post(body=_message("tools/call")[:-1] + b',"pad":"' + b"x" * 5000 + b'"}')
        self.post(body=_message("tools/call") + b" " * 5000)
        self.assertEqual(_denials(self.metrics, "other"), 1.0)
        self.assertEqual(_denials(self.metrics, "unknown"), 2.0)
        self.assertEqual(_denials(self.metrics, "tools/call"), 1.0)

    def test_non_bearer_empty_and_unknown_credentials_are_refused(self) -> None:
        for header in ("Basic a2V5Og==", "Bearer", "Bearer   ", "Bearer wrong", f"Bearer\t{KEY}"):
            response, _ = self.post(headers={"Authorization": header})
            self.assertEqual(response.code, 401, header)
        self.assertEqual(self.inner.seen, [])
        self.assertEqual(_denials(self.metrics, "tools/list"), 5.0)


class AdmissionTests(_Harness, SynchronousTestCase):
    def setUp(self) -> None:
        self.mount(CredentialPolicy(shared_key=KEY, checkers=(_scoped_checker(),)))

    def test_shared_key_reaches_the_handler_with_the_shared_principal(self) -> None:
        response, body = self.post(headers={"Authorization": f"Bearer {KEY}"})
        self.assertEqual(response.code, 200)
        self.assertIn(b"serverInfo", body)
        principal, content, _, _ = self.inner.seen[0]
        self.assertEqual(principal.key, "shared")
        self.assertEqual(content, _message("tools/list"))

    def test_scoped_token_reaches_the_handler_with_its_principal(self) -> None:
        response, _ = self.post(headers={"Authorization": f"bearer {SCOPED}"})
        self.assertEqual(response.code, 200)
        self.assertEqual(self.inner.seen[0][0].key, "scoped|tenant-a|ws-a|sub-a")
        self.assertEqual(_denials(self.metrics, "tools/list"), 0.0)

    def test_large_body_reaches_the_handler_whole(self) -> None:
        body = (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":"' + b"y" * 9000 + b'"}}'
        )
        self.post(headers={"Authorization": f"Bearer {KEY}"}, body=body)
        self.assertEqual(self.inner.seen[0][1], body)


class OpenModeTests(_Harness, SynchronousTestCase):
    def test_demo_mode_serves_headerless_requests_without_a_principal(self) -> None:
        self.mount(CredentialPolicy())
        response, _ = self.post()
        self.assertEqual(response.code, 200)
        self.assertIsNone(self.inner.seen[0][0])

    def test_demo_mode_refuses_an_unknown_bearer(self) -> None:
        self.mount(CredentialPolicy())
        response, _ = self.post(headers={"Authorization": "Bearer guess"})
        self.assertEqual(response.code, 401)
        self.assertEqual(self.inner.seen, [])

    def test_public_guard_is_the_inner_resource(self) -> None:
        inner = CatalogAnswer()
        self.assertIs(guard(inner, CredentialPolicy(shared_key=KEY), public=True), inner)


class TraversalTests(SynchronousTestCase):
    def test_guarded_tree_is_traversed_below_the_wrapper(self) -> None:
        leaf = CatalogAnswer()
        repositories = Resource()
        repositories.putChild(b"list", leaf)
        api = Resource()
        api.putChild(b"repositories", repositories)
        v0 = guard(api, CredentialPolicy(shared_key=KEY))
        api_root = Resource()
        api_root.putChild(b"v0", v0)
        root = Resource()
        root.putChild(b"api", api_root)
        stub = StubTreq(root)
        response = self.successResultOf(
            stub.get(URL + "/api/v0/repositories/list", headers={"Authorization": f"Bearer {KEY}"})
        )
        self.assertEqual(response.code, 200)
        _, _, prepath, postpath = leaf.seen[0]
        self.assertEqual(prepath, [b"api", b"v0", b"repositories", b"list"])
        self.assertEqual(postpath, [])
        refused = self.successResultOf(stub.get(URL + "/api/v0/repositories/list"))
        self.assertEqual(refused.code, 401)
        self.assertEqual(len(leaf.seen), 1)


class StreamingTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.metrics = Metrics(CollectorRegistry())
        self.stream = EventStream()
        root = Resource()
        root.putChild(
            b"sse",
            guard(
                self.stream,
                CredentialPolicy(shared_key=KEY),
                metrics=self.metrics,
                method_label=lambda request: "sse",
            ),
        )
        self.stub = StubTreq(root)

    def test_authorized_stream_keeps_streaming_after_the_guard(self) -> None:
        response = self.successResultOf(
            self.stub.get(URL + "/sse", headers={"Authorization": f"Bearer {KEY}"}, unbuffered=True)
        )
        chunks: list[bytes] = []
        done = collect(response, chunks.append)
        self.stub.flush()
        self.assertEqual(
            b"".join(chunks), b"event: endpoint\ndata: /mcp/message?sessionId=sess_1\n\n"
        )
        (request,) = self.stream.open
        request.write(b"event: message\ndata: {}\n\n")
        self.stub.flush()
        self.assertIn(b"event: message", b"".join(chunks))
        request.finish()
        self.stub.flush()
        self.successResultOf(done)

    def test_headerless_stream_is_refused_without_a_session(self) -> None:
        response = self.successResultOf(self.stub.get(URL + "/sse"))
        body = self.successResultOf(response.content())
        self.assertEqual(response.code, 401)
        self.assertNotIn(b"endpoint", body)
        self.assertNotIn(b"sess_", body)
        self.assertEqual(self.stream.open, [])
        self.assertEqual(_denials(self.metrics, "sse"), 1.0)


class AsynchronousResolutionTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.checker = SlowChecker()
        self.inner = CatalogAnswer()
        self.resource = guard(
            self.inner, CredentialPolicy(shared_key=KEY, checkers=(self.checker,))
        )

    def request(self) -> Request:
        request = Request(DummyChannel())
        request.method = b"POST"
        request.content = io.BytesIO(_message("tools/list"))
        request.requestHeaders.setRawHeaders(b"authorization", [b"Bearer slow"])
        return request

    def test_handler_runs_once_the_resolver_answers(self) -> None:
        request = self.request()
        self.assertEqual(self.resource.render(request), NOT_DONE_YET)
        self.assertEqual(self.inner.seen, [])
        self.checker.pending[0].callback(SCOPED_PRINCIPAL)
        self.assertEqual(self.inner.seen[0][0], SCOPED_PRINCIPAL)
        self.assertTrue(request.finished)

    def test_client_leaving_during_resolution_cancels_it_and_skips_the_handler(self) -> None:
        request = self.request()
        self.resource.render(request)
        request.connectionLost(Failure(ConnectionDone()))
        self.assertEqual(self.checker.cancelled, 1)
        self.assertEqual(self.inner.seen, [])


class ScopedRouteTests(_Harness, SynchronousTestCase):
    def test_scoped_caller_on_a_route_off_the_allowlist_gets_403(self) -> None:
        self.mount(
            CredentialPolicy(shared_key=KEY, checkers=(_scoped_checker(),)),
            scoped_allowed=lambda request: False,
        )
        response, body = self.post(headers={"Authorization": f"Bearer {SCOPED}"})
        self.assertEqual(response.code, 403)
        self.assertEqual(json.loads(body)["error_code"], "permission_denied")
        self.assertEqual(
            json.loads(body)["message"], "scoped authorization is not yet enabled for this route"
        )
        self.assertEqual(self.inner.seen, [])
        self.assertEqual(_denials(self.metrics, "tools/list"), 1.0)
        shared, _ = self.post(headers={"Authorization": f"Bearer {KEY}"})
        self.assertEqual(shared.code, 200)


class ChallengeHeaderTests(_Harness, SynchronousTestCase):
    def test_missing_credential_gets_the_resource_metadata_challenge(self) -> None:
        discovery = build_discovery(
            "https://eshu.example.com/mcp", lambda: ("https://login.example.com",)
        )
        self.mount(
            CredentialPolicy(resource_uri="https://eshu.example.com/mcp", discovery=discovery)
        )
        response, _ = self.post()
        self.assertEqual(
            response.headers.getRawHeaders("www-authenticate"),
            [
                'Bearer resource_metadata="https://eshu.example.com/.well-known/'
                'oauth-protected-resource/mcp", scope="openid profile email groups"'
            ],
        )


class Broken(Resource):
    isLeaf = True

    def render(self, request) -> bytes:
        raise RuntimeError("handler bug")


class FailingHandlerTests(_Harness, SynchronousTestCase):
    def test_handler_exception_after_admission_is_a_500(self) -> None:
        self.mount(CredentialPolicy(shared_key=KEY), inner=Broken())
        response, body = self.post(headers={"Authorization": f"Bearer {KEY}"})
        self.assertEqual(response.code, 500)
        self.assertNotIn(b"handler bug", body)
        self.assertEqual(len(self.flushLoggedErrors(RuntimeError)), 1)
        self.assertEqual(_denials(self.metrics, "tools/list"), 0.0)
