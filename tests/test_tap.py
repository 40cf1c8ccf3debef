"""twistd eshu-mcp: options, validation, the plugin and makeService."""

import os

from twisted.application.service import IServiceMaker
from twisted.internet.testing import MemoryReactorClock
from twisted.plugin import getPlugins
from twisted.python.usage import UsageError
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.cli import StdioOptions
from eshu_mcp.tap import Options, is_loopback_listener, listener_interface, makeService


def parse(*argv: str) -> Options:
    options = Options()
    options.parseOptions(list(argv))
    return options


class OptionTests(SynchronousTestCase):
    def test_defaults(self):
        options = parse()
        self.assertEqual(options["listen"], ["tcp:8080:interface=127.0.0.1"])
        self.assertEqual(options["dispatch-timeout"], 30.0)
        self.assertEqual(options["response-budget"], 262144)
        self.assertEqual(options["backend"], "local")
        self.assertEqual(options.server_settings().answer_detail, "compact")
        self.assertTrue(options.loopback_only)

    def test_toolsets_accepts_the_named_selections_and_toolsets(self):
        for value in ("core", "available", "all", "core,graph"):
            self.assertEqual(parse("--toolsets", value).server_settings().toolsets, value)
        self.assertIsNone(parse().server_settings().toolsets)

    def test_help_names_core_as_the_local_default(self):
        help_text = " ".join(Options().getUsage(width=80).split())
        self.assertIn("'core'", help_text)
        self.assertIn("default: core for the local backend", help_text)

    def test_bounds_default_to_100_messages_and_4_mib_and_reach_the_server(self):
        defaults = parse().server_settings()
        self.assertEqual((defaults.max_batch, defaults.max_message_bytes), (100, 4 * 1024 * 1024))
        chosen = parse("--max-batch", "7", "--max-message-bytes", "65536").server_settings()
        self.assertEqual((chosen.max_batch, chosen.max_message_bytes), (7, 65536))
        help_text = " ".join(Options().getUsage(width=80).split())
        self.assertIn("--max-batch=", help_text)
        self.assertIn("--max-message-bytes=", help_text)

    def test_hostile_client_bounds_have_defaults_and_reach_the_server(self):
        options = parse()
        defaults = options.server_settings()
        self.assertEqual((defaults.max_concurrent_calls, defaults.max_queued_calls), (4, 256))
        self.assertEqual((options["max-pipelined"], options["max-queued-bytes"]), (16, 1 << 20))
        chosen = parse("--max-concurrent-calls", "2", "--max-queued-calls", "9").server_settings()
        self.assertEqual((chosen.max_concurrent_calls, chosen.max_queued_calls), (2, 9))
        help_text = " ".join(Options().getUsage(width=80).split())
        for option in ("concurrent-calls", "queued-calls", "pipelined", "queued-bytes"):
            self.assertIn(f"--max-{option}=", help_text)

    def test_session_bounds_default_to_30_minutes_and_10000(self):
        options = parse()
        self.assertEqual(
            (options["session-idle-timeout"], options["max-sessions"]), (1800.0, 10000)
        )
        service = makeService(
            parse(
                "--backend",
                "upstream",
                "--upstream-url",
                "http://127.0.0.1:1",
                "--session-idle-timeout",
                "90",
                "--max-sessions",
                "5",
            ),
            reactor=MemoryReactorClock(),
        )
        from eshu_mcp.transport.streamable import StreamableSessionRegistry

        (registry,) = [child for child in service if isinstance(child, StreamableSessionRegistry)]
        self.assertEqual((registry.idle_timeout, registry.max_sessions), (90.0, 5))

    def test_public_metrics_is_an_opt_in_flag(self):
        self.assertFalse(parse()["public-metrics"])
        self.assertTrue(parse("--public-metrics")["public-metrics"])
        self.assertIn("--public-metrics", Options().getUsage(width=80))

    def test_answer_detail_full_reaches_the_server_settings(self):
        self.assertEqual(parse("--answer-detail", "full").server_settings().answer_detail, "full")

    def test_answer_page_reaches_the_server_settings_and_refuses_a_negative_size(self):
        self.assertEqual(parse().server_settings().answer_page, 12288)
        self.assertEqual(parse("--answer-page", "0").server_settings().answer_page, 0)
        with self.assertRaises(UsageError) as raised:
            parse("--answer-page", "-1")
        self.assertIn("--answer-page must be 0 (off) or a number of bytes", str(raised.exception))

    def test_answer_rows_reaches_the_server_settings_and_refuses_a_negative_count(self):
        self.assertEqual(parse().server_settings().answer_rows, 10)
        self.assertEqual(parse("--answer-rows", "0").server_settings().answer_rows, 0)
        with self.assertRaises(UsageError) as raised:
            parse("--answer-rows", "-1")
        self.assertIn("--answer-rows must be 0", str(raised.exception))

    def test_a_repo_is_watched_unless_no_watch_says_otherwise(self):
        here = self.mktemp()
        os.makedirs(here)
        self.assertTrue(parse("--repo", here).backend_settings().watch)
        self.assertTrue(parse("--repo", here, "--watch").backend_settings().watch)
        self.assertFalse(parse("--repo", here, "--no-watch").backend_settings().watch)
        self.assertFalse(parse().backend_settings().watch)  # nothing to watch
        with self.assertRaises(UsageError) as raised:
            parse("--repo", here, "--watch", "--no-watch")
        self.assertIn("contradict", str(raised.exception))

    def test_listen_is_repeatable(self):
        options = parse("--listen", "tcp:8080:interface=127.0.0.1", "--listen", "unix:/tmp/x.sock")
        self.assertEqual(len(options["listen"]), 2)
        self.assertTrue(options.loopback_only)

    def test_bad_values_are_refused_with_a_sentence(self):
        cases = {
            ("--dispatch-timeout", "0"): "--dispatch-timeout must be a positive",
            ("--response-budget", "10"): "--response-budget must be at least",
            ("--listen", "carrier-pigeon"): "is not an endpoint description",
            ("--toolsets", "code,nonsense"): "is not a list of toolsets",
            ("--backend", "neo4j"): "--backend must be 'local' or 'upstream'",
            ("--backend", "upstream"): "--backend upstream needs --upstream-url",
            ("--repo", "/definitely/not/here"): "is not a directory",
            ("--watch",): "--watch needs at least one --repo",
            ("--page-size", "0"): "--page-size must be between 1 and 1000",
            ("--answer-detail", "lean"): "--answer-detail must be 'compact' or 'full'",
            ("--max-batch", "0"): "--max-batch must be at least 1",
            ("--session-idle-timeout", "0"): "--session-idle-timeout must be a positive",
            ("--max-sessions", "0"): "--max-sessions must be at least 1",
            ("--max-message-bytes", "10"): "--max-message-bytes must be at least 1024",
            ("--max-concurrent-calls", "0"): "--max-concurrent-calls must be at least 1",
            ("--max-queued-calls", "-1"): "--max-queued-calls must be 0 or more",
            ("--max-pipelined", "-1"): "--max-pipelined must be 0 or more",
            ("--max-queued-bytes", "1000"): "--max-queued-bytes must be at least 65536",
        }
        for argv, message in cases.items():
            with self.assertRaises(UsageError) as raised:
                parse(*argv)
            self.assertIn(message, str(raised.exception), argv)

    def test_listener_interfaces(self):
        self.assertEqual(listener_interface("tcp:8080:interface=127.0.0.1"), "127.0.0.1")
        self.assertEqual(listener_interface("tcp:8080"), "")
        self.assertEqual(listener_interface("tcp:port=8080:interface=\\:\\:1"), "::1")
        self.assertIsNone(listener_interface("tcp:http"))
        self.assertTrue(is_loopback_listener("tcp6:8080:interface=\\:\\:1"))
        self.assertFalse(is_loopback_listener("tcp:8080:interface=0.0.0.0"))
        self.assertFalse(is_loopback_listener("tcp:8080"))


