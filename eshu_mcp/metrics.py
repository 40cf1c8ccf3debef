"""Prometheus metrics for the daemon, kept in a registry each service owns."""

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from twisted.web.resource import Resource

AUTH_DENIED_METHODS = frozenset(
    {
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
        "ping",
        "sse",
        "mcp_message",
        "other",
        "unknown",
    }
)


class Metrics:
    """The daemon's metric families, registered in a registry of their own."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.transport_auth_denied = Counter(
            "eshu_dp_mcp_transport_auth_denied",
            "MCP transport requests refused for want of a valid credential.",
            ["mcp_method", "reason"],
            registry=self.registry,
        )
        self.tool_calls = Counter(
            "eshu_mcp_tool_calls",
            "Tool calls dispatched, by tool and outcome.",
            ["tool", "outcome"],
            registry=self.registry,
        )
        self.tool_seconds = Histogram(
            "eshu_mcp_tool_call_seconds",
            "Wall time of dispatched tool calls.",
            ["tool"],
            registry=self.registry,
            buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30),
        )
        self.sessions = Gauge(
            "eshu_mcp_sessions",
            "Open MCP sessions, by transport.",
            ["transport"],
            registry=self.registry,
        )
        self.sessions_reaped = Counter(
            "eshu_mcp_sessions_reaped",
            "Sessions ended for idling past their lifetime (the client never closed them).",
            ["transport"],
            registry=self.registry,
        )
        self.slow_readers_dropped = Counter(
            "eshu_mcp_slow_readers_dropped",
            "Event streams dropped because the client left more than --max-queued-bytes unread.",
            ["transport"],
            registry=self.registry,
        )
        self.pipelining_refused = Counter(
            "eshu_mcp_pipelining_refused",
            "Connections closed for pipelining more than --max-pipelined requests.",
            registry=self.registry,
        )
        self.dropped_messages = Counter(
            "eshu_mcp_sse_dropped_messages",
            "Responses dropped because a session's queue was full or closed.",
            registry=self.registry,
        )

    def auth_denied(self, mcp_method: str, reason: str) -> None:
        """Count one refused transport request."""
        label = mcp_method if mcp_method in AUTH_DENIED_METHODS else "other"
        self.transport_auth_denied.labels(label, reason).inc()


class MetricsResource(Resource):
    """Serve a registry in the Prometheus text format."""

    isLeaf = True

    def __init__(self, registry: CollectorRegistry) -> None:
        super().__init__()
        self._registry = registry

    def render_GET(self, request) -> bytes:
        request.setHeader(b"content-type", CONTENT_TYPE_LATEST.encode("ascii"))
        return generate_latest(self._registry)
