"""
``twistd eshu-mcp``: options and ``makeService``.

This is the only module that wires the reactor into the daemon's services.
"""

import os
import sys
from pathlib import Path

from twisted.application.service import MultiService
from twisted.logger import Logger
from twisted.python import usage

from eshu_mcp import __version__
from eshu_mcp.catalog.toolsets import SELECTIONS, available_toolsets
from eshu_mcp.dispatch.budget import DEFAULT_ANSWER_PAGE, DEFAULT_RESPONSE_BUDGET
from eshu_mcp.dispatch.first_page import DEFAULT_ANSWER_ROWS
from eshu_mcp.dispatch.inprocess import DEFAULT_DISPATCH_TIMEOUT
from eshu_mcp.listeners import Listeners
from eshu_mcp.protocol.admission import DEFAULT_MAX_CONCURRENT_CALLS, DEFAULT_MAX_QUEUED_CALLS
from eshu_mcp.protocol.jsonrpc import DEFAULT_MAX_BATCH, DEFAULT_MAX_MESSAGE_BYTES
from eshu_mcp.protocol.server import DEFAULT_PAGE_SIZE
from eshu_mcp.query.local.index.store.database import default_db_path
from eshu_mcp.service import BackendSettings, ServerSettings
from eshu_mcp.transport.channel import DEFAULT_MAX_PIPELINED, DEFAULT_REQUEST_TIMEOUT
from eshu_mcp.transport.http import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_SESSIONS_PER_CLIENT,
    is_loopback_host,
)
from eshu_mcp.transport.stream import DEFAULT_KEEPALIVE, DEFAULT_QUEUE_BYTES

log = Logger()

DEFAULT_LISTEN = "tcp:8080:interface=127.0.0.1"
TRUTHY = frozenset({"1", "true", "t", "yes", "y", "on"})


def _positive_float(value: str) -> float:
    number = float(value)
    if not number > 0:
        raise ValueError(value)
    return number


def _comma_list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


