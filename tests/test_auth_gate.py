"""The startup gate and the posture log lines."""

from twisted.internet.testing import EventLoggingObserver
from twisted.logger import LogLevel, formatEvent, globalLogPublisher
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.auth.gate import allow_unauthenticated, announce_posture, startup_refusal
from eshu_mcp.auth.policy import CredentialPolicy

OPEN = CredentialPolicy()
SHARED = CredentialPolicy(shared_key="k")
SCOPED = CredentialPolicy(scoped_tokens_file="/etc/eshu/tokens.json")
OIDC = CredentialPolicy(resource_uri="https://eshu.example.com/mcp")


class RefusalTests(SynchronousTestCase):
    def test_unconfigured_daemon_on_a_public_listener_is_refused(self) -> None:
        sentence = startup_refusal(OPEN, listening_loopback_only=False, allow_unauthenticated=False)
        for name in (
            "ESHU_API_KEY",
            "ESHU_AUTO_GENERATE_API_KEY=true",
            "ESHU_SCOPED_TOKENS_FILE",
            "ESHU_AUTH_RESOURCE_URI",
            "ESHU_MCP_ALLOW_UNAUTHENTICATED",
        ):
            self.assertIn(name, sentence)
        self.assertIn("loopback or development use only", sentence)

    def test_any_credential_source_lets_the_daemon_start_anywhere(self) -> None:
        for policy in (SHARED, SCOPED, OIDC):
            self.assertIsNone(
                startup_refusal(policy, listening_loopback_only=False, allow_unauthenticated=False)
            )

    def test_loopback_only_daemon_starts_open(self) -> None:
        self.assertIsNone(
            startup_refusal(OPEN, listening_loopback_only=True, allow_unauthenticated=False)
        )

    def test_escape_hatch_lets_a_public_daemon_start_open(self) -> None:
        self.assertIsNone(
            startup_refusal(OPEN, listening_loopback_only=False, allow_unauthenticated=True)
        )

    def test_escape_hatch_reads_eshu_truthy_spellings(self) -> None:
        self.assertTrue(allow_unauthenticated({"ESHU_MCP_ALLOW_UNAUTHENTICATED": " On "}))
        self.assertFalse(allow_unauthenticated({"ESHU_MCP_ALLOW_UNAUTHENTICATED": "enabled"}))
        self.assertFalse(allow_unauthenticated({}))


class PostureLogTests(SynchronousTestCase):
    def events(self, policy: CredentialPolicy, **kwargs: bool) -> list[dict]:
        observer = EventLoggingObserver.createWithCleanup(self, globalLogPublisher)
        announce_posture(policy, **kwargs)
        return list(observer)

    def test_enforced_posture_is_one_info_line(self) -> None:
        (event,) = self.events(SHARED, listening_loopback_only=False, allow_unauthenticated=False)
        self.assertEqual(event["log_level"], LogLevel.info)
        self.assertEqual(event["event_name"], "auth.enforcement.configured")
        self.assertEqual(
            formatEvent(event),
            "headerless reads require authentication (a credential source is configured)",
        )

    def test_open_posture_is_a_warning_naming_the_sources(self) -> None:
        (event,) = self.events(OPEN, listening_loopback_only=True, allow_unauthenticated=False)
        self.assertEqual(event["log_level"], LogLevel.warn)
        self.assertEqual(event["event_name"], "auth.enforcement.open")
        self.assertIn("ESHU_SCOPED_TOKENS_FILE", formatEvent(event))

    def test_escape_hatch_on_a_public_listener_adds_the_startup_warning(self) -> None:
        events = self.events(OPEN, listening_loopback_only=False, allow_unauthenticated=True)
        self.assertEqual(
            [event["event_name"] for event in events],
            ["auth.enforcement.open", "runtime.startup.warning"],
        )
        self.assertIn("unauthenticated", formatEvent(events[1]))