class PluginTests(SynchronousTestCase):
    def test_twistd_finds_the_plugin(self):
        names = [plugin.tapname for plugin in getPlugins(IServiceMaker)]
        self.assertIn("eshu-mcp", names)


class MakeServiceTests(SynchronousTestCase):
    def test_listens_where_told_and_stops_cleanly(self):
        reactor = MemoryReactorClock()
        options = parse(
            "--backend",
            "upstream",
            "--upstream-url",
            "http://127.0.0.1:1",
            "--listen",
            "tcp:8123:interface=127.0.0.1",
        )
        service = makeService(options, reactor=reactor)
        service.startService()
        self.assertEqual(
            [(port, interface) for port, _, _, interface in reactor.tcpServers],
            [(8123, "127.0.0.1")],
        )
        self.successResultOf(service.stopService())

    def test_public_listener_without_credentials_is_refused(self):
        options = parse(
            "--backend", "upstream", "--upstream-url", "http://127.0.0.1:1", "--listen", "tcp:8124"
        )
        with self.assertRaises(SystemExit) as raised:
            makeService(options, reactor=MemoryReactorClock())
        # SystemExit with a message: printed as one line, exit status 1, no traceback.
        message = raised.exception.code
        self.assertIsInstance(message, str)
        self.assertTrue(message.startswith("eshu-mcp: refusing to serve HTTP"))
        self.assertIn("ESHU_MCP_ALLOW_UNAUTHENTICATED", message)
        self.assertNotIn("\n", message)

    def test_started_is_logged_after_every_listener_is_bound(self):
        from twisted.logger import globalLogPublisher

        reactor = MemoryReactorClock()
        options = parse(
            "--backend",
            "upstream",
            "--upstream-url",
            "http://127.0.0.1:1",
            "--listen",
            "tcp:8125:interface=127.0.0.1",
            "--listen",
            "tcp:8126:interface=127.0.0.1",
        )
        seen = []

        def observe(event):
            if "mcp server started" in event.get("log_format", ""):
                seen.append((len(reactor.tcpServers), event["listen"]))

        globalLogPublisher.addObserver(observe)
        self.addCleanup(globalLogPublisher.removeObserver, observe)
        service = makeService(options, reactor=reactor)
        self.assertEqual(seen, [])
        service.startService()
        self.assertEqual(len(seen), 1)
        self.assertEqual(seen[0][0], 2)
        self.successResultOf(service.stopService())