class QueryOptions(usage.Options):
    """Options every entry point shares: the query backend and the catalog."""

    optFlags = [
        [
            "watch",
            "w",
            "Re-index the --repo repositories when their files change (the default; kept "
            "for older launch lines).",
        ],
        [
            "no-watch",
            None,
            "Index the --repo repositories once at start and do not watch them (answers "
            "then say 'stale' when the work tree moves on).",
        ],
        [
            "whole-index",
            None,
            "With --repo: answer questions that name no repository from every repository in "
            "the index (default: only the --repo ones).",
        ],
        [
            "serve-credential-files",
            None,
            "With --repo: keep credential files (.env*, private keys, configuration with "
            "literal passwords, secrets or tokens) as text, read and searched like any file. "
            "Only on a trusted single-user setup; by default they are indexed for their facts "
            "and secret candidates only and reads answer 403.",
        ],
    ]
    optParameters = [
        [
            "db",
            None,
            None,
            "Embedded index file [default: $ESHU_MCP_DB or ~/.eshu/eshu-mcp.sqlite].",
        ],
        ["backend", None, "local", "Query backend: 'local' (embedded index) or 'upstream'."],
        ["upstream-url", None, None, "Base URL of a remote Eshu API (with --backend upstream)."],
        [
            "toolsets",
            None,
            None,
            "Comma list of toolsets to serve, or 'core' (the tools that answer every code "
            "question), 'available' (every tool the backend answers) or 'all' "
            "[default: core for the local backend, all for upstream].",
        ],
        ["exclude-tools", None, "", "Comma list of tools or toolsets to leave out."],
        [
            "dispatch-timeout",
            None,
            DEFAULT_DISPATCH_TIMEOUT,
            "Seconds a tool call may run before it is cancelled.",
            float,
        ],
        [
            "response-budget",
            None,
            DEFAULT_RESPONSE_BUDGET,
            "Largest tool answer in bytes (one wire copy with compact answers, both with full).",
            int,
        ],
        [
            "answer-detail",
            None,
            "compact",
            "Tool answers: 'compact' (lean rows, sent once, trimmed to the budget) or "
            "'full' (Eshu's HTTP shape, byte for byte).",
        ],
        [
            "answer-page",
            None,
            DEFAULT_ANSWER_PAGE,
            "Compact answers longer than this many bytes keep the rows that fit and give "
            "the offset of the rest (0: only --response-budget bounds them).",
            int,
        ],
        [
            "answer-rows",
            None,
            DEFAULT_ANSWER_ROWS,
            "Compact answers to calls that give no limit hold this many rows, with the "
            "offset of the next page (0: the tool's own default page size).",
            int,
        ],
        ["page-size", None, DEFAULT_PAGE_SIZE, "Tools per tools/list page.", int],
        [
            "max-batch",
            None,
            DEFAULT_MAX_BATCH,
            "Most messages in one JSON-RPC batch; a longer batch gets one -32600 error.",
            int,
        ],
        [
            "max-message-bytes",
            None,
            DEFAULT_MAX_MESSAGE_BYTES,
            "Largest JSON-RPC message in bytes (an HTTP body or a stdio line); a larger "
            "one is refused (HTTP 413, on stdio a -32600 error and the line skipped).",
            int,
        ],
        [
            "max-concurrent-calls",
            None,
            DEFAULT_MAX_CONCURRENT_CALLS,
            "Most tool calls one client (a session, or one message without a session) runs "
            "at once; its further calls wait their turn, so other clients are served meanwhile.",
            int,
        ],
        [
            "max-queued-calls",
            None,
            DEFAULT_MAX_QUEUED_CALLS,
            "Most tool calls one client may have waiting for a turn; beyond it a call gets "
            "a -32000 'server busy' error.",
            int,
        ],
    ]

    def __init__(self) -> None:
        super().__init__()
        self["repos"] = []

    def opt_repo(self, path: str) -> None:
        """Index this repository and serve it (repeatable)."""
        self["repos"].append(path)

    opt_r = opt_repo

    def postOptions(self) -> None:
        if self["backend"] not in ("local", "upstream"):
            raise usage.UsageError(
                f"--backend must be 'local' or 'upstream', not {self['backend']!r}"
            )
        if self["backend"] == "upstream":
            url = self["upstream-url"] or os.environ.get("ESHU_API_URL", "")
            if not url.startswith(("http://", "https://")):
                raise usage.UsageError(
                    "--backend upstream needs --upstream-url (or ESHU_API_URL) naming the "
                    "Eshu API, for example https://eshu.example.com"
                )
            self["upstream-url"] = url
            if self["repos"]:
                raise usage.UsageError(
                    "--repo indexes locally; it cannot go with --backend upstream"
                )
        for path in self["repos"]:
            if not Path(path).is_dir():
                raise usage.UsageError(f"--repo {path!r} is not a directory")
        self["repos"] = [str(Path(path).resolve()) for path in self["repos"]]
        if self["watch"] and not self["repos"]:
            raise usage.UsageError("--watch needs at least one --repo to watch")
        if self["serve-credential-files"] and not self["repos"]:
            raise usage.UsageError(
                "--serve-credential-files applies while indexing: give --repo, or pass it to"
                " `eshu-mcp index`"
            )
        if self["watch"] and self["no-watch"]:
            raise usage.UsageError("--watch and --no-watch contradict each other; give one")
        if not self["dispatch-timeout"] > 0:
            raise usage.UsageError("--dispatch-timeout must be a positive number of seconds")
        if self["response-budget"] < 1024:
            raise usage.UsageError("--response-budget must be at least 1024 bytes")
        if self["answer-detail"] not in ("compact", "full"):
            raise usage.UsageError(
                f"--answer-detail must be 'compact' or 'full', not {self['answer-detail']!r}"
            )
        if self["answer-page"] < 0:
            raise usage.UsageError("--answer-page must be 0 (off) or a number of bytes")
        if self["answer-rows"] < 0:
            raise usage.UsageError("--answer-rows must be 0 (the tools' defaults) or a row count")
        if not 1 <= self["page-size"] <= 1000:
            raise usage.UsageError("--page-size must be between 1 and 1000")
        if self["max-batch"] < 1:
            raise usage.UsageError("--max-batch must be at least 1")
        if self["max-message-bytes"] < 1024:
            raise usage.UsageError("--max-message-bytes must be at least 1024")
        if self["max-concurrent-calls"] < 1:
            raise usage.UsageError("--max-concurrent-calls must be at least 1")
        if self["max-queued-calls"] < 0:
            raise usage.UsageError("--max-queued-calls must be 0 or more")
        if self["toolsets"] is not None:
            known = {*SELECTIONS, *available_toolsets()}
            unknown = [name for name in _comma_list(self["toolsets"]) if name not in known]
            if unknown or not _comma_list(self["toolsets"]):
                raise usage.UsageError(
                    f"--toolsets {self['toolsets']!r} is not a list of toolsets; choose from "
                    + ", ".join(sorted(known))
                )
        self["db"] = self["db"] or str(default_db_path())

    def server_settings(self) -> ServerSettings:
        """The protocol-side settings these options describe."""
        return ServerSettings(
            toolsets=self["toolsets"],
            exclude_tools=tuple(_comma_list(self["exclude-tools"])),
            dispatch_timeout=self["dispatch-timeout"],
            response_budget=self["response-budget"],
            page_size=self["page-size"],
            answer_detail=self["answer-detail"],
            answer_page=self["answer-page"],
            answer_rows=self["answer-rows"],
            max_batch=self["max-batch"],
            max_message_bytes=self["max-message-bytes"],
            max_concurrent_calls=self["max-concurrent-calls"],
            max_queued_calls=self["max-queued-calls"],
        )

    def backend_settings(self) -> BackendSettings:
        """The query backend these options describe."""
        return BackendSettings(
            kind=self["backend"],
            db_path=self["db"],
            repos=tuple(self["repos"]),
            watch=bool(self["repos"]) and not self["no-watch"],
            whole_index=self["whole-index"],
            serve_credential_files=bool(self["serve-credential-files"]),
            upstream_url=self["upstream-url"] or "",
            upstream_token=os.environ.get("ESHU_UPSTREAM_API_KEY", ""),
        )


