"""Start-up failures of the real daemon: one line naming cause and fix, exit status 1."""

import contextlib
import signal
import socket
import subprocess
import sys

from tests.daemon import Daemon, child_environment

UPSTREAM = ["--backend", "upstream", "--upstream-url", "http://127.0.0.1:1"]


def run_daemon(tmp_path, *args: str) -> subprocess.CompletedProcess:
    """``twistd -n eshu-mcp ARGS`` expected to end by itself."""
    command = [
        sys.executable,
        "-c",
        "from twisted.scripts.twistd import run; run()",
        "--nodaemon",
        "--pidfile=",
        "--logfile=-",
        "eshu-mcp",
        *args,
    ]
    return subprocess.run(
        command,
        capture_output=True,
        cwd=tmp_path,
        env=child_environment(tmp_path),
        timeout=60,
        text=True,
    )


def test_a_taken_port_is_one_line_and_exit_status_1(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = run_daemon(tmp_path, *UPSTREAM, "--listen", f"tcp:{port}:interface=127.0.0.1")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output
    assert "mcp server started" not in output
    (line,) = [line for line in output.splitlines() if "did not start" in line]
    assert f"tcp:{port}:interface=127.0.0.1: the address is already in use" in line
    assert "--listen" in line


def test_an_unauthenticated_public_listener_is_refused_in_one_line(tmp_path):
    done = run_daemon(tmp_path, *UPSTREAM, "--listen", "tcp:0")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        line for line in done.stderr.strip().splitlines() if line.startswith("eshu-mcp: ")
    ]
    assert len(done.stderr.strip().splitlines()) == 1
    assert "ESHU_API_KEY" in done.stderr
    assert "mcp server started" not in done.stdout


def test_each_listen_failure_names_its_fix():
    import errno

    from twisted.internet.error import CannotListenError

    from eshu_mcp.listeners import listen_failure

    def failure(code):
        return CannotListenError("127.0.0.1", 80, OSError(code, "boom"))

    assert "choose a port above 1023" in listen_failure("tcp:80", failure(errno.EACCES))
    assert "name one of its addresses" in listen_failure(
        "tcp:80:interface=10.9.9.9", failure(errno.EADDRNOTAVAIL)
    )
    assert listen_failure("ssl:443:privateKey=nope.pem", FileNotFoundError(2, "No such file")) == (
        "cannot listen on ssl:443:privateKey=nope.pem: No such file; fix the --listen description"
    )


def test_a_repeated_stop_signal_stops_the_daemon_once_without_a_traceback(tmp_path):
    for number in (signal.SIGTERM, signal.SIGINT):
        daemon = Daemon(tmp_path, UPSTREAM)
        try:
            daemon.wait_listening()
            assert daemon.get("/health")[0] == 200  # the reactor runs: its handlers are set
            daemon.process.send_signal(number)
            with contextlib.suppress(ProcessLookupError):
                daemon.process.send_signal(number)
            status = daemon.process.wait(timeout=30)
        finally:
            daemon.stop()
        log = daemon.log()
        assert status == 0, log
        assert "Traceback" not in log
        assert "ReactorNotRunning" not in log
        assert f"{number.name} received, stopping" in log
