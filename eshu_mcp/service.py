"""
Wiring: the protocol server, the query backend and the daemon's services.

``makeService`` (HTTP) and ``eshu-mcp stdio`` both build their pieces here, so
the two entry points cannot drift apart. Nothing in this module imports Klein
or the reactor at import time.
"""

from collections.abc import Iterable
from pathlib import Path

from attrs import frozen
from twisted.application.service import MultiService, Service
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger, globalLogPublisher
from twisted.web.resource import IResource

from eshu_mcp.catalog import ToolCatalog, read_only_tools
from eshu_mcp.catalog.toolsets import ALL, CORE
from eshu_mcp.dispatch.budget import DEFAULT_ANSWER_PAGE, DEFAULT_RESPONSE_BUDGET
from eshu_mcp.dispatch.first_page import DEFAULT_ANSWER_ROWS
from eshu_mcp.dispatch.inprocess import DEFAULT_DISPATCH_TIMEOUT, InProcessDispatcher
from eshu_mcp.metrics import Metrics
from eshu_mcp.protocol.admission import DEFAULT_MAX_CONCURRENT_CALLS, DEFAULT_MAX_QUEUED_CALLS
from eshu_mcp.protocol.jsonrpc import DEFAULT_MAX_BATCH, DEFAULT_MAX_MESSAGE_BYTES
from eshu_mcp.protocol.notices import LogBridge
from eshu_mcp.protocol.server import DEFAULT_PAGE_SIZE, McpServer
from eshu_mcp.query.interfaces import IQueryBackend
from eshu_mcp.query.local.index.store.database import default_db_path

log = Logger()


@frozen
class ServerSettings:
    """What shapes the MCP server, whatever the transport."""

    toolsets: str | None = None
    exclude_tools: tuple[str, ...] = ()
    dispatch_timeout: float = DEFAULT_DISPATCH_TIMEOUT
    response_budget: int = DEFAULT_RESPONSE_BUDGET
    page_size: int = DEFAULT_PAGE_SIZE
    answer_detail: str = "compact"
    answer_page: int = DEFAULT_ANSWER_PAGE
    answer_rows: int = DEFAULT_ANSWER_ROWS
    max_batch: int = DEFAULT_MAX_BATCH
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    max_concurrent_calls: int = DEFAULT_MAX_CONCURRENT_CALLS
    max_queued_calls: int = DEFAULT_MAX_QUEUED_CALLS
    log_calls: bool = False


def select_catalog(
    toolsets: str | None, exclude: Iterable[str], backend: IQueryBackend | None
) -> ToolCatalog:
    """
    The enabled tools: ``toolsets`` defaults to ``core`` for the embedded backend
    and ``all`` otherwise. Raises ValueError with a readable sentence.
    """
    catalog = ToolCatalog(read_only_tools())
    if toolsets is None:
        toolsets = CORE if backend is not None and backend.name == "local" else ALL
    answers = backend.answers if backend is not None else None
    return catalog.select(toolsets, exclude=tuple(exclude), answers=answers)


def sole_home_path(backend: IQueryBackend | None) -> str:
    """The one repository path a backend is scoped to, or "" (several, or the whole index)."""
    home = tuple(getattr(backend, "home_paths", ()) or ())
    return home[0] if len(home) == 1 else ""


def build_mcp_server(
    query_resource: IResource,
    *,
    clock: IReactorTime,
    settings: ServerSettings = ServerSettings(),
    backend: IQueryBackend | None = None,
    metrics: Metrics | None = None,
) -> McpServer:
    """An MCP server dispatching in process into ``query_resource``."""
    dispatcher = InProcessDispatcher(
        query_resource,
        clock,
        timeout=settings.dispatch_timeout,
        budget=settings.response_budget,
        log_calls=settings.log_calls,
        metrics=metrics,
        answer_detail=settings.answer_detail,
        answer_page=settings.answer_page,
        answer_rows=settings.answer_rows,
        default_repository=sole_home_path(backend),
    )
    catalog = select_catalog(settings.toolsets, settings.exclude_tools, backend)
    return McpServer(
        catalog,
        dispatcher,
        page_size=settings.page_size,
        max_batch=settings.max_batch,
        max_message_bytes=settings.max_message_bytes,
        max_concurrent_calls=settings.max_concurrent_calls,
        max_queued_calls=settings.max_queued_calls,
        clock=clock,
        build_progress=getattr(backend, "build_progress", None),
    )


class AnswerCallsAtShutdown(Service):
    """When the daemon stops, every tool call still running gets an error reply first."""

    def __init__(self, server: McpServer) -> None:
        self._server = server

    def stopService(self):
        stopped = self._server.answer_calls_at_shutdown()
        if stopped:
            log.info("answered {count} running tool calls at shutdown", count=stopped)
        return super().stopService()


class LogBridgeService(Service):
    """While running, the service's own log events reach the sessions that asked for them."""

    def __init__(self, server: McpServer, reactor) -> None:
        self._bridge = LogBridge(server.log_feed, reactor)

    def startService(self) -> None:
        super().startService()
        globalLogPublisher.addObserver(self._bridge)

    def stopService(self):
        globalLogPublisher.removeObserver(self._bridge)
        return super().stopService()


@frozen
class BackendSettings:
    """Which query backend answers ``/api/v0``, and how to reach it."""

    kind: str = "local"
    db_path: str = ""
    repos: tuple[str, ...] = ()
    watch: bool = False
    whole_index: bool = False
    """With ``repos``: answer un-scoped questions from every repository in the index."""
    upstream_url: str = ""
    upstream_token: str = ""
    home_paths: tuple[str, ...] = ()
    """Without ``repos``: answer un-scoped questions from the repositories under these paths."""
    serve_credential_files: bool = False
    """The builder keeps credential files as text (a trusted single-user setup)."""


def build_backend(settings: BackendSettings, *, reactor, parent: MultiService) -> IQueryBackend:
    """Create the configured backend; its services become children of ``parent``."""
    if settings.kind == "upstream":
        from eshu_mcp.query.upstream import UpstreamQueryBackend

        backend = UpstreamQueryBackend(
            settings.upstream_url, reactor=reactor, token=settings.upstream_token or None
        )
        backend.setServiceParent(parent)
        return backend
    from eshu_mcp.query.local.backend import LocalQueryBackend

    db_path = settings.db_path or str(default_db_path())
    Path(db_path).parent.mkdir(parents=True, exist_ok=True)
    index_service = None
    if settings.repos:
        from eshu_mcp.query.local.index.build.service import IndexService

        index_service = IndexService(
            db_path,
            list(settings.repos),
            watch=settings.watch,
            reactor=reactor,
            serve_credential_files=settings.serve_credential_files,
        )
        index_service.setServiceParent(parent)
    home = () if settings.whole_index else (tuple(settings.repos) or tuple(settings.home_paths))
    backend = LocalQueryBackend(
        db_path, reactor=reactor, index_service=index_service, home_paths=home
    )
    backend.setServiceParent(parent)
    return backend
