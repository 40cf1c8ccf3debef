"""
Serving speed: eshu-mcp against the official MCP SDK server and a twisted.web floor, side by
side in one run.

Starts three servers on loopback ports: eshu-mcp (``twistd -n eshu-mcp --repo`` over a small
git repository, so the first-index gate is in the path) answering
``list_indexed_repositories``; the SDK (``bench_serve_sdk.py``: uvicorn, stateless Streamable
HTTP with JSON replies, an async ``echo`` tool) answering ``echo``; and the floor
(``bench_serve_floor.py``: a bare twisted.web Resource answering a fixed tool result, the
least a twisted.web server spends per call on this machine). For each transport (``/mcp`` in
the handshake era, ``/mcp`` in the stateless 2026-07-28 era, legacy HTTP+SSE) and each
client count, the servers are measured alternately, round after round, by the closed-loop
client of ``bench_serve_load.py`` in a separate process.

Reported per run: calls/s, server CPU per call (user + system time of the server process
while the clients ran), p50 and p99 latency; then the ratios of calls/s to the SDK's and to
the floor's, and the memory each idle session costs (RSS growth over N open sessions).

Usage: PYTHONPATH=. python scripts/bench_serve.py [--duration 4] [--rounds 2]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
TRANSPORTS = ("mcp-2025", "mcp-2026", "sse")
SERVERS = {
    "eshu-mcp": ("list_indexed_repositories", {}),
    "sdk": ("echo", {"text": "hello"}),
    "floor": ("echo", {"text": "hello"}),
}
# Idle sessions measured: the SDK's stateless /mcp keeps no session, so only its SSE.
MEMORY_CASES = (("eshu-mcp", "sse"), ("eshu-mcp", "mcp-get"), ("sdk", "sse"))
REPO_FILES = {
    "app/config.py": "def parse_config(path):\n    return {}\n",
    "app/main.py": "from app.config import parse_config\n\n\ndef main():\n    return 1\n",
    "README.md": "# bench\n",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def make_repository(root: Path) -> Path:
    repo = root / "bench-repo"
    for relative, text in REPO_FILES.items():
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git = ["git", "-c", "user.email=b@example.com", "-c", "user.name=b", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "bench"], check=True)
    return repo


def wait_http(port: int, path: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"server exited {process.returncode}:\n{log.read_text()[-3000:]}")
        with contextlib.suppress(OSError):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", path)
            if conn.getresponse().status in (200, 405, 406):
                return
        time.sleep(0.2)
    raise SystemExit(f"server on {port} not ready:\n{log.read_text()[-3000:]}")


def start_eshu(workdir: Path, port: int, tree: Path = ROOT) -> subprocess.Popen:
    """``twistd -n eshu-mcp --repo`` from the checkout ``tree``, ready to answer."""
    workdir.mkdir(parents=True, exist_ok=True)
    repo = make_repository(workdir)
    log = workdir / "eshu.log"
    env = {**os.environ, "PYTHONPATH": str(tree), "ESHU_HOME": str(workdir)}
    command = [
        sys.executable,
        "-c",
        "from twisted.scripts.twistd import run; run()",
        "--nodaemon",
        "--pidfile=",
        f"--logfile={log}",
        "eshu-mcp",
        "--listen",
        f"tcp:{port}:interface=127.0.0.1",
        "--repo",
        str(repo),
        "--db",
        str(workdir / "index.sqlite"),
        "--max-sessions",
        "5000",
    ]
    process = subprocess.Popen(command, env=env, cwd=workdir)
    wait_http(port, "/readyz", process, log)
    return process


def start_sdk(workdir: Path, port: int, script: str = "bench_serve_sdk.py") -> subprocess.Popen:
    """The SDK's server (or, with ``script``, another one-file server taking a port)."""
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / f"{Path(script).stem}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, str(HERE / script), str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=workdir,
        )
    wait_http(port, "/mcp", process, log)
    return process


def start_floor(workdir: Path, port: int) -> subprocess.Popen:
    """The bare twisted.web floor of ``bench_serve_floor.py``."""
    return start_sdk(workdir, port, "bench_serve_floor.py")


def measure(server: str, port: int, pid: int, transport: str, clients: int, args) -> dict:
    tool, arguments = SERVERS[server.split("@")[0]]
    settings = {
        "host": "127.0.0.1",
        "port": port,
        "tool": tool,
        "arguments": arguments,
        "transport": transport,
        "clients": clients,
        "warmup": args.warmup,
        "duration": args.duration,
    }
    load = subprocess.Popen(
        [sys.executable, str(HERE / "bench_serve_load.py"), json.dumps(settings)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    if load.stdout.readline().strip() != "ready":
        load.kill()
        raise SystemExit(f"{server} {transport}: the load client failed to set up")
    cpu_before = cpu_seconds(pid)
    load.stdin.write("go\n")
    load.stdin.flush()
    result = json.loads(load.stdout.readline())
    cpu = cpu_seconds(pid) - cpu_before
    load.wait()
    if result["errors"]:
        raise SystemExit(f"{server} {transport} failed: {result['errors']}")
    result["cpu_us_per_call"] = cpu / max(1, result["calls"]) * 1e6
    return result


# -- idle sessions -----------------------------------------------------------------------------


def _read_some(sock: socket.socket, until: bytes) -> None:
    data = b""
    while until not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise RuntimeError(f"connection closed before {until!r}: {data[:200]!r}")
        data += chunk


def _open_sse(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(
        f"GET /sse HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n".encode()
    )
    _read_some(sock, b"endpoint")
    return sock


def _open_mcp_get(port: int, control: http.client.HTTPConnection) -> socket.socket:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench-serve", "version": "1"},
            },
        }
    )
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    control.request("POST", "/mcp", body, headers)
    response = control.getresponse()
    response.read()
    session = response.getheader("mcp-session-id")
    if not session:
        raise RuntimeError("initialize gave no session id")
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(
        (
            f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n"
            f"Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n"
        ).encode()
    )
    _read_some(sock, b"\r\n\r\n")
    return sock


