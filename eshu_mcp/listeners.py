"""
The daemon's listeners: every one bound before the "started" line, one line on failure.

``strports.service`` logs nothing useful when a port is taken (a traceback after
the server already said it started). :class:`Listeners` binds every endpoint in
``privilegedStartService`` (before twistd sheds privileges), announces the
addresses actually bound, and on a failure closes what it opened, logs one line
naming the cause and the fix, and ends the process with exit status 1.
"""

import errno
from collections.abc import Callable, Sequence

from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet.endpoints import serverFromString
from twisted.internet.error import CannotListenError
from twisted.logger import Logger
from twisted.python.failure import Failure

log = Logger()

STARTUP_FAILED = 1


def listen_failure(description: str, error: BaseException) -> str:
    """One sentence naming why ``description`` could not be bound and what to do."""
    cause = error.socketError if isinstance(error, CannotListenError) else error
    code = getattr(cause, "errno", None)
    if code == errno.EADDRINUSE:
        return (
            f"cannot listen on {description}: the address is already in use; stop the "
            "process holding it or choose another port with --listen"
        )
    if code == errno.EACCES:
        return (
            f"cannot listen on {description}: permission denied; choose a port above 1023 "
            "or grant the privilege to bind it"
        )
    if code == errno.EADDRNOTAVAIL:
        return (
            f"cannot listen on {description}: no such interface on this machine; "
            "name one of its addresses in --listen"
        )
    reason = getattr(cause, "strerror", None) or str(cause) or type(cause).__name__
    return f"cannot listen on {description}: {reason}; fix the --listen description"


def _address(port) -> str:
    host = port.getHost()
    if hasattr(host, "port"):
        return f"{host.host}:{host.port}"
    name = getattr(host, "name", None)
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    return f"unix:{name}" if name else str(host)


class Listeners(Service):
    """Bind ``descriptions`` to ``factory`` together; ``announce`` gets the bound addresses."""

    def __init__(
        self,
        descriptions: Sequence[str],
        factory,
        reactor,
        announce: Callable[[list[str]], None],
    ) -> None:
        self._descriptions = tuple(descriptions)
        self._factory = factory
        self._reactor = reactor
        self._announce = announce
        self._ports: list | None = None

    def privilegedStartService(self) -> None:
        if self._ports is not None:
            return
        self._ports = []
        for description in self._descriptions:
            try:
                port = self._listen(description)
            except Exception as error:
                self._fail(description, error)
            self._ports.append(port)
        self._announce([_address(port) for port in self._ports])

    def _listen(self, description: str):
        outcome: list = []
        serverFromString(self._reactor, description).listen(self._factory).addBoth(outcome.append)
        if not outcome:
            raise RuntimeError("the endpoint did not bind at once")
        if isinstance(outcome[0], Failure):
            outcome[0].raiseException()
        return outcome[0]

    def _fail(self, description: str, error: BaseException) -> None:
        for port in self._ports or ():
            port.stopListening()
        self._ports = None
        log.critical(
            "mcp server did not start: {reason}", reason=listen_failure(description, error)
        )
        raise SystemExit(STARTUP_FAILED)

    def startService(self) -> None:
        super().startService()
        self.privilegedStartService()

    def stopService(self) -> defer.Deferred:
        super().stopService()
        ports, self._ports = self._ports or [], None
        return defer.gatherResults([defer.maybeDeferred(port.stopListening) for port in ports])
