"""Running the real daemon (``twistd -n eshu-mcp``) as a child process for end-to-end tests."""

import contextlib
import itertools
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
STARTUP_SECONDS = 90.0

FIXTURE_FILES = {
    "app/config.py": (
        '"""Configuration loading."""\n\n\n'
        "def parse_config(path):\n"
        '    """Read key=value lines."""\n'
        "    with open(path) as handle:\n"
        "        return dict(line.strip().split('=', 1) for line in handle if '=' in line)\n"
    ),
    "app/main.py": (
        "from app.config import parse_config\n\n\n"
        "def main():\n"
        "    settings = parse_config('settings.ini')\n"
        "    return write_row(settings)\n\n\n"
        "def write_row(settings):\n"
        "    return len(settings)\n\n\n"
        "def forgotten_helper():\n"
        "    return 42\n"
    ),
    "README.md": "# sample\n",
}


def make_fixture_repository(root: Path) -> Path:
    """A small git repository with a known call graph."""
    repo = root / "sample-repo"
    for relative, text in FIXTURE_FILES.items():
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    return repo


_DAEMON_NUMBERS = itertools.count(1)
_LISTENING = re.compile(r"Site starting on (\d+)")


def child_environment(home: Path, **extra: str) -> dict[str, str]:
    """The environment a child server runs with: this tree first, a private ESHU_HOME."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("ESHU_") or key == "ESHU_HOME"
    }
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH")]))
    env["ESHU_HOME"] = str(home)
    env.update(extra)
    return env


class Daemon:
    """``twistd -n eshu-mcp`` on a loopback port, stopped with SIGTERM."""

    def __init__(self, workdir: Path, args: list[str], **env: str) -> None:
        self.port = 0
        self.log_path = workdir / f"daemon-{next(_DAEMON_NUMBERS)}.log"
        command = [
            sys.executable,
            "-c",
            "from twisted.scripts.twistd import run; run()",
            "--nodaemon",
            "--pidfile=",
            "--logfile=-",
            "eshu-mcp",
            "--listen",
            "tcp:0:interface=127.0.0.1",
            *args,
        ]
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            command,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            env=child_environment(workdir, **env),
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def get(self, path: str, headers: dict | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(self.url + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def post(self, path: str, payload, headers: dict | None = None) -> tuple[int, bytes]:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        all_headers = {"content-type": "application/json", **(headers or {})}
        request = urllib.request.Request(self.url + path, data=body, headers=all_headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def wait_listening(self) -> None:
        """Block until the daemon has bound its port (its index may still be building)."""
        deadline = time.monotonic() + STARTUP_SECONDS
        while not self.port and time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"daemon exited {self.process.returncode}:\n{self.log()}")
            bound = _LISTENING.search(self.log())
            if bound is None:
                time.sleep(0.05)
            else:
                self.port = int(bound.group(1))
        if not self.port:
            raise AssertionError(f"daemon not listening after {STARTUP_SECONDS}s:\n{self.log()}")

    def wait_ready(self) -> None:
        """Block until /readyz answers 200 (the index is built), or fail with the log."""
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"daemon exited {self.process.returncode}:\n{self.log()}")
            if not self.port:
                # The kernel picks the port (no race with other tests); twistd logs it.
                bound = _LISTENING.search(self.log())
                if bound is None:
                    time.sleep(0.05)
                    continue
                self.port = int(bound.group(1))
            try:
                status, _ = self.get("/readyz")
            except OSError:
                status = 0
            if status == 200:
                return
            time.sleep(0.1)
        raise AssertionError(f"daemon not ready after {STARTUP_SECONDS}s:\n{self.log()}")

    def stop(self) -> int:
        """SIGTERM, then wait; returns the exit status."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._log.close()
        return self.process.returncode


@contextlib.contextmanager
def serving(workdir: Path, args: list[str], **env: str):
    """A ready daemon for the duration of a ``with`` block (or a fixture's yield)."""
    server = Daemon(workdir, args, **env)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def indexed_daemon_args(workdir: Path, repository: Path, db_name: str = "index.sqlite"):
    """The options of a daemon that indexes ``repository`` and serves every tool."""
    return ["--repo", str(repository), "--db", str(workdir / db_name), "--toolsets", "all"]