class Options(QueryOptions):
    """Options for ``twistd eshu-mcp``."""

    synopsis = "[--listen ENDPOINT ...] [--repo PATH ...] [options]"
    longdesc = (
        "Serve Eshu's read-only code-intelligence tools to MCP clients over legacy HTTP+SSE "
        "(GET /sse, POST /mcp/message) and Streamable HTTP (/mcp), with the query API at "
        "/api/v0, health at /health, /healthz and /readyz, and metrics at /metrics (behind "
        "the credential when one is configured). "
        "Credentials come from ESHU_API_KEY, ESHU_SCOPED_TOKENS_FILE and "
        "ESHU_AUTH_RESOURCE_URI (or the matching options)."
    )
    optFlags = [
        [
            "allow-unauthenticated",
            None,
            "Serve non-loopback listeners without credentials "
            "(also ESHU_MCP_ALLOW_UNAUTHENTICATED).",
        ],
        [
            "public-metrics",
            None,
            "Serve /metrics without a credential even when one is configured "
            "(for a scraper on a trusted network).",
        ],
        [
            "access-log",
            None,
            "Log one line per HTTP request and per tool call (off by default: it costs "
            "about a fifth of a small call's time).",
        ],
    ]
    optParameters = [
        ["scoped-tokens-file", None, None, "Scoped-token registry JSON (ESHU_SCOPED_TOKENS_FILE)."],
        [
            "auth-resource-uri",
            None,
            None,
            "OIDC audience and OAuth resource URI (ESHU_AUTH_RESOURCE_URI).",
        ],
        ["oidc-config-file", None, None, "OIDC providers and grants (ESHU_AUTH_OIDC_CONFIG_FILE)."],
        [
            "sse-keepalive",
            None,
            DEFAULT_KEEPALIVE,
            "Seconds between SSE keepalive comments.",
            float,
        ],
        [
            "session-idle-timeout",
            None,
            DEFAULT_IDLE_TIMEOUT,
            "Seconds a session may go without a request before it is reaped and counted in "
            "eshu_mcp_sessions_reaped_total (a running call keeps it alive, and so does a "
            "Streamable HTTP session's open GET stream; a legacy SSE stream does not).",
            float,
        ],
        [
            "max-sessions",
            None,
            DEFAULT_MAX_SESSIONS,
            "Most open sessions per transport (Streamable HTTP, legacy SSE); beyond it "
            "initialize or GET /sse gets 503 with Retry-After.",
            int,
        ],
        [
            "max-sessions-per-client",
            None,
            DEFAULT_MAX_SESSIONS_PER_CLIENT,
            "Most open sessions per transport that one client may hold (one credential, or "
            "one address when unauthenticated); beyond it initialize or GET /sse gets 429 "
            "with Retry-After, so one client cannot fill the --max-sessions table.",
            int,
        ],
        [
            "request-timeout",
            None,
            DEFAULT_REQUEST_TIMEOUT,
            "Seconds a client has to send a whole request (headers and body) once its "
            "connection may send one; a slower one gets 408 and is closed (slowloris). "
            "Connections idle between requests are closed after the same time.",
            float,
        ],
        [
            "max-pipelined",
            None,
            DEFAULT_MAX_PIPELINED,
            "Most requests in a row one connection may send before reading the previous "
            "response; the next gets 429 and the connection is closed.",
            int,
        ],
        [
            "max-queued-bytes",
            None,
            DEFAULT_QUEUE_BYTES,
            "Most bytes an event stream (GET /sse, GET /mcp, a streamed POST) holds for a "
            "client that is not reading; beyond it the stream is dropped and counted in "
            "eshu_mcp_slow_readers_dropped_total. Keep it above twice --response-budget.",
            int,
        ],
    ]

    def __init__(self) -> None:
        super().__init__()
        self["listen"] = []
        self["allowed-origins"] = []
        self["allowed-hosts"] = []

    def opt_listen(self, description: str) -> None:
        """Endpoint to listen on, e.g. tcp:8080:interface=127.0.0.1 (repeatable)."""
        self["listen"].append(description)

    opt_l = opt_listen

    def opt_allowed_origin(self, origin: str) -> None:
        """Browser origin allowed to call the MCP endpoints (repeatable)."""
        self["allowed-origins"].append(origin.rstrip("/"))

    def opt_allowed_host(self, host: str) -> None:
        """Host name a local reverse proxy forwards to a loopback listener (repeatable)."""
        self["allowed-hosts"].append(host.strip().lower())

    def opt_version(self) -> None:
        """Print the version and exit."""
        print(f"eshu-mcp-server {__version__}")
        sys.exit(0)

    def postOptions(self) -> None:
        super().postOptions()
        if not self["listen"]:
            self["listen"] = [DEFAULT_LISTEN]
        for description in self["listen"]:
            if listener_interface(description) is None:
                raise usage.UsageError(
                    f"--listen {description!r} is not an endpoint description; "
                    "use for example tcp:8080:interface=127.0.0.1 or unix:/run/eshu-mcp.sock"
                )
        if not self["sse-keepalive"] > 0:
            raise usage.UsageError("--sse-keepalive must be a positive number of seconds")
        if not self["session-idle-timeout"] > 0:
            raise usage.UsageError("--session-idle-timeout must be a positive number of seconds")
        if self["max-sessions"] < 1:
            raise usage.UsageError("--max-sessions must be at least 1")
        if self["max-sessions-per-client"] < 1:
            raise usage.UsageError("--max-sessions-per-client must be at least 1")
        if self["max-pipelined"] < 0:
            raise usage.UsageError("--max-pipelined must be 0 or more")
        if not self["request-timeout"] > 0:
            raise usage.UsageError("--request-timeout must be more than 0 seconds")
        if self["max-queued-bytes"] < 65536:
            raise usage.UsageError("--max-queued-bytes must be at least 65536")
        env = os.environ.get("ESHU_MCP_ALLOW_UNAUTHENTICATED", "").strip().lower()
        self["allow-unauthenticated"] = bool(self["allow-unauthenticated"]) or env in TRUTHY

    @property
    def loopback_only(self) -> bool:
        """Whether every listener is reachable from this machine only."""
        return all(is_loopback_listener(description) for description in self["listen"])


