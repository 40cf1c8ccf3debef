"""RFC 9728 discovery: metadata URL derivation, the well-known document and its gates."""

import json

from treq.testing import StubTreq
from twisted.internet.testing import EventLoggingObserver
from twisted.logger import formatEvent, globalLogPublisher
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.resource import Resource

from eshu_mcp.auth.discovery import ProtectedResourceMetadata, build_discovery, metadata_url

ISSUERS = ("https://login.example.com",)


class MetadataUrlTests(SynchronousTestCase):
    def test_path_resource_puts_the_path_after_the_well_known_segment(self) -> None:
        self.assertEqual(
            metadata_url("https://h/mcp"), "https://h/.well-known/oauth-protected-resource/mcp"
        )
        self.assertEqual(
            metadata_url(" https://h:8443/a/b/ "),
            "https://h:8443/.well-known/oauth-protected-resource/a/b",
        )

    def test_host_only_resource_uses_the_bare_well_known_path(self) -> None:
        for resource in ("https://h", "https://h/"):
            self.assertEqual(
                metadata_url(resource), "https://h/.well-known/oauth-protected-resource"
            )

    def test_loopback_http_is_accepted(self) -> None:
        for resource in ("http://localhost:8080/mcp", "http://127.0.0.1/mcp", "http://[::1]:9/mcp"):
            self.assertIsNotNone(metadata_url(resource), resource)
        self.assertEqual(
            metadata_url("http://localhost:8080/mcp"),
            "http://localhost:8080/.well-known/oauth-protected-resource/mcp",
        )

    def test_invalid_resources_are_rejected(self) -> None:
        for resource in (
            "",
            "   ",
            "http://h/mcp",
            "ftp://h/mcp",
            "h/mcp",
            "//h/mcp",
            "https://h/mcp?x=1",
            "https://h/mcp?",
            "https://h/mcp#f",
            "https://h/m%22cp",
            "https://h/%0d%0a",
            "https://h%0d%0a/mcp",
            'https://h/m"cp',
            "https://h/m\ncp",
            "https:///mcp",
            "https://h:notaport/mcp",
        ):
            self.assertIsNone(metadata_url(resource), resource)


class DocumentTests(SynchronousTestCase):
    def serve(self, resource_uri: str, issuers=lambda: ISSUERS, **extra: str) -> StubTreq:
        discovery = build_discovery(resource_uri, issuers, **extra)
        assert discovery is not None
        well_known = Resource()
        well_known.putChild(b"oauth-protected-resource", ProtectedResourceMetadata(discovery))
        root = Resource()
        root.putChild(b".well-known", well_known)
        return StubTreq(root)

    def get(self, stub: StubTreq, path: str):
        response = self.successResultOf(stub.get("https://eshu.example.com" + path))
        return response, self.successResultOf(response.content())

    def test_document_is_served_with_its_fields_in_order(self) -> None:
        stub = self.serve("https://eshu.example.com/mcp")
        response, body = self.get(stub, "/.well-known/oauth-protected-resource/mcp")
        self.assertEqual(response.code, 200)
        self.assertEqual(response.headers.getRawHeaders("cache-control"), ["public, max-age=60"])
        self.assertEqual(
            response.headers.getRawHeaders("content-type"), ["application/json; charset=utf-8"]
        )
        self.assertEqual(
            body,
            b'{"resource":"https://eshu.example.com/mcp",'
            b'"authorization_servers":["https://login.example.com"],'
            b'"bearer_methods_supported":["header"],'
            b'"scopes_supported":["openid","profile","email","groups"],'
            b'"resource_name":"Eshu MCP Server"}\n',
        )

    def test_bare_well_known_path_is_served_too(self) -> None:
        response, body = self.get(
            self.serve("https://eshu.example.com/mcp"), "/.well-known/oauth-protected-resource"
        )
        self.assertEqual(response.code, 200)
        self.assertEqual(json.loads(body)["resource"], "https://eshu.example.com/mcp")

    def test_optional_fields_appear_only_when_set(self) -> None:
        stub = self.serve(
            "https://eshu.example.com",
            documentation="https://docs.example.com/mcp",
            preregistered_client_id="eshu-cli",
        )
        _, body = self.get(stub, "/.well-known/oauth-protected-resource")
        document = json.loads(body)
        self.assertEqual(
            list(document)[-2:], ["resource_documentation", "eshu_preregistered_client_id"]
        )
        self.assertEqual(document["eshu_preregistered_client_id"], "eshu-cli")

    def test_other_suffixes_are_not_found(self) -> None:
        stub = self.serve("https://eshu.example.com/mcp")
        for path in ("/MCP", "/mcp/extra", "/other"):
            response, _ = self.get(stub, "/.well-known/oauth-protected-resource" + path)
            self.assertEqual(response.code, 404, path)

    def test_without_an_active_issuer_the_document_is_not_found(self) -> None:
        stub = self.serve("https://eshu.example.com/mcp", issuers=lambda: ())
        response, body = self.get(stub, "/.well-known/oauth-protected-resource/mcp")
        self.assertEqual(response.code, 404)
        self.assertNotIn(b"resource", body)

    def test_failing_posture_is_a_500_with_a_fixed_body(self) -> None:
        def broken() -> tuple[str, ...]:
            raise RuntimeError("provider store unavailable")

        stub = self.serve("https://eshu.example.com/mcp", issuers=broken)
        response, body = self.get(stub, "/.well-known/oauth-protected-resource/mcp")
        self.assertEqual(response.code, 500)
        self.assertEqual(
            body, b'{"detail":"failed to derive auth posture","error":"Internal Server Error"}\n'
        )
        self.flushLoggedErrors(RuntimeError)


class PostureTests(SynchronousTestCase):
    def test_invalid_or_missing_resource_gives_no_discovery(self) -> None:
        self.assertIsNone(build_discovery("http://h/mcp", lambda: ISSUERS))
        self.assertIsNone(build_discovery("", lambda: ISSUERS))

    def test_challenge_points_at_the_metadata_url_with_scopes(self) -> None:
        discovery = build_discovery("https://h/mcp", lambda: ISSUERS)
        self.assertEqual(
            discovery.challenge(),
            'Bearer resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", '
            'scope="openid profile email groups"',
        )
        self.assertTrue(discovery.active())


class PolicyFacadeTests(SynchronousTestCase):
    def test_metadata_resource_exists_only_with_discovery(self) -> None:
        from eshu_mcp.auth import CredentialPolicy, protected_resource_metadata

        self.assertIsNone(protected_resource_metadata(CredentialPolicy(shared_key="k")))
        discovery = build_discovery("https://h/mcp", lambda: ISSUERS)
        resource = protected_resource_metadata(CredentialPolicy(discovery=discovery))
        self.assertIsInstance(resource, ProtectedResourceMetadata)

    def test_enabling_and_disabling_are_logged_with_their_fields(self) -> None:
        observer = EventLoggingObserver.createWithCleanup(self, globalLogPublisher)
        build_discovery("https://h/mcp", lambda: ISSUERS)
        build_discovery("https://h/mcp?x=1", lambda: ISSUERS)
        enabled, disabled = observer
        self.assertEqual(formatEvent(enabled), "oauth discovery enabled")
        self.assertEqual(enabled["resource"], "https://h/mcp")
        self.assertEqual(
            enabled["metadata_url"], "https://h/.well-known/oauth-protected-resource/mcp"
        )
        self.assertEqual(disabled["event_name"], "runtime.startup.warning")
        self.assertTrue(formatEvent(disabled).startswith("oauth discovery disabled: "))