def idle_session_bytes(kind: str, port: int, pid: int, count: int) -> float:
    """RSS growth of the server per idle session, over ``count`` sessions held open."""
    control = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    warm = [_open_sse(port) if kind == "sse" else _open_mcp_get(port, control) for _ in range(20)]
    for sock in warm:
        sock.close()
    time.sleep(1.0)
    before = rss_bytes(pid)
    sockets = []
    try:
        for _ in range(count):
            sockets.append(_open_sse(port) if kind == "sse" else _open_mcp_get(port, control))
        time.sleep(1.0)
        return (rss_bytes(pid) - before) / count
    finally:
        for sock in sockets:
            sock.close()
        control.close()
        time.sleep(1.0)


# -- report ------------------------------------------------------------------------------------


def table(
    results: dict, servers: list[str], transports: list[str], client_counts: list[int]
) -> str:
    lines = [
        "| transport | clients | server | calls/s | CPU us/call | p50 ms | p99 ms | x SDK "
        "| x floor |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for transport in transports:
        for clients in client_counts:
            rows = {server: results[(server, transport, clients)] for server in servers}
            sdk = statistics.median(r["calls_per_s"] for r in rows["sdk"])
            floor = statistics.median(r["calls_per_s"] for r in rows["floor"])
            for server, runs in rows.items():
                rate = statistics.median(r["calls_per_s"] for r in runs)
                lines.append(
                    f"| {transport} | {clients} | {server} | {rate:,.0f} | "
                    f"{statistics.median(r['cpu_us_per_call'] for r in runs):,.0f} | "
                    f"{statistics.median(r['p50_ms'] for r in runs):.2f} | "
                    f"{statistics.median(r['p99_ms'] for r in runs):.2f} | "
                    f"{rate / sdk:.2f} | {rate / floor:.2f} |"
                )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=4.0, help="seconds per run")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds per cell")
    parser.add_argument("--warmup", type=int, default=50, help="calls per client before a run")
    parser.add_argument("--clients", type=lambda s: [int(x) for x in s.split(",")], default=[1, 8])
    parser.add_argument("--sessions", type=int, default=1000, help="idle sessions (0: skip)")
    parser.add_argument("--transports", default=",".join(TRANSPORTS))
    parser.add_argument("--json", help="also write the raw results to this file")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another eshu-mcp checkout, measured in the same run as eshu-mcp@baseline",
    )
    args = parser.parse_args()
    transports = [t for t in args.transports.split(",") if t]
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        workdir = Path(tmp)
        servers = ["eshu-mcp", "sdk", "floor"]
        ports = {server: free_port() for server in servers}
        processes = {
            "eshu-mcp": start_eshu(workdir / "eshu", ports["eshu-mcp"]),
            "sdk": start_sdk(workdir / "sdk", ports["sdk"]),
            "floor": start_floor(workdir / "floor", ports["floor"]),
        }
        if args.baseline:
            servers.insert(1, "eshu-mcp@baseline")
            ports["eshu-mcp@baseline"] = free_port()
            processes["eshu-mcp@baseline"] = start_eshu(
                workdir / "baseline", ports["eshu-mcp@baseline"], args.baseline.resolve()
            )
        try:
            results: dict = {}
            for round_number in range(args.rounds):
                order = servers if round_number % 2 == 0 else servers[::-1]
                for transport in transports:
                    for clients in args.clients:
                        for server in order:
                            run = measure(
                                server,
                                ports[server],
                                processes[server].pid,
                                transport,
                                clients,
                                args,
                            )
                            results.setdefault((server, transport, clients), []).append(run)
                            print(
                                f"round {round_number + 1} {transport:8} {clients} "
                                f"{server:8} {run['calls_per_s']:8.0f} calls/s "
                                f"p50 {run['p50_ms']:.2f} ms",
                                file=sys.stderr,
                            )
        finally:
            for process in processes.values():
                process.terminate()
                process.wait(timeout=30)
        memory = {}
        for server, kind in MEMORY_CASES if args.sessions else ():
            # A fresh server each: memory freed by earlier runs would hide the growth.
            port = free_port()
            start = start_eshu if server == "eshu-mcp" else start_sdk
            process = start(workdir / f"memory-{server}-{kind}", port)
            try:
                memory[(server, kind)] = idle_session_bytes(kind, port, process.pid, args.sessions)
            finally:
                process.terminate()
                process.wait(timeout=30)
    if results:
        print(table(results, servers, transports, args.clients))
    for (server, kind), value in memory.items():
        print(f"idle {kind} session, {server}: {value / 1024:.1f} KB ({args.sessions} sessions)")
    if args.json:
        raw = {"|".join(map(str, key)): runs for key, runs in results.items()}
        raw["memory"] = {"|".join(key): value for key, value in memory.items()}
        Path(args.json).write_text(json.dumps(raw, indent=1))


if __name__ == "__main__":
    main()
