"""
How long a well-behaved client waits while another floods the daemon with slow tool calls.

Starts ``twistd -n eshu-mcp`` from a checkout (``--root``, default this one) on an index of
the installed Twisted sources, times one ``find_dead_code`` call alone, then has a hostile
client send BATCHES batches of 100 ``find_dead_code`` calls at once on one Streamable HTTP
session while a victim client calls ``list_indexed_repositories`` in a loop; reports the
victim's p50/max latency and what the hostile batches got back (results, busy errors).
Usage: ``python scripts/bench_hostile.py [--root PATH] [--batches 2] [--seconds 60]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import twisted_index

HANDSHAKE = "2025-03-26"


def post(url: str, payload, headers: dict | None = None, timeout: float = 600) -> tuple[int, dict]:
    all_headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        **(headers or {}),
    }
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), headers=all_headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, {"headers": dict(response.headers), "body": response.read()}
    except urllib.error.HTTPError as error:
        return error.code, {"headers": dict(error.headers), "body": error.read()}


def call(request_id: int, tool: str, **arguments) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


def start_daemon(root: Path, db: Path, port: int, home: Path) -> subprocess.Popen:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ESHU_")}
    env.update(PYTHONPATH=str(root), ESHU_HOME=str(home))
    command = [
        sys.executable,
        "-c",
        "from twisted.scripts.twistd import run; run()",
        "--nodaemon",
        "--pidfile=",
        f"--logfile={home / 'daemon.log'}",
        "eshu-mcp",
        "--listen",
        f"tcp:{port}:interface=127.0.0.1",
        "--db",
        str(db),
        "--toolsets",
        "all",
    ]
    process = subprocess.Popen(command, cwd=home, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as reply:
                if reply.status == 200:
                    return process
        except OSError:
            time.sleep(0.2)
    process.terminate()
    raise SystemExit("daemon did not become ready")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--batches", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--port", type=int, default=18431)
    args = parser.parse_args()
    workdir = Path(tempfile.gettempdir()) / "hostile-bench"
    workdir.mkdir(exist_ok=True)
    db = twisted_index(workdir)
    home = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    daemon = start_daemon(Path(args.root), db, args.port, home)
    base = f"http://127.0.0.1:{args.port}"
    try:
        started = time.monotonic()
        post(base + "/mcp/message", call(1, "find_dead_code"))
        alone = time.monotonic() - started
        _status, reply = post(
            base + "/mcp",
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": HANDSHAKE, "capabilities": {}},
            },
            {"mcp-protocol-version": HANDSHAKE},
        )
        session = {key.lower(): value for key, value in reply["headers"].items()}.get(
            "mcp-session-id"
        )
        outcomes: list = []

        def flood(batch: int) -> None:
            # Distinct arguments, so no answer is shared or cached between the calls.
            messages = [
                call(batch * 100 + n, "find_dead_code", limit=1 + batch * 100 + n)
                for n in range(100)
            ]
            headers = {"mcp-protocol-version": HANDSHAKE, "mcp-session-id": session}
            status, reply = post(base + "/mcp", messages, headers)
            outcomes.append((status, reply["body"]))

        threads = [threading.Thread(target=flood, args=(b,)) for b in range(args.batches)]
        flood_started = time.monotonic()
        for thread in threads:
            thread.start()
        time.sleep(0.5)
        latencies = []
        while (
            any(t.is_alive() for t in threads) and time.monotonic() - flood_started < args.seconds
        ):
            started = time.monotonic()
            post(base + "/mcp/message", call(7, "list_indexed_repositories"), timeout=args.seconds)
            latencies.append(time.monotonic() - started)
        flood_seconds = time.monotonic() - flood_started
        results = busy = 0
        for _status, body in outcomes:
            for item in json.loads(body):
                if "result" in item:
                    results += 1
                elif item.get("error", {}).get("code") == -32000:
                    busy += 1
        print(
            json.dumps(
                {
                    "root": args.root,
                    "find_dead_code_alone_s": round(alone, 3),
                    "hostile_calls": args.batches * 100,
                    "flood_finished": not any(t.is_alive() for t in threads),
                    "flood_seconds": round(flood_seconds, 1),
                    "hostile_results": results,
                    "hostile_busy_errors": busy,
                    "victim_calls": len(latencies),
                    "victim_p50_s": round(statistics.median(latencies), 3) if latencies else None,
                    "victim_max_s": round(max(latencies), 3) if latencies else None,
                },
                indent=1,
            )
        )
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)


if __name__ == "__main__":
    main()