class AccessLogTests(SynchronousTestCase):
    """One log line per request only with --access-log."""

    def logged_lines(self, *flags: str) -> list[str]:
        from twisted.logger import formatEvent, globalLogPublisher

        from tests.support import HttpExchange

        reactor = MemoryReactorClock()
        options = parse(
            "--backend",
            "upstream",
            "--upstream-url",
            "http://127.0.0.1:1",
            "--listen",
            "tcp:8127:interface=127.0.0.1",
            *flags,
        )
        service = makeService(options, reactor=reactor)
        service.startService()
        self.addCleanup(service.stopService)
        site = reactor.tcpServers[0][1]
        site.startFactory()
        self.addCleanup(site.stopFactory)
        seen: list[str] = []

        def observe(event):
            text = formatEvent(event)
            if "/healthz" in text:
                seen.append(text)

        globalLogPublisher.addObserver(observe)
        self.addCleanup(globalLogPublisher.removeObserver, observe)
        exchange = HttpExchange(site)
        exchange.request(b"GET", b"/healthz")
        self.assertEqual(exchange.response().status, 200)
        return seen

    def test_requests_are_not_logged_by_default(self):
        self.assertEqual(self.logged_lines(), [])

    def test_access_log_writes_one_line_per_request(self):
        lines = self.logged_lines("--access-log")
        self.assertEqual(len(lines), 1)
        self.assertIn('"GET /healthz HTTP/1.1" 200', lines[0])


class CredentialFilesOptionTests(SynchronousTestCase):
    """``--serve-credential-files`` reaches the index builder from twistd and stdio."""

    def test_it_reaches_the_backend_settings_from_both_entry_points(self):
        directory = self.mktemp()
        os.makedirs(directory)
        served = parse("--repo", directory, "--serve-credential-files")
        self.assertTrue(served.backend_settings().serve_credential_files)
        self.assertFalse(parse("--repo", directory).backend_settings().serve_credential_files)
        stdio = StdioOptions.make()
        stdio.parseOptions(["--repo", directory, "--serve-credential-files"])
        self.assertTrue(stdio.backend_settings().serve_credential_files)

    def test_without_a_repository_to_index_it_is_refused(self):
        with self.assertRaises(UsageError) as caught:
            parse("--serve-credential-files")
        self.assertIn("eshu-mcp index", str(caught.exception))
