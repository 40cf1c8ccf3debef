"""
The reactor's side of the long-lived indexer child (:mod:`.builder`): spawn it, send it
build requests, turn its JSON lines into events, notice its death, and stop it (and any
parser workers it forked) within a bounded time by signalling its process group.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from twisted.internet import defer, error, protocol
from twisted.logger import Logger
from twisted.python.failure import Failure

PARENT_ENV = "ESHU_MCP_BUILDER_PARENT"
"""The daemon's pid, given to the builder child so it dies with the daemon."""
STDERR_TAIL_BYTES = 4096
TERM_GRACE_SECONDS = 2.0
"""After SIGTERM to the child's group, how long before SIGKILL."""
REAP_GRACE_SECONDS = 1.0
"""After SIGKILL, how long to wait for the exit before stopping anyway."""


class _BuilderProtocol(protocol.ProcessProtocol):
    """Splits the child's stdout into JSON events, keeps its stderr tail, reports its end."""

    def __init__(self, owner: BuilderProcess) -> None:
        self._owner = owner
        self._buffer = b""
        self.stderr = b""

    def outReceived(self, data: bytes) -> None:
        """Parse complete JSON lines."""
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                self._owner._event(event)

    def errReceived(self, data: bytes) -> None:
        """Keep the tail of stderr, for the message when the child fails."""
        self.stderr = (self.stderr + data)[-STDERR_TAIL_BYTES:]

    def processEnded(self, reason: Failure) -> None:
        """Report the exit status (0 for a clean exit, None when killed by a signal)."""
        code = 0 if reason.check(error.ProcessDone) else getattr(reason.value, "exitCode", None)
        signal_number = getattr(reason.value, "signal", None)
        self._owner._ended(code, signal_number, self.stderr.decode("utf-8", "replace").strip())


class BuilderProcess:
    """
    One running indexer child. ``on_event(event)`` gets each JSON line it writes;
    ``on_exit(code, signal, stderr_tail)`` is called once, when it has gone (expectedly or not).
    """

    log = Logger()

    def __init__(
        self,
        reactor: Any,
        db_path: str,
        *,
        on_event: Callable[[dict], None],
        on_exit: Callable[[int | None, int | None, str], None],
        executable: str = sys.executable,
        env: dict[str, str] | None = None,
    ) -> None:
        self.reactor = reactor
        self._on_event = on_event
        self._on_exit = on_exit
        self._protocol = _BuilderProtocol(self)
        self._gone: defer.Deferred = defer.Deferred()
        self.alive = True
        self.argv = [executable, "-m", "eshu_mcp.query.local.index.build.builder", "--db", db_path]
        child_env = dict(os.environ if env is None else env)
        child_env[PARENT_ENV] = str(os.getpid())  # the child dies with this process
        self._transport = reactor.spawnProcess(self._protocol, executable, self.argv, env=child_env)
        self.pid = getattr(self._transport, "pid", None)

    def send(self, request: dict[str, Any]) -> None:
        """Write one build request line to the child's stdin."""
        if self.alive:
            self._transport.write(json.dumps(request, sort_keys=True).encode() + b"\n")

    def stop(self) -> defer.Deferred:
        """
        Close its stdin and SIGTERM its process group, SIGKILL after a grace period; fires
        once it has exited, or at the latest shortly after the SIGKILL.
        """
        if not self.alive:
            return defer.succeed(None)
        with contextlib.suppress(Exception):
            self._transport.closeStdin()
        self.signal_group(signal.SIGTERM)
        done: defer.Deferred = defer.Deferred()
        timers: list[Any] = []

        def finish(_: object = None) -> None:
            for timer in timers:
                if timer.active():
                    timer.cancel()
            if not done.called:
                done.callback(None)

        def kill() -> None:
            if self.alive:
                self.log.warn(
                    "index builder {pid} ignored SIGTERM for {grace}s; killing its process group",
                    pid=self.pid,
                    grace=TERM_GRACE_SECONDS,
                )
                self.signal_group(signal.SIGKILL)
                timers.append(self.reactor.callLater(REAP_GRACE_SECONDS, finish))

        timers.append(self.reactor.callLater(TERM_GRACE_SECONDS, kill))
        self._gone.addBoth(finish)
        return done

    def signal_group(self, number: int) -> None:
        """Signal the child's process group (it leads one), or the child alone before it does."""
        if self.pid is not None:
            try:
                os.killpg(self.pid, number)
                return
            except (ProcessLookupError, PermissionError):
                pass
        if self.alive:
            name = "KILL" if number == signal.SIGKILL else "TERM"
            with contextlib.suppress(error.ProcessExitedAlready, OSError):
                self._transport.signalProcess(name)

    def _event(self, event: dict) -> None:
        self._on_event(event)

    def _ended(self, code: int | None, signal_number: int | None, stderr: str) -> None:
        self.alive = False
        # parser workers it forked would outlive it, holding the writer lock: end them too
        if self.pid is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)
        try:
            self._on_exit(code, signal_number, stderr)
        finally:
            self._gone.callback(None)
