"""
Stopping the daemon once, however many times it is asked.

Twisted's own SIGTERM and SIGINT handlers call ``reactor.stop()`` on every signal;
a second one while the daemon is already stopping (Ctrl-C pressed twice, a service
manager repeating SIGTERM) raises ``ReactorNotRunning`` and logs a traceback. This
service replaces those handlers once the reactor runs: the first signal stops the
reactor, later ones are logged and otherwise ignored.
"""

import contextlib
import signal
import threading

from twisted.application.service import Service
from twisted.internet import error
from twisted.logger import Logger

log = Logger()

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopOnce(Service):
    """Install signal handlers that stop ``reactor`` on the first SIGTERM or SIGINT only."""

    def __init__(self, reactor) -> None:
        self._reactor = reactor
        self._stopping = False

    def startService(self) -> None:
        super().startService()
        self._reactor.callWhenRunning(self._install)

    def _install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signal handlers can only be set from the main thread
        for number in STOP_SIGNALS:
            signal.signal(number, self._received)

    def _received(self, number: int, frame) -> None:
        name = signal.Signals(number).name
        if self._stopping:
            log.info("{signal} received again while stopping; still stopping", signal=name)
            return
        self._stopping = True
        log.info("{signal} received, stopping", signal=name)
        self._reactor.callFromThread(self._stop)

    def _stop(self) -> None:
        with contextlib.suppress(error.ReactorNotRunning):  # something else stopped it first
            self._reactor.stop()