def _endpoint_fields(description: str) -> list[str]:
    fields, current, escaped = [], "", False
    for char in description:
        if escaped:
            current += char
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ":":
            fields.append(current)
            current = ""
        else:
            current += char
    fields.append(current)
    return fields


def listener_interface(description: str) -> str | None:
    """
    The interface a server endpoint description binds, '' for all, 'unix' for a
    socket file, or None when it is not a usable description.
    """
    fields = _endpoint_fields(description)
    kind = fields[0].lower()
    if kind == "unix":
        return "unix" if len(fields) > 1 and fields[1] else None
    if kind not in ("tcp", "tcp6", "ssl"):
        return None
    positional = [field for field in fields[1:] if "=" not in field]
    keywords = dict(field.split("=", 1) for field in fields[1:] if "=" in field)
    port = keywords.get("port") or (positional[0] if positional else "")
    if not port.isdigit():
        return None
    return keywords.get("interface", "")


def is_loopback_listener(description: str) -> bool:
    """Whether an endpoint description only accepts local connections."""
    interface = listener_interface(description)
    return interface == "unix" or (bool(interface) and is_loopback_host(interface))


class StartupRefused(SystemExit):
    """
    A configuration the daemon will not serve: one line on stderr, exit status 1.

    ``makeService`` runs before twistd starts logging, and twistd prints a
    traceback for anything but ``SystemExit``; the message says what to change.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"eshu-mcp: {reason}")


def makeService(options: Options, reactor=None) -> MultiService:
    """Build the daemon: backend, protocol server, HTTP tree and listeners."""
    if reactor is None:
        from twisted.internet import reactor
    from attrs import evolve

    from eshu_mcp.auth import CredentialPolicy, announce_posture, guard, startup_refusal
    from eshu_mcp.metrics import Metrics
    from eshu_mcp.service import (
        AnswerCallsAtShutdown,
        LogBridgeService,
        build_backend,
        build_mcp_server,
    )
    from eshu_mcp.shutdown import StopOnce
    from eshu_mcp.transport.channel import pipeline_bounded_channel
    from eshu_mcp.transport.http import OriginPolicy
    from eshu_mcp.transport.site import DaemonSite
    from eshu_mcp.transport.sse import SseSessionRegistry
    from eshu_mcp.transport.streamable import StreamableSessionRegistry
    from eshu_mcp.transport.web import McpWebApp

    parent = MultiService()
    metrics = Metrics()
    try:
        policy = CredentialPolicy.from_environment(
            os.environ,
            scoped_tokens_file=options["scoped-tokens-file"],
            resource_uri=options["auth-resource-uri"],
            oidc_config_file=options["oidc-config-file"],
            reactor=reactor,
        )
    except ValueError as error:
        raise StartupRefused(str(error)) from None
    refusal = startup_refusal(
        policy,
        listening_loopback_only=options.loopback_only,
        allow_unauthenticated=options["allow-unauthenticated"],
    )
    if refusal is not None:
        raise StartupRefused(refusal)
    announce_posture(
        policy,
        listening_loopback_only=options.loopback_only,
        allow_unauthenticated=options["allow-unauthenticated"],
    )
    backend = build_backend(options.backend_settings(), reactor=reactor, parent=parent)
    api = guard(backend.resource, policy)
    try:
        server = build_mcp_server(
            api,
            clock=reactor,
            settings=evolve(options.server_settings(), log_calls=bool(options["access-log"])),
            backend=backend,
            metrics=metrics,
        )
    except ValueError as error:
        raise StartupRefused(str(error)) from None
    LogBridgeService(server, reactor).setServiceParent(parent)
    web = McpWebApp(
        server=server,
        backend=backend,
        api_resource=api,
        policy=policy,
        clock=reactor,
        metrics=metrics,
        origins=OriginPolicy(
            frozenset(options["allowed-origins"]),
            loopback_only=options.loopback_only,
            allowed_hosts=frozenset(options["allowed-hosts"]),
        ),
        keepalive=options["sse-keepalive"],
        max_queued_bytes=options["max-queued-bytes"],
        streamable_sessions=StreamableSessionRegistry(
            reactor,
            idle_timeout=options["session-idle-timeout"],
            max_sessions=options["max-sessions"],
            max_sessions_per_client=options["max-sessions-per-client"],
            metrics=metrics,
        ),
        sse_sessions=SseSessionRegistry(
            reactor,
            idle_timeout=options["session-idle-timeout"],
            max_sessions=options["max-sessions"],
            max_sessions_per_client=options["max-sessions-per-client"],
            metrics=metrics,
        ),
        public_metrics=bool(options["public-metrics"]),
    )
    web.sse_sessions.setServiceParent(parent)
    web.streamable_sessions.setServiceParent(parent)
    # Stopped before the sessions close: running calls are answered, then streams end.
    AnswerCallsAtShutdown(server).setServiceParent(parent)
    site = DaemonSite(web.resource(), access_log=bool(options["access-log"]))
    site.protocol = pipeline_bounded_channel(
        options["max-pipelined"],
        metrics,
        # The largest body any endpoint reads: an MCP message, or a 1 MiB API request.
        max_body_bytes=max(options["max-message-bytes"], 1 << 20),
        request_timeout=options["request-timeout"],
    )

    def announce(addresses: list[str]) -> None:
        log.info(
            "mcp server started on {listen} with {tools} tools from the {backend} backend",
            listen=", ".join(addresses),
            tools=len(server.catalog.tools),
            backend=backend.name,
        )

    Listeners(options["listen"], site, reactor, announce).setServiceParent(parent)
    StopOnce(reactor).setServiceParent(parent)
    return parent
