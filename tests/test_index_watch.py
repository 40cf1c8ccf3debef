"""
The daemon's watch mode with real processes: ``twistd -n eshu-mcp --repo R --watch`` keeps one
indexer child across edits, restarts it when it is killed, and leaves no child, worker or
lock behind when it is stopped in the middle of a build. Waits are bounded polls.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from eshu_mcp.query.local.index.build.indexer import HOLD_ENV
from eshu_mcp.query.local.index.build.lock import writer_running
from tests.daemon import Daemon, make_fixture_repository

BUILDER_STARTED = re.compile(r"index builder (\d+) started")
WAIT_SECONDS = 60.0
STOP_SECONDS = 10.0


def wait_until(check, what: str, daemon: Daemon, seconds: float = WAIT_SECONDS):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}:\n{daemon.log()[-4000:]}")


def builder_pids(daemon: Daemon) -> list[int]:
    return [int(pid) for pid in BUILDER_STARTED.findall(daemon.log())]


def finds(daemon: Daemon, name: str) -> bool:
    """Whether the index (not a file scan) answers with a definition of ``name``."""
    status, body = daemon.post("/api/v0/code/symbols/search", {"symbol": name})
    return status == 200 and any(row.get("name") == name for row in json.loads(body)["results"])


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def repository(tmp_path) -> Path:
    return make_fixture_repository(tmp_path)


def watching_daemon(tmp_path: Path, repository: Path, **env: str) -> Daemon:
    args = ["--repo", str(repository), "--db", str(tmp_path / "index.sqlite"), "--watch"]
    return Daemon(tmp_path, [*args, "--toolsets", "all"], **env)


def test_one_indexer_child_serves_every_change(tmp_path, repository) -> None:
    daemon = watching_daemon(tmp_path, repository)
    try:
        daemon.wait_ready()
        for number in range(3):
            name = f"added_function_{number}"
            (repository / "app" / f"added_{number}.py").write_text(f"def {name}():\n    return 1\n")
            wait_until(lambda name=name: finds(daemon, name), f"{name} answered", daemon)
        # a change is answered once its build commits, a moment before the daemon logs that
        # build: wait for the log lines, or stopping may land between the two
        wait_until(lambda: len(one_file_builds(daemon)) >= 3, "three one-file builds", daemon)
    finally:
        assert daemon.stop() == 0
    assert len(builder_pids(daemon)) == 1
    assert "unexpectedly" not in daemon.log()


def one_file_builds(daemon: Daemon) -> list[str]:
    """The daemon's log lines of builds that parsed one file."""
    return re.findall(r"index build \d+: \S+ indexed in [\d.]+s: 1 files parsed", daemon.log())


def test_a_killed_indexer_child_is_noticed_once_and_replaced(tmp_path, repository) -> None:
    daemon = watching_daemon(tmp_path, repository)
    try:
        daemon.wait_ready()
        (first,) = builder_pids(daemon)
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: len(builder_pids(daemon)) == 2, "a second indexer child", daemon)
        assert daemon.log().count("exited unexpectedly") == 1
        wait_until(lambda: not group_alive(first), "the killed child's group gone", daemon, 5.0)
        (repository / "app" / "after.py").write_text("def after_the_restart():\n    return 2\n")
        wait_until(lambda: finds(daemon, "after_the_restart"), "the change answered", daemon)
    finally:
        assert daemon.stop() == 0


def many_files(repository: Path, count: int = 64) -> None:
    """Enough new files that the indexer child forks its parser workers."""
    for number in range(count):
        (repository / "gen" / f"m{number}.py").parent.mkdir(exist_ok=True)
        (repository / "gen" / f"m{number}.py").write_text(
            f"def generated_{number}(value):\n    return value + {number}\n"
        )


@pytest.mark.parametrize("signals", [("SIGTERM",), ("SIGINT", "SIGINT")])
def test_stopping_the_daemon_mid_build_leaves_no_child_and_no_lock(
    tmp_path, repository, signals
) -> None:
    many_files(repository)
    db = tmp_path / "index.sqlite"
    daemon = watching_daemon(tmp_path, repository, **{HOLD_ENV: str(tmp_path / "never")})
    daemon.wait_listening()
    (child,) = wait_until(lambda: builder_pids(daemon), "the indexer child", daemon)
    wait_until(lambda: pending_generations(db) > 0, "a generation being written", daemon)
    assert writer_running(db)
    stopping = time.monotonic()
    for name in signals:
        daemon.process.send_signal(getattr(signal, name))
        time.sleep(0.05)
    daemon.process.wait(timeout=STOP_SECONDS)
    assert time.monotonic() - stopping < STOP_SECONDS
    # 0, or death by the second Ctrl-C when it lands after the reactor has already stopped
    assert daemon.stop() in (0, -signal.SIGINT if signals[-1] == "SIGINT" else 0)
    # the exited child and workers may be reaped a moment later (by init, once orphaned)
    wait_until(lambda: not group_alive(child), "the child's group to be gone", daemon, 5.0)
    assert not writer_running(db)
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    assert "Traceback" not in daemon.log()


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group, from /proc."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_stopping_the_daemon_while_workers_parse_ends_them_too(tmp_path, repository) -> None:
    body = "".join(f"def f{n}(value):\n    return g{n}(value) + {n}\n\n" for n in range(40))
    for number in range(400):
        (repository / "bulk" / f"m{number}.py").parent.mkdir(exist_ok=True)
        (repository / "bulk" / f"m{number}.py").write_text(body)
    db = tmp_path / "index.sqlite"
    daemon = watching_daemon(tmp_path, repository)
    daemon.wait_listening()
    (child,) = wait_until(lambda: builder_pids(daemon), "the indexer child", daemon)
    workers = wait_until(
        lambda: [pid for pid in group_members(child) if pid != child], "parser workers", daemon
    )
    daemon.process.send_signal(signal.SIGTERM)
    daemon.process.wait(timeout=STOP_SECONDS)
    assert daemon.stop() == 0
    wait_until(lambda: not group_members(child), "the child and its workers gone", daemon, 5.0)
    assert workers and not writer_running(db)


def pending_generations(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return conn.execute(
                "SELECT COUNT(*) FROM generations WHERE status = 'pending'"
            ).fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0
