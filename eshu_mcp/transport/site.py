"""The daemon's ``twisted.web`` Site: no form parsing, and an access log only when asked."""

from twisted.web.server import Site


class DaemonSite(Site):
    """
    A Site that writes Twisted's combined-log line per request only with ``access_log``.

    Off by default: the line is formatted and written on the reactor thread for every
    request, a large share of a small tool call's cost.
    """

    def __init__(self, resource, *, access_log: bool = False) -> None:
        super().__init__(resource, parsePOSTFormSubmission=False)
        self.access_log = access_log
        self.displayTracebacks = False

    def log(self, request) -> None:
        if self.access_log:
            super().log(request)
