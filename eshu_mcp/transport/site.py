"""
The daemon's ``twisted.web`` Site: no form parsing, an access log only when asked, and a
JSON 500 with one log line when a resource fails.
"""

from twisted.logger import Logger
from twisted.web import http
from twisted.web.server import Request, Site

from eshu_mcp.encoding import dumpb

log = Logger()

_INTERNAL_ERROR = (
    dumpb(
        {
            "error": "Internal Server Error",
            "detail": "the server failed to answer this request; the daemon log has the cause",
        }
    )
    + b"\n"
)


def _where(reason) -> str:
    """``file:line`` of the innermost frame of ``reason``, for the operator's one line."""
    frames = getattr(reason, "frames", None) or []
    if not frames:
        return "unknown place"
    name, filename, line = frames[-1][:3]
    return f"{filename}:{line} in {name}"


class JsonFailureRequest(Request):
    """
    A Request whose unhandled failure answers a JSON 500, never Twisted's HTML page.

    The client learns only that the server failed; the log gets one line naming the
    request, the exception type and message, and the innermost frame.
    """

    def processingFailed(self, reason):
        log.error(
            "{method} {path} failed: {error_type}: {error} at {where}",
            method=self.method.decode("ascii", "replace"),
            path=self.path.decode("ascii", "replace")[:200],
            error_type=getattr(reason.type, "__name__", str(reason.type)),
            error=str(reason.value)[:300],
            where=_where(reason),
        )
        if self.finished or self._disconnected:
            return reason
        if self.startedWriting:
            # Headers are out: the only honest answer left is to cut the response short.
            self.loseConnection()
            return reason
        self.setResponseCode(http.INTERNAL_SERVER_ERROR)
        self.responseHeaders.setRawHeaders(b"content-type", [b"application/json"])
        self.responseHeaders.setRawHeaders(b"content-length", [b"%d" % len(_INTERNAL_ERROR)])
        self.write(_INTERNAL_ERROR)
        self.finish()
        return reason


class DaemonSite(Site):
    """
    A Site that writes Twisted's combined-log line per request only with ``access_log``.

    Off by default: the line is formatted and written on the reactor thread for every
    request, a large share of a small tool call's cost.
    """

    requestFactory = JsonFailureRequest

    def __init__(self, resource, *, access_log: bool = False) -> None:
        super().__init__(resource, parsePOSTFormSubmission=False)
        self.access_log = access_log
        self.displayTracebacks = False

    def log(self, request) -> None:
        if self.access_log:
            super().log(request)
