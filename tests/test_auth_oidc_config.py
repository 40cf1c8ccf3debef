"""The OIDC provider file: defaults, grants and fail-closed validation."""

import json
import os
import tempfile

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.auth.oidc_config import load_oidc_config, parse_oidc_config
from eshu_mcp.auth.testing import TokenIssuer

ISSUER = TokenIssuer("https://login.example.com", algorithm="ES256")


def _provider(**overrides: object) -> dict[str, object]:
    provider: dict[str, object] = {
        "id": "corp",
        "issuer": "https://login.example.com",
        "jwks": ISSUER.jwks(),
    }
    provider.update(overrides)
    return provider


class ParsingTests(SynchronousTestCase):
    def test_provider_defaults_fill_tenant_workspace_and_groups_claim(self) -> None:
        config = parse_oidc_config({"providers": [_provider()]})
        (provider,) = config.providers
        self.assertEqual(
            (provider.tenant_id, provider.workspace_id, provider.groups_claim, provider.enabled),
            ("default", "default", "groups", True),
        )
        self.assertEqual(len(provider.inline_keys), 1)
        self.assertEqual(provider.jwks_uri, "")

    def test_grants_are_read_with_their_lists(self) -> None:
        config = parse_oidc_config(
            {
                "version": 1,
                "providers": [_provider()],
                "grants": [
                    {
                        "provider": "corp",
                        "group": "payments",
                        "roles": ["reader"],
                        "allowed_repository_ids": ["repo://acme/payments", " "],
                        "extra": "ignored",
                    }
                ],
            }
        )
        (grant,) = config.grants
        self.assertEqual(grant.roles, ("reader",))
        self.assertEqual(grant.allowed_repository_ids, ("repo://acme/payments",))
        self.assertFalse(grant.all_scopes)

    def test_https_and_loopback_http_jwks_uris_are_accepted(self) -> None:
        for uri in ("https://login.example.com/keys", "http://127.0.0.1:9000/keys"):
            provider = _provider(jwks_uri=uri)
            del provider["jwks"]
            self.assertEqual(
                parse_oidc_config({"providers": [provider]}).providers[0].jwks_uri, uri
            )

    def test_empty_document_has_no_providers(self) -> None:
        self.assertEqual(parse_oidc_config({}).providers, ())


class ValidationTests(SynchronousTestCase):
    def assertInvalid(self, document: object, fragment: str) -> None:
        with self.assertRaises(ValueError) as caught:
            parse_oidc_config(document)
        self.assertIn(fragment, str(caught.exception))

    def test_provider_needs_id_and_issuer(self) -> None:
        self.assertInvalid({"providers": [_provider(id="")]}, "providers[0].id")
        self.assertInvalid({"providers": [_provider(issuer=" ")]}, "providers[0].issuer")

    def test_provider_needs_exactly_one_key_source(self) -> None:
        both = _provider(jwks_uri="https://login.example.com/keys")
        neither = _provider()
        del neither["jwks"]
        self.assertInvalid({"providers": [both]}, "exactly one of jwks or jwks_uri")
        self.assertInvalid({"providers": [neither]}, "exactly one of jwks or jwks_uri")

    def test_plain_http_jwks_uri_off_loopback_is_refused(self) -> None:
        provider = _provider(jwks_uri="http://login.example.com/keys")
        del provider["jwks"]
        self.assertInvalid({"providers": [provider]}, "https")

    def test_unusable_inline_key_set_is_refused(self) -> None:
        self.assertInvalid({"providers": [_provider(jwks={"keys": 1})]}, "providers[0].jwks")

    def test_duplicate_provider_id_is_refused(self) -> None:
        self.assertInvalid({"providers": [_provider(), _provider()]}, "providers[1].id")

    def test_grant_for_unknown_provider_is_refused(self) -> None:
        document = {
            "providers": [_provider()],
            "grants": [{"provider": "other", "group": "g", "roles": ["r"]}],
        }
        self.assertInvalid(document, "grants[0].provider")

    def test_grant_needs_group_and_typed_fields(self) -> None:
        base = {"provider": "corp", "group": "g", "roles": ["r"]}
        for bad, fragment in (
            ({**base, "group": ""}, "grants[0].group"),
            ({**base, "roles": "reader"}, "grants[0].roles"),
            ({**base, "all_scopes": 1}, "grants[0].all_scopes"),
        ):
            self.assertInvalid({"providers": [_provider()], "grants": [bad]}, fragment)

    def test_wrong_version_or_shape_is_refused(self) -> None:
        self.assertInvalid({"version": 2}, "version")
        self.assertInvalid([], "top level")
        self.assertInvalid({"providers": {}}, '"providers"')


class FileTests(SynchronousTestCase):
    def write(self, text: str) -> str:
        handle, path = tempfile.mkstemp(suffix=".json")
        with os.fdopen(handle, "w") as stream:
            stream.write(text)
        self.addCleanup(os.remove, path)
        return path

    def test_file_errors_name_the_variable_and_the_problem(self) -> None:
        for path, fragment in (
            ("/nonexistent/oidc.json", "cannot be read"),
            (self.write("{"), "not valid JSON"),
            (self.write(json.dumps({"providers": [_provider(id="")]})), "providers[0].id"),
        ):
            with self.assertRaises(ValueError) as caught:
                load_oidc_config(path)
            self.assertIn("ESHU_AUTH_OIDC_CONFIG_FILE", str(caught.exception))
            self.assertIn(fragment, str(caught.exception))

    def test_valid_file_loads(self) -> None:
        path = self.write(json.dumps({"version": 1, "providers": [_provider()]}))
        self.assertEqual(load_oidc_config(path).providers[0].id, "corp")
